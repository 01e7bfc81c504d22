package cuarray_test

import (
	"fmt"
	"io"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/backend/host"
	"github.com/gocuda/gocuda/cuarray"
)

// TestStreamCheckFindsNoRaceInCrossStreamArrays runs goroutines on their
// own streams that share arrays (read by all, updated by each in turn,
// freed and reused through the pool) under the host backend's stream
// checker: cuarray orders every hand-over between streams by itself, so
// the checker must find nothing. A deliberate race queued on the same
// streams, outside cuarray, shows the checker was watching.
func TestStreamCheckFindsNoRaceInCrossStreamArrays(t *testing.T) {
	b, err := gocuda.Backend()
	require.NoError(t, err)
	hb, ok := b.(*host.Backend)
	if !ok {
		t.Skipf("the stream checker is the host backend's; this is %s", b.Name())
	}
	before := len(hb.StreamRaces())
	if hb.StreamCheck() == host.StreamCheckOff {
		hb.SetStreamCheckLog(io.Discard) // the control's race is deliberate
		require.NoError(t, hb.SetStreamCheck(host.StreamCheckReport))
		t.Cleanup(func() {
			_ = hb.SetStreamCheck(host.StreamCheckOff)
			hb.SetStreamCheckLog(nil)
		})
	}

	const workers, iters, n = 4, 10, 4096
	w := cuarray.Must(cuarray.FromSlice(iota[float32](n))) // read by every stream
	acc := cuarray.Must(cuarray.Zeros[float32](n))         // updated by each in turn
	var accMu sync.Mutex
	streams := make([]*cuarray.Stream, workers)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for g := range workers {
		s, err := cuarray.NewStream(0)
		require.NoError(t, err)
		streams[g] = s
		wg.Go(func() {
			errs <- func() error {
				f := cuarray.On[float32](s)
				for range iters {
					x, err := f.Full(1, n)
					if err != nil {
						return err
					}
					if _, err := f.Add(x, x, w); err != nil { // x = 1 + w
						return err
					}
					if _, err := f.Sum(w); err != nil {
						return err
					}
					accMu.Lock()
					_, err = f.Add(acc, acc, x) // acc last written on another stream
					accMu.Unlock()
					if err != nil {
						return err
					}
					x.UnsafeFree() // its block goes back to the pool on s
				}
				return nil
			}()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	got, err := acc.ToSlice()
	require.NoError(t, err)
	for i, v := range got {
		if want := float32(workers*iters) * (1 + float32(i%100)); v != want {
			require.Equal(t, want, v, "acc[%d]", i)
		}
	}
	for _, r := range hb.StreamRaces()[before:] {
		t.Errorf("cuarray's ordering let a race through:\n%s", r.Verbose())
	}

	// The control: the same streams, ordered by nothing.
	dev := streams[0].Device()
	p, err := dev.Alloc(4096)
	require.NoError(t, err)
	require.NoError(t, dev.Memset8(p, 1, 4096, streams[0].Backend()))
	require.NoError(t, dev.Memset8(p, 2, 4096, streams[1].Backend()))
	_, _, controlLine, _ := runtime.Caller(0)
	require.NoError(t, dev.Synchronize())
	require.NoError(t, dev.Free(p))
	races := hb.StreamRaces()[before:]
	require.Len(t, races, 1, "the checker saw the deliberate race")
	assert.Equal(t, controlLine-1, races[0].Later.Site.Line)
	assert.Equal(t, fmt.Sprint(streams[1].Backend().ID()), fmt.Sprint(races[0].Later.Stream))
}
