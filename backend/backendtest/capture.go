package backendtest

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
)

// testCapture: memsets and copies queued on a capturing stream do not run;
// the graph replays them, as often as launched; what would break the
// capture (a synchronisation, host copies, events across it, a device
// synchronisation) is refused with ErrCapturing and the capture goes on;
// an update with the same operations takes their new parameters, one with
// other operations is refused with ErrGraphUpdate.
func testCapture(t *testing.T, d backend.Device) {
	s := newStream(t, d)
	cp, ok := backend.Capturable(s)
	if !ok {
		t.Skipf("streams of %T cannot be captured", d)
	}
	const n = 1 << 12
	a, b := alloc(t, d, 4*n), alloc(t, d, 4*n)
	require.NoError(t, d.Memset32(a, 1, n, s))
	require.NoError(t, d.Memset32(b, 2, n, s))
	require.NoError(t, s.Synchronize())

	capture := func(v uint32, extra bool) backend.Graph {
		t.Helper()
		require.NoError(t, cp.BeginCapture())
		assert.True(t, cp.Capturing())
		assert.True(t, backend.Capturing(s))
		assert.ErrorContains(t, cp.BeginCapture(), "capturing already")
		require.NoError(t, d.Memset32(a, v, n, s))
		require.NoError(t, d.CopyDtoD(b, a, 4*n, s))
		if extra {
			require.NoError(t, d.Memset8(a, 0, 4, s))
		}
		g, err := cp.EndCapture()
		require.NoError(t, err)
		assert.False(t, cp.Capturing())
		return g
	}

	// Refusals leave the capture as it was.
	require.NoError(t, cp.BeginCapture())
	assert.ErrorIs(t, s.Synchronize(), backend.ErrCapturing)
	_, err := s.Query()
	assert.ErrorIs(t, err, backend.ErrCapturing)
	host := make([]byte, 16)
	assert.ErrorIs(t, d.CopyDtoH(unsafe.Pointer(&host[0]), a, 16, s), backend.ErrCapturing)
	assert.ErrorIs(t, d.CopyHtoD(a, unsafe.Pointer(&host[0]), 16, s), backend.ErrCapturing)
	ev := newEvent(t, d, false)
	assert.ErrorIs(t, ev.Record(s), backend.ErrCapturing)
	assert.ErrorIs(t, s.WaitEvent(ev), backend.ErrCapturing)
	assert.ErrorIs(t, d.Synchronize(), backend.ErrCapturing)
	require.NoError(t, d.Memset32(a, 7, n, s))
	g, err := cp.EndCapture()
	require.NoError(t, err)
	nodes, err := g.Nodes()
	require.NoError(t, err)
	assert.Equal(t, 1, nodes, "only the memset was recorded")
	require.NoError(t, g.Destroy())
	_, err = cp.EndCapture()
	assert.ErrorContains(t, err, "without BeginCapture")
	require.NoError(t, d.Synchronize())
	requireAll(t, words(dtoh(t, d, a, 4*n, s)), 1, "captured work does not run")

	g = capture(3, false)
	ex, err := g.Instantiate()
	require.NoError(t, err)
	require.NoError(t, g.Destroy())
	require.NoError(t, ex.Launch(s))
	requireAll(t, words(dtoh(t, d, b, 4*n, s)), 3, "the launch ran the capture")
	require.NoError(t, d.Memset32(b, 0, n, s))
	require.NoError(t, ex.Launch(s))
	require.NoError(t, ex.Launch(s))
	requireAll(t, words(dtoh(t, d, b, 4*n, s)), 3, "every launch runs it again")

	g = capture(9, false)
	require.NoError(t, ex.Update(g))
	require.NoError(t, g.Destroy())
	require.NoError(t, ex.Launch(s))
	requireAll(t, words(dtoh(t, d, b, 4*n, s)), 9, "the update took the new value")

	g = capture(4, true)
	assert.ErrorIs(t, ex.Update(g), backend.ErrGraphUpdate)
	require.NoError(t, g.Destroy())
	require.NoError(t, ex.Launch(s))
	requireAll(t, words(dtoh(t, d, b, 4*n, s)), 9, "a refused update leaves the instance as it was")
	require.NoError(t, ex.Destroy())
	assert.Error(t, ex.Launch(s), "launch after Destroy")
}
