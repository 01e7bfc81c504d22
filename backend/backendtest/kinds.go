package backendtest

import (
	"bytes"
	"fmt"
	"math"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
)

// hostBytes is n bytes at p, for memory the host may address (unified,
// pinned).
func hostBytes(p backend.Ptr, n int) []byte {
	return unsafe.Slice((*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&p))), n)
}

// testUnified: unified memory is written by the host, changed by the
// device and read back by the host with no copy; asking for more than the
// device has free is a clear out-of-memory error, not oversubscription.
func testUnified(t *testing.T, d backend.Device) {
	u, ok := d.(backend.UnifiedMemory)
	if !ok {
		t.Skip("device does not implement backend.UnifiedMemory")
	}
	const n = 1 << 20
	p, err := u.AllocUnified(n)
	require.NoError(t, err)
	defer func() { require.NoError(t, u.FreeUnified(p)) }()
	h := hostBytes(p, n)
	for i := range h {
		h[i] = byte(i)
	}
	s := newStream(t, d)
	require.NoError(t, d.Memset8(p+n/2, 0xAB, n/2, s))
	require.NoError(t, s.Synchronize())
	assert.Equal(t, byte(7), h[7], "host write seen after device work")
	assert.Equal(t, byte(0xAB), h[n-1], "device write seen by the host without a copy")

	free, _, err := d.MemInfo()
	require.NoError(t, err)
	_, err = u.AllocUnified(free + 1<<30)
	require.ErrorIs(t, err, backend.ErrOutOfMemory)
	assert.Contains(t, err.Error(), "free")
	_, err = u.AllocUnified(math.MaxUint64 / 2)
	require.ErrorIs(t, err, backend.ErrOutOfMemory)
}

// testPinned: pinned host memory takes copies in both directions and is
// addressed by the host directly.
func testPinned(t *testing.T, d backend.Device) {
	pm, ok := d.(backend.PinnedMemory)
	if !ok {
		t.Skip("device does not implement backend.PinnedMemory")
	}
	const n = 1 << 20
	p, err := pm.AllocPinned(n)
	require.NoError(t, err)
	defer func() { require.NoError(t, pm.FreePinned(p)) }()
	want := randomBytes(n)
	copy(hostBytes(p, n), want)
	s := newStream(t, d)
	dp := alloc(t, d, n)
	require.NoError(t, d.CopyDtoD(dp, p, n, s)) // pinned is device-addressable
	assert.Equal(t, want, dtoh(t, d, dp, n, s))
	require.NoError(t, d.Memset8(dp, 3, n, s))
	require.NoError(t, d.CopyDtoD(p, dp, n, s))
	require.NoError(t, s.Synchronize())
	assert.Equal(t, bytes.Repeat([]byte{3}, n), hostBytes(p, n))
}

// testCopyPeer copies between the first two devices in both directions,
// at sizes around the CUDA backend's staging chunk, with the source still
// being written by slow work on its own stream when the copy is queued:
// the copy must wait for it without the host blocking, and the source's
// later work must wait for the copy.
func testCopyPeer(t *testing.T, b backend.Backend, big backend.Ptr) {
	if b.DeviceCount() < 2 {
		t.Skip("needs two devices")
	}
	d0, d1 := device(t, b, 0), device(t, b, 1)
	for _, size := range []int{256, 8<<20 - 256, 8 << 20, 20<<20 + 4096} {
		for _, dir := range [][2]backend.Device{{d0, d1}, {d1, d0}} {
			src, dst := dir[0], dir[1]
			t.Run(fmt.Sprintf("%d_to_%d_%d", src.Ordinal(), dst.Ordinal(), size), func(t *testing.T) {
				pc, ok := dst.(backend.PeerCopier)
				if !ok {
					t.Skip("device does not implement backend.PeerCopier")
				}
				a, bs := newStream(t, src), newStream(t, dst)
				sp, dp := alloc(t, src, uint64(size)), alloc(t, dst, uint64(size))
				t.Cleanup(func() { // before the frees: nothing queued may outlive them
					_ = a.Synchronize()
					_ = bs.Synchronize()
				})
				want := randomBytes(size)
				htod(t, src, sp, want, a)
				// Slow work on the source's stream first, then the last
				// write of the source: the copy must see it.
				if src.Ordinal() == 0 {
					for range bigRepeats {
						require.NoError(t, src.Memset8(big, 1, bigSize, a))
					}
				}
				want[0] ^= 0xFF
				htod(t, src, sp, want[:1], a)
				require.NoError(t, pc.CopyPeer(dp, bs, sp, a, uint64(size)))
				// Overwriting the source on its own stream must wait for the
				// copy to have read it.
				require.NoError(t, src.Memset8(sp, 0, uint64(size), a))
				assert.Equal(t, want, dtoh(t, dst, dp, size, bs))
				assert.Equal(t, make([]byte, size), dtoh(t, src, sp, size, a))
			})
		}
	}
	t.Run("errors", func(t *testing.T) {
		pc, ok := d1.(backend.PeerCopier)
		if !ok {
			t.Skip("device does not implement backend.PeerCopier")
		}
		testCopyPeerErrors(t, pc, d0, d1)
	})
}

// testCopyPeerSameDevice copies between two streams of one device through
// CopyPeer: the ordering both ways must hold there too, and it is the one
// case a machine with a single GPU can check.
func testCopyPeerSameDevice(t *testing.T, d backend.Device, big backend.Ptr) {
	pc, ok := d.(backend.PeerCopier)
	if !ok {
		t.Skip("device does not implement backend.PeerCopier")
	}
	const size = 1 << 20
	a, bs := newStream(t, d), newStream(t, d)
	sp, dp := alloc(t, d, size), alloc(t, d, size)
	t.Cleanup(func() {
		_ = a.Synchronize()
		_ = bs.Synchronize()
	})
	want := randomBytes(size)
	htod(t, d, sp, want, a)
	for range bigRepeats { // slow work on the source's stream first
		require.NoError(t, d.Memset8(big, 1, bigSize, a))
	}
	want[0] ^= 0xFF
	htod(t, d, sp, want[:1], a)
	require.NoError(t, pc.CopyPeer(dp, bs, sp, a, size))
	require.NoError(t, d.Memset8(sp, 0, size, a)) // must wait for the copy's read
	assert.Equal(t, want, dtoh(t, d, dp, size, bs))
	assert.Equal(t, make([]byte, size), dtoh(t, d, sp, size, a))
}

func testCopyPeerErrors(t *testing.T, pc backend.PeerCopier, d0, d1 backend.Device) {
	a, bs := newStream(t, d0), newStream(t, d1)
	require.NoError(t, pc.CopyPeer(0, bs, 0, a, 0), "an empty copy is nothing")
	require.ErrorIs(t, pc.CopyPeer(0, bs, alloc(t, d0, 256), a, 256), backend.ErrInvalidValue)
	require.ErrorIs(t, pc.CopyPeer(alloc(t, d1, 256), a, alloc(t, d0, 256), a, 256), backend.ErrInvalidValue,
		"the destination stream must be the destination device's")
}
