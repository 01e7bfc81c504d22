//go:build linux && !gocuda_portablemem

package host

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
)

// TestMapInPlace checks where handles land in the arena: in place (Map is
// an mprotect of the reservation's window) when the range at their first
// address is free, loose otherwise, and that ranges go back once nothing
// uses them.
func TestMapInPlace(t *testing.T) {
	b := New(Options{TotalMemory: 1 << 30})
	dev, err := b.Device(0)
	require.NoError(t, err)
	d := dev.(*Device)
	v := &d.vmm
	const g = granularity
	va, err := d.Reserve(8 * g)
	require.NoError(t, err)
	if !v.arena.windows() {
		t.Skip("RLIMIT_FSIZE keeps the arena too short for windows")
	}
	require.True(t, v.reservations[0].window, "the reservation maps the arena")

	h1, err := d.CreatePhysical(2 * g)
	require.NoError(t, err)
	p1 := v.physical[h1]
	assert.False(t, p1.bound, "no range before the first Map")
	require.NoError(t, d.Map(va, 2*g, h1))
	assert.True(t, p1.placed)
	assert.Equal(t, uint64(va), p1.off)

	// Unmapped and mapped elsewhere, h1 keeps its range; a new handle at
	// h1's first address cannot have it and goes loose.
	require.NoError(t, d.Unmap(va, 2*g))
	require.NoError(t, d.Map(va+4*g, 2*g, h1))
	assert.Equal(t, uint64(va), p1.off)
	h2, err := d.CreatePhysical(g)
	require.NoError(t, err)
	require.NoError(t, d.Map(va+g, g, h2))
	p2 := v.physical[h2]
	assert.False(t, p2.placed)
	assert.GreaterOrEqual(t, p2.off, uint64(looseBase))

	// Released and unmapped, h1's range is free again: a handle first
	// mapped there is in place.
	require.NoError(t, d.ReleasePhysical(h1))
	require.Len(t, v.arena.placed, 1, "h1 is still mapped")
	require.NoError(t, d.Unmap(va+4*g, 2*g))
	assert.Empty(t, v.arena.placed)
	h3, err := d.CreatePhysical(g)
	require.NoError(t, err)
	require.NoError(t, d.Map(va, g, h3))
	assert.True(t, v.physical[h3].placed)

	// Loose ranges are reused by handles of their size.
	loose := p2.off
	require.NoError(t, d.Unmap(va+g, g))
	require.NoError(t, d.ReleasePhysical(h2))
	require.NoError(t, d.Unmap(va, g))
	h4, err := d.CreatePhysical(g)
	require.NoError(t, err)
	require.NoError(t, d.Map(va, g, h4)) // where h3, still alive, is placed
	assert.False(t, v.physical[h4].placed)
	assert.Equal(t, loose, v.physical[h4].off)

	for _, h := range []backend.Physical{h3, h4} {
		require.NoError(t, d.ReleasePhysical(h))
	}
	require.NoError(t, d.Unmap(va, g))
	require.NoError(t, d.ReleaseAddress(va, 8*g))
	assert.Empty(t, v.arena.placed)
	free, total, _ := d.MemInfo()
	assert.Equal(t, total, free)
}
