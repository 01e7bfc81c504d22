package pooltest

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/atomic"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/pool"
)

// testLiveWatch checks pool.LiveWatcher where the strategy has it: fn runs
// once when a stream's live bytes pass their share of room, whether the
// blocks come from the cache or the driver; frees move the mark's way
// back (alloc and free churn never fires); room 0 disarms; a stream made
// under a watch fires at its first allocation.
func (s Suite) testLiveWatch(t *testing.T) {
	e := s.open(t, pool.Limits{})
	lw, ok := e.p.(pool.LiveWatcher)
	if !ok {
		t.Skipf("%s does not implement pool.LiveWatcher", e.p.Name())
	}
	st := NewStream(t, e.dev)
	var fired atomic.Int32
	fn := func() { fired.Inc() }

	// Warm the cache so that later allocations are hits, then free.
	var warm []*pool.Block
	for range 8 {
		warm = append(warm, e.alloc(miB, st))
	}
	for _, b := range warm {
		e.free(b, st)
	}
	require.Zero(t, fired.Load(), "no watch armed yet")

	for _, tc := range []struct {
		name      string
		room      uint64
		allocs    int // of 1 MiB each, kept live
		wantFired int32
	}{
		{"below the room nothing fires", 4*miB + miB/2, 4, 0},
		{"past the room fires once", 2*miB + miB/2, 5, 1},
		{"room 0 disarms", 0, 6, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fired.Store(0)
			lw.WatchLive(tc.room, fn)
			live := e.allocMiBs(tc.allocs, st)
			require.Equal(t, tc.wantFired, fired.Load())
			e.freeAll(live, st)
			lw.WatchLive(0, nil)
		})
	}

	t.Run("churn below the room never fires", func(t *testing.T) {
		fired.Store(0)
		lw.WatchLive(2*miB, fn)
		for range 100 {
			e.free(e.alloc(miB, st), st)
		}
		require.Zero(t, fired.Load())
		lw.WatchLive(0, nil)
	})

	t.Run("fn may watch again", func(t *testing.T) {
		fired.Store(0)
		var again func()
		again = func() { fired.Inc(); lw.WatchLive(miB+miB/2, again) }
		lw.WatchLive(miB+miB/2, again)
		live := e.allocMiBs(6, st)
		// Marks at 1.5, 3.5 and 5.5 MiB of live bytes: the 2nd, 4th and
		// 6th allocations pass them.
		require.Equal(t, int32(3), fired.Load())
		e.freeAll(live, st)
		lw.WatchLive(0, nil)
	})

	t.Run("a new stream fires at its first allocation", func(t *testing.T) {
		fired.Store(0)
		lw.WatchLive(64*miB, fn)
		other := NewStream(t, e.dev)
		b := e.alloc(miB, other)
		require.Equal(t, int32(1), fired.Load())
		e.free(b, other)
		lw.WatchLive(0, nil)
	})

	t.Run("room is shared among the streams holding live bytes", func(t *testing.T) {
		fired.Store(0)
		a, b := NewStream(t, e.dev), NewStream(t, e.dev)
		ha, hb := e.alloc(miB, a), e.alloc(miB, b)
		// Two streams hold live bytes: 4 MiB of room is 2 MiB each.
		lw.WatchLive(4*miB, fn)
		var live []*pool.Block
		for _, s := range []backend.Stream{a, a} {
			live = append(live, e.alloc(miB, s))
		}
		require.Zero(t, fired.Load(), "2 MiB on one stream is its share, not past it")
		live = append(live, e.alloc(miB, a))
		require.Equal(t, int32(1), fired.Load())
		for _, x := range live {
			e.free(x, a)
		}
		e.free(ha, a)
		e.free(hb, b)
		lw.WatchLive(0, nil)
	})
	e.close(s)
}

// allocMiBs allocates n blocks of 1 MiB on st.
func (e *env) allocMiBs(n int, st backend.Stream) []*pool.Block {
	e.t.Helper()
	var live []*pool.Block
	for range n {
		live = append(live, e.alloc(miB, st))
	}
	return live
}

// freeAll frees blocks on st.
func (e *env) freeAll(blocks []*pool.Block, st backend.Stream) {
	e.t.Helper()
	for _, b := range blocks {
		e.free(b, st)
	}
}
