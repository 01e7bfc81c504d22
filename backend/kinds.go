package backend

import (
	"fmt"

	"github.com/dustin/go-humanize"
)

// UnifiedMemory is implemented by devices that can allocate unified
// (managed) memory: one address that the host and the device both read and
// write, the driver migrating pages on demand (cuMemAllocManaged).
type UnifiedMemory interface {
	// AllocUnified allocates size bytes of unified memory. It never asks
	// for more than the device has free (MemInfo): past that it fails with
	// an error wrapping ErrOutOfMemory instead of letting the driver
	// oversubscribe the device.
	AllocUnified(size uint64) (Ptr, error)
	// FreeUnified frees memory from AllocUnified. The caller guarantees
	// that no queued work still uses it.
	FreeUnified(p Ptr) error
}

// PinnedMemory is implemented by devices that can allocate page-locked
// host memory: host memory that copies reach at full speed and
// asynchronously, and that the device addresses directly (the Ptr is both
// the host and the device address, under unified addressing).
type PinnedMemory interface {
	AllocPinned(size uint64) (Ptr, error)
	// FreePinned frees memory from AllocPinned. The caller guarantees
	// that no queued work still uses it.
	FreePinned(p Ptr) error
}

// PeerCopier is implemented by devices that copy from other devices of
// the same backend.
type PeerCopier interface {
	// CopyPeer copies n bytes from src, memory of srcStream's device, to
	// dst, memory of dstStream's device (the receiver). The copy runs after
	// the work queued so far on both streams, and work queued later on
	// either stream runs after it; the host does not block. It goes
	// peer-to-peer where the devices can reach each other (enabling peer
	// access on first use) and through pinned host memory where they cannot.
	CopyPeer(dst Ptr, dstStream Stream, src Ptr, srcStream Stream, n uint64) error
}

// OrderAfter makes the work queued on waiter from now on wait for the
// work queued so far on s, without blocking the host, by recording e on s.
// e may be an event of either stream's device: CUDA lets a stream wait on
// another device's event.
func OrderAfter(waiter, s Stream, e Event) error {
	if err := e.Record(s); err != nil {
		return fmt.Errorf("recording an event on stream %d: %w", s.ID(), err)
	}
	if err := waiter.WaitEvent(e); err != nil {
		return fmt.Errorf("stream %d waiting on stream %d: %w", waiter.ID(), s.ID(), err)
	}
	return nil
}

// CopyOrdered runs copy, which queues a copy on dst (the destination's
// stream), after the work queued so far on both dst and src (the source's
// stream, possibly of another device), and orders src's later work after
// it, without blocking the host: the ordering every PeerCopier promises.
// Its two events come from the recycled ones (NewEvent) and go back at
// once: the waits have captured what to wait for.
func CopyOrdered(dst, src Stream, copy func() error) error {
	before, err := NewEvent(src.Device())
	if err != nil {
		return err
	}
	defer RecycleEvent(src.Device(), before)
	after, err := NewEvent(dst.Device())
	if err != nil {
		return err
	}
	defer RecycleEvent(dst.Device(), after)
	if err := OrderAfter(dst, src, before); err != nil {
		return err
	}
	if err := copy(); err != nil {
		return err
	}
	// The source's stream must not overwrite (or free) the source before
	// the copy has read it.
	return OrderAfter(src, dst, after)
}

// UnifiedTooLarge is the error for a unified allocation of size bytes on
// device ordinal that has only free bytes free.
func UnifiedTooLarge(who string, ordinal int, size, free uint64) error {
	return fmt.Errorf("%s: device %d: unified allocation of %s (%d bytes) exceeds the %s the device has free: %w",
		who, ordinal, humanize.IBytes(size), size, humanize.IBytes(free), ErrOutOfMemory)
}
