package split_test

import (
	"bytes"
	"fmt"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/pool"
	"github.com/gocuda/gocuda/pool/pooltest"
	"github.com/gocuda/gocuda/pool/split"
)

const (
	kiB = 1 << 10
	miB = 1 << 20
)

// plainDevice hides the VirtualMemory methods of the device it wraps (only
// backend.Device's methods are promoted), so the pool falls back to
// ordinary segments.
type plainDevice struct{ backend.Device }

// newPlain is split.New on a device without virtual memory.
func newPlain(dev backend.Device, src *pool.Source) (pool.Pool, error) {
	return split.New(plainDevice{dev}, src)
}

// kinds are the two ways the pool gets memory.
var kinds = []struct {
	name    string
	new     pool.Factory
	virtual bool
}{
	{"virtual", split.New, true},
	{"ordinary", newPlain, false},
}

func TestConformance(t *testing.T) {
	// Fragments: a live block pins the granule or segment it shares with
	// free blocks, so not every cached byte can always be given back.
	pooltest.Suite{Name: "split", New: split.New, Fragments: true}.Run(t)
}

func TestConformanceWithoutVirtualMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("the suite already ran on the virtual memory path")
	}
	pooltest.Suite{New: newPlain, Fragments: true}.Run(t)
}

func FuzzPool(f *testing.F) {
	pooltest.Suite{New: split.New, Fragments: true}.Fuzz(f)
}

func FuzzPoolWithoutVirtualMemory(f *testing.F) {
	pooltest.Suite{New: newPlain, Fragments: true}.Fuzz(f)
}

// env is a fresh pool of one kind with its source and a stream.
type env struct {
	t   *testing.T
	dev backend.Device
	src *pool.Source
	p   pool.Pool
	s   backend.Stream
}

func open(t *testing.T, mk pool.Factory, l pool.Limits) *env {
	t.Helper()
	dev := pooltest.Device(t)
	src, err := pool.NewSource(dev, l)
	require.NoError(t, err)
	p, err := mk(dev, src)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	return &env{t: t, dev: dev, src: src, p: p, s: pooltest.NewStream(t, dev)}
}

func (e *env) alloc(size uint64) *pool.Block { return e.allocOn(size, e.s) }

func (e *env) allocOn(size uint64, s backend.Stream) *pool.Block {
	e.t.Helper()
	b, err := e.p.Alloc(size, s)
	require.NoError(e.t, err, "Alloc(%d)", size)
	return b
}

func (e *env) free(b *pool.Block) {
	e.t.Helper()
	require.NoError(e.t, e.p.Free(b, e.s))
}

func end(b *pool.Block) backend.Ptr { return b.Ptr + backend.Ptr(b.Size) }

func TestVirtualMemoryIsUsedWhereTheDeviceHasIt(t *testing.T) {
	for _, k := range kinds {
		e := open(t, k.new, pool.Limits{})
		assert.Equal(t, k.virtual, e.p.(*split.Pool).Virtual(), k.name)
	}
}

func TestFreedNeighboursCoalesceIntoOneBlock(t *testing.T) {
	for _, k := range kinds {
		for _, size := range []uint64{64 * kiB, 4 * miB} {
			t.Run(fmt.Sprintf("%s/%dKiB", k.name, size/kiB), func(t *testing.T) {
				e := open(t, k.new, pool.Limits{})
				a, b, c := e.alloc(size), e.alloc(size), e.alloc(size)
				require.Equal(t, end(a), b.Ptr, "blocks are split off one segment in address order")
				require.Equal(t, end(b), c.Ptr)
				aPtr := a.Ptr
				e.free(b)
				e.free(a)
				ab := e.alloc(2 * size)
				assert.Equal(t, aPtr, ab.Ptr, "A and B merged into one free block at A's address")
				assert.Equal(t, 2*size, ab.Size)
				e.free(ab)
				e.free(c)
			})
		}
	}
}

func TestAllocTakesTheSmallestFreeBlockThatFits(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			e := open(t, k.new, pool.Limits{})
			// Free blocks of 6, 3, 4 and 4 MiB, kept apart by live ones.
			var holes, seps []*pool.Block
			for _, size := range []uint64{6 * miB, 3 * miB, 4 * miB, 4 * miB} {
				holes = append(holes, e.alloc(size))
				seps = append(seps, e.alloc(2*miB))
			}
			ptrs := make([]backend.Ptr, len(holes))
			for i, h := range holes {
				ptrs[i] = h.Ptr
				e.free(h)
			}

			// Two segments may come in either address order.
			lo4, hi4 := min(ptrs[2], ptrs[3]), max(ptrs[2], ptrs[3])
			b := e.alloc(3*miB + 512*kiB)
			assert.Equal(t, lo4, b.Ptr, "3.5 MiB goes to the lower of the two 4 MiB blocks")
			assert.Equal(t, uint64(4*miB), b.Size, "a remainder of 1 MiB or less is handed out with the block")
			c := e.alloc(3 * miB)
			assert.Equal(t, ptrs[1], c.Ptr, "3 MiB fits the 3 MiB block exactly")
			d := e.alloc(4 * miB)
			assert.Equal(t, hi4, d.Ptr, "the other 4 MiB block")
			f := e.alloc(2 * miB)
			assert.Equal(t, ptrs[0], f.Ptr, "only the 6 MiB block is left")
			assert.Equal(t, uint64(2*miB), f.Size, "4 MiB left over: the block is split")
			g := e.alloc(4 * miB)
			assert.Equal(t, end(f), g.Ptr, "the rest of the 6 MiB block")
			for _, x := range append(seps, b, c, d, f, g) {
				e.free(x)
			}
		})
	}
}

func TestSmallAndLargeRequestsUseSeparateSegments(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			e := open(t, k.new, pool.Limits{})
			small, large := e.alloc(miB), e.alloc(miB+1)
			assert.True(t, small.Seg != large.Seg, "1 MiB is small, 1 MiB+1 is large")
			smallSeg := small.Seg
			largeLo, largeHi := large.Ptr, end(large)
			e.free(large)
			// A large free block never serves a small request...
			for range 8 {
				b := e.alloc(64 * kiB)
				assert.True(t, smallSeg == b.Seg, "small blocks share the small segment")
				assert.False(t, b.Ptr >= largeLo && b.Ptr < largeHi, "small block inside the freed large one")
				defer e.free(b)
			}
			// ...nor a small free block a large one.
			smallLo, smallHi := small.Ptr, end(small)
			e.free(small)
			b := e.alloc(miB + 512)
			assert.False(t, b.Ptr >= smallLo && b.Ptr < smallHi, "large block inside the freed small one")
			e.free(b)
		})
	}
}

func TestStreamsKeepTheirOwnSegments(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			e := open(t, k.new, pool.Limits{})
			other := pooltest.NewStream(t, e.dev)
			a := e.alloc(4 * miB)
			lo, hi := a.Ptr, end(a)
			e.free(a)
			b := e.allocOn(4*miB, other)
			assert.False(t, b.Ptr < hi && lo < end(b), "another stream's cached block was handed out")
			require.NoError(t, e.p.Free(b, other))
			again := e.alloc(4 * miB)
			assert.Equal(t, lo, again.Ptr, "the owner's cache still holds its block")
			e.free(again)
		})
	}
}

// A block freed on another stream than the one it came from returns to its
// owner's cache, and the owner's later work waits for the freeing stream's.
func TestFreeOnAnotherStreamOrdersTheOwnerAfterIt(t *testing.T) {
	const size = 32 * miB
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			e := open(t, k.new, pool.Limits{})
			other := pooltest.NewStream(t, e.dev)
			b := e.alloc(size)
			ptr := b.Ptr
			for range 6 {
				require.NoError(t, e.dev.Memset32(b.Ptr, 0xA, size/4, other))
			}
			require.NoError(t, e.p.Free(b, other)) // other is still writing

			c := e.alloc(size)
			require.Equal(t, ptr, c.Ptr, "the block went back to its owner's cache")
			require.NoError(t, e.dev.Memset32(c.Ptr, 0xC, size/4, e.s))
			require.NoError(t, other.Synchronize())
			want := bytes.Repeat([]byte{0xC, 0, 0, 0}, size/4)
			got := read(t, e.dev, c.Ptr, size, e.s)
			require.True(t, bytes.Equal(want, got), "the other stream's writes landed after the owner's")
			e.free(c)
		})
	}
}

func read(t *testing.T, dev backend.Device, p backend.Ptr, n uint64, s backend.Stream) []byte {
	t.Helper()
	out := make([]byte, n)
	require.NoError(t, dev.CopyDtoH(unsafe.Pointer(&out[0]), p, n, s))
	return out
}

// With virtual memory a segment grows at its end: requests that together
// pass a granule come out contiguous, and memory freed at the end is
// unmapped by Reclaim.
func TestVirtualSegmentGrowsInPlace(t *testing.T) {
	e := open(t, split.New, pool.Limits{})
	gran := e.dev.(backend.VirtualMemory).Granularity()

	a := e.alloc(gran*3/4 + 1)
	require.Equal(t, gran, e.src.Reserved(), "one granule mapped")
	b := e.alloc(gran * 3 / 4)
	assert.Equal(t, end(a), b.Ptr, "the second block follows the first in the same range")
	assert.True(t, a.Seg == b.Seg, "one segment")
	assert.Equal(t, 2*gran, e.src.Reserved(), "the segment grew by one granule")

	// A freed block at the end merges with the unused rest of the range,
	// so a larger request starts where it started.
	bPtr := b.Ptr
	e.free(b)
	c := e.alloc(3 * gran)
	assert.Equal(t, bPtr, c.Ptr, "growth reuses the free block at the end")
	assert.Equal(t, 4*gran, e.src.Reserved())

	// Freeing the tail and reclaiming unmaps the granules it alone used.
	e.free(c)
	got := e.p.Reclaim(pool.All)
	assert.Equal(t, 3*gran, got, "the three granules past the one a still uses")
	assert.Equal(t, gran, e.src.Reserved())
	st := e.p.Stats()
	assert.Equal(t, 3*gran, st.Reclaimed)
	e.free(a)
	assert.Equal(t, gran, e.p.Reclaim(pool.All))
	assert.Zero(t, e.src.Reserved())
}

func TestReclaimUnmapsGranulesInTheMiddleOfASegment(t *testing.T) {
	e := open(t, split.New, pool.Limits{})
	gran := e.dev.(backend.VirtualMemory).Granularity()
	a, hole, c := e.alloc(2*gran), e.alloc(4*gran), e.alloc(2*gran)
	require.Equal(t, 8*gran, e.src.Reserved())
	holePtr := hole.Ptr
	e.free(hole)
	assert.Equal(t, 4*gran, e.p.Reclaim(pool.All), "the hole's four granules")
	assert.Equal(t, 4*gran, e.src.Reserved())

	// The hole is still free address space: it is mapped again on use
	// and holds data.
	again := e.alloc(4 * gran)
	assert.Equal(t, holePtr, again.Ptr)
	assert.Equal(t, 8*gran, e.src.Reserved())
	data := bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7}, int(again.Size/7))
	pooltest.Write(t, e.dev, again.Ptr, data, e.s)
	assert.True(t, bytes.Equal(data, pooltest.Read(t, e.dev, again.Ptr, uint64(len(data)), e.s)))
	for _, b := range []*pool.Block{a, again, c} {
		e.free(b)
	}
}

func TestOrdinarySegmentsAreSizedAsPyTorchSizesThem(t *testing.T) {
	e := open(t, newPlain, pool.Limits{})
	for _, tc := range []struct {
		size, segment uint64
	}{
		{512, 2 * miB},         // small: a 2 MiB segment
		{10 * miB, 10 * miB},   // from 10 MiB: a segment of its own
		{13*miB + 1, 14 * miB}, // rounded up to 2 MiB
		{miB + 1, 20 * miB},    // large under 10 MiB: a 20 MiB segment to share
		{9 * miB, 0},           // fits what is left of the 20 MiB segment
		{10 * miB, 10 * miB},   // does not: 512 bytes short
	} {
		before := e.src.Reserved()
		e.alloc(tc.size)
		assert.Equal(t, tc.segment, e.src.Reserved()-before, "Alloc(%d)", tc.size)
	}
	st := e.p.Stats()
	assert.Equal(t, uint64(5), st.DriverAllocs)
}

func TestReclaimReleasesOnlyEntirelyFreeOrdinarySegments(t *testing.T) {
	e := open(t, newPlain, pool.Limits{})
	a, b := e.alloc(2*miB), e.alloc(2*miB) // one 20 MiB segment
	big := e.alloc(17 * miB)               // its own, of 18 MiB
	e.free(a)
	e.free(big)
	assert.Equal(t, uint64(18*miB), e.p.Reclaim(pool.All), "the 20 MiB segment still holds b")
	e.free(b)
	assert.Equal(t, uint64(20*miB), e.p.Reclaim(pool.All))
	assert.Zero(t, e.src.Reserved())
	assert.Equal(t, uint64(2), e.p.Stats().DriverFrees)
}

// Under the hard limit a miss first gives back what other streams cached,
// then retries once; only then is it out of memory.
func TestHardLimitReclaimsOtherStreamsAndRetries(t *testing.T) {
	const hard = 32 * miB
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			e := open(t, k.new, pool.Limits{Hard: hard})
			other := pooltest.NewStream(t, e.dev)
			cached := e.allocOn(20*miB, other)
			require.NoError(t, e.p.Free(cached, other))
			require.Equal(t, uint64(20*miB), e.src.Reserved(), "cached on the other stream")

			b := e.alloc(20 * miB) // 40 MiB without giving the cache back
			assert.LessOrEqual(t, e.src.Reserved(), uint64(hard))
			assert.Equal(t, uint64(20*miB), e.p.Stats().Reclaimed)

			_, err := e.p.Alloc(16*miB, e.s)
			require.ErrorIs(t, err, backend.ErrOutOfMemory)
			var oom *pool.OutOfMemoryError
			require.ErrorAs(t, err, &oom)
			assert.Equal(t, uint64(16*miB), oom.Request, "the error names the request")
			assert.Equal(t, uint64(hard), oom.Limit)
			e.free(b)
			e.free(e.alloc(30 * miB))
		})
	}
}

func TestSoftLimitUnmapsFreeGranules(t *testing.T) {
	const soft = 8 * miB
	e := open(t, split.New, pool.Limits{Soft: soft})
	a, b := e.alloc(16*miB), e.alloc(16*miB)
	e.free(a)
	assert.LessOrEqual(t, e.src.Reserved(), uint64(16*miB+soft), "a's granules went back on free")
	e.free(b)
	assert.LessOrEqual(t, e.src.Reserved(), uint64(soft))
}

func TestReservedIsExactlyTheMappedGranules(t *testing.T) {
	e := open(t, split.New, pool.Limits{})
	gran := e.dev.(backend.VirtualMemory).Granularity()
	var live []*pool.Block
	for i, size := range []uint64{100, 300 * kiB, 5 * miB, 1, 17*miB + 3, 2 * miB, 700 * kiB} {
		live = append(live, e.alloc(size))
		st := e.p.Stats()
		assert.Zero(t, st.Reserved%gran, "after alloc %d: reserved is whole granules", i)
		assert.GreaterOrEqual(t, st.Reserved, st.Live)
		assert.LessOrEqual(t, st.Reserved-st.Live, 2*gran*st.Allocs, "no more than the granules the blocks touch")
	}
	for _, b := range live {
		e.free(b)
	}
	e.p.Reclaim(pool.All)
	st := e.p.Stats()
	assert.Zero(t, st.Reserved)
	assert.Equal(t, st.DriverAllocs, st.DriverFrees)
}

func TestCloseNamesLiveBlocksAndKeepsTheirMemory(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			e := open(t, k.new, pool.Limits{})
			a := e.alloc(3 * miB)
			e.free(e.alloc(5 * miB))
			err := e.p.Close()
			require.Error(t, err)
			assert.Contains(t, err.Error(), "1 blocks")
			assert.Contains(t, err.Error(), "3.0 MiB")
			assert.GreaterOrEqual(t, e.src.Reserved(), a.Size, "the live block keeps its memory")
			e.free(a)
			require.NoError(t, e.p.Close())
			assert.Zero(t, e.src.Reserved())
		})
	}
}

func TestMisuseIsRefused(t *testing.T) {
	e := open(t, split.New, pool.Limits{})
	_, err := e.p.Alloc(0, e.s)
	require.ErrorIs(t, err, backend.ErrInvalidValue)
	_, err = e.p.Alloc(1<<62, e.s)
	require.ErrorIs(t, err, backend.ErrOutOfMemory, "a request no device has")

	// A block whose struct was merged away is refused, not freed twice.
	a, b := e.alloc(4*kiB), e.alloc(4*kiB)
	e.free(a)
	e.free(b) // b absorbs a
	require.ErrorIs(t, e.p.Free(a, e.s), backend.ErrInvalidValue)
	require.ErrorIs(t, e.p.Free(b, e.s), backend.ErrInvalidValue)
	require.ErrorIs(t, e.p.Free(&pool.Block{Owner: e.p}, e.s), backend.ErrInvalidValue)
	st := e.p.Stats()
	assert.Equal(t, uint64(2), st.Frees)
	assert.Zero(t, st.Live)
}

// A request that fits under the limit but needs a whole segment (ordinary)
// or granules mapped (virtual) beyond it: the message names what it needed.
func TestOutOfMemoryNamesTheSegmentOrMapping(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			e := open(t, k.new, pool.Limits{Hard: miB})
			_, err := e.p.Alloc(miB-100, e.s)
			require.ErrorIs(t, err, backend.ErrOutOfMemory)
			var oom *pool.OutOfMemoryError
			require.ErrorAs(t, err, &oom)
			assert.Equal(t, uint64(miB-100), oom.Request)
			want := "cannot allocate 1024 KiB (1048476 bytes) from a new 2.0 MiB segment with 0 B reserved under a hard limit of 1.0 MiB (1.0 MiB left)"
			if k.virtual {
				want = "cannot allocate 1024 KiB (1048476 bytes) by mapping 2.0 MiB more with 0 B reserved under a hard limit of 1.0 MiB (1.0 MiB left)"
			}
			assert.Contains(t, err.Error(), want)
		})
	}
}
