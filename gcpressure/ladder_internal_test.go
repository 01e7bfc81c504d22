package gcpressure

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/pool"
	"github.com/gocuda/gocuda/pool/pooltest"
)

// TestLadderCollectsAfterTheCollectionAlreadyRunning: an allocation that
// finds a collection running when it runs out of memory must collect
// again once that one ends. Go marks what is allocated during a cycle live,
// so garbage made since the running collection began survives it; waiting
// for it alone (what the ladder did until the 2-GPU run of 2026-11-25
// failed ExampleWrap) leaves the limit full of garbage.
func TestLadderCollectsAfterTheCollectionAlreadyRunning(t *testing.T) {
	const mib, limit = 1 << 20, 8 << 20
	inner, err := pool.New("split", pooltest.Device(t), pool.Limits{Hard: limit})
	require.NoError(t, err)
	w, err := Wrap(inner, Options{Early: false})
	require.NoError(t, err)
	t.Cleanup(func() {
		runtime.GC()
		for i := 0; i < 1000 && w.Stats().Allocs != w.Stats().Frees; i++ {
			time.Sleep(time.Millisecond)
		}
		assert.NoError(t, w.Close())
	})
	s := pooltest.NewStream(t, w.Device())

	// A collection that began before the garbage below was made: the
	// ladder finds it running.
	c := &collection{done: make(chan struct{})}
	w.mu.Lock()
	w.running = c
	w.mu.Unlock()
	ended := time.AfterFunc(20*time.Millisecond, func() {
		w.mu.Lock()
		w.running = nil
		w.mu.Unlock()
		close(c.done)
	})
	defer ended.Stop()

	// Fill the limit with garbage: blocks whose owners are unreachable.
	type owner struct{ _ [64]byte }
	for {
		b, err := inner.Alloc(mib, s)
		if err != nil {
			break
		}
		o := &owner{}
		runtime.AddCleanup(o, func(b *pool.Block) { _ = inner.Free(b, s) }, b)
	}
	b, err := w.Alloc(mib, s)
	require.NoError(t, err, "the ladder must collect the garbage made while the running collection ran")
	require.NoError(t, w.Free(b, s))
}
