package cuarray_test

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"weak"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/internal/testsupport/testhook"
	"github.com/gocuda/gocuda/pool"
)

// TestStreamCloseIsIdempotentAndEndsTheStream: Close twice is fine, and
// every later use of the stream fails with ErrClosed.
func TestStreamCloseIsIdempotentAndEndsTheStream(t *testing.T) {
	p := freshPool(t)
	s := newStream(t, p)
	f := cuarray.On[float32](s)
	x := cuarray.Must(f.Full(1, 16))
	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "a second Close does nothing")
	assert.True(t, s.Closed())

	_, err := f.New(4)
	assert.ErrorIs(t, err, cuarray.ErrClosed)
	assert.ErrorIs(t, f.Fill(x, 2), cuarray.ErrClosed)
	_, err = f.Sum(x)
	assert.ErrorIs(t, err, cuarray.ErrClosed)
	assert.ErrorIs(t, s.Synchronize(), cuarray.ErrClosed)
	_, err = f.NewKind(cuarray.Unified, 4) // a sibling shares its root's end
	assert.ErrorIs(t, err, cuarray.ErrClosed)
	// The array lives on and reads back what the closed stream wrote.
	assert.Equal(t, filled[float32](16, 1), read(t, x))

	d, err := cuarray.DefaultStream(0)
	require.NoError(t, err)
	assert.ErrorContains(t, d.Close(), "default streams live as long as the process")
}

// TestArrayOutlivesClosedStream: arrays whose last work is still queued
// on a stream when it is closed are usable on other streams, ordered after
// that work; Close does not wait for it.
func TestArrayOutlivesClosedStream(t *testing.T) {
	p := freshPool(t)
	sa, sb := newStream(t, p), newStream(t, p)
	fa, fb := cuarray.On[float32](sa), cuarray.On[float32](sb)
	const n = 1 << 14
	x := cuarray.Must(fa.New(n))
	y := cuarray.Must(fa.New(n))
	z := cuarray.Must(fa.New(n))
	const slow = 300 * time.Millisecond
	require.NoError(t, testhook.Spin(p.Device(), sa.Backend(), slow))
	require.NoError(t, fa.Fill(x, 3))
	require.NoError(t, fa.Fill(y, 4))
	require.NoError(t, fa.Fill(z, 5))
	start := time.Now()
	require.NoError(t, sa.Close())
	assert.Less(t, time.Since(start), slow/2, "Close must not wait for the stream's work")

	// x moves to B: B waits for A's fill through the tail event.
	out := cuarray.Must(fb.New(n))
	require.NoError(t, errOf(fb.Add(out, x, x)))
	assert.Equal(t, filled[float32](n, 6), read(t, out))
	// y is read straight to the host: the copy waits for A's work.
	assert.Equal(t, filled[float32](n, 4), read(t, y))
	// z is freed where it was last used: on a stream after A's work.
	z.UnsafeFree()
	w := cuarray.Must(fb.Full(7, n)) // may get z's block
	assert.Equal(t, filled[float32](n, 7), read(t, w))
	cuarray.WaitRetired()
	for _, a := range []*cuarray.Array[float32]{x, y, out, w} {
		a.UnsafeFree()
	}
	st := p.Stats()
	assert.Zero(t, st.Live, "every block freed: %v", st)
}

// TestUnreferencedStreamIsClosed: a stream the program drops is closed by
// its cleanup, and what its pool cached for it is given back.
func TestUnreferencedStreamIsClosed(t *testing.T) {
	p := freshPool(t)
	_, err := cuarray.DefaultStream(0) // the heir, made once for good
	require.NoError(t, err)
	settle(t, func() bool { return true })
	made := cuarray.StreamsMade()
	func() {
		s := newStream(t, p)
		f := cuarray.On[float32](s)
		for range 4 {
			cuarray.Must(f.Full(1, 4096)).UnsafeFree() // cached for s
		}
	}()
	waitFor(t, func() bool { return cuarray.StreamsMade() <= made },
		"the dropped stream should be destroyed: %v", p.Stats)
	switch p.Name() {
	case "none": // caches nothing
	case "cuda": // the driver's pool keeps no per-stream cache to give back
	default:
		waitFor(t, func() bool { return p.Stats().Reserved == 0 },
			"the dropped stream's cache should be given back: %v", p.Stats)
	}
}

// A stream's end asks the pools that served it, and those whose arrays
// moved to it, to give back what they cache for it; a pool used on a
// stream that moved an array to another stream is asked at that stream's
// end too. And cuarray keeps no pool once its streams and arrays are gone:
// a program that makes and closes pools does not leak them.
func TestClosedStreamsTellTheirPoolsAndKeepNone(t *testing.T) {
	other := freshPool(t)
	so := newStream(t, other)
	tracked := &countingPool{Pool: freshPool(t)}
	gone := weak.Make(tracked)
	func() {
		s, err := cuarray.NewStreamPool(tracked)
		require.NoError(t, err)
		a := cuarray.Must(cuarray.On[float32](s).Full(1, 4096))
		require.NoError(t, s.Close())
		// a moves to so, and is freed there: tracked caches its block
		// for so, and is asked to give it back at so's end.
		require.NoError(t, errOf(cuarray.On[float32](so).AddScalar(a, a, 1)))
		a.UnsafeFree()
		require.NoError(t, so.Close())
		cuarray.WaitRetired()
		assert.Equal(t, 2, int(tracked.retired.Load()), "asked at both streams' ends")
		require.NoError(t, tracked.Close())
	}()
	tracked = nil
	deadline := time.Now().Add(10 * time.Second)
	for gone.Value() != nil && time.Now().Before(deadline) {
		runtime.GC() // recycled buffers let go of their pool after two
		time.Sleep(time.Millisecond)
	}
	assert.Nil(t, gone.Value(), "cuarray still references the closed pool")
}

// countingPool counts RetireStream calls.
type countingPool struct {
	pool.Pool
	retired atomic.Int32
}

func (p *countingPool) RetireStream(gone, heir backend.Stream) (uint64, error) {
	p.retired.Add(1)
	return p.Pool.RetireStream(gone, heir)
}

// waitFor collects until ok holds, for at most 10 s.
func waitFor(t *testing.T, ok func() bool, msg string, st func() pool.Stats) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() && time.Now().Before(deadline) {
		runtime.GC()
		cuarray.WaitRetired()
		time.Sleep(5 * time.Millisecond)
	}
	require.True(t, ok(), msg, st())
}

// TestBorrowStreamReusesStreams: a stream given back is lent again, at
// most MaxIdleStreams stay idle, and a closed borrowed handle is unusable
// while its stream goes on for the next borrower.
func TestBorrowStreamReusesStreams(t *testing.T) {
	p := freshPool(t)
	s1, err := cuarray.BorrowStreamPool(p)
	require.NoError(t, err)
	x := cuarray.Must(cuarray.On[float32](s1).Full(2, 64))
	bs := s1.Backend()
	require.NoError(t, s1.Close())
	require.NoError(t, s1.Close())
	_, err = cuarray.On[float32](s1).New(1)
	assert.ErrorIs(t, err, cuarray.ErrClosed)
	assert.Equal(t, 1, cuarray.IdleStreams(p))

	s2, err := cuarray.BorrowStreamPool(p)
	require.NoError(t, err)
	assert.Equal(t, bs, s2.Backend(), "the idle stream is lent again")
	assert.Equal(t, 0, cuarray.IdleStreams(p))
	sum, err := cuarray.On[float32](s2).Sum(x)
	require.NoError(t, err)
	assert.Equal(t, float32(128), sum)

	// Many at once: each borrower has its own stream; the set keeps at
	// most MaxIdleStreams of them afterwards.
	const many = cuarray.MaxIdleStreams + 20
	held := make([]*cuarray.Stream, many)
	seen := map[any]bool{s2.Backend(): true}
	for i := range held {
		held[i], err = cuarray.BorrowStreamPool(p)
		require.NoError(t, err)
		require.False(t, seen[held[i].Backend()], "a stream lent twice at once")
		seen[held[i].Backend()] = true
	}
	for _, s := range held {
		require.NoError(t, s.Close())
	}
	assert.Equal(t, cuarray.MaxIdleStreams, cuarray.IdleStreams(p))

	// A borrowed handle dropped without Close goes back when collected.
	require.NoError(t, s2.Close()) // the set is full: s2's stream is closed
	before := cuarray.IdleStreams(p)
	func() {
		s, err := cuarray.BorrowStreamPool(p)
		require.NoError(t, err)
		cuarray.Must(cuarray.On[float32](s).Full(1, 8)).UnsafeFree()
	}()
	waitFor(t, func() bool { return cuarray.IdleStreams(p) == before },
		"a dropped borrowed stream should go back to the set: %v", p.Stats)
}

// serve is the server pattern of issue 12: n short-lived goroutines, each
// getting a stream (and whether to close it) from get, filling a 16 KiB
// array and summing it. It checks every sum.
func serve(t *testing.T, n, concurrent int, get func(i int) (s *cuarray.Stream, closeIt bool, err error)) {
	t.Helper()
	sem := make(chan struct{}, concurrent)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			errs <- func() error {
				s, closeIt, err := get(i)
				if err != nil {
					return err
				}
				if closeIt {
					defer s.Close()
				}
				f := cuarray.On[float32](s)
				v := float32(i % 64)
				a, err := f.Full(v, 4096) // 16 KiB
				if err != nil {
					return err
				}
				sum, err := f.Sum(a)
				if err != nil {
					return err
				}
				if sum != 4096*v {
					return fmt.Errorf("request %d: sum %v, want %v", i, sum, 4096*v)
				}
				return nil
			}()
		}()
	}
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		if err != nil {
			all = append(all, err)
		}
	}
	require.NoError(t, errors.Join(all...))
}

// TestShortLivedGoroutinesLeaveNothing is issue 12's measurement: 2000
// goroutines, each with its own stream, used to leave 2000 goroutines and
// 4000 MiB reserved behind on the host backend. Closed, dropped or
// borrowed, the streams now leave a bounded number of goroutines (the
// borrowing set's idle streams) and their caches go back.
func TestShortLivedGoroutinesLeaveNothing(t *testing.T) {
	skipUnderSanitizer(t)
	n, concurrent := 2000, 64
	if testing.Short() { // the race detector makes each request dear
		n = 500
	}
	for _, tc := range []struct {
		name  string
		close bool
		get   func(p pool.Pool) (*cuarray.Stream, error)
		idle  int // streams that may stay after the run
	}{
		{"NewStream and Close", true, cuarray.NewStreamPool, 0},
		{"NewStream dropped", false, cuarray.NewStreamPool, 0},
		{"BorrowStream and Close", true, cuarray.BorrowStreamPool, cuarray.MaxIdleStreams},
		{"BorrowStream dropped", false, cuarray.BorrowStreamPool, cuarray.MaxIdleStreams},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := freshPool(t)
			// The default stream, heir of the others, lives on.
			_, err := cuarray.DefaultStream(0)
			require.NoError(t, err)
			settle(t, func() bool { return true })
			base := runtime.NumGoroutine()
			// Each idle stream is a goroutine on the host backend.
			bound := base + tc.idle
			// Only idle borrowed streams and the default stream may keep a
			// cache, each what its busiest borrower had live at once (a
			// few arrays a stream awaiting collection): at most two of
			// split's smallest segments here.
			cacheBound := uint64(tc.idle+1) * 4 << 20
			for wave := range 2 {
				serve(t, n, concurrent, func(int) (*cuarray.Stream, bool, error) {
					s, err := tc.get(p)
					return s, tc.close, err
				})
				settle(t, func() bool { return runtime.NumGoroutine() <= bound && p.Stats().Live == 0 })
				st := p.Stats()
				assert.LessOrEqual(t, runtime.NumGoroutine(), bound, "wave %d: goroutines left: %d before", wave, base)
				assert.Zero(t, st.Live, "%v", st)
				if p.Name() == "split" {
					// Segments of ended streams go back as they empty.
					assert.LessOrEqual(t, st.Reserved, cacheBound, "wave %d: %v", wave, st)
				}
				// Other pools keep the blocks freed after their stream
				// ended in a live stream's cache, which the next wave's
				// streams take from: never more than one wave's blocks.
				// (The driver's pool reserves 32 MiB at a time.)
				assert.LessOrEqual(t, st.Reserved, max(uint64(n)*16<<10+cacheBound, 64<<20), "wave %d: %v", wave, st)
				t.Logf("wave %d: %d goroutines (base %d), %v", wave, runtime.NumGoroutine(), base, st)
			}
		})
	}
}

// settle collects and waits for retirements until ok holds, for at most
// 20 s.
func settle(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		runtime.GC()
		cuarray.WaitRetired()
		if ok() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
