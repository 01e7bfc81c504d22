package pooltest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dustin/go-humanize"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/pool"
)

const (
	kiB = 1 << 10
	miB = 1 << 20
)

// Suite is the conformance suite for one strategy. Run, Fuzz and the
// benchmarks are shorthands for a Suite with only Name and New set.
type Suite struct {
	// Name is the strategy's registered name. The suite checks that
	// pool.New finds it and that Pool.Name says it; empty skips that.
	Name string
	// New makes the pool under test.
	New pool.Factory
	// Fragments says live blocks may pin cached memory the pool cannot
	// give back (a segment shared by a live and a free block). The suite
	// then checks the soft limit, "Reclaim gives back what is cached" and
	// "out of memory only when live bytes fill the limit" only in states
	// where nothing is live.
	Fragments bool
	// Retains says the pool may keep memory reserved after Reclaim(All)
	// with nothing live (a driver pool with a floor): Reserved is then not
	// required to reach 0.
	Retains bool
}

// Run runs the conformance suite for the strategy registered as name,
// whose factory is mk.
func Run(t *testing.T, name string, mk pool.Factory) {
	Suite{Name: name, New: mk}.Run(t)
}

// Run runs every conformance test as a subtest named after the strategy.
func (s Suite) Run(t *testing.T) {
	require.NotNil(t, s.New, "pooltest: Suite.New is nil")
	name := s.Name
	if name == "" {
		name = "pool"
	}
	t.Run(name, func(t *testing.T) {
		for _, tc := range []struct {
			name string
			fn   func(*testing.T)
		}{
			{"Registered", s.testRegistered},
			{"SizesAreAlignedAndHoldData", s.testSizes},
			{"AllocZeroIsInvalid", s.testAllocZero},
			{"FreeMisuseIsAnError", s.testFreeMisuse},
			{"StatsCountAllocsAndFrees", s.testStats},
			{"HardLimitIsOutOfMemory", s.testHardLimit},
			{"ReclaimReturnsDropInReserved", s.testReclaim},
			{"SoftLimitBoundsReserved", s.testSoftLimit},
			{"LimitsSetAtRunTimeHoldTheNextAlloc", s.testSetLimits},
			{"CrossStreamReuseIsOrdered", s.testCrossStream},
			{"ConcurrentStreams", s.testConcurrent},
			{"CloseReportsLiveBlocks", s.testCloseReportsLive},
			{"RetireStreamGivesBackItsCache", s.testRetireStream},
			{"RefusalLeavesNothingBehind", s.testRefusals},
			{"RefusedReleaseIsRetried", s.testRefusedRelease},
			{"LiveWatchFiresPastTheRoom", s.testLiveWatch},
		} {
			t.Run(tc.name, tc.fn)
		}
	})
}

// env is one pool under test with its device and source.
type env struct {
	t      testing.TB
	dev    backend.Device
	src    *pool.Source
	p      pool.Pool
	closed bool
}

// open makes a pool with limits l. It is closed when the test ends unless
// the test closed it itself (a pool need not survive a second Close).
func (s Suite) open(t testing.TB, l pool.Limits) *env {
	t.Helper()
	dev := Device(t)
	src, err := pool.NewSource(dev, l)
	require.NoError(t, err)
	p, err := s.New(dev, src)
	require.NoError(t, err)
	require.NotNil(t, p)
	e := &env{t: t, dev: dev, src: src, p: p}
	t.Cleanup(func() {
		if !e.closed {
			_ = p.Close()
		}
	})
	return e
}

// close requires a clean Close (nothing live) that leaves nothing
// reserved, unless the strategy retains memory.
func (e *env) close(s Suite) {
	e.t.Helper()
	e.closed = true
	require.NoError(e.t, e.p.Close(), "Close with no live blocks")
	if !s.Retains {
		assert.Zero(e.t, e.src.Reserved(), "bytes still reserved after Close")
	}
}

func (e *env) alloc(size uint64, st backend.Stream) *pool.Block {
	e.t.Helper()
	b, err := e.p.Alloc(size, st)
	require.NoError(e.t, err, "Alloc(%d)", size)
	checkBlock(e.t, e.p, b, size, st)
	return b
}

func (e *env) free(b *pool.Block, st backend.Stream) {
	e.t.Helper()
	require.NoError(e.t, e.p.Free(b, st))
}

// checkBlock checks what every live block promises.
func checkBlock(t testing.TB, p pool.Pool, b *pool.Block, req uint64, st backend.Stream) {
	t.Helper()
	require.NotNil(t, b)
	assert.Zero(t, uint64(b.Ptr)%pool.Alignment, "Ptr %#x is not %d-byte aligned", uintptr(b.Ptr), pool.Alignment)
	assert.NotZero(t, b.Ptr)
	assert.GreaterOrEqual(t, b.Size, req, "Size below the request")
	assert.Equal(t, req, b.Requested, "Requested")
	assert.True(t, b.Owner == p, "Owner is not the pool that made the block")
	assert.True(t, b.Stream == st, "Stream is not the stream the block was allocated on")
	assert.False(t, b.Free, "a live block is marked Free")
}

func (s Suite) testRegistered(t *testing.T) {
	if s.Name == "" {
		t.Skip("Suite.Name is empty")
	}
	require.Contains(t, pool.Registered(), s.Name, "the strategy's package must pool.Register it in init")
	dev := Device(t)
	p, err := pool.New(s.Name, dev, pool.Limits{})
	require.NoError(t, err)
	assert.Equal(t, s.Name, p.Name())
	assert.True(t, p.Device() == dev, "Device() is not the device the pool was made for")
	assert.NoError(t, p.Close())
}

var sizeTable = []struct {
	name string
	size uint64
}{
	{"1B", 1},
	{"255B", 255},
	{"256B", 256},
	{"257B", 257},
	{"4095B", 4095},
	{"4KiB", 4 * kiB},
	{"64KiB+3", 64*kiB + 3},
	{"1MiB-1", miB - 1},
	{"1MiB", miB},
	{"1MiB+1", miB + 1},
	{"3MiB+5", 3*miB + 5},
	{"16MiB", 16 * miB},
	{"64MiB", 64 * miB},
}

func (s Suite) testSizes(t *testing.T) {
	e := s.open(t, pool.Limits{})
	st := NewStream(t, e.dev)
	// Blocks are written and read in chunks of at most 8 MiB from one
	// buffer: fresh host memory is slow to touch on a VM, and more so
	// under -race, whose shadow memory grows with every large buffer. The
	// data is random with an odd period, and each chunk starts at another
	// offset in it, so a copy shifted by any multiple of 256 bytes (or of
	// a chunk) reads back different.
	const chunk = 8 * miB
	data, got := randomData(chunk+64*kiB), make([]byte, chunk)
	src := func(off, n uint64) []byte { return data[(off/chunk*4099)%(64*kiB):][:n] }
	for _, tc := range sizeTable {
		t.Run(tc.name, func(t *testing.T) {
			e.t = t
			b := e.alloc(tc.size, st)
			// Size is the usable size: fill all of it, not just the request.
			for off := uint64(0); off < b.Size; off += chunk {
				Write(t, e.dev, b.Ptr+backend.Ptr(off), src(off, min(chunk, b.Size-off)), st)
			}
			for off := uint64(0); off < b.Size; off += chunk {
				n := min(chunk, b.Size-off)
				require.NoError(t, readInto(e.dev, got[:n], b.Ptr+backend.Ptr(off), st))
				if want := src(off, n); !bytes.Equal(want, got[:n]) {
					require.Fail(t, "data read back differs", "at offset %d: %s", off, firstDiff(got[:n], want))
				}
			}
			e.free(b, st)
		})
	}
	e.t = t
	st0 := e.p.Stats()
	assert.Zero(t, st0.Live)
	assert.Equal(t, uint64(len(sizeTable)), st0.Allocs)
	e.close(s)
}

func (s Suite) testAllocZero(t *testing.T) {
	e := s.open(t, pool.Limits{})
	st := NewStream(t, e.dev)
	b, err := e.p.Alloc(0, st)
	require.ErrorIs(t, err, backend.ErrInvalidValue)
	assert.Nil(t, b)
	assert.Contains(t, err.Error(), "0", "the error names the size")
	stats := e.p.Stats()
	assert.Zero(t, stats.Allocs, "a failed Alloc is not counted")
	assert.Zero(t, stats.Reserved)
	e.close(s)
}

func (s Suite) testFreeMisuse(t *testing.T) {
	e := s.open(t, pool.Limits{})
	st := NewStream(t, e.dev)

	t.Run("NilBlock", func(t *testing.T) {
		var err error
		require.NotPanics(t, func() { err = e.p.Free(nil, st) })
		require.ErrorIs(t, err, backend.ErrInvalidValue)
	})
	t.Run("DoubleFree", func(t *testing.T) {
		b := e.alloc(4*kiB, st)
		e.free(b, st)
		var err error
		require.NotPanics(t, func() { err = e.p.Free(b, st) })
		require.ErrorIs(t, err, backend.ErrInvalidValue)
		other := NewStream(t, e.dev)
		require.NotPanics(t, func() { err = e.p.Free(b, other) })
		require.ErrorIs(t, err, backend.ErrInvalidValue, "double free on another stream")
	})
	t.Run("ForeignBlock", func(t *testing.T) {
		other := s.open(t, pool.Limits{})
		b, err := other.p.Alloc(4*kiB, st)
		require.NoError(t, err)
		require.NotPanics(t, func() { err = e.p.Free(b, st) })
		require.ErrorIs(t, err, backend.ErrInvalidValue)
		// The owner still takes it back: the failed Free changed nothing.
		require.NoError(t, other.p.Free(b, st))
		other.close(s)
	})

	// The misuse left the pool's figures and state alone.
	stats := e.p.Stats()
	assert.Equal(t, uint64(1), stats.Allocs)
	assert.Equal(t, uint64(1), stats.Frees)
	assert.Zero(t, stats.Live)
	assert.Zero(t, stats.Requested)
	b := e.alloc(4*kiB, st)
	e.free(b, st)
	e.close(s)
}

func (s Suite) testStats(t *testing.T) {
	const hard = 512 * miB
	e := s.open(t, pool.Limits{Hard: hard})
	streams := []backend.Stream{NewStream(t, e.dev), NewStream(t, e.dev)}
	rng := rand.New(rand.NewPCG(1, 2))

	var live []*pool.Block
	var allocs, frees uint64
	check := func(when string) {
		t.Helper()
		st := e.p.Stats()
		var size, req uint64
		for _, b := range live {
			size += b.Size
			req += b.Requested
		}
		require.Equal(t, allocs, st.Allocs, "Allocs %s", when)
		require.Equal(t, frees, st.Frees, "Frees %s", when)
		require.Equal(t, st.Allocs, st.Hits+st.Misses, "Hits+Misses %s", when)
		require.Equal(t, size, st.Live, "Live is the sum of live Block.Size %s", when)
		require.Equal(t, req, st.Requested, "Requested %s", when)
		require.LessOrEqual(t, st.Reserved, uint64(hard), "Reserved above the hard limit %s", when)
		require.GreaterOrEqual(t, st.Reserved, st.Live, "Reserved below Live %s", when)
		require.Equal(t, st.Reserved-st.Live, st.Cached(), "Cached %s", when)
		require.GreaterOrEqual(t, st.ReservedPeak, st.Reserved, "ReservedPeak %s", when)
		require.LessOrEqual(t, st.ReservedPeak, uint64(hard), "ReservedPeak %s", when)
		require.GreaterOrEqual(t, st.LivePeak, st.Live, "LivePeak %s", when)
		require.Equal(t, uint64(hard), st.HardLimit)
	}

	check("at start")
	for round := 0; round < 3; round++ {
		for i := 0; i < 40; i++ {
			k := rng.IntN(len(streams))
			size := randSize(rng, 4*miB)
			live = append(live, e.alloc(size, streams[k]))
			allocs++
			check(fmt.Sprintf("after alloc %d of round %d", i, round))
		}
		for i := 0; i < 25; i++ {
			j := rng.IntN(len(live))
			b := live[j]
			live = slices.Delete(live, j, j+1)
			// Free on the stream it was used on, or on another one that
			// the caller says used it last.
			e.free(b, streams[rng.IntN(len(streams))])
			frees++
			check(fmt.Sprintf("after free %d of round %d", i, round))
		}
	}
	for _, b := range live {
		e.free(b, b.Stream)
		frees++
	}
	live = nil
	check("after freeing everything")
	e.close(s)
}

func (s Suite) testHardLimit(t *testing.T) {
	const hard = 64 * miB
	e := s.open(t, pool.Limits{Hard: hard})
	st := NewStream(t, e.dev)

	var blocks []*pool.Block
	var err error
	for i := 0; i < 2*hard/miB; i++ {
		var b *pool.Block
		if b, err = e.p.Alloc(miB, st); err != nil {
			break
		}
		blocks = append(blocks, b)
		require.LessOrEqual(t, e.p.Stats().Reserved, uint64(hard))
	}
	require.Error(t, err, "%d blocks of 1 MiB under a 64 MiB hard limit and no failure", len(blocks))
	require.ErrorIs(t, err, backend.ErrOutOfMemory)
	var oom *pool.OutOfMemoryError
	require.ErrorAs(t, err, &oom)
	assert.Equal(t, uint64(hard), oom.Limit)
	assert.Equal(t, uint64(miB), oom.Request,
		"the error names the caller's request, not a rounded or segment size (set OutOfMemoryError.Request)")
	assert.Contains(t, err.Error(), humanize.IBytes(miB), "the message names the request")
	assert.Contains(t, err.Error(), humanize.IBytes(hard), "the message names the limit")
	// The pool filled most of the limit before it failed.
	assert.GreaterOrEqual(t, len(blocks), hard/miB/2, "blocks of 1 MiB that fit under 64 MiB")

	stats := e.p.Stats()
	assert.Equal(t, uint64(len(blocks)), stats.Allocs, "a failed Alloc is not counted")
	assert.Equal(t, uint64(len(blocks))*blocks[0].Size, stats.Live)

	// Freeing one block makes room for one more.
	e.free(blocks[len(blocks)-1], st)
	blocks[len(blocks)-1] = e.alloc(miB, st)

	// With everything free, a request that no cached block can serve
	// succeeds: the pool gives its cache back under pressure.
	for _, b := range blocks {
		e.free(b, st)
	}
	big := e.alloc(hard/2+miB, st)
	assert.LessOrEqual(t, e.p.Stats().Reserved, uint64(hard))
	e.free(big, st)

	// A single request past the limit fails and names itself.
	_, err = e.p.Alloc(hard+1, st)
	require.ErrorIs(t, err, backend.ErrOutOfMemory)
	require.ErrorAs(t, err, &oom)
	assert.Equal(t, uint64(hard+1), oom.Request)
	e.close(s)
}

func (s Suite) testReclaim(t *testing.T) {
	e := s.open(t, pool.Limits{})
	streams := []backend.Stream{NewStream(t, e.dev), NewStream(t, e.dev)}
	sizes := []uint64{kiB, 100 * kiB, miB, 3 * miB, 17*miB + 5, 512, miB}
	fill := func() {
		var blocks []*pool.Block
		for i, size := range sizes {
			blocks = append(blocks, e.alloc(size, streams[i%2]))
		}
		for _, b := range blocks {
			e.free(b, b.Stream)
		}
	}

	fill()
	before := e.p.Stats()
	got := e.p.Reclaim(pool.All)
	after := e.p.Stats()
	assert.Equal(t, before.Reserved-after.Reserved, got, "Reclaim returns the drop in Reserved")
	assert.Equal(t, before.Reclaimed+got, after.Reclaimed, "Stats.Reclaimed counts what Reclaim gave back")
	if !s.Retains {
		assert.Zero(t, after.Reserved, "Reserved after freeing everything and Reclaim(All)")
	}
	assert.Zero(t, e.p.Reclaim(pool.All), "Reclaim of an empty cache")

	fill()
	before = e.p.Stats()
	got = e.p.Reclaim(miB)
	after = e.p.Stats()
	assert.Equal(t, before.Reserved-after.Reserved, got, "Reclaim(1 MiB) returns the drop in Reserved")
	if !s.Retains && before.Cached() >= miB {
		assert.GreaterOrEqual(t, got, uint64(miB), "Reclaim(1 MiB) with %s cached", humanize.IBytes(before.Cached()))
	}

	// Reclaim leaves live blocks and their contents alone.
	st := streams[0]
	b := e.alloc(2*miB, st)
	want := pattern32(0x5eed, b.Size)
	Write(t, e.dev, b.Ptr, want, st)
	before = e.p.Stats()
	got = e.p.Reclaim(pool.All)
	after = e.p.Stats()
	assert.Equal(t, before.Reserved-after.Reserved, got)
	assert.Equal(t, before.Live, after.Live)
	assert.GreaterOrEqual(t, after.Reserved, after.Live)
	if !s.Fragments && !s.Retains {
		assert.Equal(t, after.Live, after.Reserved, "Reclaim(All) leaves only live blocks reserved")
	}
	got2 := Read(t, e.dev, b.Ptr, b.Size, st)
	if !bytes.Equal(want, got2) {
		require.Fail(t, "a live block changed under Reclaim", firstDiff(got2, want))
	}
	e.free(b, st)
	e.p.Reclaim(pool.All)
	e.close(s)
}

func (s Suite) testSoftLimit(t *testing.T) {
	const soft = 8 * miB
	e := s.open(t, pool.Limits{Soft: soft})
	streams := []backend.Stream{NewStream(t, e.dev), NewStream(t, e.dev)}
	rng := rand.New(rand.NewPCG(3, 4))

	var blocks []*pool.Block
	for i := 0; i < 24; i++ {
		blocks = append(blocks, e.alloc(miB, streams[i%2]))
	}
	for _, size := range []uint64{300 * kiB, 5 * miB, 2*miB + 1} {
		blocks = append(blocks, e.alloc(size, streams[0]))
	}
	rng.Shuffle(len(blocks), func(i, j int) { blocks[i], blocks[j] = blocks[j], blocks[i] })
	for i, b := range blocks {
		e.free(b, b.Stream)
		st := e.p.Stats()
		if !s.Fragments && !s.Retains {
			require.LessOrEqual(t, st.Reserved, max(uint64(soft), st.Live),
				"after free %d: Reserved %s, Live %s, soft limit %s", i, humanize.IBytes(st.Reserved),
				humanize.IBytes(st.Live), humanize.IBytes(soft))
		}
	}
	st := e.p.Stats()
	assert.Zero(t, st.Live)
	if !s.Retains {
		assert.LessOrEqual(t, st.Reserved, uint64(soft), "Reserved once everything is free, soft limit %s", humanize.IBytes(soft))
	}
	assert.Equal(t, uint64(soft), st.SoftLimit)
	e.close(s)
}

// testSetLimits changes the limits of a pool in use through its Source:
// the next Alloc is held to the new hard limit, and a soft limit above
// the hard one is refused without changing anything.
func (s Suite) testSetLimits(t *testing.T) {
	e := s.open(t, pool.Limits{})
	st := NewStream(t, e.dev)
	b := e.alloc(4*miB, st)

	require.NoError(t, e.src.SetLimits(pool.Limits{Soft: 4 * miB, Hard: 16 * miB}))
	assert.Equal(t, pool.Limits{Soft: 4 * miB, Hard: 16 * miB}, e.src.Limits())
	stats := e.p.Stats()
	assert.Equal(t, uint64(4*miB), stats.SoftLimit)
	assert.Equal(t, uint64(16*miB), stats.HardLimit)
	_, err := e.p.Alloc(32*miB, st)
	require.ErrorIs(t, err, backend.ErrOutOfMemory, "32 MiB under a hard limit lowered to 16 MiB")
	var oom *pool.OutOfMemoryError
	require.ErrorAs(t, err, &oom)
	assert.Equal(t, uint64(16*miB), oom.Limit)

	err = e.src.SetLimits(pool.Limits{Soft: 32 * miB, Hard: 16 * miB})
	require.ErrorIs(t, err, backend.ErrInvalidValue)
	assert.Contains(t, err.Error(), "soft limit 32 MiB")
	assert.Contains(t, err.Error(), "hard limit 16 MiB")
	assert.Equal(t, pool.Limits{Soft: 4 * miB, Hard: 16 * miB}, e.src.Limits(), "a refused change changes nothing")

	require.NoError(t, e.src.SetLimits(pool.Limits{}))
	big := e.alloc(32*miB, st)
	e.free(big, st)
	e.free(b, st)
	e.p.Reclaim(pool.All)
	e.close(s)
}

// testCrossStream is the test that must also pass on a GPU and under
// compute-sanitizer: a block freed on stream A while A still has writes to
// it queued, then allocated on stream B, must not see A's writes land
// after B's. A pool that hands the block to B without ordering B after A
// fails here.
func (s Suite) testCrossStream(t *testing.T) {
	const (
		size  = 16 * miB
		words = size / 4
		// slow memsets of the whole block are queued on A before the last
		// one: tens of milliseconds on the host, about 0.1 ms on an H100,
		// either way far longer than the Free and Alloc that follow.
		slow  = 16
		iters = 16
	)
	e := s.open(t, pool.Limits{})
	a, b := NewStream(t, e.dev), NewStream(t, e.dev)
	wantC := pattern32(0xC, size)
	got := make([]byte, size)
	reused := 0
	for i := 0; i < iters; i++ {
		blkA := e.alloc(size, a)
		for k := 0; k < slow; k++ {
			require.NoError(t, e.dev.Memset32(blkA.Ptr, 0xA, words, a))
		}
		require.NoError(t, e.dev.Memset32(blkA.Ptr, 0xB, words, a))
		ptrA := blkA.Ptr
		e.free(blkA, a) // no synchronization: A is still writing

		blkB := e.alloc(size, b)
		if blkB.Ptr < ptrA+size && ptrA < blkB.Ptr+backend.Ptr(blkB.Size) {
			reused++
		}
		require.NoError(t, e.dev.Memset32(blkB.Ptr, 0xC, words, b))
		require.NoError(t, b.Synchronize())
		require.NoError(t, readInto(e.dev, got, blkB.Ptr, b))
		if !bytes.Equal(got, wantC) {
			require.Fail(t, "block allocated on B does not hold B's write", "iteration %d: %s", i, firstDiff(got, wantC))
		}

		// Once A is done, B's bytes must still be there: A's queued
		// writes ran before B's, not after.
		require.NoError(t, a.Synchronize())
		require.NoError(t, readInto(e.dev, got, blkB.Ptr, b))
		if !bytes.Equal(got, wantC) {
			require.Fail(t, "A's queued writes landed after B's", "iteration %d: %s", i, firstDiff(got, wantC))
		}
		e.free(blkB, b)
	}
	t.Logf("%d of %d iterations handed A's memory to B", reused, iters)
	e.close(s)
}

func (s Suite) testConcurrent(t *testing.T) {
	const (
		goroutines = 8
		ops        = 2000
		maxLive    = 4
	)
	e := s.open(t, pool.Limits{})
	streams := make([]backend.Stream, goroutines)
	for g := range streams {
		streams[g] = NewStream(t, e.dev)
	}
	var wg sync.WaitGroup
	errs := make([]error, goroutines)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[g] = s.worker(e, g, ops, maxLive, streams[g])
		}()
	}
	wg.Wait()
	for g, err := range errs {
		require.NoError(t, err, "goroutine %d", g)
	}
	st := e.p.Stats()
	assert.Equal(t, uint64(goroutines*ops), st.Allocs)
	assert.Equal(t, uint64(goroutines*ops), st.Frees)
	assert.Zero(t, st.Live)
	assert.Zero(t, st.Requested)
	assert.Equal(t, st.Allocs, st.Hits+st.Misses)
	e.close(s)
}

// worker allocates ops blocks on its own stream, fills each with a word
// that names the goroutine and the allocation, and checks the block still
// holds it just before freeing it: a block handed to two owners at once,
// or overlapping another, shows up as the other owner's word.
func (s Suite) worker(e *env, g, ops, maxLive int, st backend.Stream) error {
	type held struct {
		b *pool.Block
		v uint32
	}
	rng := rand.New(rand.NewPCG(uint64(g), 7))
	var live []held
	var buf []byte
	release := func(i int) error {
		h := live[i]
		live = slices.Delete(live, i, i+1)
		n := h.b.Requested
		if uint64(cap(buf)) < n {
			buf = make([]byte, n)
		}
		got := buf[:n]
		if err := readInto(e.dev, got, h.b.Ptr, st); err != nil {
			return err
		}
		if want := pattern32(h.v, n); !bytes.Equal(got, want) {
			return fmt.Errorf("block %#x of %d bytes written with %#x changed before free: %s", uintptr(h.b.Ptr), n, h.v, firstDiff(got, want))
		}
		return e.p.Free(h.b, st)
	}
	for i := 0; i < ops; i++ {
		for len(live) == maxLive || (len(live) > 0 && rng.IntN(2) == 0) {
			if err := release(rng.IntN(len(live))); err != nil {
				return err
			}
		}
		// Mostly small blocks, now and then a large one: each touches
		// its bytes, and fresh memory is slow to touch on a VM.
		limit := uint64(64 * kiB)
		if rng.IntN(200) == 0 {
			limit = miB
		}
		size := randSize(rng, limit)
		b, err := e.p.Alloc(size, st)
		if err != nil {
			return err
		}
		if b.Ptr%pool.Alignment != 0 || b.Size < size || b.Requested != size || b.Stream != st || b.Free {
			return fmt.Errorf("Alloc(%d) returned a bad block: Ptr %#x, Size %d, Requested %d, Free %v",
				size, uintptr(b.Ptr), b.Size, b.Requested, b.Free)
		}
		v := uint32(g+1)<<24 | uint32(i)
		if err := e.dev.Memset32(b.Ptr, v, pool.RoundUp(size, 4)/4, st); err != nil {
			return err
		}
		live = append(live, held{b, v})
	}
	for len(live) > 0 {
		if err := release(len(live) - 1); err != nil {
			return err
		}
	}
	return nil
}

func (s Suite) testCloseReportsLive(t *testing.T) {
	e := s.open(t, pool.Limits{})
	st := NewStream(t, e.dev)
	b1, b2 := e.alloc(miB, st), e.alloc(miB, st)
	b3 := e.alloc(4*kiB, st)
	e.free(b3, st)
	want := pattern32(0xC105E, b1.Size)
	Write(t, e.dev, b1.Ptr, want, st)
	live := b1.Size + b2.Size

	e.closed = true
	err := e.p.Close()
	require.Error(t, err, "Close with two live blocks")
	msg := err.Error()
	assert.Contains(t, msg, "2", "the error names how many blocks are live")
	assert.True(t, strings.Contains(msg, humanize.IBytes(live)) || strings.Contains(msg, fmt.Sprint(live)),
		"the error %q names the live bytes (%s)", msg, humanize.IBytes(live))
	// Live blocks' memory is not touched.
	got := Read(t, e.dev, b1.Ptr, b1.Size, st)
	if !bytes.Equal(want, got) {
		require.Fail(t, "a live block changed under Close", firstDiff(got, want))
	}
}

// randSize returns a size from 1 to max, spread evenly over powers of two
// so that small and large requests both occur.
func randSize(rng *rand.Rand, max uint64) uint64 {
	bits := 0
	for 1<<bits < max {
		bits++
	}
	e := rng.IntN(bits + 1)
	lo := uint64(1) << e
	return min(max, lo+rng.Uint64N(lo))
}

// randomData returns n bytes of a random pattern with a period of
// 1 MiB + 13 bytes, built by doubling copies (cheap under -race).
func randomData(n uint64) []byte {
	out := make([]byte, n)
	period := min(n, miB+13)
	_, _ = rand.NewChaCha8([32]byte{1}).Read(out[:period])
	for done := period; done < n; {
		done += uint64(copy(out[done:], out[:done]))
	}
	return out
}

// firstDiff describes where got first differs from want.
func firstDiff(got, want []byte) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d bytes, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			w := i &^ 3
			end := min(w+4, len(got))
			return fmt.Sprintf("first difference at byte %d of %d: word % x, want % x", i, len(got), got[w:end], want[w:end])
		}
	}
	return "no difference"
}

// testRetireStream: a stream going away leaves no cache behind. After
// RetireStream(A, B) nothing cached for A stays reserved (beyond what
// live blocks pin, in pools that fragment), live blocks keep their bytes
// and are freed on B, A's ID may go to a new stream, and the pool ends
// with nothing live and nothing reserved.
func (s Suite) testRetireStream(t *testing.T) {
	e := s.open(t, pool.Limits{})
	a, heir := e.dev.NewStream()
	require.NoError(t, heir)
	b := NewStream(t, e.dev)

	t.Run("MisuseIsAnError", func(t *testing.T) {
		for _, tc := range []struct {
			name       string
			gone, heir backend.Stream
		}{
			{"NilGone", nil, b},
			{"NilHeir", a, nil},
			{"OwnHeir", a, a},
		} {
			_, err := e.p.RetireStream(tc.gone, tc.heir)
			require.ErrorIs(t, err, backend.ErrInvalidValue, tc.name)
		}
	})

	// A stream never used: nothing to give back.
	quiet := NewStream(t, e.dev)
	got, err := e.p.RetireStream(quiet, b)
	require.NoError(t, err)
	assert.Zero(t, got, "retiring a stream the pool never saw")

	// Live blocks first, then the cached ones, so that a pool carving
	// blocks out of segments can give back the large cached one whole.
	var live, cached []*pool.Block
	for _, size := range []uint64{100 * kiB, 3 * miB} {
		live = append(live, e.alloc(size, a))
	}
	for _, size := range []uint64{512, miB, 40 * miB} {
		cached = append(cached, e.alloc(size, a))
	}
	wants := make([][]byte, len(live))
	for i, blk := range live {
		wants[i] = pattern32(uint32(0xfeed+i), blk.Size)
		Write(t, e.dev, blk.Ptr, wants[i], a)
	}
	for _, blk := range cached {
		e.free(blk, a)
	}
	require.NoError(t, a.Synchronize())
	before := e.p.Stats()
	got, err = e.p.RetireStream(a, b)
	require.NoError(t, err)
	after := e.p.Stats()
	assert.Equal(t, before.Reserved-after.Reserved, got, "RetireStream returns the drop in Reserved")
	assert.Equal(t, before.Live, after.Live, "retiring leaves live blocks live")
	if !s.Retains && before.Cached() >= 40*miB {
		assert.GreaterOrEqual(t, got, uint64(32*miB), "%s was cached for the retired stream", humanize.IBytes(before.Cached()))
		if !s.Fragments {
			assert.Equal(t, after.Live, after.Reserved, "only live blocks stay reserved")
		}
	}
	assert.Zero(t, e.p.Reclaim(0), "Reclaim(0) after RetireStream")

	// The old stream goes; its ID may come back to a new stream, which
	// must find no stale cache.
	require.NoError(t, a.Destroy())
	c := NewStream(t, e.dev)
	fresh := e.alloc(miB, c)
	e.free(fresh, c)

	for i, blk := range live {
		got := Read(t, e.dev, blk.Ptr, blk.Size, b)
		if !bytes.Equal(got, wants[i]) {
			require.Fail(t, "a live block changed when its stream was retired", firstDiff(got, wants[i]))
		}
		e.free(blk, b)
	}
	// Memory moved to the heir serves it again.
	again := e.alloc(100*kiB, b)
	e.free(again, b)
	st := e.p.Stats()
	assert.Zero(t, st.Live)
	assert.Equal(t, st.Allocs, st.Frees)
	e.p.Reclaim(pool.All)
	e.close(s)
}
