package kernels_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/internal/testsupport/testhook"
	"github.com/gocuda/gocuda/kernels"
)

const spin = 200 * time.Millisecond

// Spin is queued, not run by the caller, and keeps the stream busy for
// about as long as asked.
func TestSpinIsAsynchronousAndLasts(t *testing.T) {
	e := newEnv(t)
	require.NoError(t, e.s.Synchronize())
	start := time.Now()
	require.NoError(t, testhook.Spin(e.dev, e.s, spin))
	queued := time.Since(start)
	done, err := e.s.Query()
	require.NoError(t, err)
	assert.False(t, done, "the stream is idle right after Spin")
	require.NoError(t, e.s.Synchronize())
	took := time.Since(start)
	assert.Less(t, queued, spin/2, "Spin blocked the caller")
	assert.GreaterOrEqual(t, took, spin*9/10, "Spin did not last")
}

// Work queued after Spin on the same stream runs after it: the inputs it
// reads are written by work queued after Spin too, so running early would
// read the poison.
func TestOrderingAfterSpin(t *testing.T) {
	e := newEnv(t)
	n := 1<<20 + 7
	x := alloc[float32](t, e, n, false)
	y := alloc[float32](t, e, n, false)
	require.NoError(t, e.s.Synchronize())
	require.NoError(t, testhook.Spin(e.dev, e.s, spin))
	require.NoError(t, kernels.Fill(e.dev, e.s, x.p, float32(1.5), n))
	require.NoError(t, kernels.Add[float32](e.dev, e.s, y.p, x.p, x.p, n))
	require.NoError(t, kernels.AddScalar(e.dev, e.s, y.p, y.p, float32(1), n))
	sum, err := kernels.Sum[float32](e.dev, e.s, y.p, n) // waits for the spin
	require.NoError(t, err)
	assert.Equal(t, float32(4*n), sum)
	checkAll(t, y.read(t), 0, func(int) (float32, float64) { return 4, 0 })
}

// Across streams an event orders the work: B waits for A's spin and the
// fill after it, and B's op sees the filled values.
func TestCrossStreamOrderingWithEvent(t *testing.T) {
	e := newEnv(t)
	b, err := e.dev.NewStream()
	require.NoError(t, err)
	defer b.Destroy()
	ev, err := e.dev.NewEvent(false)
	require.NoError(t, err)
	defer ev.Destroy()

	n := 100_000
	x := alloc[float64](t, e, n, false)
	y := alloc[float64](t, e, n, false)
	require.NoError(t, e.s.Synchronize())
	require.NoError(t, testhook.Spin(e.dev, e.s, spin))
	require.NoError(t, kernels.Fill(e.dev, e.s, x.p, 2.0, n))
	require.NoError(t, ev.Record(e.s))
	require.NoError(t, b.WaitEvent(ev))
	require.NoError(t, kernels.MulScalar(e.dev, b, y.p, x.p, 3.0, n))
	done, err := b.Query()
	require.NoError(t, err)
	assert.False(t, done, "stream B ran before A's spin was over")
	got, err := kernels.Sum[float64](e.dev, b, y.p, n)
	require.NoError(t, err)
	assert.Equal(t, float64(6*n), got)
}
