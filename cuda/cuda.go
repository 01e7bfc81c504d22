package cuda

import (
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"
	"unsafe"
)

// DevicePtr is a device address (CUdeviceptr).
type DevicePtr uint64

// Dim3 is a grid or block shape for a kernel launch.
type Dim3 struct{ X, Y, Z uint32 }

var state struct {
	once   sync.Once
	ok     bool
	reason string
	err    error
}

// Init loads the driver (libcuda.so.1) and initializes it. It is called by
// every entry point and does its work once; the result (nil, or an error
// matching ErrNoDriver, or the driver's own error) is kept. A build that
// cannot reach a driver at all (cgo off, or an OS without the dlopen
// binding) fails here too, with an error matching ErrNoDriver that says
// why and how to rebuild.
func Init() error {
	state.once.Do(func() {
		ok, reason := cLoad()
		if !ok {
			state.reason = reason
			op := "dlopen(" + driverLibrary() + ")"
			if !haveBinding {
				op = "no driver binding in this build"
			}
			state.err = newError(op, errNoDriver)
			return
		}
		state.ok = true
		if x := cInit(); x != 0 {
			if x == ErrNoDevice {
				state.err = newError("cuInit", x)
				return
			}
			state.reason = "cuInit failed"
			state.err = newError("cuInit", x)
		}
	})
	return state.err
}

// driverLibrary is the file the binding opens first.
func driverLibrary() string {
	if runtime.GOOS == "darwin" {
		return "libcuda.dylib"
	}
	return "libcuda.so.1"
}

func noDriverReason() string {
	switch {
	case !haveBinding:
		return state.reason
	case state.reason == "":
		return driverLibrary() + " could not be loaded"
	}
	return driverLibrary() + " could not be loaded: " + state.reason
}

// DriverVersion returns the driver's CUDA version as 1000*major+10*minor
// (13000 for CUDA 13.0).
func DriverVersion() (int, error) {
	if err := Init(); err != nil {
		return 0, err
	}
	v, x := cDriverVersion()
	return v, check("cuDriverGetVersion", x)
}

// DeviceCount returns the number of CUDA devices.
func DeviceCount() (int, error) {
	if err := Init(); err != nil {
		return 0, err
	}
	n, x := cDeviceCount()
	return n, check("cuDeviceGetCount", x)
}

// Device is one CUDA device.
type Device struct {
	ordinal int
	handle  int
}

// GetDevice returns device ordinal. An ordinal outside [0, DeviceCount())
// is an error that says the valid range and matches ErrInvalidDevice.
func GetDevice(ordinal int) (Device, error) {
	n, err := DeviceCount()
	if err != nil {
		return Device{}, err
	}
	if ordinal < 0 || ordinal >= n {
		return Device{}, fmt.Errorf("cuda: device %d does not exist: this machine has %d device(s), ordinals 0 to %d: %w",
			ordinal, n, n-1, ErrInvalidDevice)
	}
	h, x := cDeviceGet(ordinal)
	if err := check("cuDeviceGet", x); err != nil {
		return Device{}, err
	}
	return Device{ordinal: ordinal, handle: h}, nil
}

// Ordinal is the device's index.
func (d Device) Ordinal() int { return d.ordinal }

// Name is the device's marketing name.
func (d Device) Name() (string, error) {
	s, x := cDeviceName(d.handle)
	return s, check("cuDeviceGetName", x)
}

// TotalMem is the device's memory in bytes.
func (d Device) TotalMem() (uint64, error) {
	n, x := cDeviceTotalMem(d.handle)
	return n, check("cuDeviceTotalMem_v2", x)
}

// PCIBusID is the device's PCI address, e.g. "0000:3B:00.0".
func (d Device) PCIBusID() (string, error) {
	s, x := cDevicePCIBusID(d.handle)
	return s, check("cuDeviceGetPCIBusId", x)
}

// UUID identifies a device (cuDeviceGetUuid_v2): the GPU's UUID, or on a
// GPU in MIG mode the UUID of the MIG instance this process sees.
type UUID [16]byte

// String formats u as nvidia-smi prints a GPU's UUID and as
// CUDA_VISIBLE_DEVICES accepts it: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx,
// lower-case hexadecimal. nvidia-smi shows a MIG instance as MIG- and the
// same digits.
func (u UUID) String() string {
	return fmt.Sprintf("GPU-%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

// UUID returns the device's UUID.
func (d Device) UUID() (UUID, error) {
	u, x := cDeviceUUID(d.handle)
	return UUID(u), check("cuDeviceGetUuid_v2", x)
}

// DeviceAttribute is a CUdevice_attribute.
type DeviceAttribute int

// The attributes gocuda reads (values from the driver API's enum).
const (
	AttrMultiProcessorCount     DeviceAttribute = 16
	AttrUnifiedAddressing       DeviceAttribute = 41
	AttrComputeCapabilityMajor  DeviceAttribute = 75
	AttrComputeCapabilityMinor  DeviceAttribute = 76
	AttrManagedMemory           DeviceAttribute = 83
	AttrConcurrentManagedAccess DeviceAttribute = 89
	AttrVirtualMemoryManagement DeviceAttribute = 102
	AttrMemoryPoolsSupported    DeviceAttribute = 115
)

// Attribute reads a device attribute.
func (d Device) Attribute(a DeviceAttribute) (int, error) {
	v, x := cDeviceAttr(int(a), d.handle)
	return v, check("cuDeviceGetAttribute", x)
}

// ComputeCapability returns the major and minor compute capability.
func (d Device) ComputeCapability() (major, minor int, err error) {
	if major, err = d.Attribute(AttrComputeCapabilityMajor); err != nil {
		return
	}
	minor, err = d.Attribute(AttrComputeCapabilityMinor)
	return
}

// CanAccessPeer reports whether d can address peer's memory directly.
func (d Device) CanAccessPeer(peer Device) (bool, error) {
	v, x := cDeviceCanAccessPeer(d.handle, peer.handle)
	return v, check("cuDeviceCanAccessPeer", x)
}

var primaries struct {
	sync.Mutex
	m map[int]*Context
}

// PrimaryContext returns the device's primary context, retained once for
// the life of the process (the context the runtime API and other libraries
// share, so memory and streams interoperate with them).
func (d Device) PrimaryContext() (*Context, error) {
	primaries.Lock()
	defer primaries.Unlock()
	if c := primaries.m[d.ordinal]; c != nil {
		return c, nil
	}
	h, x := cPrimaryRetain(d.handle)
	if err := check("cuDevicePrimaryCtxRetain", x); err != nil {
		return nil, err
	}
	if primaries.m == nil {
		primaries.m = map[int]*Context{}
	}
	c := &Context{h: h, dev: d}
	primaries.m[d.ordinal] = c
	return c, nil
}

// Context is a CUDA context. Every method makes the context current on the
// calling thread inside the same C call, so goroutines need not lock OS
// threads and may move between them freely.
type Context struct {
	h   uintptr
	dev Device
}

// Device is the context's device.
func (c *Context) Device() Device { return c.dev }

// Synchronize waits for all work in the context.
func (c *Context) Synchronize() error { return check("cuCtxSynchronize", cCtxSync(c.h)) }

// EnablePeerAccess lets this context's kernels and copies address peer's
// memory. Enabling twice is not an error.
func (c *Context) EnablePeerAccess(peer *Context) error {
	x := cCtxEnablePeer(c.h, peer.h)
	if x == ErrPeerAccessEnabled {
		return nil
	}
	return check("cuCtxEnablePeerAccess", x)
}

// MemGetInfo returns the device's free and total memory.
func (c *Context) MemGetInfo() (free, total uint64, err error) {
	f, t, x := cMemInfo(c.h)
	return f, t, check("cuMemGetInfo_v2", x)
}

func sizeCheck(op string, n uint64) error {
	if n == 0 {
		return fmt.Errorf("cuda: %s: size 0: a size must be at least 1 byte: %w", op, ErrInvalidValue)
	}
	if n > math.MaxInt64 {
		return fmt.Errorf("cuda: %s: size %d is larger than any device: %w", op, n, ErrInvalidValue)
	}
	return nil
}

// MemAlloc allocates n bytes of device memory.
func (c *Context) MemAlloc(n uint64) (DevicePtr, error) {
	if err := sizeCheck("cuMemAlloc_v2", n); err != nil {
		return 0, err
	}
	p, x := cMemAlloc(c.h, n)
	return p, check("cuMemAlloc_v2", x)
}

// MemFree frees memory from MemAlloc.
func (c *Context) MemFree(p DevicePtr) error { return check("cuMemFree_v2", cMemFree(c.h, p)) }

// MemAllocManaged allocates n bytes of unified memory, reachable from the
// host and every device (CU_MEM_ATTACH_GLOBAL).
func (c *Context) MemAllocManaged(n uint64) (DevicePtr, error) {
	if err := sizeCheck("cuMemAllocManaged", n); err != nil {
		return 0, err
	}
	p, x := cMemAllocManaged(c.h, n, 1)
	return p, check("cuMemAllocManaged", x)
}

// MemAllocHost allocates n bytes of page-locked host memory, which copies
// reach at full speed and asynchronously. Free it with MemFreeHost.
func (c *Context) MemAllocHost(n uint64) (unsafe.Pointer, error) {
	if err := sizeCheck("cuMemAllocHost_v2", n); err != nil {
		return nil, err
	}
	p, x := cMemAllocHost(c.h, n)
	return p, check("cuMemAllocHost_v2", x)
}

// MemFreeHost frees memory from MemAllocHost.
func (c *Context) MemFreeHost(p unsafe.Pointer) error {
	return check("cuMemFreeHost", cMemFreeHost(c.h, p))
}

// MemcpyHtoD copies n bytes from host memory to the device, synchronously.
func (c *Context) MemcpyHtoD(dst DevicePtr, src unsafe.Pointer, n uint64) error {
	return check("cuMemcpyHtoD_v2", cHtoD(c.h, dst, src, n))
}

// MemcpyDtoH copies n bytes from the device to host memory, synchronously.
func (c *Context) MemcpyDtoH(dst unsafe.Pointer, src DevicePtr, n uint64) error {
	return check("cuMemcpyDtoH_v2", cDtoH(c.h, dst, src, n))
}

// MemcpyDtoD copies n bytes between device buffers.
func (c *Context) MemcpyDtoD(dst, src DevicePtr, n uint64) error {
	return check("cuMemcpyDtoD_v2", cDtoD(c.h, dst, src, n))
}

// StreamFlags are cuStreamCreate flags.
type StreamFlags uint32

// StreamNonBlocking: the stream does not synchronize with the legacy
// default stream. gocuda uses only such streams.
const StreamNonBlocking StreamFlags = 1

// NewStream creates a stream.
func (c *Context) NewStream(flags StreamFlags) (*Stream, error) {
	h, x := cStreamCreate(c.h, uint32(flags))
	if err := check("cuStreamCreate", x); err != nil {
		return nil, err
	}
	return &Stream{ctx: c, h: h}, nil
}

// Stream is a CUDA stream.
type Stream struct {
	ctx *Context
	h   uintptr
}

// Context is the stream's context.
func (s *Stream) Context() *Context { return s.ctx }

// Destroy destroys the stream; queued work still completes.
func (s *Stream) Destroy() error { return check("cuStreamDestroy_v2", cStreamDestroy(s.ctx.h, s.h)) }

// Synchronize waits for the work queued on the stream.
func (s *Stream) Synchronize() error { return check("cuStreamSynchronize", cStreamSync(s.ctx.h, s.h)) }

// Query reports whether the stream's queued work is done. It is one cgo
// call: the cheapest driver round trip, used to measure binding overhead.
func (s *Stream) Query() (bool, error) {
	x := cStreamQuery(s.ctx.h, s.h)
	if x == ErrNotReady {
		return false, nil
	}
	return x == 0, check("cuStreamQuery", x)
}

// WaitEvent makes later work on s wait for e's last record.
func (s *Stream) WaitEvent(e *Event) error {
	return check("cuStreamWaitEvent", cStreamWaitEvent(s.ctx.h, s.h, e.h))
}

// MemcpyHtoDAsync queues a host-to-device copy. From pageable (Go) memory
// the driver stages the bytes before returning, so src may be reused then;
// from pinned memory the copy is asynchronous and src must stay untouched
// until the stream reaches it.
func (s *Stream) MemcpyHtoDAsync(dst DevicePtr, src unsafe.Pointer, n uint64) error {
	return check("cuMemcpyHtoDAsync_v2", cHtoDAsync(s.ctx.h, dst, src, n, s.h))
}

// MemcpyDtoHAsync queues a device-to-host copy. Into pageable memory it
// returns when the bytes have arrived.
func (s *Stream) MemcpyDtoHAsync(dst unsafe.Pointer, src DevicePtr, n uint64) error {
	return check("cuMemcpyDtoHAsync_v2", cDtoHAsync(s.ctx.h, dst, src, n, s.h))
}

// MemcpyDtoDAsync queues a copy between buffers of one device.
func (s *Stream) MemcpyDtoDAsync(dst, src DevicePtr, n uint64) error {
	return check("cuMemcpyDtoDAsync_v2", cDtoDAsync(s.ctx.h, dst, src, n, s.h))
}

// MemcpyPeerAsync queues a copy from src in srcCtx to dst in dstCtx.
func (s *Stream) MemcpyPeerAsync(dst DevicePtr, dstCtx *Context, src DevicePtr, srcCtx *Context, n uint64) error {
	return check("cuMemcpyPeerAsync", cPeerAsync(s.ctx.h, dst, dstCtx.h, src, srcCtx.h, n, s.h))
}

// MemsetD8Async queues setting n bytes at dst to v.
func (s *Stream) MemsetD8Async(dst DevicePtr, v uint8, n uint64) error {
	return check("cuMemsetD8Async", cMemset8Async(s.ctx.h, dst, v, n, s.h))
}

// MemsetD32Async queues setting n 32-bit words at dst to v.
func (s *Stream) MemsetD32Async(dst DevicePtr, v uint32, n uint64) error {
	return check("cuMemsetD32Async", cMemset32Async(s.ctx.h, dst, v, n, s.h))
}

// EventFlags are cuEventCreate flags.
type EventFlags uint32

const (
	// EventBlockingSync: Synchronize sleeps instead of spinning.
	EventBlockingSync EventFlags = 1
	// EventDisableTiming: cheaper to record and wait on; no Elapsed.
	EventDisableTiming EventFlags = 2
)

// NewEvent creates an event.
func (c *Context) NewEvent(flags EventFlags) (*Event, error) {
	h, x := cEventCreate(c.h, uint32(flags))
	if err := check("cuEventCreate", x); err != nil {
		return nil, err
	}
	return &Event{ctx: c, h: h}, nil
}

// Event is a CUDA event.
type Event struct {
	ctx *Context
	h   uintptr
}

// Context is the event's context.
func (e *Event) Context() *Context { return e.ctx }

// Record captures the work queued on s so far.
func (e *Event) Record(s *Stream) error {
	return check("cuEventRecord", cEventRecord(e.ctx.h, e.h, s.h))
}

// Query reports whether the recorded work is done.
func (e *Event) Query() (bool, error) {
	x := cEventQuery(e.ctx.h, e.h)
	if x == ErrNotReady {
		return false, nil
	}
	return x == 0, check("cuEventQuery", x)
}

// Synchronize waits for the recorded work.
func (e *Event) Synchronize() error { return check("cuEventSynchronize", cEventSync(e.ctx.h, e.h)) }

// Elapsed returns the time from start to e (both recorded and complete,
// both created without EventDisableTiming).
func (e *Event) Elapsed(start *Event) (time.Duration, error) {
	ms, x := cEventElapsed(e.ctx.h, start.h, e.h)
	if err := check("cuEventElapsedTime", x); err != nil {
		return 0, err
	}
	return time.Duration(float64(ms) * float64(time.Millisecond)), nil
}

// Destroy destroys the event.
func (e *Event) Destroy() error { return check("cuEventDestroy_v2", cEventDestroy(e.ctx.h, e.h)) }

// Module is loaded device code.
type Module struct {
	ctx *Context
	h   uintptr
}

// LoadModule loads PTX (or a cubin) into the context; the driver compiles
// PTX for the device.
func (c *Context) LoadModule(image []byte) (*Module, error) {
	if len(image) == 0 {
		return nil, fmt.Errorf("cuda: cuModuleLoadData: empty image: %w", ErrInvalidImage)
	}
	h, x := cModuleLoad(c.h, image)
	if err := check("cuModuleLoadData", x); err != nil {
		return nil, err
	}
	return &Module{ctx: c, h: h}, nil
}

// Unload unloads the module.
func (m *Module) Unload() error { return check("cuModuleUnload", cModuleUnload(m.ctx.h, m.h)) }

// Function looks up a kernel by its (extern "C") name.
func (m *Module) Function(name string) (*Function, error) {
	h, x := cModuleFunction(m.ctx.h, m.h, name)
	if err := check("cuModuleGetFunction("+name+")", x); err != nil {
		return nil, err
	}
	return &Function{ctx: m.ctx, h: h, name: name}, nil
}

// Function is a kernel.
type Function struct {
	ctx  *Context
	h    uintptr
	name string
}

// Name is the kernel's name.
func (f *Function) Name() string { return f.name }

// Launch queues f on s with the given shape and arguments. Arguments may be
// DevicePtr, int32, uint32, int64, uint64, float32, float64, int (as
// int64) or uintptr; they are copied into the launch.
func (s *Stream) Launch(f *Function, grid, block Dim3, sharedMem uint32, args ...any) error {
	// Every accepted type fits one word: up to MaxWords arguments go by
	// value, as LaunchWords takes them, with nothing packed or pooled.
	if len(args) <= MaxWords {
		var w [MaxWords]uint64
		if toWordArgs(&w, args) {
			return s.LaunchWords(f, grid, block, sharedMem, w[:len(args)]...)
		}
	}
	// The packed arguments go to C, which makes Go keep them on the heap:
	// pooled, they cost no 768-byte allocation a launch. cuLaunchKernel
	// has copied them when it returns, so the buffer is free again then.
	ab := argBufs.Get().(*argBuf)
	defer argBufs.Put(ab)
	b, o, err := packArgs(ab.b[:0], ab.o[:0], args)
	if err != nil {
		return fmt.Errorf("cuda: launch %s: %w", f.name, err)
	}
	// The name is joined only on failure: launches are a hot path.
	if x := cLaunch(s.ctx.h, f.h, grid, block, sharedMem, s.h, b, o); x != 0 {
		return check("cuLaunchKernel("+f.name+")", x)
	}
	return nil
}

// MaxWords is the most arguments LaunchWords takes.
const MaxWords = maxWords

// LaunchWords queues f on s like Launch, with each argument given as one
// 64-bit word: a DevicePtr or other 64-bit value as uint64 (a float64 as
// math.Float64bits), a 32-bit one made with Word32. It is the launch path
// of code that launches small kernels many times: the words go to the
// driver by value, so it allocates nothing and packs nothing (Launch boxes
// each argument in an interface, which allocates for most values). At
// most MaxWords arguments.
func (s *Stream) LaunchWords(f *Function, grid, block Dim3, sharedMem uint32, words ...uint64) error {
	if len(words) > MaxWords {
		return f.tooManyWords(len(words))
	}
	// The name is joined only on failure: launches are a hot path.
	if x := cLaunchWords(s.ctx.h, f.h, grid, block, sharedMem, s.h, words); x != 0 {
		return check("cuLaunchKernel("+f.name+")", x)
	}
	return nil
}

// tooManyWords is LaunchWords' error for n > MaxWords arguments, kept out
// of line so that the launch itself stays small.
//
//go:noinline
func (f *Function) tooManyWords(n int) error {
	return fmt.Errorf("cuda: launch %s: %d arguments: LaunchWords takes at most %d; use Launch: %w", f.name, n, MaxWords, ErrInvalidValue)
}

// Word32 is a 32-bit kernel argument (int32, uint32, or a float32's
// math.Float32bits) as a LaunchWords word: v in the word's first four
// bytes in memory, where the driver reads a 4-byte parameter, on either
// byte order.
func Word32(v uint32) uint64 {
	var w uint64
	*(*uint32)(unsafe.Pointer(&w)) = v
	return w
}

// toWordArgs writes each of args as its LaunchWords word into w, and
// reports whether every one has a type Launch accepts (else packArgs names
// the one that has not).
func toWordArgs(w *[MaxWords]uint64, args []any) bool {
	for i, a := range args {
		switch v := a.(type) {
		case DevicePtr:
			w[i] = uint64(v)
		case uintptr:
			w[i] = uint64(v)
		case uint64:
			w[i] = v
		case int64:
			w[i] = uint64(v)
		case int:
			w[i] = uint64(v)
		case float64:
			w[i] = math.Float64bits(v)
		case int32:
			w[i] = Word32(uint32(v))
		case uint32:
			w[i] = Word32(v)
		case float32:
			w[i] = Word32(math.Float32bits(v))
		default:
			return false
		}
	}
	return true
}

// argBuf holds one launch's packed arguments and their offsets: up to 64
// arguments of at most 8 bytes each.
type argBuf struct {
	b [512]byte
	o [64]int32
}

var argBufs = sync.Pool{New: func() any { return new(argBuf) }}

func packArgs(buf []byte, offs []int32, args []any) ([]byte, []int32, error) {
	if len(args) > 64 {
		return nil, nil, fmt.Errorf("%d arguments: at most 64", len(args))
	}
	put := func(size int, write func([]byte)) {
		for len(buf)%size != 0 { // natural alignment, as the ABI wants
			buf = append(buf, 0)
		}
		offs = append(offs, int32(len(buf)))
		var tmp [8]byte
		write(tmp[:size])
		buf = append(buf, tmp[:size]...)
	}
	le := binary.LittleEndian
	for i, a := range args {
		switch v := a.(type) {
		case DevicePtr:
			put(8, func(b []byte) { le.PutUint64(b, uint64(v)) })
		case uintptr:
			put(8, func(b []byte) { le.PutUint64(b, uint64(v)) })
		case uint64:
			put(8, func(b []byte) { le.PutUint64(b, v) })
		case int64:
			put(8, func(b []byte) { le.PutUint64(b, uint64(v)) })
		case int:
			put(8, func(b []byte) { le.PutUint64(b, uint64(v)) })
		case float64:
			put(8, func(b []byte) { le.PutUint64(b, math.Float64bits(v)) })
		case int32:
			put(4, func(b []byte) { le.PutUint32(b, uint32(v)) })
		case uint32:
			put(4, func(b []byte) { le.PutUint32(b, v) })
		case float32:
			put(4, func(b []byte) { le.PutUint32(b, math.Float32bits(v)) })
		default:
			return nil, nil, fmt.Errorf("argument %d has type %T: accepted are DevicePtr, uintptr, int, int32, int64, uint32, uint64, float32, float64", i, a)
		}
	}
	return buf, offs, nil
}

// Granularity returns the minimum (or recommended) granularity of physical
// allocations and mappings for virtual memory management.
func (c *Context) Granularity(recommended bool) (uint64, error) {
	g, x := cGranularity(c.h, c.dev.handle, recommended)
	return g, check("cuMemGetAllocationGranularity", x)
}

// AddressReserve reserves n bytes of device address space.
func (c *Context) AddressReserve(n, align uint64) (DevicePtr, error) {
	if err := sizeCheck("cuMemAddressReserve", n); err != nil {
		return 0, err
	}
	p, x := cAddressReserve(c.h, n, align)
	return p, check("cuMemAddressReserve", x)
}

// AddressFree releases a reservation.
func (c *Context) AddressFree(p DevicePtr, n uint64) error {
	return check("cuMemAddressFree", cAddressFree(c.h, p, n))
}

// MemHandle is physical memory from MemCreate.
type MemHandle uint64

// MemCreate allocates n bytes of physical memory on the context's device.
func (c *Context) MemCreate(n uint64) (MemHandle, error) {
	if err := sizeCheck("cuMemCreate", n); err != nil {
		return 0, err
	}
	h, x := cMemCreate(c.h, n, c.dev.handle)
	return MemHandle(h), check("cuMemCreate", x)
}

// MemRelease releases physical memory (mappings keep it until unmapped).
func (c *Context) MemRelease(h MemHandle) error {
	return check("cuMemRelease", cMemRelease(c.h, uint64(h)))
}

// MemMap maps physical memory h at va.
func (c *Context) MemMap(va DevicePtr, n uint64, h MemHandle) error {
	return check("cuMemMap", cMemMap(c.h, va, n, uint64(h)))
}

// MemSetAccess makes [va, va+n) readable and writable by the context's
// device.
func (c *Context) MemSetAccess(va DevicePtr, n uint64) error {
	return check("cuMemSetAccess", cMemSetAccess(c.h, va, n, c.dev.handle))
}

// MemUnmap unmaps [va, va+n).
func (c *Context) MemUnmap(va DevicePtr, n uint64) error {
	return check("cuMemUnmap", cMemUnmap(c.h, va, n))
}

// MemPool is a stream-ordered memory pool (CUmemoryPool).
type MemPool struct {
	ctx *Context
	h   uintptr
}

// MemPoolAttribute is a CUmemPool_attribute.
type MemPoolAttribute int

// Pool attributes; the first three are booleans, the rest byte counts.
const (
	PoolReuseFollowEventDependencies   MemPoolAttribute = 1
	PoolReuseAllowOpportunistic        MemPoolAttribute = 2
	PoolReuseAllowInternalDependencies MemPoolAttribute = 3
	PoolReleaseThreshold               MemPoolAttribute = 4
	PoolReservedMemCurrent             MemPoolAttribute = 5
	PoolReservedMemHigh                MemPoolAttribute = 6
	PoolUsedMemCurrent                 MemPoolAttribute = 7
	PoolUsedMemHigh                    MemPoolAttribute = 8
)

// NewMemPool creates a memory pool of device memory on the context's device.
func (c *Context) NewMemPool() (*MemPool, error) {
	h, x := cPoolCreate(c.h, c.dev.handle)
	if err := check("cuMemPoolCreate", x); err != nil {
		return nil, err
	}
	return &MemPool{ctx: c, h: h}, nil
}

// Destroy destroys the pool; its memory must have been freed.
func (p *MemPool) Destroy() error { return check("cuMemPoolDestroy", cPoolDestroy(p.ctx.h, p.h)) }

// SetAttribute sets a pool attribute (booleans as 0 or 1). Setting a
// high-water mark resets it.
func (p *MemPool) SetAttribute(a MemPoolAttribute, v uint64) error {
	return check("cuMemPoolSetAttribute", cPoolSet(p.ctx.h, p.h, int(a), v))
}

// Attribute reads a pool attribute.
func (p *MemPool) Attribute(a MemPoolAttribute) (uint64, error) {
	v, x := cPoolGet(p.ctx.h, p.h, int(a))
	return v, check("cuMemPoolGetAttribute", x)
}

// TrimTo releases cached memory until at most keep bytes stay reserved.
func (p *MemPool) TrimTo(keep uint64) error {
	return check("cuMemPoolTrimTo", cPoolTrim(p.ctx.h, p.h, keep))
}

// MemAllocAsync allocates n bytes from pool p, ordered on s.
func (s *Stream) MemAllocAsync(p *MemPool, n uint64) (DevicePtr, error) {
	if err := sizeCheck("cuMemAllocFromPoolAsync", n); err != nil {
		return 0, err
	}
	d, x := cAllocAsync(s.ctx.h, n, p.h, s.h)
	return d, check("cuMemAllocFromPoolAsync", x)
}

// MemFreeAsync frees d once the work queued on s so far is done.
func (s *Stream) MemFreeAsync(d DevicePtr) error {
	return check("cuMemFreeAsync", cFreeAsync(s.ctx.h, d, s.h))
}

// CallPath says how this build calls the driver's cheap, non-blocking
// functions (stream and event queries, event records, stream waits):
//
//   - "linkname asmcgocall": on the system stack through the Go runtime's
//     internal asmcgocall, skipping the cgo bookkeeping. Only on the Go
//     versions this path was verified on (go1.26), and not with the build
//     tag gocuda_nolinkname.
//   - "cgo": plain cgo calls, on every other Go version or with the tag.
//   - "none": this build cannot reach a driver (built without cgo, or for
//     an OS without the binding); Init says why.
//
// Every call that may block is a plain cgo call on every path.
func CallPath() string { return callPath }
