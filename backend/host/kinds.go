package host

import (
	"fmt"

	"github.com/gocuda/gocuda/backend"
)

var (
	_ backend.UnifiedMemory = (*Device)(nil)
	_ backend.PinnedMemory  = (*Device)(nil)
	_ backend.PeerCopier    = (*Device)(nil)
)

// AllocUnified allocates memory the host reads and writes directly, as
// unified memory is on a GPU. On the host backend all device memory is
// host memory, so it is Alloc's, with the same check against the device's
// free memory that the CUDA backend makes.
func (d *Device) AllocUnified(size uint64) (backend.Ptr, error) {
	free, _, err := d.MemInfo()
	if err != nil {
		return 0, err
	}
	if size > free {
		return 0, backend.UnifiedTooLarge("host", d.ordinal, size, free)
	}
	return d.Alloc(size)
}

// FreeUnified frees memory from AllocUnified.
func (d *Device) FreeUnified(p backend.Ptr) error { return d.Free(p) }

// AllocPinned allocates host memory for pinned arrays; on the host backend
// it is device memory like any other.
func (d *Device) AllocPinned(size uint64) (backend.Ptr, error) { return d.Alloc(size) }

// FreePinned frees memory from AllocPinned.
func (d *Device) FreePinned(p backend.Ptr) error { return d.Free(p) }

// CopyPeer copies from another host device's memory, with the ordering
// the CUDA backend gives: after both streams' queued work, and before both
// streams' later work. Host devices share the process's memory, so the
// copy itself is a memmove on the destination's stream.
func (d *Device) CopyPeer(dst backend.Ptr, dstStream backend.Stream, src backend.Ptr, srcStream backend.Stream, n uint64) error {
	if n == 0 {
		return nil
	}
	bs, err := d.stream(dstStream)
	if err != nil {
		return err
	}
	if err := d.b.fault(FaultCopy); err != nil {
		return d.faulted(err, "CopyPeer of %d bytes", n)
	}
	as, ok := srcStream.(*Stream)
	if !ok || as == nil {
		return fmt.Errorf("host: device %d: CopyPeer: source stream %T is not a host stream: %w", d.ordinal, srcStream, backend.ErrInvalidValue)
	}
	if err := backend.CopyOrdered(bs, as, func() error { return d.CopyDtoD(dst, src, n, bs) }); err != nil {
		return fmt.Errorf("host: CopyPeer: %w", err)
	}
	return nil
}
