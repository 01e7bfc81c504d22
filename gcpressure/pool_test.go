package gcpressure_test

import (
	"bytes"
	"errors"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/gcpressure"
	"github.com/gocuda/gocuda/pool"
	"github.com/gocuda/gocuda/pool/pooltest"
)

const mib = 1 << 20

// newPool makes strategy name under hard limit hard, wrapped; a strategy
// the backend cannot run (the driver's pool on the host) skips.
func newPool(t testing.TB, name string, hard uint64, o gcpressure.Options) *gcpressure.Pool {
	t.Helper()
	inner, err := pool.New(name, pooltest.Device(t), pool.Limits{Hard: hard})
	if errors.Is(err, backend.ErrNotSupported) {
		t.Skipf("%s: %v", name, err)
	}
	require.NoError(t, err)
	w, err := gcpressure.Wrap(inner, o)
	require.NoError(t, err)
	t.Cleanup(func() {
		// Whatever the test left unreachable goes back before Close
		// checks for live blocks.
		runtime.GC()
		waitFrees(w)
		assert.NoError(t, w.Close())
	})
	return w
}

// waitFrees waits (a bounded while) until every block of w was freed.
func waitFrees(w *gcpressure.Pool) {
	for i := 0; i < 1000 && w.Stats().Allocs != w.Stats().Frees; i++ {
		time.Sleep(time.Millisecond)
	}
}

// garbage is what a cuarray Array is to its block: a Go object whose
// cleanup frees the block once the object is unreachable.
type garbage struct {
	b *pool.Block
	_ [64]byte // a header's worth of Go memory, as an array's
}

func makeGarbage(t testing.TB, p pool.Pool, size uint64, s backend.Stream) error {
	b, err := p.Alloc(size, s)
	if err != nil {
		return err
	}
	g := &garbage{b: b}
	runtime.AddCleanup(g, func(b *pool.Block) { _ = p.Free(b, s) }, b)
	return nil
}

// strategies are the pools the loops run on; the driver's pool skips
// itself on the host.
var strategies = []string{"split", "binned", "simple", "none", "cuda"}

func TestGarbageFarBeyondTheLimitCompletes(t *testing.T) {
	const limit, size = 64 * mib, 1 * mib
	total := uint64(16 * limit) // sixteen times the limit, all garbage
	if testing.Short() {
		total = 4 * limit
	}
	for _, name := range strategies {
		for _, early := range []bool{true, false} {
			t.Run(name+"/early="+strconv.FormatBool(early), func(t *testing.T) {
				// The stream first: cleanups run last-in first-out, so it outlives
				// the pool's cleanup, whose collection frees garbage on it.
				s := pooltest.NewStream(t, pooltest.Device(t))
				p := newPool(t, name, limit, gcpressure.Options{Early: early})
				for done := uint64(0); done < total; done += size {
					require.NoError(t, makeGarbage(t, p, size, s), "after %s of garbage", humanize.IBytes(done))
				}
				st := p.PressureStats()
				t.Log(st)
				assert.Zero(t, st.OOMFailures)
				if early {
					// The pacer (its target is the floor, half the
					// limit) or the pressure heuristic, whichever
					// comes first.
					assert.Positive(t, st.PacerCollections+st.EarlyCollections+st.ImminentCollections, "nothing collected before out of memory")
				} else {
					assert.Zero(t, st.EarlyCollections, "collected early with early GC off")
					assert.Positive(t, st.OOMRetries, "completed without the retry path: the loop did not reach the limit")
					assert.Positive(t, st.OOMCollections)
				}
				assert.LessOrEqual(t, p.Stats().ReservedPeak, uint64(limit))
			})
		}
	}
}

// pattern is block i's contents: 251 bytes (a prime, so no two blocks'
// rows line up) that name i, repeated by doubling copies, so that the race
// detector checks a memmove rather than a byte loop.
func pattern(i int, n uint64) []byte {
	d := make([]byte, n)
	for j := 0; j < len(d) && j < 251; j++ {
		d[j] = byte(i*31 + j)
	}
	for done := min(251, len(d)); done < len(d); {
		done += copy(d[done:], d[:done])
	}
	return d
}

func TestLiveSetBeyondTheLimitFailsClearlyAndKeepsWhatIsLive(t *testing.T) {
	const limit, size = 16 * mib, 3 * mib / 2
	for _, name := range strategies {
		t.Run(name, func(t *testing.T) {
			if testing.Short() && (name == "binned" || name == "simple") {
				t.Skip("short: split (caching, splitting), none (no cache) and cuda cover the ladder")
			}
			// The stream first: cleanups run last-in first-out, so it outlives
			// the pool's cleanup, whose collection frees garbage on it.
			s := pooltest.NewStream(t, pooltest.Device(t))
			p := newPool(t, name, limit, gcpressure.Options{Early: true, Status: func() string { return "STATUS: pool status here" }})
			var live []*pool.Block
			defer func() {
				for _, b := range live {
					assert.NoError(t, p.Free(b, s))
				}
			}()
			var err error
			for i := 0; i < 2*limit/size; i++ {
				var b *pool.Block
				if b, err = p.Alloc(size, s); err != nil {
					break
				}
				pooltest.Write(t, p.Device(), b.Ptr, pattern(i, size), s)
				live = append(live, b)
			}
			require.Error(t, err, "a live set of twice the limit fitted")
			assert.ErrorIs(t, err, backend.ErrOutOfMemory)
			var oom *pool.OutOfMemoryError
			require.ErrorAs(t, err, &oom)
			assert.Equal(t, uint64(size), oom.Request)
			msg := err.Error()
			assert.Contains(t, msg, "1.5 MiB (1572864 bytes)", "the request")
			assert.Contains(t, msg, "hard limit 16 MiB", "the limit")
			assert.Contains(t, msg, "STATUS: pool status here", "the pool's status")

			st := p.PressureStats()
			t.Log(st)
			assert.Equal(t, uint64(1), st.OOMFailures)
			assert.Positive(t, st.OOMCollections, "failed without collecting")
			// Nothing live was lost: every block still holds its bytes,
			// and the pool still counts each one.
			for i, b := range live {
				assert.True(t, bytes.Equal(pattern(i, size), pooltest.Read(t, p.Device(), b.Ptr, size, s)), "block %d lost its contents", i)
			}
			assert.Equal(t, uint64(len(live)), p.Stats().Allocs-p.Stats().Frees)
		})
	}
}

func TestStatusDefaultsToThePoolsStats(t *testing.T) {
	// The stream first: cleanups run last-in first-out, so it outlives
	// the pool's cleanup, whose collection frees garbage on it.
	s := pooltest.NewStream(t, pooltest.Device(t))
	p := newPool(t, "split", 8*mib, gcpressure.Options{})
	_, err := p.Alloc(16*mib, s)
	require.ErrorIs(t, err, backend.ErrOutOfMemory)
	assert.Contains(t, err.Error(), "reserved", "the status line")
	assert.Contains(t, err.Error(), "hit rate")
}

func TestCollectionShareStaysUnderItsBound(t *testing.T) {
	if testing.Short() {
		t.Skip("collects on purpose for a second")
	}
	// The temptation: a live set at 92 % of the limit, so every look is
	// in the zone where collections wait, and a pool that caches nothing,
	// so every allocation grows reserved bytes and makes a look; and a Go
	// heap of a few million pointers, so that each collection is slow.
	const limit, size = 64 * mib, 256 << 10
	const budget = 0.02
	// The stream first: cleanups run last-in first-out, so it outlives
	// the pool's cleanup, whose collection frees garbage on it.
	s := pooltest.NewStream(t, pooltest.Device(t))
	// The pacer off: its own budget is tested apart, and with a live set
	// at 92 % of the limit it would be the one to collect.
	p := newPool(t, "none", limit, gcpressure.Options{Early: true, Budget: budget, GCPercent: gcpressure.PacerOff})
	var live []*pool.Block
	for range 92 * limit / 100 / size {
		b, err := p.Alloc(size, s)
		require.NoError(t, err)
		live = append(live, b)
	}
	defer func() {
		for _, b := range live {
			assert.NoError(t, p.Free(b, s))
		}
	}()
	heap := make([]*[4]int, 3<<20)
	for i := range heap {
		heap[i] = new([4]int)
	}
	start := time.Now()
	for time.Since(start) < time.Second {
		require.NoError(t, makeGarbage(t, p, size, s))
	}
	runtime.KeepAlive(heap)
	st := p.PressureStats()
	t.Log(st)
	// Tempted: collections kept coming. On a loaded machine most may be
	// imminent ones (outside the budget by design), leaving few early.
	require.GreaterOrEqual(t, st.EarlyCollections+st.ImminentCollections, 2, "the loop did not tempt the heuristic")
	// The bound: MaxBudgetFactor times the budget over the run, plus the
	// one collection that a run may start with.
	bound := gcpressure.MaxBudgetFactor*budget + float64(st.EarlyTime)/float64(max(st.EarlyCollections, 1))/float64(st.RunTime)
	assert.LessOrEqual(t, st.EarlyShare(), bound, "early collections took %v of %v", st.EarlyTime, st.RunTime)
}

func TestWrapRefusesBadOptions(t *testing.T) {
	inner, err := pool.New("split", pooltest.Device(t), pool.Limits{})
	require.NoError(t, err)
	defer func() { assert.NoError(t, inner.Close()) }()
	for _, tc := range []struct {
		name string
		o    gcpressure.Options
		want string
	}{
		{"negative budget", gcpressure.Options{Budget: -0.1}, "Options.Budget = -0.1 is out of range; accepted: 0 (the default, 0.05) up to 0.25"},
		{"budget above the cap", gcpressure.Options{Budget: 0.5}, "Options.Budget = 0.5"},
		{"negative cleanup timeout", gcpressure.Options{CleanupTimeout: -time.Second}, "Options.CleanupTimeout = -1s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := gcpressure.Wrap(inner, tc.o)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	_, err = gcpressure.Wrap(nil, gcpressure.Options{})
	assert.ErrorContains(t, err, "nil pool")
}

func TestOOMPathEmitsEvents(t *testing.T) {
	// The stream first: cleanups run last-in first-out, so it outlives
	// the pool's cleanup, whose collection frees garbage on it.
	s := pooltest.NewStream(t, pooltest.Device(t))
	p := newPool(t, "split", 8*mib, gcpressure.Options{})
	var kinds [16]atomic.Int32
	var notes atomic.Value
	cancel := pool.Subscribe(func(e pool.Event) {
		if e.Device == p.Device().Ordinal() {
			kinds[e.Kind].Add(1)
			if e.Kind == pool.EventCollect {
				notes.Store(e.Note)
			}
		}
	})
	defer cancel()
	// Fits the limit alone, not beside what is live: the ladder runs (a
	// request beyond the limit would skip it).
	live, err := p.Alloc(6*mib, s)
	require.NoError(t, err)
	defer func() { assert.NoError(t, p.Free(live, s)) }()
	_, err = p.Alloc(4*mib, s)
	require.ErrorIs(t, err, backend.ErrOutOfMemory)
	assert.Positive(t, kinds[pool.EventOOMRetry].Load())
	assert.Positive(t, kinds[pool.EventCollect].Load())
	assert.Equal(t, "oom", notes.Load())
	assert.Positive(t, kinds[pool.EventOOM].Load())
}

func TestForFindsTheLayerOfTheRootPackagesPools(t *testing.T) {
	p, err := gocuda.Pool(0)
	require.NoError(t, err)
	w, ok := gcpressure.For(p)
	require.True(t, ok, "gocuda.Pool(0) is %T without the pressure layer", p)
	c, err := gocuda.Config()
	require.NoError(t, err)
	assert.Equal(t, c.Pool, w.Name())
	_, ok = gcpressure.For(w.Unwrap())
	assert.False(t, ok)
}

func TestWaitForCleanupsCoversEveryCleanupOfTheCollection(t *testing.T) {
	// The out-of-memory path relies on this: after its collection, every
	// cleanup has run, however many goroutines run them and however slow
	// each is.
	const n = 2000
	p := newPool(t, "split", 0, gcpressure.Options{})
	var ran atomic.Int32
	func() {
		for range n {
			g := new(garbage)
			runtime.AddCleanup(g, func(int) {
				if ran.Add(1)%100 == 0 {
					time.Sleep(time.Millisecond) // some cleanups are slow
				}
			}, 0)
		}
	}()
	gcpressure.CollectForTest(p)
	assert.Equal(t, int32(n), ran.Load())
}

// A request that can never fit (beyond the hard limit or the device) is
// refused without climbing the ladder: no collection, no retry, and the
// pool's cache and reserved bytes as they were.
func TestHopelessRequestSkipsTheLadder(t *testing.T) {
	const limit = 64 * mib
	for _, tc := range []struct {
		name    string
		hard    uint64
		request func(dev backend.Device) uint64
	}{
		{"BeyondHardLimit", limit, func(backend.Device) uint64 { return 80 * mib }},
		{"BeyondDeviceTotal", 0, func(d backend.Device) uint64 { return d.Info().TotalMemory + 64*mib }},
	} {
		for _, name := range strategies {
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				s := pooltest.NewStream(t, pooltest.Device(t))
				p := newPool(t, name, tc.hard, gcpressure.Options{Early: true})
				live, err := p.Alloc(mib, s)
				require.NoError(t, err)
				cached, err := p.Alloc(4*mib, s)
				require.NoError(t, err)
				require.NoError(t, p.Free(cached, s))
				before := p.Stats()

				_, err = p.Alloc(tc.request(p.Device()), s)
				require.ErrorIs(t, err, backend.ErrOutOfMemory)
				st := p.PressureStats()
				assert.Zero(t, st.OOMCollections, "collected for a request that cannot fit")
				assert.Zero(t, st.OOMRetries, "climbed the ladder for a request that cannot fit")
				assert.Equal(t, uint64(1), st.OOMFailures)
				assert.Zero(t, st.Waited, "an allocation waited")
				assert.Equal(t, before.Reserved, p.Stats().Reserved, "the cache was given back for a request that cannot fit")
				require.NoError(t, p.Free(live, s))
			})
		}
	}
}

// hidden is a pool whose Source the pressure layer cannot find.
type hidden struct{ pool.Pool }

func TestSetLimitsHoldsTheNextAllocAndTheHeuristic(t *testing.T) {
	p := newPool(t, "simple", 0, gcpressure.Options{Early: true})
	s := pooltest.NewStream(t, pooltest.Device(t))
	require.NoError(t, p.SetLimits(pool.Limits{Soft: 4 * mib, Hard: 8 * mib}))
	_, err := p.Alloc(16*mib, s)
	require.ErrorIs(t, err, backend.ErrOutOfMemory)
	assert.Contains(t, err.Error(), "hard limit 8.0 MiB")

	err = p.SetLimits(pool.Limits{Soft: 16 * mib, Hard: 8 * mib})
	require.ErrorIs(t, err, backend.ErrInvalidValue)
	assert.Equal(t, uint64(8*mib), p.Stats().HardLimit, "a refused change changes nothing")

	require.NoError(t, p.SetLimits(pool.Limits{}))
	b, err := p.Alloc(16*mib, s)
	require.NoError(t, err)
	require.NoError(t, p.Free(b, s))

	inner, err := pool.New("simple", pooltest.Device(t), pool.Limits{})
	require.NoError(t, err)
	w, err := gcpressure.Wrap(hidden{inner}, gcpressure.Options{})
	require.NoError(t, err)
	defer w.Close()
	err = w.SetLimits(pool.Limits{Hard: mib})
	require.ErrorIs(t, err, backend.ErrNotSupported)
	assert.Contains(t, err.Error(), "keeps no limits")
}
