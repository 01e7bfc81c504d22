package gocuda

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/config"
	"github.com/gocuda/gocuda/pool"
)

const mib = 1 << 20

// restoreLimits puts device 0's limits back as they were when the test
// ends: the pool is the process's, shared with the package's other tests.
func restoreLimits(t *testing.T) {
	t.Helper()
	prev, err := MemoryLimits(0)
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, SetMemoryLimit(0, config.Limit{Bytes: prev.Soft}, config.Limit{Bytes: prev.Hard}))
	})
}

func TestSetMemoryLimitHoldsTheNextAllocation(t *testing.T) {
	restoreLimits(t)
	p, err := Pool(0)
	require.NoError(t, err)
	s, err := p.Device().NewStream()
	require.NoError(t, err)
	defer s.Destroy()
	ReclaimAll()
	hard := p.Stats().Reserved + 64*mib

	require.NoError(t, SetMemoryLimit(0, config.Limit{}, config.Limit{Bytes: hard}))
	l, err := MemoryLimits(0)
	require.NoError(t, err)
	assert.Equal(t, pool.Limits{Hard: hard}, l)
	_, err = p.Alloc(256*mib, s)
	require.ErrorIs(t, err, backend.ErrOutOfMemory, "256 MiB with a hard limit 64 MiB above what is reserved")

	require.NoError(t, SetMemoryLimit(0, config.Limit{}, config.Limit{Bytes: hard + 512*mib}))
	b, err := p.Alloc(256*mib, s)
	require.NoError(t, err, "the raised limit holds the next allocation")
	require.NoError(t, p.Free(b, s))
}

func TestSetMemoryLimitResolvesSharesAgainstTheDevice(t *testing.T) {
	restoreLimits(t)
	dev, err := Device(0)
	require.NoError(t, err)
	total := dev.Info().TotalMemory
	require.NoError(t, SetMemoryLimit(0, config.Limit{Percent: 25}, config.Limit{Percent: 50}))
	l, err := MemoryLimits(0)
	require.NoError(t, err)
	assert.Equal(t, pool.Limits{Soft: uint64(math.Floor(float64(total) * 0.25)), Hard: uint64(math.Floor(float64(total) * 0.5))}, l)

	parsed, err := config.ParseLimit("80%")
	require.NoError(t, err)
	require.NoError(t, SetMemoryLimit(0, config.Limit{}, parsed))
	l, err = MemoryLimits(0)
	require.NoError(t, err)
	assert.Equal(t, uint64(math.Floor(float64(total)*0.8)), l.Hard)
}

func TestSetMemoryLimitGivesBackCacheAboveTheSoftLimit(t *testing.T) {
	restoreLimits(t)
	p, err := Pool(0)
	require.NoError(t, err)
	s, err := p.Device().NewStream()
	require.NoError(t, err)
	defer s.Destroy()
	ReclaimAll()
	b, err := p.Alloc(64*mib, s)
	require.NoError(t, err)
	require.NoError(t, p.Free(b, s))
	require.NoError(t, s.Synchronize())

	require.NoError(t, SetMemoryLimit(0, config.Limit{Bytes: 1}, config.Limit{}))
	assert.Less(t, p.Stats().Cached(), uint64(64*mib), "the freed 64 MiB is no longer cached")
}

func TestSetMemoryLimitRefusesInvalidLimits(t *testing.T) {
	restoreLimits(t)
	before, err := MemoryLimits(0)
	require.NoError(t, err)
	cases := []struct {
		name       string
		soft, hard config.Limit
		want       []string
	}{
		{"share above 100", config.Limit{}, config.Limit{Percent: 150}, []string{"hard limit Percent is 150", "(0, 100]"}},
		{"negative share", config.Limit{Percent: -1}, config.Limit{}, []string{"soft limit Percent is -1"}},
		{"NaN share", config.Limit{Percent: math.NaN()}, config.Limit{}, []string{"soft limit Percent is NaN"}},
		{"both fields", config.Limit{Bytes: mib, Percent: 10}, config.Limit{}, []string{"soft limit has both Bytes (1048576) and Percent (10)"}},
		{"soft above hard", config.Limit{Bytes: 2 << 30}, config.Limit{Bytes: 1 << 30}, []string{"soft limit 2.0 GiB", "above hard limit 1.0 GiB"}},
		{"soft share above hard", config.Limit{Percent: 100}, config.Limit{Bytes: 1 << 30}, []string{"soft limit 100% (", "above hard limit 1.0 GiB"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := SetMemoryLimit(0, c.soft, c.hard)
			require.ErrorIs(t, err, backend.ErrInvalidValue)
			assert.Contains(t, err.Error(), "SetMemoryLimit(device 0)")
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w)
			}
			after, err := MemoryLimits(0)
			require.NoError(t, err)
			assert.Equal(t, before, after, "a refused change changes nothing")
		})
	}
	assert.Error(t, SetMemoryLimit(1<<10, config.Limit{}, config.Limit{}), "no such device")
}

func TestReclaimAllGivesBackEveryDevicesCache(t *testing.T) {
	p, err := Pool(0)
	require.NoError(t, err)
	s, err := p.Device().NewStream()
	require.NoError(t, err)
	defer s.Destroy()
	b, err := p.Alloc(32*mib, s)
	require.NoError(t, err)
	require.NoError(t, p.Free(b, s))
	require.NoError(t, s.Synchronize())

	before := p.Stats()
	got := ReclaimAll()
	after := p.Stats()
	assert.Equal(t, before.Reserved-after.Reserved, got, "ReclaimAll returns what it gave back")
	if p.Name() != "none" { // the none pool caches nothing to give back
		assert.GreaterOrEqual(t, got, uint64(32*mib))
	}
	assert.Less(t, after.Cached(), uint64(32*mib))
}
