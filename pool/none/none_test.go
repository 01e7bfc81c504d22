package none_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/pool"
	"github.com/gocuda/gocuda/pool/none"
	"github.com/gocuda/gocuda/pool/pooltest"
)

func TestConformance(t *testing.T) { pooltest.Run(t, none.Name, none.New) }

func FuzzPool(f *testing.F) { pooltest.Fuzz(f, none.New) }

func BenchmarkAllocFree(b *testing.B) { pooltest.BenchAllocFree(b, none.New) }

func BenchmarkParallel(b *testing.B) { pooltest.BenchParallel(b, none.New) }

// BenchmarkRefusal is how long a request that cannot fit takes to refuse.
func BenchmarkRefusal(b *testing.B) { pooltest.BenchRefusal(b, none.New) }

func newPool(t *testing.T) (pool.Pool, *pool.Source) {
	t.Helper()
	return pooltest.Open(t, none.New, pool.Limits{})
}

func TestEveryAllocIsADriverCallAndEveryFreeReleases(t *testing.T) {
	p, _ := newPool(t)
	s := pooltest.NewStream(t, p.Device())
	for i := 1; i <= 3; i++ {
		b, err := p.Alloc(1000, s)
		require.NoError(t, err)
		assert.Equal(t, uint64(1024), b.Size, "rounded to pool.Alignment")
		st := p.Stats()
		assert.Equal(t, uint64(i), st.DriverAllocs)
		assert.Equal(t, uint64(1024), st.Reserved)
		require.NoError(t, p.Free(b, s))
		st = p.Stats()
		assert.Equal(t, uint64(i), st.DriverFrees)
		assert.Zero(t, st.Reserved, "nothing is cached")
		assert.Zero(t, st.Hits)
		assert.Equal(t, uint64(i), st.Misses)
	}
	assert.Zero(t, p.Reclaim(pool.All))
}

func TestFreeWaitsForTheBlocksStreams(t *testing.T) {
	p, _ := newPool(t)
	dev := p.Device()
	a, b := pooltest.NewStream(t, dev), pooltest.NewStream(t, dev)
	blk, err := p.Alloc(32<<20, a)
	require.NoError(t, err)
	// Queue slow work on the allocating stream, then free on another:
	// the memory may be unmapped only after a's work is done.
	for i := 0; i < 4; i++ {
		require.NoError(t, dev.Memset32(blk.Ptr, 7, 8<<20, a))
	}
	require.NoError(t, p.Free(blk, b))
	done, err := a.Query()
	require.NoError(t, err)
	assert.True(t, done, "Free returned before the block's work on its allocating stream finished")
}

func TestNilSizeNearMaxIsInvalid(t *testing.T) {
	p, _ := newPool(t)
	_, err := p.Alloc(^uint64(0)-10, nil)
	require.Error(t, err)
}

// none rounds every request to pool.Alignment: a request that fits under
// the limit only unrounded fails naming the block.
func TestOutOfMemoryNamesTheRoundedBlock(t *testing.T) {
	p, _ := pooltest.Open(t, none.New, pool.Limits{Hard: 1000})
	s := pooltest.NewStream(t, p.Device())
	_, err := p.Alloc(1000, s)
	require.ErrorIs(t, err, backend.ErrOutOfMemory)
	var oom *pool.OutOfMemoryError
	require.ErrorAs(t, err, &oom)
	assert.Equal(t, uint64(1000), oom.Request)
	assert.Equal(t, uint64(1024), oom.Rounded)
	assert.Equal(t, "out of device memory on device 0: cannot allocate 1000 B (1000 bytes) as a 1.0 KiB block with 0 B reserved under a hard limit of 1000 B (1000 B left)", err.Error())

	b, err := p.Alloc(768, s) // already a multiple: no block named
	require.NoError(t, err)
	_, err = p.Alloc(256, s)
	require.ErrorAs(t, err, &oom)
	assert.Equal(t, "out of device memory on device 0: cannot allocate 256 B (256 bytes) with 768 B reserved under a hard limit of 1000 B (232 B left)", err.Error())
	require.NoError(t, p.Free(b, s))
}
