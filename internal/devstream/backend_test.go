package devstream_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/host"
	"github.com/gocuda/gocuda/internal/devstream"
)

// otherBackend is a backend the packages do not know, with devices.
type otherBackend struct{ backend.Backend }

func (otherBackend) Device(int) (backend.Device, error) { return otherDevice{}, nil }

func TestBackendResolvesByDeviceZero(t *testing.T) {
	b := host.New(host.Options{Devices: 2})
	d0, err := b.Device(0)
	require.NoError(t, err)
	on, err := devstream.Backend(b)
	require.NoError(t, err)
	assert.Same(t, d0, on.Host)
	assert.Nil(t, on.GPU)

	_, err = devstream.Backend(nil)
	require.ErrorIs(t, err, backend.ErrInvalidValue)
	assert.Contains(t, err.Error(), "nil backend")
	_, err = devstream.Backend((*host.Backend)(nil))
	require.ErrorIs(t, err, backend.ErrInvalidValue)
	_, err = devstream.Backend(otherBackend{})
	require.ErrorIs(t, err, backend.ErrNotSupported)
}

func TestIsNilSeesTypedNilPointers(t *testing.T) {
	assert.True(t, devstream.IsNil(nil))
	assert.True(t, devstream.IsNil((*host.Stream)(nil)))
	b := host.New(host.Options{Devices: 1})
	d0, err := b.Device(0)
	require.NoError(t, err)
	assert.False(t, devstream.IsNil(d0))
}
