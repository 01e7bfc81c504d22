package binned_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/dustin/go-humanize"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/host"
	"github.com/gocuda/gocuda/pool"
	"github.com/gocuda/gocuda/pool/binned"
	"github.com/gocuda/gocuda/pool/pooltest"
)

const (
	kiB = 1 << 10
	miB = 1 << 20
)

func TestConformance(t *testing.T) { pooltest.Run(t, binned.Name, binned.New) }

func FuzzPool(f *testing.F) { pooltest.Fuzz(f, binned.New) }

func BenchmarkAllocFree(b *testing.B) { pooltest.BenchAllocFree(b, binned.New) }

func BenchmarkParallel(b *testing.B) { pooltest.BenchParallel(b, binned.New) }

// BenchmarkRefusal is how long a request that cannot fit takes to refuse.
func BenchmarkRefusal(b *testing.B) { pooltest.BenchRefusal(b, binned.New) }

func newPool(t *testing.T, l pool.Limits) pool.Pool {
	t.Helper()
	p, _ := pooltest.Open(t, binned.New, l)
	return p
}

func alloc(t *testing.T, p pool.Pool, size uint64, s backend.Stream) *pool.Block {
	t.Helper()
	b, err := p.Alloc(size, s)
	require.NoError(t, err, "Alloc(%d)", size)
	return b
}

func TestRequestsAreRoundedUpToTheirClass(t *testing.T) {
	p := newPool(t, pool.Limits{})
	s := pooltest.NewStream(t, p.Device())
	for _, tc := range []struct {
		name       string
		size, want uint64
	}{
		{"1B is the smallest class", 1, 256},
		{"256B is a class", 256, 256},
		{"257B", 257, 512},
		{"3000B", 3000, 3072},
		{"4KiB+1 is the worst case", 4*kiB + 1, 4608},
		{"1MiB is a class", miB, miB},
		{"1MiB+1", miB + 1, miB + miB/8},
		{"64MiB is the largest class", 64 * miB, 64 * miB},
		{"above 64MiB rounds to 2MiB", 64*miB + 1, 66 * miB},
		{"100MiB-5", 100*miB - 5, 100 * miB},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := alloc(t, p, tc.size, s)
			assert.Equal(t, tc.want, b.Size)
			assert.Equal(t, tc.size, b.Requested)
			require.NoError(t, p.Free(b, s))
		})
	}
}

func TestSameClassIsReusedOnTheSameStream(t *testing.T) {
	p := newPool(t, pool.Limits{})
	s := pooltest.NewStream(t, p.Device())
	b1 := alloc(t, p, 3000, s)
	ptr := b1.Ptr
	require.NoError(t, p.Free(b1, s))

	// 2900 B is in the same class (3072 B): the same block, no driver call.
	b2 := alloc(t, p, 2900, s)
	assert.Same(t, b1, b2, "the cached *Block is reused")
	assert.Equal(t, ptr, b2.Ptr)
	assert.Equal(t, uint64(2900), b2.Requested)
	st := p.Stats()
	assert.Equal(t, uint64(1), st.DriverAllocs)
	assert.Equal(t, uint64(1), st.Hits)

	// 5000 B is another class: a new block, though 3072 B are cached...
	// but b2 is live, so cache it first to show classes do not mix.
	require.NoError(t, p.Free(b2, s))
	b3 := alloc(t, p, 5000, s)
	assert.NotEqual(t, ptr, b3.Ptr, "a block of another class is not reused")
	assert.Equal(t, uint64(2), p.Stats().DriverAllocs)
	require.NoError(t, p.Free(b3, s))
}

func TestFreeListsAreLastInFirstOut(t *testing.T) {
	p := newPool(t, pool.Limits{})
	s := pooltest.NewStream(t, p.Device())
	a, b := alloc(t, p, 64*kiB, s), alloc(t, p, 64*kiB, s)
	require.NoError(t, p.Free(a, s))
	require.NoError(t, p.Free(b, s))
	// The most recently freed block comes back first: it is the one most
	// likely still in cache, and the one the stream used last.
	assert.Same(t, b, alloc(t, p, 64*kiB, s))
	assert.Same(t, a, alloc(t, p, 64*kiB, s))
	require.NoError(t, p.Free(a, s))
	require.NoError(t, p.Free(b, s))
}

func TestMissTakesAnotherStreamsBlockOrderedAfterIt(t *testing.T) {
	p := newPool(t, pool.Limits{})
	dev := p.Device()
	a, b := pooltest.NewStream(t, dev), pooltest.NewStream(t, dev)
	const size = 8 * miB

	blk := alloc(t, p, size, a)
	ptr := blk.Ptr
	// Queue slow writes on a, then free without waiting for them.
	for i := 0; i < 6; i++ {
		require.NoError(t, dev.Memset32(blk.Ptr, 0xA, size/4, a))
	}
	require.NoError(t, p.Free(blk, a))

	got := alloc(t, p, size, b)
	assert.Same(t, blk, got, "b's miss takes a's cached block of the class")
	assert.Equal(t, ptr, got.Ptr)
	assert.True(t, got.Stream == b, "the block now belongs to b")
	st := p.Stats()
	assert.Equal(t, uint64(1), st.DriverAllocs, "no driver call for the hand-off")
	assert.Equal(t, uint64(1), st.Hits, "the hand-off is a hit")

	// b's write lands after a's queued writes, not before.
	require.NoError(t, dev.Memset32(got.Ptr, 0xB, size/4, b))
	require.NoError(t, a.Synchronize())
	want := bytes.Repeat([]byte{0xB, 0, 0, 0}, size/4)
	assert.True(t, bytes.Equal(want, pooltest.Read(t, dev, got.Ptr, size, b)), "a's writes landed after b's")
	require.NoError(t, p.Free(got, b))
}

func TestLargeRequestsAreBestFitWithinAnEighth(t *testing.T) {
	p := newPool(t, pool.Limits{})
	s := pooltest.NewStream(t, p.Device())

	b := alloc(t, p, 100*miB, s)
	assert.Equal(t, uint64(100*miB), b.Size)
	require.NoError(t, p.Free(b, s))

	// 95 MiB: the cached 100 MiB block wastes 5%: reused.
	b2 := alloc(t, p, 95*miB, s)
	assert.Same(t, b, b2)
	assert.Equal(t, uint64(1), p.Stats().DriverAllocs)
	require.NoError(t, p.Free(b2, s))

	// 80 MiB: 100 MiB would waste 25%: a new block of 80 MiB.
	b3 := alloc(t, p, 80*miB, s)
	assert.NotSame(t, b, b3)
	assert.Equal(t, uint64(80*miB), b3.Size)
	assert.Equal(t, uint64(2), p.Stats().DriverAllocs)

	// With both cached, 79 MiB takes the best fit, 80 MiB.
	require.NoError(t, p.Free(b3, s))
	b4 := alloc(t, p, 79*miB, s)
	assert.Same(t, b3, b4)
	require.NoError(t, p.Free(b4, s))

	// Another stream takes a cached large block too.
	other := pooltest.NewStream(t, p.Device())
	b5 := alloc(t, p, 99*miB, other)
	assert.Same(t, b, b5)
	assert.True(t, b5.Stream == other)
	require.NoError(t, p.Free(b5, other))
	assert.Equal(t, uint64(2), p.Stats().DriverAllocs)
}

func TestReclaimGivesBackLargestFirst(t *testing.T) {
	p := newPool(t, pool.Limits{})
	dev := p.Device()
	a, b := pooltest.NewStream(t, dev), pooltest.NewStream(t, dev)
	// Fill the caches of two streams with blocks live at once (each its
	// own block), then check each Reclaim(1) takes the largest block
	// cached by either stream.
	blocks := []struct {
		size uint64
		s    backend.Stream
	}{{miB, a}, {16 * miB, b}, {4 * kiB, a}, {100 * miB, a}, {4 * miB, b}, {16 * miB, a}}
	var live []*pool.Block
	for _, bl := range blocks {
		live = append(live, alloc(t, p, bl.size, bl.s))
	}
	for i, bl := range live {
		require.NoError(t, p.Free(bl, blocks[i].s))
	}
	for _, want := range []uint64{100 * miB, 16 * miB, 16 * miB, 4 * miB, miB, 4 * kiB, 0} {
		before := p.Stats()
		got := p.Reclaim(1)
		assert.Equal(t, want, got, "Reclaim(1) with %d bytes cached", before.Cached())
		assert.Equal(t, before.Reserved-got, p.Stats().Reserved)
	}
	assert.Zero(t, p.Stats().Reserved)
}

func TestCachedPairAllocatesNothingOnTheGoHeap(t *testing.T) {
	p := newPool(t, pool.Limits{Soft: 1 << 40})
	s := pooltest.NewStream(t, p.Device())
	for _, size := range []uint64{1, 512, 64 * kiB, miB, 16 * miB, 64 * miB} {
		require.NoError(t, p.Free(alloc(t, p, size, s), s)) // warm the class
		allocs := testing.AllocsPerRun(100, func() {
			b, err := p.Alloc(size, s)
			if err != nil {
				panic(err)
			}
			if err := p.Free(b, s); err != nil {
				panic(err)
			}
		})
		assert.Zero(t, allocs, "Go allocations per cached pair of %d bytes", size)
	}
}

func TestReusedStreamIDGetsTheOldStreamsBlocksSafely(t *testing.T) {
	p := newPool(t, pool.Limits{})
	dev := p.Device()
	old, err := dev.NewStream()
	require.NoError(t, err)
	const size = 4 * miB
	blk := alloc(t, p, size, old)
	for i := 0; i < 4; i++ {
		require.NoError(t, dev.Memset32(blk.Ptr, 0xA, size/4, old))
	}
	require.NoError(t, p.Free(blk, old))
	id := old.ID()
	require.NoError(t, old.Destroy())

	s := pooltest.NewStream(t, dev)
	if s.ID() != id {
		t.Skipf("the new stream got ID %d, not the destroyed stream's %d", s.ID(), id)
	}
	got := alloc(t, p, size, s)
	assert.Same(t, blk, got, "the cache of the ID is reused")
	assert.True(t, got.Stream == s, "the block now belongs to the new stream")
	require.NoError(t, dev.Memset32(got.Ptr, 0xB, size/4, s))
	want := bytes.Repeat([]byte{0xB, 0, 0, 0}, size/4)
	assert.True(t, bytes.Equal(want, pooltest.Read(t, dev, got.Ptr, size, s)))
	require.NoError(t, p.Free(got, s))
}

func TestCloseReleasesBlocksOfDestroyedStreams(t *testing.T) {
	dev := pooltest.Device(t)
	// The host backend reports a call on a destroyed stream as an error;
	// the CUDA backend passes the stale handle to the driver (undefined
	// behaviour), so the case is only exercised here on the host.
	if _, ok := dev.(*host.Device); !ok {
		t.Skip("calls on a destroyed stream are only defined on the host backend")
	}
	src, err := pool.NewSource(dev, pool.Limits{})
	require.NoError(t, err)
	p, err := binned.New(dev, src)
	require.NoError(t, err)
	s, err := dev.NewStream()
	require.NoError(t, err)
	require.NoError(t, p.Free(alloc(t, p, miB, s), s))
	require.NoError(t, p.Free(alloc(t, p, 200*miB, s), s))
	require.NoError(t, s.Destroy())
	// The blocks' stream cannot be synchronized any more; the device can.
	require.NoError(t, p.Close())
	assert.Zero(t, src.Reserved())
}

func TestHardLimitReclaimsOtherClassesBeforeFailing(t *testing.T) {
	const hard = 32 * miB
	p := newPool(t, pool.Limits{Hard: hard})
	s := pooltest.NewStream(t, p.Device())
	// Fill the limit with cached 1 MiB blocks...
	var live []*pool.Block
	for i := 0; i < hard/miB; i++ {
		live = append(live, alloc(t, p, miB, s))
	}
	for _, b := range live {
		require.NoError(t, p.Free(b, s))
	}
	// ...then ask for a class none of them serves: the pool gives back
	// what it needs and succeeds.
	b := alloc(t, p, 20*miB, s)
	st := p.Stats()
	assert.LessOrEqual(t, st.Reserved, uint64(hard))
	assert.Equal(t, uint64(20*miB), st.Reclaimed, "only what the request needed, largest first")
	require.NoError(t, p.Free(b, s))
}

// A request that fits under the limit but whose class (or large rounding)
// does not: the message names the block it was rounded to.
func TestOutOfMemoryNamesTheRoundedBlock(t *testing.T) {
	for _, size := range []uint64{5000, 65<<20 + 1} {
		t.Run(humanize.IBytes(size), func(t *testing.T) {
			p := newPool(t, pool.Limits{Hard: size})
			s := pooltest.NewStream(t, p.Device())
			_, err := p.Alloc(size, s)
			require.ErrorIs(t, err, backend.ErrOutOfMemory)
			var oom *pool.OutOfMemoryError
			require.ErrorAs(t, err, &oom)
			assert.Equal(t, size, oom.Request)
			require.Greater(t, oom.Rounded, size)
			assert.Contains(t, err.Error(), fmt.Sprintf("cannot allocate %s (%d bytes) as a %s block with 0 B reserved under a hard limit of %s (%s left)",
				humanize.IBytes(size), size, humanize.IBytes(oom.Rounded), humanize.IBytes(size), humanize.IBytes(size)))
		})
	}
}
