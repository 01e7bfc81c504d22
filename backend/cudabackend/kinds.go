package cudabackend

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/internal/testsupport/testhook"
)

var (
	_ backend.UnifiedMemory = (*Device)(nil)
	_ backend.PinnedMemory  = (*Device)(nil)
	_ backend.PeerCopier    = (*Device)(nil)
)

// AllocUnified allocates managed memory (CU_MEM_ATTACH_GLOBAL), after
// checking that the device has that much free: the driver would accept
// more and page it in and out behind the program's back, which is how
// unified memory turns a clear out-of-memory error into a slow crawl.
func (d *Device) AllocUnified(size uint64) (backend.Ptr, error) {
	free, _, err := d.ctx.MemGetInfo()
	if err != nil {
		return 0, wrap(err)
	}
	if size > free {
		return 0, backend.UnifiedTooLarge("cuda backend", d.info.Ordinal, size, free)
	}
	p, err := d.ctx.MemAllocManaged(size)
	return backend.Ptr(p), wrap(err)
}

// FreeUnified frees managed memory (cuMemFree takes it like any other).
func (d *Device) FreeUnified(p backend.Ptr) error { return d.Free(p) }

// AllocPinned allocates page-locked host memory. Under unified addressing
// (every device this backend supports) its host address is also its
// device address, and it is portable to every context.
func (d *Device) AllocPinned(size uint64) (backend.Ptr, error) {
	p, err := d.ctx.MemAllocHost(size)
	if err != nil {
		return 0, wrap(err)
	}
	return backend.Ptr(uintptr(p)), nil
}

// FreePinned frees memory from AllocPinned.
func (d *Device) FreePinned(p backend.Ptr) error { return wrap(d.ctx.MemFreeHost(hostPtr(p))) }

// hostPtr is p as a host pointer. The memory is the driver's, never Go's
// heap; the indirection keeps vet's uintptr-to-pointer check quiet for this
// one deliberate conversion.
func hostPtr(p backend.Ptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

// peerLink is what one (destination, source) pair of devices can do,
// found once: CUDA.jl learned to cache it (asking the driver on every copy
// is slow), and enabling peer access is a one-time context setting.
type peerLink struct {
	once   sync.Once
	direct bool  // peer access enabled: copies go device to device
	err    error // enabling failed for a reason other than "cannot"
	stage  stager
}

var links sync.Map // [2]int{dst, src} -> *peerLink

func (d *Device) link(src *Device) *peerLink {
	v, _ := links.LoadOrStore([2]int{d.info.Ordinal, src.info.Ordinal}, &peerLink{})
	l := v.(*peerLink)
	l.once.Do(func() {
		ok, err := d.dev.CanAccessPeer(src.dev)
		if err != nil || !ok {
			return // staged
		}
		if err := d.ctx.EnablePeerAccess(src.ctx); err != nil {
			if errors.Is(err, cuda.ErrTooManyPeers) {
				return // staged: the device has all the peers it can take
			}
			l.err = err
			return
		}
		l.direct = true
	})
	return l
}

// PeerDirect reports whether copies from src to d go peer to peer (after
// the first copy between them has linked the pair).
func (d *Device) PeerDirect(src *Device) bool { return d.link(src).direct }

// CopyPeer copies n bytes from src (memory of srcStream's device) to dst
// (memory of d, written on dstStream), ordered after both streams' queued
// work, with both streams' later work ordered after it.
func (d *Device) CopyPeer(dst backend.Ptr, dstStream backend.Stream, src backend.Ptr, srcStream backend.Stream, n uint64) error {
	if n == 0 {
		return nil
	}
	bs, err := d.stream(dstStream)
	if err != nil {
		return err
	}
	as, ok := srcStream.(*Stream)
	if !ok || as == nil {
		return fmt.Errorf("cuda backend: CopyPeer: source stream %T is not a CUDA stream: %w", srcStream, backend.ErrInvalidValue)
	}
	if err := as.live(); err != nil {
		return err
	}
	if dst == 0 || src == 0 {
		return fmt.Errorf("cuda backend: CopyPeer: nil pointer (dst %#x, src %#x): %w", uintptr(dst), uintptr(src), backend.ErrInvalidValue)
	}
	srcDev := as.dev
	err = backend.CopyOrdered(bs, as, func() error {
		if srcDev == d {
			return wrap(bs.s.MemcpyDtoDAsync(cuda.DevicePtr(dst), cuda.DevicePtr(src), n))
		}
		return d.copyFrom(bs, dst, srcDev, as, src, n)
	})
	if err != nil {
		return fmt.Errorf("cuda backend: CopyPeer: %w", err)
	}
	return nil
}

// copyFrom queues the copy itself on bs, peer to peer or staged.
func (d *Device) copyFrom(bs *Stream, dst backend.Ptr, srcDev *Device, as *Stream, src backend.Ptr, n uint64) error {
	switch l := d.link(srcDev); {
	case l.err != nil:
		return fmt.Errorf("cuda backend: enabling peer access from device %d to device %d: %w", d.info.Ordinal, srcDev.info.Ordinal, wrap(l.err))
	case l.direct && !testhook.StagePeerCopies.Load():
		return wrap(bs.s.MemcpyPeerAsync(cuda.DevicePtr(dst), d.ctx, cuda.DevicePtr(src), srcDev.ctx, n))
	default:
		return l.stage.copy(d, bs, dst, srcDev, as, src, n)
	}
}

// stageChunk is each of the two pinned buffers a staged copy goes
// through. Two, so that reading chunk i+1 from the source overlaps writing
// chunk i to the destination; 8 MiB, large enough that each copy runs at
// full PCIe speed and small enough to keep per pair of devices.
const stageChunk = 8 << 20

// stager copies between two devices that cannot reach each other: device
// to pinned host memory on the source's stream, then host to device on the
// destination's, chunk by chunk, the streams handing each buffer to each
// other with events so that the host never blocks.
type stager struct {
	mu  sync.Mutex
	buf [2]struct {
		p        backend.Ptr // pinned, stageChunk bytes
		filled   backend.Event
		drained  backend.Event // recorded on the destination's stream
		recorded bool          // drained has been recorded once
	}
}

func (st *stager) init(dst, src *Device) error {
	if st.buf[0].p != 0 {
		return nil
	}
	for i := range st.buf {
		b := &st.buf[i]
		var err error
		if b.p, err = src.AllocPinned(stageChunk); err != nil {
			return err
		}
		if b.filled, err = src.NewEvent(false); err != nil {
			return err
		}
		if b.drained, err = dst.NewEvent(false); err != nil {
			return err
		}
	}
	return nil
}

func (st *stager) copy(d *Device, bs *Stream, dst backend.Ptr, srcDev *Device, as *Stream, src backend.Ptr, n uint64) error {
	// One copy at a time per pair: the buffers are shared. The lock is
	// held only while queueing; the next copy's first wait on drained
	// orders its use of a buffer after this copy's.
	st.mu.Lock()
	defer st.mu.Unlock()
	if err := st.init(d, srcDev); err != nil {
		return fmt.Errorf("cuda backend: staging buffers for copies from device %d to %d: %w", srcDev.info.Ordinal, d.info.Ordinal, err)
	}
	for off, i := uint64(0), 0; off < n; off, i = off+stageChunk, i+1 {
		c := min(uint64(stageChunk), n-off)
		b := &st.buf[i%2]
		if b.recorded { // the destination has finished reading this buffer
			if err := as.WaitEvent(b.drained); err != nil {
				return err
			}
		}
		if err := wrap(as.s.MemcpyDtoHAsync(hostPtr(b.p), cuda.DevicePtr(src+backend.Ptr(off)), c)); err != nil {
			return err
		}
		if err := backend.OrderAfter(bs, as, b.filled); err != nil {
			return err
		}
		if err := wrap(bs.s.MemcpyHtoDAsync(cuda.DevicePtr(dst+backend.Ptr(off)), hostPtr(b.p), c)); err != nil {
			return err
		}
		if err := b.drained.Record(bs); err != nil {
			return err
		}
		b.recorded = true
	}
	return nil
}
