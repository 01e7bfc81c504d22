package cudabackend

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/cuda"
)

// Backend is the CUDA driver as a backend.Backend.
type Backend struct {
	version int
	devices []*Device
}

var opened struct {
	once sync.Once
	b    *Backend
	err  error
}

// Open loads the driver and opens every device once per process. Without a
// driver the error matches cuda.ErrNoDriver; with a driver but no device it
// matches backend.ErrNoDevice.
func Open() (*Backend, error) {
	opened.once.Do(func() { opened.b, opened.err = open() })
	return opened.b, opened.err
}

func open() (*Backend, error) {
	if err := cuda.Init(); err != nil {
		if errors.Is(err, cuda.ErrNoDevice) {
			return nil, fmt.Errorf("cuda backend: %w: %w", backend.ErrNoDevice, err)
		}
		return nil, err
	}
	v, err := cuda.DriverVersion()
	if err != nil {
		return nil, err
	}
	n, err := cuda.DeviceCount()
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("cuda backend: the driver sees no GPU: %w", backend.ErrNoDevice)
	}
	b := &Backend{version: v}
	for i := 0; i < n; i++ {
		d, err := openDevice(i)
		if err != nil {
			return nil, fmt.Errorf("cuda backend: device %d: %w", i, err)
		}
		b.devices = append(b.devices, d)
	}
	return b, nil
}

// Name is "cuda".
func (b *Backend) Name() string { return "cuda" }

// DriverVersion is the driver's CUDA version (13000 for 13.0).
func (b *Backend) DriverVersion() int { return b.version }

// DeviceCount is the number of GPUs.
func (b *Backend) DeviceCount() int { return len(b.devices) }

// Device returns GPU ordinal.
func (b *Backend) Device(ordinal int) (backend.Device, error) {
	if ordinal < 0 || ordinal >= len(b.devices) {
		return nil, fmt.Errorf("cuda backend: device %d does not exist: ordinals are 0 to %d: %w",
			ordinal, len(b.devices)-1, backend.ErrNoDevice)
	}
	return b.devices[ordinal], nil
}

// Device is one GPU through its primary context.
type Device struct {
	dev  cuda.Device
	ctx  *cuda.Context
	info backend.Info
	gran uint64
	// captures counts the device's streams capturing now (graph.go).
	captures atomic.Int32
}

func openDevice(i int) (*Device, error) {
	dev, err := cuda.GetDevice(i)
	if err != nil {
		return nil, err
	}
	ctx, err := dev.PrimaryContext()
	if err != nil {
		return nil, err
	}
	d := &Device{dev: dev, ctx: ctx}
	info := backend.Info{Ordinal: i}
	if info.Name, err = dev.Name(); err != nil {
		return nil, err
	}
	if info.TotalMemory, err = dev.TotalMem(); err != nil {
		return nil, err
	}
	if info.Major, info.Minor, err = dev.ComputeCapability(); err != nil {
		return nil, err
	}
	info.PCIBusID, _ = dev.PCIBusID()
	attr := func(a cuda.DeviceAttribute) int { v, _ := dev.Attribute(a); return v }
	info.MultiProcessors = attr(cuda.AttrMultiProcessorCount)
	info.MemoryPools = attr(cuda.AttrMemoryPoolsSupported) != 0
	info.VirtualMemory = attr(cuda.AttrVirtualMemoryManagement) != 0
	info.UnifiedAddressing = attr(cuda.AttrUnifiedAddressing) != 0
	info.ConcurrentManagedAccess = attr(cuda.AttrConcurrentManagedAccess) != 0
	if info.VirtualMemory {
		if d.gran, err = ctx.Granularity(false); err != nil {
			info.VirtualMemory = false
		}
	}
	d.info = info
	return d, nil
}

// Context is the device's primary context, for packages (kernels, BLAS)
// that call the driver directly.
func (d *Device) Context() *cuda.Context { return d.ctx }

// Ordinal is the device's index.
func (d *Device) Ordinal() int { return d.info.Ordinal }

// Info describes the device.
func (d *Device) Info() backend.Info { return d.info }

// MemInfo returns free and total device memory.
func (d *Device) MemInfo() (uint64, uint64, error) { return d.ctx.MemGetInfo() }

// wrap makes driver errors match the backend's sentinels too.
func wrap(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, cuda.ErrOutOfMemory):
		return fmt.Errorf("%w: %w", backend.ErrOutOfMemory, err)
	case errors.Is(err, cuda.ErrInvalidValue), errors.Is(err, cuda.ErrInvalidHandle):
		return fmt.Errorf("%w: %w", backend.ErrInvalidValue, err)
	case errors.Is(err, cuda.ErrNotSupported):
		return fmt.Errorf("%w: %w", backend.ErrNotSupported, err)
	case errors.Is(err, cuda.ErrInvalidDevice), errors.Is(err, cuda.ErrNoDevice):
		return fmt.Errorf("%w: %w", backend.ErrNoDevice, err)
	case errors.Is(err, cuda.ErrCaptureUnsupported), errors.Is(err, cuda.ErrCaptureInvalidated),
		errors.Is(err, cuda.ErrCaptureIsolation), errors.Is(err, cuda.ErrCaptureImplicit):
		return fmt.Errorf("%w: %w", backend.ErrCapturing, err)
	}
	return err
}

// Alloc allocates device memory with cuMemAlloc.
func (d *Device) Alloc(size uint64) (backend.Ptr, error) {
	p, err := d.ctx.MemAlloc(size)
	return backend.Ptr(p), wrap(err)
}

// Free frees memory from Alloc.
func (d *Device) Free(p backend.Ptr) error {
	if p == 0 {
		return fmt.Errorf("cuda backend: free of a nil pointer: %w", backend.ErrInvalidValue)
	}
	return wrap(d.ctx.MemFree(cuda.DevicePtr(p)))
}

// NewStream creates a non-blocking stream.
func (d *Device) NewStream() (backend.Stream, error) {
	s, err := d.ctx.NewStream(cuda.StreamNonBlocking)
	if err != nil {
		return nil, wrap(err)
	}
	return &Stream{s: s, dev: d, id: backend.NewStreamID()}, nil
}

// NewEvent creates an event.
func (d *Device) NewEvent(timing bool) (backend.Event, error) {
	flags := cuda.EventDisableTiming
	if timing {
		flags = 0
	}
	e, err := d.ctx.NewEvent(flags)
	if err != nil {
		return nil, wrap(err)
	}
	return &Event{e: e, timing: timing}, nil
}

// Synchronize waits for all work on the device.
func (d *Device) Synchronize() error {
	if n := d.captures.Load(); n > 0 {
		// cuCtxSynchronize breaks a capture on any of the context's
		// streams, whatever the capture mode.
		return fmt.Errorf("cuda backend: device %d: Synchronize while %d of its streams capture: %w", d.info.Ordinal, n, backend.ErrCapturing)
	}
	return wrap(d.ctx.Synchronize())
}

func (d *Device) stream(s backend.Stream) (*Stream, error) {
	cs, ok := s.(*Stream)
	if !ok || cs == nil {
		return nil, fmt.Errorf("cuda backend: stream %T is not a CUDA stream: %w", s, backend.ErrInvalidValue)
	}
	// The driver takes another context's stream and runs the work there,
	// on the wrong device: the host backend refuses it, and so do we.
	if cs.dev != d {
		return nil, fmt.Errorf("cuda backend: device %d: stream %d belongs to device %d: %w",
			d.info.Ordinal, cs.id, cs.dev.info.Ordinal, backend.ErrInvalidValue)
	}
	return cs, cs.live()
}

// CopyHtoD queues a copy from host memory; from pageable memory the driver
// has staged the bytes when it returns.
func (d *Device) CopyHtoD(dst backend.Ptr, src unsafe.Pointer, n uint64, s backend.Stream) error {
	if n == 0 {
		return nil
	}
	cs, err := d.stream(s)
	if err != nil {
		return err
	}
	if err := cs.notCapturing("CopyHtoD from pageable host memory"); err != nil {
		return err
	}
	return wrap(cs.s.MemcpyHtoDAsync(cuda.DevicePtr(dst), src, n))
}

// CopyDtoH copies to host memory after the work queued on s and returns
// when the bytes are there.
func (d *Device) CopyDtoH(dst unsafe.Pointer, src backend.Ptr, n uint64, s backend.Stream) error {
	if n == 0 {
		return nil
	}
	cs, err := d.stream(s)
	if err != nil {
		return err
	}
	if err := cs.notCapturing("CopyDtoH (a read by the host)"); err != nil {
		return err
	}
	if err := cs.s.MemcpyDtoHAsync(dst, cuda.DevicePtr(src), n); err != nil {
		return wrap(err)
	}
	// Into pageable memory the copy is already complete; into pinned memory
	// it is not, and the contract is that the bytes are in dst on return.
	return wrap(cs.s.Synchronize())
}

// CopyDtoD queues a device-to-device copy.
func (d *Device) CopyDtoD(dst, src backend.Ptr, n uint64, s backend.Stream) error {
	if n == 0 {
		return nil
	}
	cs, err := d.stream(s)
	if err != nil {
		return err
	}
	return wrap(cs.s.MemcpyDtoDAsync(cuda.DevicePtr(dst), cuda.DevicePtr(src), n))
}

// Memset8 queues a byte fill.
func (d *Device) Memset8(dst backend.Ptr, v uint8, n uint64, s backend.Stream) error {
	if n == 0 {
		return nil
	}
	cs, err := d.stream(s)
	if err != nil {
		return err
	}
	return wrap(cs.s.MemsetD8Async(cuda.DevicePtr(dst), v, n))
}

// Memset32 queues a 32-bit word fill.
func (d *Device) Memset32(dst backend.Ptr, v uint32, n uint64, s backend.Stream) error {
	if n == 0 {
		return nil
	}
	if dst%4 != 0 {
		return fmt.Errorf("cuda backend: Memset32 at %#x: the address must be 4-byte aligned: %w", uintptr(dst), backend.ErrInvalidValue)
	}
	cs, err := d.stream(s)
	if err != nil {
		return err
	}
	return wrap(cs.s.MemsetD32Async(cuda.DevicePtr(dst), v, n))
}

// Stream is a CUDA stream as a backend.Stream.
type Stream struct {
	s   *cuda.Stream
	dev *Device
	id  uint32
	// destroyed makes use after Destroy an error: the driver may have
	// recycled the handle, and handing it over would be undefined.
	destroyed atomic.Bool
	// capturing is set between BeginCapture and EndCapture: what the
	// driver would refuse during a capture, and then invalidate it for,
	// is refused here before the driver is called (graph.go).
	capturing atomic.Bool
}

func (s *Stream) live() error {
	if s.destroyed.Load() {
		return fmt.Errorf("cuda backend: stream %d was destroyed: %w", s.id, backend.ErrInvalidValue)
	}
	return nil
}

// CUDA is the driver stream, for kernel launches.
func (s *Stream) CUDA() *cuda.Stream { return s.s }

// ID is the stream's small process-wide ID.
func (s *Stream) ID() uint32 { return s.id }

// Device is the stream's device.
func (s *Stream) Device() backend.Device { return s.dev }

// Synchronize waits for the stream's work.
func (s *Stream) Synchronize() error {
	if err := s.live(); err != nil {
		return err
	}
	if err := s.notCapturing("Synchronize"); err != nil {
		return err
	}
	return wrap(s.s.Synchronize())
}

// Query reports whether the stream's work is done.
func (s *Stream) Query() (bool, error) {
	if err := s.live(); err != nil {
		return false, err
	}
	if err := s.notCapturing("Query"); err != nil {
		return false, err
	}
	ok, err := s.s.Query()
	return ok, wrap(err)
}

// Pending reports whether work is still queued on the stream (one
// cuStreamQuery); a destroyed stream or an error says no.
func (s *Stream) Pending() bool {
	if s.destroyed.Load() || s.capturing.Load() { // a query would invalidate a capture
		return false
	}
	done, err := s.s.Query()
	return err == nil && !done
}

// WaitEvent orders later work after e.
func (s *Stream) WaitEvent(e backend.Event) error {
	ce, ok := e.(*Event)
	if !ok || ce == nil {
		return fmt.Errorf("cuda backend: event %T is not a CUDA event: %w", e, backend.ErrInvalidValue)
	}
	if err := s.live(); err != nil {
		return err
	}
	if err := s.notCapturing("WaitEvent (a dependency on work outside the capture)"); err != nil {
		return err
	}
	return wrap(s.s.WaitEvent(ce.e))
}

// Destroy waits for the stream's queued work, then destroys it. Waiting
// matters: the stream's ID is reused by the next stream, and pools key
// cached blocks by ID, so blocks freed on this stream must not reach the new
// one while work on the old one may still touch them.
func (s *Stream) Destroy() error {
	if !s.destroyed.CompareAndSwap(false, true) {
		return fmt.Errorf("cuda backend: stream %d destroyed twice: %w", s.id, backend.ErrInvalidValue)
	}
	s.dropCapture() // a capture still open is ended and its graph dropped
	if err := s.s.Synchronize(); err != nil {
		return wrap(err)
	}
	err := s.s.Destroy()
	backend.ReleaseStreamID(s.id)
	return wrap(err)
}

// Event is a CUDA event as a backend.Event.
type Event struct {
	e      *cuda.Event
	timing bool
}

// Record captures the work queued on s.
func (e *Event) Record(s backend.Stream) error {
	cs, ok := s.(*Stream)
	if !ok || cs == nil {
		return fmt.Errorf("cuda backend: stream %T is not a CUDA stream: %w", s, backend.ErrInvalidValue)
	}
	if err := cs.live(); err != nil {
		return err
	}
	if err := cs.notCapturing("Event.Record (gocuda captures one stream: no events inside)"); err != nil {
		return err
	}
	return wrap(e.e.Record(cs.s))
}

// Query reports whether the recorded work is done.
func (e *Event) Query() (bool, error) {
	ok, err := e.e.Query()
	return ok, wrap(err)
}

// Synchronize waits for the recorded work.
func (e *Event) Synchronize() error { return wrap(e.e.Synchronize()) }

// Elapsed is the time from start to e.
func (e *Event) Elapsed(start backend.Event) (time.Duration, error) {
	cs, ok := start.(*Event)
	if !ok || !e.timing || !cs.timing {
		return 0, fmt.Errorf("cuda backend: Elapsed needs two timing events: %w", backend.ErrInvalidValue)
	}
	d, err := e.e.Elapsed(cs.e)
	return d, wrap(err)
}

// Destroy destroys the event.
func (e *Event) Destroy() error { return wrap(e.e.Destroy()) }
