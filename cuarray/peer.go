package cuarray

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/kernels"
)

// copyAcross is Copy between arrays of two devices: queued on dst's
// stream (o's, or dst's device's default stream), ordered after the work
// queued on both arrays, with later work on src ordered after the copy, so
// that neither array's users synchronize anything. The backend goes peer
// to peer when the devices can reach each other and stages through pinned
// host memory when they cannot (backend.PeerCopier). src keeps its last
// stream (a stream of its own device), dst's becomes the copy's.
func (o Ops[T]) copyAcross(dst, src *Array[T]) error {
	const op = "Copy"
	dev := dst.origin.dev
	s, err := o.streamFor(op, dev)
	if err != nil {
		return err
	}
	pc, ok := dev.(backend.PeerCopier)
	if !ok {
		return fmt.Errorf("cuarray: %s: device %d (%T) cannot copy from other devices: %w", op, dev.Ordinal(), dev, backend.ErrNotSupported)
	}
	if dst.n == 0 {
		return nil
	}
	if s.life.capture.Load() != nil || src.buf.life.capture.Load() != nil || dst.buf.life.capture.Load() != nil {
		return fmt.Errorf("cuarray: %s %s from device %d to device %d: a copy between devices cannot be captured (it orders streams of two devices): %w",
			op, src, src.origin.dev.Ordinal(), dev.Ordinal(), ErrCapturing)
	}
	db, sb := dst.buf, src.buf
	first, second := db, sb // lock in address order, as do does
	if uintptr(unsafe.Pointer(sb)) < uintptr(unsafe.Pointer(db)) {
		first, second = sb, db
	}
	first.mu.Lock()
	second.mu.Lock()
	defer func() {
		second.mu.Unlock()
		first.mu.Unlock()
	}()
	if db.block == nil || sb.block == nil {
		return fmt.Errorf("cuarray: %s: dst %s or src %s: its buffer was freed: %w", op, dst, src, ErrFreed)
	}
	if s.closed.Load() || !s.life.acquire() {
		return closedError(op, s)
	}
	defer s.life.release()
	if err := db.orderOn(s.life); err != nil {
		return fmt.Errorf("cuarray: %s: ordering stream %d after stream %d: %w", op, s.bs.ID(), db.life.bs.ID(), err)
	}
	var z T
	n := uint64(dst.n) * uint64(unsafe.Sizeof(z))
	// The source's stream takes the copy's ordering both ways: while it
	// lives, its own; once ended, the source's device's default stream
	// after its tail, which then becomes the source's last stream.
	used, err := sb.life.live(func(as backend.Stream) error {
		if dst.Kind() != Device || src.Kind() != Device {
			// Unified and pinned memory have one address every device
			// reaches: a plain copy on dst's stream, ordered both ways
			// like CopyPeer's.
			return copyAddressable(dev, s.bs, dst.ptr(), as, src.ptr(), n)
		}
		return pc.CopyPeer(dst.ptr(), s.bs, src.ptr(), as, n)
	})
	if err == nil {
		sb.life = used
	}
	runtime.KeepAlive(dst)
	runtime.KeepAlive(src)
	if err != nil {
		return fmt.Errorf("cuarray: %s %s from device %d to device %d: %w", op, src, src.origin.dev.Ordinal(), dev.Ordinal(), err)
	}
	return nil
}

// copyAddressable copies n bytes between addresses every device reaches,
// on bs (of dev), ordered as CopyPeer orders its copies.
func copyAddressable(dev backend.Device, bs backend.Stream, dst backend.Ptr, as backend.Stream, src backend.Ptr, n uint64) error {
	return backend.CopyOrdered(bs, as, func() error { return dev.CopyDtoD(dst, src, n, bs) })
}

// Clone returns a copy of a on o's stream's device (device 0's default
// stream for the zero Ops): the way to move an array to another device.
// a may be on any device; the copy is ordered after the work queued on a,
// and a's later work after the copy.
func (o Ops[T]) Clone(a *Array[T]) (*Array[T], error) {
	if err := a.check("Clone", "a"); err != nil {
		return nil, err
	}
	out, err := o.New(a.shape()...)
	if err != nil {
		return nil, err
	}
	if err := o.Copy(out, a); err != nil {
		out.UnsafeFree()
		return nil, err
	}
	return out, nil
}

// ToDevice returns a copy of a on device ordinal (its default stream):
// peer to peer when the devices can reach each other, staged through
// pinned host memory when they cannot.
func ToDevice[T Elem](a *Array[T], device int) (*Array[T], error) {
	s, err := DefaultStream(device)
	if err != nil {
		return nil, fmt.Errorf("cuarray: ToDevice(%d) %s: %w", device, kernels.DTypeOf[T](), err)
	}
	return On[T](s).Clone(a)
}
