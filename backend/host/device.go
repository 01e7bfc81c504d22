package host

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/dustin/go-humanize"

	"github.com/gocuda/gocuda/backend"
)

// Device is one host device. Its memory is anonymous mappings from the OS
// (VirtualAlloc on Windows);
// its streams are goroutines.
type Device struct {
	b       *Backend
	ordinal int
	total   uint64
	// used counts bytes of Alloc and CreatePhysical still held, so that a
	// device with a small TotalMemory runs out the way a GPU does.
	used atomic.Uint64

	allocMu sync.Mutex
	allocs  map[backend.Ptr]uint64 // Alloc'd address -> size, for Free

	streamMu sync.Mutex
	streams  map[*Stream]struct{} // live streams, for Device.Synchronize

	// captures counts the device's streams capturing now (graph.go).
	captures atomic.Int32

	vmm vmm
}

var (
	_ backend.Device        = (*Device)(nil)
	_ backend.VirtualMemory = (*Device)(nil)
)

func newDevice(b *Backend, ordinal int, total uint64) *Device {
	return &Device{
		b:       b,
		ordinal: ordinal,
		total:   total,
		allocs:  make(map[backend.Ptr]uint64),
		streams: make(map[*Stream]struct{}),
		vmm:     newVMM(),
	}
}

// Ordinal is the device's index in its backend.
func (d *Device) Ordinal() int { return d.ordinal }

// RunsOnHost marks d as a device whose memory is this process's own: its
// Ptrs are addresses the CPU dereferences and its streams run Go functions
// (Stream.Enqueue). The compute packages (kernels, blas, curand, nccl) find
// their Go loops' device by it (internal/devstream's Host capability).
func (d *Device) RunsOnHost() {}

// Info describes the device as a GPU would be described.
func (d *Device) Info() backend.Info {
	return backend.Info{
		Ordinal:                 d.ordinal,
		Name:                    "host CPU",
		TotalMemory:             d.total,
		MultiProcessors:         runtime.NumCPU(),
		VirtualMemory:           true,
		MemoryPools:             false,
		UnifiedAddressing:       true,
		ConcurrentManagedAccess: true,
	}
}

// MemInfo returns TotalMemory less the bytes currently allocated, and
// TotalMemory.
func (d *Device) MemInfo() (free, total uint64, err error) {
	return d.total - d.used.Load(), d.total, nil
}

// charge takes size bytes from the device's budget or fails with
// ErrOutOfMemory, naming what was asked for and what is left.
func (d *Device) charge(size uint64, what string) error {
	for {
		used := d.used.Load()
		if free := d.total - used; size > free {
			return fmt.Errorf("host: device %d: %s of %d bytes (%s) with %d bytes (%s) free of %s: %w",
				d.ordinal, what, size, humanize.IBytes(size), free, humanize.IBytes(free),
				humanize.IBytes(d.total), backend.ErrOutOfMemory)
		}
		if d.used.CompareAndSwap(used, used+size) {
			return nil
		}
	}
}

func (d *Device) uncharge(size uint64) { d.used.Add(-size) }

// Alloc maps size bytes of anonymous, zeroed, page-aligned memory. It
// costs no RAM until its pages are touched (on Linux not even swap, with
// MAP_NORESERVE), so a pool may reserve far more than the machine has as
// long as it does not use it.
func (d *Device) Alloc(size uint64) (backend.Ptr, error) {
	if size == 0 {
		return 0, fmt.Errorf("host: device %d: alloc of %d bytes: %w", d.ordinal, size, backend.ErrInvalidValue)
	}
	if err := d.b.fault(FaultAlloc); err != nil {
		return 0, d.faulted(err, "alloc of %d bytes", size)
	}
	if err := d.charge(size, "alloc"); err != nil {
		return 0, err
	}
	p, err := allocPages(size)
	if err != nil {
		d.uncharge(size)
		return 0, mmapError(d.ordinal, "alloc", size, err)
	}
	d.allocMu.Lock()
	d.allocs[p] = size
	d.allocMu.Unlock()
	return p, nil
}

// Free unmaps memory from Alloc. A pointer Alloc did not return, or one
// already freed, is an error rather than a crash, so that pool bugs show up
// as failing tests.
func (d *Device) Free(p backend.Ptr) error {
	if err := d.b.fault(FaultFree); err != nil {
		return d.faulted(err, "free of %#x", uintptr(p))
	}
	d.allocMu.Lock()
	size, ok := d.allocs[p]
	delete(d.allocs, p)
	d.allocMu.Unlock()
	if !ok {
		return fmt.Errorf("host: device %d: free of %#x: not allocated by this device or already freed: %w",
			d.ordinal, uintptr(p), backend.ErrInvalidValue)
	}
	d.b.forget(p, size) // before unmapping, while no Alloc can get the range
	if err := freePages(p, size); err != nil {
		return fmt.Errorf("host: device %d: free of %#x: %s: %w", d.ordinal, uintptr(p), unmapCall, err)
	}
	d.uncharge(size)
	return nil
}

// NewStream starts a stream: a goroutine running queued work in order.
func (d *Device) NewStream() (backend.Stream, error) {
	if err := d.b.fault(FaultStream); err != nil {
		return nil, d.faulted(err, "NewStream")
	}
	s := newStream(d)
	d.streamMu.Lock()
	d.streams[s] = struct{}{}
	d.streamMu.Unlock()
	return s, nil
}

func (d *Device) forgetStream(s *Stream) {
	d.streamMu.Lock()
	delete(d.streams, s)
	d.streamMu.Unlock()
}

// NewEvent creates an event.
func (d *Device) NewEvent(timing bool) (backend.Event, error) {
	if err := d.b.fault(FaultEvent); err != nil {
		return nil, d.faulted(err, "NewEvent")
	}
	return &Event{dev: d, timing: timing}, nil
}

// Synchronize waits for the work queued so far on every live stream of the
// device.
func (d *Device) Synchronize() error {
	if err := d.b.fault(FaultSync); err != nil {
		return d.faulted(err, "Synchronize")
	}
	if n := d.captures.Load(); n > 0 {
		// As on CUDA, where cuCtxSynchronize breaks a capture.
		return fmt.Errorf("host: device %d: Synchronize while %d of its streams capture: %w", d.ordinal, n, backend.ErrCapturing)
	}
	d.streamMu.Lock()
	streams := make([]*Stream, 0, len(d.streams))
	for s := range d.streams {
		streams = append(streams, s)
	}
	d.streamMu.Unlock()
	for _, s := range streams {
		s.wait() // each wait tells the stream checker what it waited for
	}
	return nil
}

// stream returns s as a host stream of this device. Whether it was
// destroyed is left to the enqueue that follows, which checks under the
// stream's lock.
func (d *Device) stream(s backend.Stream) (*Stream, error) {
	hs, ok := s.(*Stream)
	switch {
	case !ok || hs == nil:
		return nil, fmt.Errorf("host: device %d: stream %T is not a host stream: %w", d.ordinal, s, backend.ErrInvalidValue)
	case hs.dev != d:
		return nil, fmt.Errorf("host: device %d: stream %d belongs to device %d: %w",
			d.ordinal, hs.id, hs.dev.ordinal, backend.ErrInvalidValue)
	}
	return hs, nil
}

// CopyHtoD stages src in a Go buffer before returning, so the caller may
// reuse src at once, and queues the copy into dst on s.
func (d *Device) CopyHtoD(dst backend.Ptr, src unsafe.Pointer, n uint64, s backend.Stream) error {
	hs, err := d.stream(s)
	if err != nil || n == 0 {
		return err
	}
	if dst == 0 || src == nil {
		return d.nilPointer("CopyHtoD", dst, uintptr(src))
	}
	if err := d.b.fault(FaultCopy); err != nil {
		return d.faulted(err, "CopyHtoD of %d bytes", n)
	}
	if err := hs.notCapturing("CopyHtoD from pageable host memory"); err != nil {
		return err
	}
	staged := make([]byte, n)
	copy(staged, unsafe.Slice((*byte)(src), n))
	return hs.enqueueOp("CopyHtoD", func() { copy(bytesAt(dst, n), staged) }, Access{dst, n, true})
}

// CopyDtoH queues the copy after the work on s and waits for it.
func (d *Device) CopyDtoH(dst unsafe.Pointer, src backend.Ptr, n uint64, s backend.Stream) error {
	hs, err := d.stream(s)
	if err != nil || n == 0 {
		return err
	}
	if dst == nil || src == 0 {
		return d.nilPointer("CopyDtoH", src, uintptr(dst))
	}
	if err := d.b.fault(FaultCopy); err != nil {
		return d.faulted(err, "CopyDtoH of %d bytes", n)
	}
	if err := hs.notCapturing("CopyDtoH (a read by the host)"); err != nil {
		return err
	}
	done := make(chan struct{})
	fn := func() {
		copy(unsafe.Slice((*byte)(dst), n), bytesAt(src, n))
		close(done)
	}
	if c := d.b.check.Load(); c != nil {
		clock, err := hs.enqueueChecked(c, opSpec{name: "CopyDtoH"}, []Access{{src, n, false}}, fn)
		if err != nil {
			return err
		}
		<-done
		c.hostWaited(clock) // the host has the bytes: later work is ordered after the copy
		return nil
	}
	if err := hs.enqueue(fn); err != nil {
		return err
	}
	<-done
	return nil
}

// CopyDtoD queues a copy; overlapping ranges behave like memmove.
func (d *Device) CopyDtoD(dst, src backend.Ptr, n uint64, s backend.Stream) error {
	hs, err := d.stream(s)
	if err != nil || n == 0 {
		return err
	}
	if dst == 0 || src == 0 {
		return d.nilPointer("CopyDtoD", dst, uintptr(src))
	}
	if err := d.b.fault(FaultCopy); err != nil {
		return d.faulted(err, "CopyDtoD of %d bytes", n)
	}
	return hs.enqueueOp("CopyDtoD", func() { copy(bytesAt(dst, n), bytesAt(src, n)) },
		Access{src, n, false}, Access{dst, n, true})
}

// Memset8 queues setting n bytes at dst to v.
func (d *Device) Memset8(dst backend.Ptr, v uint8, n uint64, s backend.Stream) error {
	hs, err := d.stream(s)
	if err != nil || n == 0 {
		return err
	}
	if dst == 0 {
		return d.nilPointer("Memset8", dst, 1)
	}
	if err := d.b.fault(FaultMemset); err != nil {
		return d.faulted(err, "Memset8 of %d bytes", n)
	}
	return hs.enqueueOp("Memset8", func() { fill(bytesAt(dst, n), v) }, Access{dst, n, true})
}

// Memset32 queues setting n 4-byte words at dst to v.
func (d *Device) Memset32(dst backend.Ptr, v uint32, n uint64, s backend.Stream) error {
	hs, err := d.stream(s)
	if err != nil || n == 0 {
		return err
	}
	if dst == 0 {
		return d.nilPointer("Memset32", dst, 1)
	}
	if dst%4 != 0 || n > ^uint64(0)/4 {
		return fmt.Errorf("host: device %d: Memset32 of %d words at %#x: address not 4-byte aligned or count too large: %w",
			d.ordinal, n, uintptr(dst), backend.ErrInvalidValue)
	}
	if err := d.b.fault(FaultMemset); err != nil {
		return d.faulted(err, "Memset32 of %d words", n)
	}
	return hs.enqueueOp("Memset32", func() { fill(unsafe.Slice((*uint32)(addrOf(dst)), n), v) }, Access{dst, 4 * n, true})
}

func (d *Device) nilPointer(op string, dev backend.Ptr, host uintptr) error {
	return fmt.Errorf("host: device %d: %s with device pointer %#x and host pointer %#x: nil pointer: %w",
		d.ordinal, op, uintptr(dev), host, backend.ErrInvalidValue)
}

// fillChunk bounds the prefix fill copies from, so that the source of
// every copy stays in cache.
const fillChunk = 64 << 10

// fill sets every element of s to v by copying an already filled prefix,
// so that large fills run at memmove speed rather than element by element.
func fill[T any](s []T, v T) {
	if len(s) == 0 {
		return
	}
	s[0] = v
	chunk := max(fillChunk/int(unsafe.Sizeof(v)), 1)
	for done := 1; done < len(s); {
		done += copy(s[done:], s[:min(done, chunk)])
	}
}

// addrOf turns a device address into a pointer. The memory is outside the
// Go heap, so the collector never looks at it; the indirection keeps vet's
// uintptr-to-pointer check quiet for this one deliberate conversion.
func addrOf(p backend.Ptr) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&p))
}

func bytesAt(p backend.Ptr, n uint64) []byte {
	return unsafe.Slice((*byte)(addrOf(p)), n)
}

// mmapError wraps ErrOutOfMemory when the OS itself is out of address
// space, mappings or commit charge, so callers see the same sentinel as for the budget.
func mmapError(ordinal int, what string, size uint64, err error) error {
	if noMemory(err) {
		return fmt.Errorf("host: device %d: %s of %d bytes: %s: %v: %w", ordinal, what, size, mapCall, err, backend.ErrOutOfMemory)
	}
	return fmt.Errorf("host: device %d: %s of %d bytes: %s: %w", ordinal, what, size, mapCall, err)
}
