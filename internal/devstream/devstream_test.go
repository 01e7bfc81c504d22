package devstream_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/host"
	"github.com/gocuda/gocuda/internal/devstream"
)

// otherDevice is a device of a backend the packages do not know.
type otherDevice struct{ backend.Device }

func TestResolve(t *testing.T) {
	b := host.New(host.Options{Devices: 2})
	d0, err := b.Device(0)
	require.NoError(t, err)
	d1, err := b.Device(1)
	require.NoError(t, err)
	s0, err := d0.NewStream()
	require.NoError(t, err)
	defer s0.Destroy()

	on, err := devstream.Resolve(d0, s0)
	require.NoError(t, err)
	assert.Same(t, d0, on.Host)
	assert.Same(t, s0, on.HostStream)
	assert.Nil(t, on.GPU)

	for _, tc := range []struct {
		name string
		dev  backend.Device
		s    backend.Stream
		want string
		is   error
	}{
		{"nil stream", d0, nil, "nil device or stream", backend.ErrInvalidValue},
		{"nil device", nil, s0, "nil device or stream", backend.ErrInvalidValue},
		{"another device's stream", d1, s0, "is not a stream of host device 1", backend.ErrInvalidValue},
		{"a typed nil host device", (*host.Device)(nil), s0, "nil host device", backend.ErrInvalidValue},
		{"a typed nil stream", d0, (*host.Stream)(nil), "nil device or stream", backend.ErrInvalidValue},
		{"another backend", otherDevice{d0}, s0, "runs on the cuda and host backends", backend.ErrNotSupported},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := devstream.Resolve(tc.dev, tc.s)
			require.ErrorIs(t, err, tc.is)
			assert.ErrorContains(t, err, tc.want)
		})
	}

	// A device alone: its backend, no stream.
	on, err = devstream.Device(d1)
	require.NoError(t, err)
	assert.Equal(t, devstream.On{Host: d1.(*host.Device)}, on)
	_, err = devstream.Device(otherDevice{d0})
	require.ErrorIs(t, err, backend.ErrNotSupported)
	_, err = devstream.Device((*host.Device)(nil))
	require.ErrorIs(t, err, backend.ErrInvalidValue)
}
