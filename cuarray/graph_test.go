package cuarray_test

import (
	"context"
	"errors"
	"math"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/config"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/internal/graphbench"
)

// chainStep is graphs.py's chain (graphbench.Chain): iters steps of
// tanh(z*y + x), z + y or z * 0.5, each making its result.
var chainStep = graphbench.Chain

// graphPools returns device 0's graph pools as MemoryStatus lists them.
func graphPools(t testing.TB) []gocuda.GraphPool {
	t.Helper()
	mem, err := gocuda.MemoryStatus()
	require.NoError(t, err)
	for _, d := range mem {
		if d.Device == 0 {
			return d.Graphs
		}
	}
	return nil
}

func graphPoolNamed(t testing.TB, name string) (gocuda.GraphPool, bool) {
	for _, g := range graphPools(t) {
		if g.Name == name {
			return g, true
		}
	}
	return gocuda.GraphPool{}, false
}

// graphName is the registry's name of g's pool.
func graphName(t testing.TB, g *cuarray.Graph) string {
	t.Helper()
	for _, gp := range graphPools(t) {
		if gp.Stats.Allocs == g.Pool().Stats().Allocs && !gp.Closed {
			return gp.Name
		}
	}
	t.Fatalf("the graph's pool is not listed in MemoryStatus: %v", graphPools(t))
	return ""
}

func randomSlice(n int, seed float32) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(math.Sin(float64(seed) + float64(i)*0.37))
	}
	return out
}

// TestGraphReplaysAChainAsEagerDoes: the captured chain, launched, gives
// the eager chain's values bit for bit, and again after new inputs are
// copied into the arrays it reads.
func TestGraphReplaysAChainAsEagerDoes(t *testing.T) {
	p := freshPool(t)
	s := newStream(t, p)
	defer s.Close()
	f := cuarray.On[float32](s)
	const n, iters = 4096, 30
	x := cuarray.Must(f.FromSlice(randomSlice(n, 1)))
	y := cuarray.Must(f.FromSlice(randomSlice(n, 2)))

	eager := func() []float32 {
		z, err := chainStep(f, x, y, iters)
		require.NoError(t, err)
		defer z.UnsafeFree()
		return read(t, z)
	}
	want := eager()

	var out *cuarray.Array[float32]
	g, err := cuarray.Capture(s, func() (err error) {
		out, err = chainStep(f, x, y, iters)
		return err
	})
	require.NoError(t, err)
	defer g.Close()
	assert.Equal(t, 5*iters/3, g.Stats().Nodes, "one node per operation: 3 of every 3 steps' first, 1 of the others")
	require.NoError(t, g.Launch())
	assert.Equal(t, want, read(t, out))
	require.NoError(t, g.Launch())
	require.NoError(t, g.Launch())
	assert.Equal(t, want, read(t, out), "replays of a step that reads only its inputs give the same values")

	// New inputs, written into the arrays the graph reads.
	require.NoError(t, f.Copy(x, cuarray.Must(f.FromSlice(randomSlice(n, 3)))))
	want = eager()
	require.NoError(t, g.Launch())
	assert.Equal(t, want, read(t, out))
	assert.Equal(t, 4, g.Stats().Launches)
}

// TestGraphPoolIsListedAndGivenBackOnClose: the arrays a capture makes
// come from a graph pool that PoolStatus lists under the device, freed
// arrays go back to it (not to the stream's pool), and Close gives it back
// once the last array the program holds is freed; the stream's pool ends
// where it began.
func TestGraphPoolIsListedAndGivenBackOnClose(t *testing.T) {
	p := freshPool(t)
	s := newStream(t, p)
	defer s.Close()
	f := cuarray.On[float32](s)
	x := cuarray.Must(f.Full(1, 1024))
	y := cuarray.Must(f.Full(2, 1024))
	before := p.Stats()

	var out *cuarray.Array[float32]
	g, err := cuarray.Capture(s, func() (err error) {
		out, err = chainStep(f, x, y, 9)
		return err
	})
	require.NoError(t, err)
	assert.Equal(t, before.Allocs, p.Stats().Allocs, "no allocation of the capture reached the stream's pool")
	name := graphName(t, g)
	gp, ok := graphPoolNamed(t, name)
	require.True(t, ok)
	assert.Equal(t, uint64(4096), gp.Stats.Live, "the output is live in the graph pool")
	assert.Equal(t, gp.Stats.Allocs-1, gp.Stats.Frees, "every intermediate went back to the graph pool")
	assert.Less(t, gp.Stats.Reserved, 20*uint64(4096), "intermediates reuse the graph pool's blocks")
	assert.Contains(t, gocuda.PoolStatus(), "Graph pool "+name+": 4.0 KiB live")
	mem, err := gocuda.MemoryStatus()
	require.NoError(t, err)
	assert.Contains(t, mem.String(), "simple ("+name+")")

	// ReclaimAll and the soft limit leave a graph's memory alone.
	gocuda.ReclaimAll()
	gp, _ = graphPoolNamed(t, name)
	assert.NotZero(t, gp.Stats.Reserved)

	require.NoError(t, g.Launch())
	require.NoError(t, g.Close())
	require.NoError(t, g.Close(), "a second Close does nothing")
	gp, ok = graphPoolNamed(t, name)
	require.True(t, ok, "listed while the program holds an array it made")
	assert.True(t, gp.Closed)
	assert.Contains(t, gocuda.PoolStatus(), "Graph pool "+name+" (closed: given back when its arrays are freed)")
	assert.Equal(t, filled[float32](1024, read(t, out)[0]), read(t, out), "the output stays readable after Close")
	out.UnsafeFree()
	_, ok = graphPoolNamed(t, name)
	assert.False(t, ok, "the last free gave the pool back")
	assert.ErrorIs(t, g.Launch(), cuarray.ErrClosed)
	x.UnsafeFree()
	y.UnsafeFree()
	assert.Equal(t, uint64(0), p.Stats().Live, "nothing leaked in the stream's pool")
}

// TestGraphPoolIsGivenBackWhenTheGraphIsCollected: a graph the program
// drops is closed by the collector, and its pool with it.
func TestGraphPoolIsGivenBackWhenTheGraphIsCollected(t *testing.T) {
	p := freshPool(t)
	s := newStream(t, p)
	defer s.Close()
	f := cuarray.On[float32](s)
	x := cuarray.Must(f.Full(1, 256))
	name := func() string {
		g, err := cuarray.Capture(s, func() error {
			z, err := f.Tanh(nil, x)
			if err == nil {
				z.UnsafeFree()
			}
			return err
		})
		require.NoError(t, err)
		require.NoError(t, g.Launch())
		return graphName(t, g)
	}()
	for i := 0; ; i++ {
		runtime.GC()
		require.NoError(t, gocuda.Collect(context.Background()))
		if _, ok := graphPoolNamed(t, name); !ok {
			break
		}
		require.Less(t, i, 20, "the collected graph's pool is still listed after 20 collections")
		time.Sleep(time.Millisecond)
	}
	x.UnsafeFree()
	assert.Equal(t, uint64(0), p.Stats().Live)
}

// TestCaptureRefusesWhatItCannotRecordAndGoesOn: a synchronisation, host
// reads and writes, a reduction to a Go value and a copy between devices
// fail inside a capture with ErrCapturing, and the capture is intact: the
// graph replays what was queued around them.
func TestCaptureRefusesWhatItCannotRecordAndGoesOn(t *testing.T) {
	p := freshPool(t)
	s := newStream(t, p)
	defer s.Close()
	f := cuarray.On[float32](s)
	x := cuarray.Must(f.Full(3, 64))
	out := cuarray.Must(f.New(64))
	g, err := cuarray.Capture(s, func() error {
		assert.True(t, s.Capturing())
		require.NoError(t, errOf(f.AddScalar(out, x, 1)))
		assert.ErrorIs(t, s.Synchronize(), cuarray.ErrCapturing)
		assert.ErrorIs(t, s.SynchronizeContext(ctxWithTimeout(t)), cuarray.ErrCapturing)
		_, err := out.ToSlice()
		assert.ErrorIs(t, err, cuarray.ErrCapturing)
		_, err = out.At(0)
		assert.ErrorIs(t, err, cuarray.ErrCapturing)
		assert.ErrorIs(t, out.SetAt(1, 0), cuarray.ErrCapturing)
		_, err = f.FromSlice([]float32{1, 2})
		assert.ErrorIs(t, err, cuarray.ErrCapturing)
		_, err = f.Sum(out)
		assert.ErrorIs(t, err, cuarray.ErrCapturing)
		assert.ErrorIs(t, s.Close(), cuarray.ErrCapturing)
		_, err = f.NewKind(cuarray.Pinned, 4)
		assert.ErrorIs(t, err, cuarray.ErrCapturing)
		if b, err := gocuda.Backend(); err == nil && b.DeviceCount() > 1 {
			_, err = cuarray.ToDevice(out, 1)
			assert.ErrorIs(t, err, cuarray.ErrCapturing)
		}
		return errOf(f.MulScalar(out, out, 2))
	})
	require.NoError(t, err)
	defer g.Close()
	assert.False(t, s.Capturing())
	assert.Equal(t, 2, g.Stats().Nodes, "only the two operations were recorded")
	require.NoError(t, g.Launch())
	assert.Equal(t, filled[float32](64, 8), read(t, out))
}

func ctxWithTimeout(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// TestCaptureMisuseIsAnErrorAndLeaksNothing: a default stream, a nested
// capture, a failing or panicking function: each is an error (or the
// panic goes on), the stream works afterwards, and no graph pool stays.
func TestCaptureMisuseIsAnErrorAndLeaksNothing(t *testing.T) {
	p := freshPool(t)
	s := newStream(t, p)
	defer s.Close()
	f := cuarray.On[float32](s)
	x := cuarray.Must(f.Full(1, 16))
	pools := len(graphPools(t))

	d, err := cuarray.DefaultStream(0)
	require.NoError(t, err)
	_, err = cuarray.Capture(d, func() error { return nil })
	assert.ErrorIs(t, err, backend.ErrNotSupported)
	assert.ErrorContains(t, err, "capture on a stream of your own (NewStream)")

	_, err = cuarray.Capture(nil, func() error { return nil })
	assert.ErrorIs(t, err, backend.ErrInvalidValue)

	boom := errors.New("boom")
	var made *cuarray.Array[float32]
	_, err = cuarray.Capture(s, func() (err error) {
		made, err = f.Tanh(nil, x) // from the graph pool, given back with it
		require.NoError(t, err)
		_, err = cuarray.Capture(s, func() error { return nil })
		assert.ErrorContains(t, err, "a capture is in progress on it already")
		return boom
	})
	assert.ErrorIs(t, err, boom)
	assert.False(t, s.Capturing())
	made.UnsafeFree() // the failed capture's pool goes with its last array

	assert.PanicsWithValue(t, "step", func() {
		_, _ = cuarray.Capture(s, func() error { panic("step") })
	})
	assert.False(t, s.Capturing())

	closed := newStream(t, p)
	require.NoError(t, closed.Close())
	_, err = cuarray.Capture(closed, func() error { return nil })
	assert.ErrorIs(t, err, cuarray.ErrClosed)

	require.NoError(t, f.Fill(x, 5), "the stream works after the failed captures")
	assert.Equal(t, filled[float32](16, 5), read(t, x))
	assert.Len(t, graphPools(t), pools, "no graph pool stayed")
	x.UnsafeFree()
	assert.Equal(t, uint64(0), p.Stats().Live)
}

// TestUnsafeFreeOfAnArrayAGraphUsesFailsLaunch: the graph holds the
// memory of the arrays it reads; an UnsafeFree of one makes Launch fail,
// naming it, and the memory comes back when the graph is closed.
func TestUnsafeFreeOfAnArrayAGraphUsesFailsLaunch(t *testing.T) {
	p := freshPool(t)
	s := newStream(t, p)
	defer s.Close()
	f := cuarray.On[float32](s)
	x := cuarray.Must(f.Full(2, 128))
	out := cuarray.Must(f.New(128))
	g, err := cuarray.Capture(s, func() error { return errOf(f.MulScalar(out, x, 3)) })
	require.NoError(t, err)
	live := p.Stats().Live
	x.UnsafeFree()
	assert.Equal(t, live, p.Stats().Live, "the graph still holds x's memory")
	err = g.Launch()
	assert.ErrorIs(t, err, cuarray.ErrFreed)
	assert.ErrorContains(t, err, "a buffer of 512 bytes whose arrays were freed with UnsafeFree after the capture")
	require.NoError(t, g.Close())
	assert.Less(t, p.Stats().Live, live, "Close let the held free happen")
	out.UnsafeFree()
	assert.Equal(t, uint64(0), p.Stats().Live)
}

// TestLaunchAfterTheStreamClosedFails: a graph replays on its stream;
// once that is closed, Launch is ErrClosed and Close still gives all back.
func TestLaunchAfterTheStreamClosedFails(t *testing.T) {
	p := freshPool(t)
	s := newStream(t, p)
	f := cuarray.On[float32](s)
	x := cuarray.Must(f.Full(2, 128))
	var out *cuarray.Array[float32]
	g, err := cuarray.Capture(s, func() (err error) { out, err = f.Exp(nil, x); return err })
	require.NoError(t, err)
	name := graphName(t, g)
	require.NoError(t, s.Close())
	assert.ErrorIs(t, g.Launch(), cuarray.ErrClosed)
	require.NoError(t, g.Close())
	out.UnsafeFree()
	x.UnsafeFree()
	_, ok := graphPoolNamed(t, name)
	assert.False(t, ok)
	cuarray.WaitRetired()
	assert.Equal(t, uint64(0), p.Stats().Live)
}

// TestGraphOutlivesItsDevicesPoolSettings: limits set on the device after
// the capture, and ReclaimAll, leave the graph's memory as it was, and
// the graph replays as before; a recapture under them still allocates.
func TestGraphOutlivesItsDevicesPoolSettings(t *testing.T) {
	p := freshPool(t)
	s := newStream(t, p)
	defer s.Close()
	f := cuarray.On[float32](s)
	x := cuarray.Must(f.Full(1, 1<<16))
	defer x.UnsafeFree()
	step := func(scale float32) func() error {
		return func() error {
			y, err := f.MulScalar(nil, x, scale)
			if err != nil {
				return err
			}
			defer y.UnsafeFree()
			return errOf(f.Add(x, x, y))
		}
	}
	g, err := cuarray.Capture(s, step(1))
	require.NoError(t, err)
	defer g.Close()
	name := graphName(t, g)
	before, _ := graphPoolNamed(t, name)

	old, err := gocuda.MemoryLimits(0)
	require.NoError(t, err)
	defer func() {
		require.NoError(t, gocuda.SetMemoryLimit(0, config.Limit{Bytes: old.Soft}, config.Limit{Bytes: old.Hard}))
	}()
	require.NoError(t, gocuda.SetMemoryLimit(0, config.Limit{Bytes: 1}, config.Limit{}))
	gocuda.ReclaimAll()
	after, _ := graphPoolNamed(t, name)
	assert.Equal(t, before.Stats.Reserved, after.Stats.Reserved)
	require.NoError(t, g.Launch())
	assert.Equal(t, filled[float32](1<<16, 2), read(t, x))
	updated, err := g.Recapture(step(2))
	require.NoError(t, err)
	assert.True(t, updated)
	require.NoError(t, g.Launch())
	assert.Equal(t, filled[float32](1<<16, 6), read(t, x))
}

// TestRecaptureUpdatesInPlaceOrInstantiatesAnew: the same operations with
// other scalars and arrays update the graph; another sequence of
// operations makes a new one. Either way Launch runs the new step.
func TestRecaptureUpdatesInPlaceOrInstantiatesAnew(t *testing.T) {
	p := freshPool(t)
	s := newStream(t, p)
	defer s.Close()
	f := cuarray.On[float32](s)
	x := cuarray.Must(f.Full(1, 100))
	out := cuarray.Must(f.New(100))
	g, err := cuarray.Capture(s, func() error { return errOf(f.MulScalar(out, x, 2)) })
	require.NoError(t, err)
	defer g.Close()

	updated, err := g.Recapture(func() error { return errOf(f.MulScalar(out, x, 5)) })
	require.NoError(t, err)
	assert.True(t, updated)
	require.NoError(t, g.Launch())
	assert.Equal(t, filled[float32](100, 5), read(t, out))

	// Another shape: new arrays, and one more operation.
	x2 := cuarray.Must(f.Full(2, 300))
	out2 := cuarray.Must(f.New(300))
	updated, err = g.Recapture(func() error {
		if _, err := f.MulScalar(out2, x2, 5); err != nil {
			return err
		}
		return errOf(f.AddScalar(out2, out2, 1))
	})
	require.NoError(t, err)
	assert.False(t, updated)
	require.NoError(t, g.Launch())
	assert.Equal(t, filled[float32](300, 11), read(t, out2))
	st := g.Stats()
	assert.Equal(t, GraphCounts{Captures: 3, Updates: 1, Instantiations: 2, Nodes: 2}, GraphCounts{st.Captures, st.Updates, st.Instantiations, st.Nodes})

	// The old step's arrays are no longer held: freeing them is no misuse.
	x.UnsafeFree()
	require.NoError(t, g.Launch())

	_, err = g.Recapture(func() error { return errors.New("no") })
	assert.ErrorContains(t, err, "the captured function: no")
	require.NoError(t, g.Launch(), "a failed recapture leaves the graph as it was")
	assert.Equal(t, filled[float32](300, 11), read(t, out2))
	require.NoError(t, g.Close())
	_, err = g.Recapture(func() error { return nil })
	assert.ErrorIs(t, err, cuarray.ErrClosed)
}

type GraphCounts struct{ Captures, Updates, Instantiations, Nodes int }

// TestFreesOnACapturingStreamWaitForTheCaptureToEnd: an array of the
// stream's pool freed inside the capture (by UnsafeFree or by the
// collector) is given back once the capture ends, not into it.
func TestFreesOnACapturingStreamWaitForTheCaptureToEnd(t *testing.T) {
	p := freshPool(t)
	s := newStream(t, p)
	defer s.Close()
	f := cuarray.On[float32](s)
	x := cuarray.Must(f.Full(1, 64))
	w := cuarray.Must(f.Full(1, 64))
	func() {
		dropped := cuarray.Must(f.Full(1, 64)) // unreachable after this
		_ = dropped
	}()
	frees := p.Stats().Frees
	g, err := cuarray.Capture(s, func() error {
		w.UnsafeFree()
		runtime.GC()
		require.NoError(t, gocuda.Collect(context.Background()))
		assert.Equal(t, frees, p.Stats().Frees, "no free reached the stream's pool during the capture")
		return errOf(f.AddScalar(x, x, 1))
	})
	require.NoError(t, err)
	defer g.Close()
	assert.GreaterOrEqual(t, p.Stats().Frees, frees+1, "the held frees ran once the capture ended")
	require.NoError(t, g.Launch())
	assert.Equal(t, filled[float32](64, 2), read(t, x))
}

// TestCaptureWaitsForAnotherStreamsWorkOnItsArrays: an array last written
// on another stream is used in the capture after that work, by a host
// wait rather than an event across the capture; an array the capture
// holds cannot be used on another stream meanwhile.
func TestCaptureWaitsForAnotherStreamsWorkOnItsArrays(t *testing.T) {
	p := freshPool(t)
	s, s2 := newStream(t, p), newStream(t, p)
	defer s.Close()
	defer s2.Close()
	f, f2 := cuarray.On[float32](s), cuarray.On[float32](s2)
	x := cuarray.Must(f2.Full(4, 1<<12))
	out := cuarray.Must(f.New(1 << 12))
	g, err := cuarray.Capture(s, func() error {
		if _, err := f.AddScalar(out, x, 1); err != nil {
			return err
		}
		assert.ErrorIs(t, f2.Fill(out, 0), cuarray.ErrCapturing)
		return nil
	})
	require.NoError(t, err)
	defer g.Close()
	require.NoError(t, g.Launch())
	assert.Equal(t, filled[float32](1<<12, 5), read(t, out))
}

// TestGraphsOnManyStreamsAtOnce: goroutines capture and replay their own
// graphs concurrently (for -race).
func TestGraphsOnManyStreamsAtOnce(t *testing.T) {
	p := freshPool(t)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := newStream(t, p)
			defer s.Close()
			f := cuarray.On[float32](s)
			x := cuarray.Must(f.Full(float32(i), 512))
			y := cuarray.Must(f.Full(1, 512))
			var out *cuarray.Array[float32]
			g, err := cuarray.Capture(s, func() (err error) { out, err = chainStep(f, x, y, 6); return err })
			if !assert.NoError(t, err) {
				return
			}
			want, err := chainStep(f, x, y, 6)
			require.NoError(t, err)
			for range 3 {
				assert.NoError(t, g.Launch())
			}
			assert.Equal(t, read(t, want), read(t, out))
			assert.NoError(t, g.Close())
			out.UnsafeFree()
			want.UnsafeFree()
			x.UnsafeFree()
			y.UnsafeFree()
		}()
	}
	wg.Wait()
	assert.Equal(t, uint64(0), p.Stats().Live)
	for _, gp := range graphPools(t) {
		assert.False(t, strings.HasPrefix(gp.Name, "graph") && gp.Closed, "closed graph pool %s still listed", gp.Name)
	}
}

// BenchmarkGraphChain is graphs.py's chain (200 steps, 334 operations on
// 4096 floats) a step per iteration, eager and as a replayed graph, on a
// stream of its own: "gocuda bench graphs" prints the same beside the
// anchor's figures.
func BenchmarkGraphChain(b *testing.B) {
	s, err := cuarray.NewStream(0)
	require.NoError(b, err)
	defer s.Close()
	f := cuarray.On[float32](s)
	x := cuarray.Must(f.Randn(graphbench.ChainLen))
	y := cuarray.Must(f.Randn(graphbench.ChainLen))
	defer x.UnsafeFree()
	defer y.UnsafeFree()
	b.Run("eager", func(b *testing.B) {
		b.ResetTimer() // the timed loop ends with the synchronisation, as graphs.py's
		for range b.N {
			z, err := graphbench.Chain(f, x, y, graphbench.ChainSteps)
			if err != nil {
				b.Fatal(err)
			}
			z.UnsafeFree()
		}
		require.NoError(b, s.Synchronize())
		b.StopTimer()
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/graphbench.ChainOps, "ns/operation")
	})
	b.Run("graph", func(b *testing.B) {
		var out *cuarray.Array[float32]
		g, err := cuarray.Capture(s, func() (err error) {
			out, err = graphbench.Chain(f, x, y, graphbench.ChainSteps)
			return err
		})
		require.NoError(b, err)
		defer out.UnsafeFree()
		defer g.Close()
		require.NoError(b, s.Synchronize())
		b.ResetTimer()
		for range b.N {
			if err := g.Launch(); err != nil {
				b.Fatal(err)
			}
		}
		require.NoError(b, s.Synchronize())
		b.StopTimer()
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/graphbench.ChainOps, "ns/operation")
	})
}

// TestLaunchOrdersAfterUsesOfItsArraysOnOtherStreams: an output read on
// another stream (which makes that stream its last) is still ordered
// around the next replay: the read after Launch sees the replay's values.
func TestLaunchOrdersAfterUsesOfItsArraysOnOtherStreams(t *testing.T) {
	p := freshPool(t)
	s, s2 := newStream(t, p), newStream(t, p)
	defer s.Close()
	defer s2.Close()
	f, f2 := cuarray.On[float32](s), cuarray.On[float32](s2)
	const n = 1 << 16
	x := cuarray.Must(f.Full(1, n))
	var out *cuarray.Array[float32]
	g, err := cuarray.Capture(s, func() (err error) { out, err = f.MulScalar(nil, x, 2); return err })
	require.NoError(t, err)
	defer g.Close()
	require.NoError(t, g.Launch())
	copied := cuarray.Must(f2.New(n))
	require.NoError(t, f2.Copy(copied, out)) // out's last stream is s2 now
	assert.Equal(t, filled[float32](n, 2), read(t, copied))
	require.NoError(t, f2.Fill(x, 5)) // x too: written on s2
	require.NoError(t, g.Launch())
	assert.Equal(t, filled[float32](n, 10), read(t, out))
}
