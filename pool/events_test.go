package pool_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/pool"
	"github.com/gocuda/gocuda/pool/pooltest"
)

func TestSourceEmitsGrowReleaseAndReclaimToSubscribers(t *testing.T) {
	dev := pooltest.Device(t)
	src, err := pool.NewSource(dev, pool.Limits{})
	require.NoError(t, err)

	var got []pool.Event
	cancel := pool.Subscribe(func(e pool.Event) { got = append(got, e) })
	require.True(t, pool.Observed())

	p, err := src.Alloc(1<<20, nil)
	require.NoError(t, err)
	require.NoError(t, src.Release(p, 1<<20, nil))
	src.NoteReclaimed(1 << 20)
	cancel()
	assert.False(t, pool.Observed(), "cancel removes the only subscriber")

	p, err = src.Alloc(1<<20, nil) // not seen: cancelled
	require.NoError(t, err)
	require.NoError(t, src.Release(p, 1<<20, nil))

	require.Len(t, got, 3)
	want := []pool.EventKind{pool.EventGrow, pool.EventRelease, pool.EventReclaim}
	for i, e := range got {
		assert.Equal(t, want[i], e.Kind, "event %d", i)
		assert.Equal(t, uint64(1<<20), e.Bytes)
		assert.Equal(t, dev.Ordinal(), e.Device)
		assert.False(t, e.Time.IsZero())
	}
	assert.Equal(t, uint64(1<<20), got[0].Reserved, "reserved after growing")
	assert.Equal(t, uint64(0), got[1].Reserved, "reserved after releasing")
	assert.Equal(t, "grow", pool.EventGrow.String())
	assert.Equal(t, "unknown", pool.EventKind(0).String())
}

func TestSubscribersAreCalledInOrderAndCancelledSeparately(t *testing.T) {
	var a, b int
	ca := pool.Subscribe(func(pool.Event) { a++ })
	cb := pool.Subscribe(func(pool.Event) { b++ })
	pool.Emit(pool.Event{Kind: pool.EventCollect})
	ca()
	pool.Emit(pool.Event{Kind: pool.EventCollect})
	cb()
	cb() // twice is harmless
	pool.Emit(pool.Event{Kind: pool.EventCollect})
	assert.Equal(t, 1, a)
	assert.Equal(t, 2, b)
}
