package binned

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/pool"
	"github.com/gocuda/gocuda/pool/pooltest"
)

func TestMissSkipsABusyStreamRatherThanWait(t *testing.T) {
	dev := pooltest.Device(t)
	src, err := pool.NewSource(dev, pool.Limits{})
	require.NoError(t, err)
	pl, err := New(dev, src)
	require.NoError(t, err)
	p := pl.(*Pool)
	t.Cleanup(func() { assert.NoError(t, p.Close()) })
	a, b := pooltest.NewStream(t, dev), pooltest.NewStream(t, dev)

	blk, err := p.Alloc(miB, a)
	require.NoError(t, err)
	require.NoError(t, p.Free(blk, a))

	// Stream a is busy (its lock held): b's miss goes to the driver.
	ea := p.streams.Get(a)
	ea.mu.Lock()
	got, err := p.Alloc(miB, b)
	ea.mu.Unlock()
	require.NoError(t, err)
	assert.NotSame(t, blk, got)
	assert.Equal(t, uint64(2), p.Stats().DriverAllocs)
	require.NoError(t, p.Free(got, b))

	// Not busy: the next miss on a third stream takes a's block.
	c := pooltest.NewStream(t, dev)
	got2, err := p.Alloc(miB, c)
	require.NoError(t, err)
	assert.Equal(t, uint64(2), p.Stats().DriverAllocs)
	require.NoError(t, p.Free(got2, c))
}

const miB = 1 << 20
