package gcpressure_test

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/gcpressure"
	"github.com/gocuda/gocuda/pool"
	"github.com/gocuda/gocuda/pool/pooltest"
)

// After Collect every unreachable block is back in its pool: the cleanups
// ran, slow ones included, with no polling by the caller.
func TestCollectReturnsOnceUnreachableBlocksAreFreed(t *testing.T) {
	s := pooltest.NewStream(t, pooltest.Device(t))
	p, err := pool.New("split", pooltest.Device(t), pool.Limits{})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, p.Close()) })
	const n = 200
	var ran atomic.Int32
	func() {
		for range n {
			b, err := p.Alloc(64<<10, s)
			require.NoError(t, err)
			g := &garbage{b: b}
			runtime.AddCleanup(g, func(b *pool.Block) {
				if ran.Add(1)%20 == 0 {
					time.Sleep(2 * time.Millisecond) // some cleanups are slow
				}
				_ = p.Free(b, s)
			}, b)
		}
	}()
	// (Go's own collector may have found some of them already.)
	require.NoError(t, gcpressure.Collect(context.Background()))
	assert.Equal(t, int32(n), ran.Load(), "cleanups still queued when Collect returned")
	st := p.Stats()
	assert.Equal(t, st.Allocs, st.Frees)
	assert.Zero(t, st.Live)
}

// Collect gives up when its context ends: a cleanup that blocks holds it
// only that long, and a context already done does not collect at all.
func TestCollectStopsWhenItsContextEnds(t *testing.T) {
	for _, tc := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		want error
	}{
		{"deadline while a cleanup blocks", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 50*time.Millisecond)
		}, context.DeadlineExceeded},
		{"canceled while a cleanup blocks", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(50*time.Millisecond, cancel)
			return ctx, cancel
		}, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			var ran atomic.Bool
			func() {
				g := new(garbage)
				runtime.AddCleanup(g, func(int) {
					<-release
					ran.Store(true)
				}, 0)
			}()
			ctx, cancel := tc.ctx()
			defer cancel()
			start := time.Now()
			err := gcpressure.Collect(ctx)
			took := time.Since(start)
			early := !ran.Load()
			close(release)
			require.ErrorIs(t, err, tc.want)
			assert.True(t, early, "Collect returned after the blocked cleanup, not at the context's end")
			assert.Less(t, took, 5*time.Second)
			// The cleanup runs once released; a later Collect waits for it.
			require.NoError(t, gcpressure.Collect(context.Background()))
			assert.True(t, ran.Load())
		})
	}
	t.Run("already done", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		before := numGC()
		require.ErrorIs(t, gcpressure.Collect(ctx), context.Canceled)
		assert.Equal(t, before, numGC(), "collected with its context done")
	})
}

func numGC() uint32 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.NumGC
}
