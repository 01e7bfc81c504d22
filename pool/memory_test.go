package pool_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/host"
	"github.com/gocuda/gocuda/pool"
	_ "github.com/gocuda/gocuda/pool/simple"
)

// A pool of any strategy over MemoryDevice's device serves that kind of
// memory, says so (MemoryOf), and its memory is the device's unified or
// pinned memory: the host backend counts it, and the pool's Close gives
// it back.
func TestMemoryDeviceGivesItsKindToAnyStrategy(t *testing.T) {
	dev, err := host.New(host.Options{TotalMemory: 1 << 30}).Device(0)
	require.NoError(t, err)
	s, err := dev.NewStream()
	require.NoError(t, err)
	defer s.Destroy()
	for _, m := range pool.Memories {
		t.Run(m.String(), func(t *testing.T) {
			md, err := pool.MemoryDevice(dev, m)
			require.NoError(t, err)
			assert.Equal(t, m, pool.MemoryOfDevice(md))
			assert.Equal(t, dev.Ordinal(), md.Ordinal())
			p, err := pool.New("simple", md, pool.Limits{})
			require.NoError(t, err)
			assert.Equal(t, m, pool.MemoryOf(p))
			b, err := p.Alloc(1<<20, s)
			require.NoError(t, err)
			free, total, err := dev.MemInfo()
			require.NoError(t, err)
			assert.Equal(t, uint64(1<<20), total-free, "the device counts the pool's memory")
			require.NoError(t, p.Free(b, s))
			require.NoError(t, p.Close())
			free, total, err = dev.MemInfo()
			require.NoError(t, err)
			assert.Equal(t, total, free, "Close gave it back through the kind's free")
		})
	}
	assert.Equal(t, "pinned", pool.PinnedMemory.String())
	assert.Equal(t, "Memory(7)", pool.Memory(7).String())
}

// A device without the kind's capability, and a kind that does not exist,
// are errors that say what is accepted.
func TestMemoryDeviceRefusesWhatTheDeviceLacks(t *testing.T) {
	dev, err := host.New(host.Options{}).Device(0)
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		dev  backend.Device
		m    pool.Memory
		want error
		text string
	}{
		{"no unified memory", plainDevice{dev}, pool.UnifiedMemory, backend.ErrNotSupported, "has no unified memory"},
		{"no pinned memory", plainDevice{dev}, pool.PinnedMemory, backend.ErrNotSupported, "has no pinned host memory"},
		{"no such kind", dev, pool.Memory(9), backend.ErrInvalidValue, "the kinds are device, unified and pinned"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := pool.MemoryDevice(tc.dev, tc.m)
			require.ErrorIs(t, err, tc.want)
			assert.Contains(t, err.Error(), tc.text)
		})
	}
	md, err := pool.MemoryDevice(plainDevice{dev}, pool.DeviceMemory)
	require.NoError(t, err, "every device has device memory")
	assert.Equal(t, plainDevice{dev}, md)
}

// plainDevice hides every capability but backend.Device's methods.
type plainDevice struct{ backend.Device }
