package backend

import (
	"errors"

	"github.com/dustin/go-humanize"

	"fmt"
	"time"
	"unsafe"
)

// Ptr is an address in a device's memory. On the host backend it is a real
// process address (memory mapped from the OS); on the CUDA backend it is a
// CUdeviceptr. It is an integer, not a Go pointer, so the Go collector never
// follows it: the memory behind it lives until a pool or the caller frees it.
type Ptr uintptr

// Backend is one way of reaching devices: the CUDA driver or the host.
type Backend interface {
	// Name is "cuda" or "host".
	Name() string
	// DriverVersion is the CUDA driver's version as the driver encodes it
	// (1000*major + 10*minor); 0 on the host backend.
	DriverVersion() int
	// DeviceCount is how many devices this backend offers.
	DeviceCount() int
	// Device returns device ordinal; an ordinal out of range is an error
	// that names the range.
	Device(ordinal int) (Device, error)
}

// Info describes a device: what doctor prints and what pools consult.
type Info struct {
	Ordinal     int
	Name        string
	TotalMemory uint64
	// ComputeCapability as major, minor; 0, 0 on the host backend.
	Major, Minor int
	// MultiProcessors is the count of streaming multiprocessors (CPUs on host).
	MultiProcessors int
	// MemoryPools: the device supports stream-ordered allocation
	// (cuMemAllocAsync and memory pools).
	MemoryPools bool
	// VirtualMemory: the device supports virtual memory management
	// (cuMemAddressReserve, cuMemCreate, cuMemMap).
	VirtualMemory bool
	// UnifiedAddressing: host and device share one address space.
	UnifiedAddressing bool
	// ConcurrentManagedAccess: the CPU and GPU may touch managed memory at
	// the same time.
	ConcurrentManagedAccess bool
	// PCIBusID is the device's PCI address, "" on the host backend.
	PCIBusID string
}

func (i Info) String() string {
	if i.Major == 0 {
		return fmt.Sprintf("device %d: %s, %s", i.Ordinal, i.Name, humanize.IBytes(i.TotalMemory))
	}
	return fmt.Sprintf("device %d: %s, %s, compute capability %d.%d", i.Ordinal, i.Name, humanize.IBytes(i.TotalMemory), i.Major, i.Minor)
}

// Device is one GPU (or the host pretending to be one). All methods are safe
// for concurrent use from any goroutine: implementations make their context
// current themselves, so callers never lock OS threads.
type Device interface {
	Ordinal() int
	Info() Info
	// MemInfo returns the free and total bytes of device memory.
	MemInfo() (free, total uint64, err error)

	// Alloc takes size bytes from the driver, synchronously. Size 0 is an
	// error. Failure for want of memory matches ErrOutOfMemory.
	Alloc(size uint64) (Ptr, error)
	// Free gives memory from Alloc back. The caller guarantees that no
	// queued work still uses it (pools synchronize the block's stream
	// first).
	Free(p Ptr) error

	// NewStream creates a stream whose work is ordered after nothing but
	// its own earlier work (a non-blocking stream on CUDA).
	NewStream() (Stream, error)
	// NewEvent creates an event; timing events can measure elapsed time,
	// others are cheaper to record and wait on.
	NewEvent(timing bool) (Event, error)
	// Synchronize waits until all work on all of this device's streams is
	// done.
	Synchronize() error

	// CopyHtoD queues a copy of n bytes from host memory src to dst on s.
	// It returns once src may be reused (the bytes are staged or copied),
	// as cuMemcpyHtoDAsync does for pageable memory.
	CopyHtoD(dst Ptr, src unsafe.Pointer, n uint64, s Stream) error
	// CopyDtoH copies n bytes from src to host memory dst after the work
	// already queued on s, and returns when the bytes are in dst.
	CopyDtoH(dst unsafe.Pointer, src Ptr, n uint64, s Stream) error
	// CopyDtoD queues a copy between two buffers of this device on s.
	CopyDtoD(dst, src Ptr, n uint64, s Stream) error
	// Memset8 queues setting n bytes at dst to v on s.
	Memset8(dst Ptr, v uint8, n uint64, s Stream) error
	// Memset32 queues setting n 4-byte words at dst to v on s; dst must be
	// 4-byte aligned.
	Memset32(dst Ptr, v uint32, n uint64, s Stream) error
}

// Stream is an ordered queue of work on one device.
type Stream interface {
	// ID is a small integer unique among the live streams of this
	// process, so that pools can keep per-stream state in a slice rather
	// than a map. IDs start at 1; 0 means "no stream".
	ID() uint32
	Device() Device
	// Synchronize blocks until all work queued so far has finished.
	Synchronize() error
	// Query reports whether all work queued so far has finished.
	Query() (bool, error)
	// WaitEvent orders all later work on this stream after the last
	// Record of e, without blocking the host.
	WaitEvent(e Event) error
	// Destroy releases the stream once its queued work is done.
	Destroy() error
}

// Pending is implemented by streams that can say whether work is still
// queued on them without the host thereby synchronizing with it. The
// pressure layer's pacer asks before it holds an allocation up for a
// collection: while the device has work queued, the wait costs the program
// nothing. Unlike Query, Pending is not a host wait: the host backend's
// stream checker does not learn from it that the work is done.
type Pending interface {
	Pending() bool
}

// Event marks a point in a stream's work.
type Event interface {
	// Record captures the work queued on s so far; the event completes when
	// that work has.
	Record(s Stream) error
	// Query reports whether the recorded work is done (true for an event
	// never recorded).
	Query() (bool, error)
	// Synchronize blocks until the recorded work is done.
	Synchronize() error
	// Elapsed is the time between start's completion and this event's, for
	// timing events.
	Elapsed(start Event) (time.Duration, error)
	Destroy() error
}

// VirtualMemory is implemented by devices that can reserve address space
// and back it with physical memory piece by piece (CUDA's VMM). Pools grow
// segments in place with it instead of allocating new ones.
type VirtualMemory interface {
	// Granularity is the size every physical allocation and mapping must
	// be a multiple of.
	Granularity() uint64
	// Reserve reserves size bytes of address space, backed by nothing.
	Reserve(size uint64) (Ptr, error)
	// ReleaseAddress gives a reservation back; nothing may be mapped in it.
	ReleaseAddress(p Ptr, size uint64) error
	// CreatePhysical allocates size bytes of physical memory.
	CreatePhysical(size uint64) (Physical, error)
	// Map maps physical memory at va and makes it readable and writable by
	// this device.
	Map(va Ptr, size uint64, m Physical) error
	// Unmap unmaps a range that Map mapped. The caller guarantees no
	// queued work still uses it.
	Unmap(va Ptr, size uint64) error
	// ReleasePhysical frees physical memory; mappings keep it alive until
	// they are unmapped.
	ReleasePhysical(m Physical) error
}

// Physical is a handle to physical device memory from CreatePhysical.
type Physical uint64

// StreamOrderedMemory is implemented by devices with the driver's
// stream-ordered allocator (cuMemAllocAsync and memory pools).
type StreamOrderedMemory interface {
	NewMemPool() (MemPool, error)
}

// MemPool is a driver memory pool (CUmemoryPool).
type MemPool interface {
	// AllocAsync allocates size bytes ordered on s.
	AllocAsync(size uint64, s Stream) (Ptr, error)
	// FreeAsync frees p once the work queued on s so far is done.
	FreeAsync(p Ptr, s Stream) error
	// SetReleaseThreshold sets how many bytes the pool keeps cached at a
	// synchronization point before giving memory back to the OS.
	SetReleaseThreshold(bytes uint64) error
	// Trim gives cached memory back until at most keep bytes are reserved.
	Trim(keep uint64) error
	// Usage reads the pool's reserved and used bytes, current and high
	// water marks.
	Usage() (PoolUsage, error)
	// ResetHighWater resets the reserved and used high-water marks.
	ResetHighWater() error
	Destroy() error
}

// PoolUsage is what a driver pool reports of its memory.
type PoolUsage struct {
	Reserved, ReservedHigh, Used, UsedHigh uint64
}

// Sentinel errors shared by every backend. Backend errors wrap them, so
// errors.Is(err, backend.ErrOutOfMemory) holds whichever backend failed.
var (
	// ErrOutOfMemory: the device (or a limit) has no room for the request.
	ErrOutOfMemory = errors.New("out of device memory")
	// ErrNoDevice: no such device, or none at all.
	ErrNoDevice = errors.New("no such device")
	// ErrNotSupported: the device or backend lacks the feature.
	ErrNotSupported = errors.New("not supported by this device or backend")
	// ErrInvalidValue: a size, pointer or handle that cannot be right.
	ErrInvalidValue = errors.New("invalid value")
)
