package rtc

import (
	"bytes"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/internal/devstream"
	"github.com/gocuda/gocuda/kernels"
)

// Kernel is a GPU kernel of the program's own: CUDA C++ source compiled
// at run time by NVRTC (NewKernel), or PTX, a cubin or a fatbin the
// program ships (NewKernelImage). Launch queues it on a stream with
// arrays and scalars, giving the arrays the guarantees of cuarray's own
// operations (it borrows them through cuarray.WithPointersAs): ordered
// after their earlier work on any stream, kept alive until the launch has
// run, marked as last used on the launch's stream.
//
// On the host backend a Kernel runs its Go form (HostFunc) instead, so
// programs and their tests run without a GPU; a Kernel without one fails
// there with an error saying so.
//
// The source is compiled once per GPU architecture and NVRTC version
// (and kept on disk between processes, see GOCUDA_KERNEL_CACHE), loaded
// once per device, and its function looked up once per device. A Kernel
// is safe for concurrent use.
type Kernel struct {
	name   string
	op     string // "kernel saxpy", for messages
	source string // CUDA C++ source, or
	image  []byte // the program's own PTX, cubin or fatbin
	opts   []string
	host   reflect.Value // the Go form, a func; invalid if none
	// preamble is Preamble's code, which only NewElementwiseKernel takes.
	preamble string

	// fns holds the function for each device's context; last is the one
	// used last, so that the common case, one device, costs one load.
	fns     sync.Map // *cuda.Context → *loaded
	last    atomic.Pointer[loaded]
	loading sync.Mutex // held while loading into a context

	imageKeyOnce sync.Once
	imageKey     string // the image's cache key, for sharing its module
}

// loaded is a Kernel's function in one context, or why it has none.
type loaded struct {
	ctx *cuda.Context
	fn  *cuda.Function
	// from says where the code came from: "compiled", "memory" or "disk"
	// for source, "image" for an image.
	from string
}

// Option configures NewKernel and NewKernelImage.
type Option func(*Kernel) error

// HostFunc gives the kernel a Go form that the host backend runs instead
// of the GPU code: a func taking the kernel's arguments in the same
// order, each array as a []T of its elements (cuarray.In, Out and InOut alike)
// and each scalar as its Go type, and returning nothing:
//
//	// extern "C" __global__ void saxpy(float a, const float *x, float *y, long long n)
//	rtc.HostFunc(func(a float32, x, y []float32, n int64) {
//		for i := range n {
//			y[i] += a * x[i]
//		}
//	})
//
// It runs on the stream's goroutine, in stream order, as a kernel runs
// on a GPU: after the work queued on the stream before it, and before the
// host can read what it wrote. It must not block on later work of the
// same stream nor keep the slices after it returns. The arguments are
// checked against its parameters at each launch.
//
// An ElementwiseKernel needs no Go form (the host backend evaluates its
// body); given one, it runs instead. The func takes the inputs, then the
// outputs: an input as []T receives arrays and scalars alike as a slice of
// the result's length (broadcast already applied), an input as T scalars
// only; outputs are []T. It is checked when the kernel is made.
func HostFunc(fn any) Option {
	return func(k *Kernel) error {
		v := reflect.ValueOf(fn)
		if !v.IsValid() || v.Kind() != reflect.Func || v.IsNil() {
			return fmt.Errorf("HostFunc takes a func, not %T", fn)
		}
		if v.Type().NumOut() != 0 {
			return fmt.Errorf("HostFunc's func %s returns values; it must return nothing (it runs later, on the stream, where no caller receives them)", v.Type())
		}
		if v.Type().IsVariadic() {
			return fmt.Errorf("HostFunc's func %s is variadic; it must take one parameter per kernel argument", v.Type())
		}
		k.host = v
		return nil
	}
}

// CompileOptions are NVRTC options for NewKernel's source, nvcc-style:
// "-use_fast_math", "-DTILE=16", "--std=c++17". Without an -arch option
// the kernel is compiled for each device's own architecture (a cubin), or
// as PTX for the newest architecture NVRTC knows when the device is newer.
func CompileOptions(opts ...string) Option {
	return func(k *Kernel) error {
		if k.image != nil {
			return fmt.Errorf("CompileOptions given for an image (PTX, cubin or fatbin), which is not compiled")
		}
		for _, o := range opts {
			if strings.TrimSpace(o) == "" {
				return fmt.Errorf("CompileOptions: empty option in %q", opts)
			}
		}
		k.opts = append(k.opts, opts...)
		return nil
	}
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func newKernel(ctor, name string, opts []Option, k *Kernel) (*Kernel, error) {
	if !identRE.MatchString(name) {
		return nil, fmt.Errorf("rtc: %s: kernel name %q is not a C identifier; give the name of an extern \"C\" __global__ function: %w", ctor, name, backend.ErrInvalidValue)
	}
	k.name, k.op = name, "kernel "+name
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(k); err != nil {
			return nil, fmt.Errorf("rtc: %s(%s): %v: %w", ctor, name, err, backend.ErrInvalidValue)
		}
	}
	if k.preamble != "" {
		return nil, fmt.Errorf("rtc: %s(%s): Preamble is an option of NewElementwiseKernel; put the code in the kernel's source: %w", ctor, name, backend.ErrInvalidValue)
	}
	return k, nil
}

// NewKernel makes a kernel from CUDA C++ source, compiled by NVRTC for a
// device the first time it is launched there (or by Compile). name is
// the kernel's function in the source, which must be declared extern "C"
// so that its name is not mangled:
//
//	const src = `extern "C" __global__ void scale(float *x, float a, long long n) {
//		for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
//		     i += (long long)gridDim.x * blockDim.x)
//			x[i] *= a;
//	}`
//	k, err := rtc.NewKernel("scale", src, rtc.HostFunc(func(x []float32, a float32, n int64) {
//		for i := range x { x[i] *= a }
//	}))
//	err = k.Launch(s, rtc.Linear(n), cuarray.InOut(x), float32(2), int64(n))
//
// NewKernel itself compiles nothing and needs no NVRTC: a program that
// runs on the host backend only needs the HostFunc.
func NewKernel(name, source string, opts ...Option) (*Kernel, error) {
	if strings.TrimSpace(source) == "" {
		return nil, fmt.Errorf("rtc: NewKernel(%s): empty source: %w", name, backend.ErrInvalidValue)
	}
	return newKernel("NewKernel", name, opts, &Kernel{source: source})
}

// NewKernelImage makes a kernel from compiled code the program ships:
// PTX (text, as nvcc --ptx or nvrtc.Compile make it), a cubin (ELF, for
// one GPU architecture) or a fatbin (several). The driver loads it once
// per device; PTX is compiled by the driver for the device then, and
// cached by the driver between processes. name is the kernel's (extern
// "C") function in it. The image is copied.
func NewKernelImage(name string, image []byte, opts ...Option) (*Kernel, error) {
	kind := imageKind(image)
	if kind == "" {
		return nil, fmt.Errorf("rtc: NewKernelImage(%s): the image (%d bytes) is neither PTX text, a cubin (ELF) nor a fatbin: %w", name, len(image), backend.ErrInvalidValue)
	}
	k, err := newKernel("NewKernelImage", name, opts, &Kernel{image: bytes.Clone(image)})
	if err != nil {
		return nil, err
	}
	if kind == "PTX" {
		if entries := kernels.PTXEntries(image); !contains(entries, name) {
			return nil, fmt.Errorf("rtc: NewKernelImage(%s): the PTX defines no kernel %s; it defines %q (is the kernel extern \"C\"?): %w", name, name, entries, backend.ErrInvalidValue)
		}
	}
	return k, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// imageKind is "PTX", "cubin" or "fatbin" by the image's first bytes, or
// "" for none of them.
func imageKind(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte("\x7fELF")):
		return "cubin"
	case bytes.HasPrefix(b, []byte{0x50, 0xed, 0x55, 0xba}): // fatbin magic 0xba55ed50, little-endian
		return "fatbin"
	case len(b) > 0 && bytes.Contains(b, []byte(".version")) && bytes.Contains(b, []byte(".entry")):
		return "PTX"
	}
	return ""
}

// Name is the kernel's function name.
func (k *Kernel) Name() string { return k.name }

// HasHost reports whether the kernel has a Go form for the host backend.
func (k *Kernel) HasHost() bool { return k.host.IsValid() }

// String describes the kernel: "kernel saxpy (source, host form)".
func (k *Kernel) String() string {
	what := "source"
	if k.image != nil {
		what = imageKind(k.image)
	}
	if k.HasHost() {
		what += ", host form"
	}
	return fmt.Sprintf("%s (%s)", k.op, what)
}

// Dim3 is a grid or block shape.
type Dim3 = cuda.Dim3

// LaunchConfig is a launch's shape: the grid of blocks, the threads of a
// block, and the bytes of dynamic shared memory a block gets (extern
// __shared__). Y and Z left 0 are 1. Linear makes the common 1-D shape.
type LaunchConfig struct {
	Grid, Block Dim3
	SharedMem   uint32
	// linear is Linear's n, resolved against the device at launch.
	linear int
	sized  bool
}

// Linear is a 1-D launch for a grid-stride kernel over n elements:
// blocks of 256 threads, as many as cover n but at most a full wave of
// the device (8 blocks per multiprocessor), the kernel looping over the
// rest. Such a kernel reads its index range as
//
//	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
//	     i += (long long)gridDim.x * blockDim.x)
//
// which is right for any grid; this one keeps the launch small for small
// n and the GPU full for large n (the built-in operations size theirs the
// same way).
func Linear(n int) LaunchConfig { return LaunchConfig{linear: n, sized: true} }

const (
	linearThreads     = 256
	linearBlocksPerSM = 8
	maxBlockThreads   = 1024
)

// resolve turns c into the grid and block of a launch on a device of sms
// multiprocessors.
func (c LaunchConfig) resolve(sms int) (grid, block Dim3, err error) {
	if c.sized {
		if c.linear < 0 {
			return grid, block, fmt.Errorf("Linear(%d): negative element count", c.linear)
		}
		blocks := (c.linear + linearThreads - 1) / linearThreads
		blocks = max(min(blocks, max(sms, 1)*linearBlocksPerSM), 1)
		return Dim3{X: uint32(blocks), Y: 1, Z: 1}, Dim3{X: linearThreads, Y: 1, Z: 1}, nil
	}
	grid, block = ones(c.Grid), ones(c.Block)
	if grid.X == 0 || block.X == 0 {
		return grid, block, fmt.Errorf("launch config %+v: Grid.X and Block.X must be at least 1 (or use Linear(n))", c)
	}
	if t := uint64(block.X) * uint64(block.Y) * uint64(block.Z); t > maxBlockThreads {
		return grid, block, fmt.Errorf("launch config: a block of %d×%d×%d is %d threads; CUDA allows at most %d", block.X, block.Y, block.Z, t, maxBlockThreads)
	}
	return grid, block, nil
}

func ones(d Dim3) Dim3 {
	if d.Y == 0 {
		d.Y = 1
	}
	if d.Z == 0 {
		d.Z = 1
	}
	return d
}

// maxKernelArgs bounds a launch's arguments (the driver binding packs at
// most 64).
const maxKernelArgs = 64

// scalarTypes are the Go types a scalar argument may have, for messages.
const scalarTypes = "int32 (C int), uint32, int64 (long long), uint64, float32 (float), float64 (double) or uintptr (a raw address, unordered)"

// Launch queues the kernel on stream s (nil: the arrays' device's default
// stream) with the given shape and arguments, in the kernel's parameter
// order. Each array is wrapped by cuarray.In, Out or InOut to say whether
// the kernel reads it, writes it, or both; scalars are int32, uint32, int64,
// uint64, float32, float64 or uintptr, matching the C parameter's size
// (Go's int is not accepted: say int32 or int64). Like cuarray's own
// operations it returns once the kernel is queued; the arrays are ordered
// after their earlier work on other streams, kept alive, and later work
// elsewhere waits for this launch.
//
// On a GPU the first launch on a device compiles (NVRTC) and loads the
// kernel there; a compile error carries NVRTC's log (*nvrtc.CompileError),
// a missing NVRTC wraps nvrtc.ErrNoNVRTC. On the host backend the
// kernel's HostFunc runs with the arguments as Go values, and the host
// stream checker judges the declared reads and writes.
func (k *Kernel) Launch(s *cuarray.Stream, cfg LaunchConfig, args ...any) error {
	if len(args) > maxKernelArgs {
		return fmt.Errorf("rtc: %s: %d arguments; at most %d: %w", k.op, len(args), maxKernelArgs, backend.ErrInvalidValue)
	}
	// The arrays, and where they are among args.
	var arrStack [maxArrays]cuarray.Arg
	var posStack [maxArrays]int
	arrs, pos := arrStack[:0], posStack[:0]
	for i, a := range args {
		switch v := a.(type) {
		case cuarray.Arg:
			if v.Access()&cuarray.ReadWrite == 0 {
				return fmt.Errorf("rtc: %s: argument %d is %v; make array arguments with In, Out or InOut: %w", k.op, i, v, backend.ErrInvalidValue)
			}
			if err := v.Err(); err != nil {
				return fmt.Errorf("rtc: %s: argument %d: %w", k.op, i, err)
			}
			arrs, pos = append(arrs, v), append(pos, i)
		case int32, uint32, int64, uint64, float32, float64, uintptr:
		case int, uint:
			return fmt.Errorf("rtc: %s: argument %d is a Go %T, whose size C does not share; pass int32 for a C int or int64 for a long long: %w", k.op, i, a, backend.ErrInvalidValue)
		default:
			if _, ok := arrayArg(a, cuarray.Read); ok {
				return fmt.Errorf("rtc: %s: argument %d is a bare %T; wrap it in cuarray.In, Out or InOut to say whether the kernel reads it, writes it or both: %w", k.op, i, a, backend.ErrInvalidValue)
			}
			return fmt.Errorf("rtc: %s: argument %d has type %T; accepted are arrays wrapped in cuarray.In, Out or InOut, and scalars of type %s: %w", k.op, i, a, scalarTypes, backend.ErrInvalidValue)
		}
	}
	var dev backend.Device
	switch {
	case len(arrs) > 0:
		dev = arrs[0].Device()
	case s != nil:
		dev = s.Device()
	default:
		return fmt.Errorf("rtc: %s: no stream and no array to find a device by: %w", k.op, backend.ErrInvalidValue)
	}
	on, err := deviceOn(k.op, dev)
	if err != nil {
		return err
	}
	if on.GPU != nil {
		return k.launchGPU(on.GPU, s, cfg, args, arrs, pos)
	}
	return k.launchHost(s, cfg, args, arrs, pos)
}

// maxArrays is how many array arguments a launch collects without
// allocating.
const maxArrays = 8

// launchGPU loads the kernel on d if need be and launches it through the
// borrowing of cuarray.WithPointersAs.
func (k *Kernel) launchGPU(d devstream.GPU, s *cuarray.Stream, cfg LaunchConfig, args []any, arrs []cuarray.Arg, pos []int) error {
	grid, block, err := cfg.resolve(d.Info().MultiProcessors)
	if err != nil {
		return fmt.Errorf("rtc: %s: %v: %w", k.op, err, backend.ErrInvalidValue)
	}
	f, err := k.function(d)
	if err != nil {
		return err
	}
	return cuarray.WithPointersAs(k.op, s, func(bs backend.Stream, ptrs []backend.Ptr) error {
		cs, err := gpuStream(bs)
		if err != nil {
			return err
		}
		// The arguments as the driver binding takes them: the arrays'
		// addresses in their places. The copy keeps the caller's slice
		// as it was.
		var packStack [16]any
		packed := append(packStack[:0], args...)
		for j, i := range pos {
			packed[i] = cuda.DevicePtr(ptrs[j])
		}
		return cs.CUDA().Launch(f, grid, block, cfg.SharedMem, packed...)
	}, arrs...)
}

// launchHost queues the kernel's Go form on s's host stream. The borrowing
// has told the stream checker of the declared reads and writes, at the
// point in stream order where the Go form runs.
func (k *Kernel) launchHost(s *cuarray.Stream, cfg LaunchConfig, args []any, arrs []cuarray.Arg, pos []int) error {
	if !k.HasHost() {
		return k.noHostError()
	}
	if _, _, err := cfg.resolve(1); err != nil {
		return fmt.Errorf("rtc: %s: %v: %w", k.op, err, backend.ErrInvalidValue)
	}
	if err := k.checkHostArgs(args, arrs, pos); err != nil {
		return err
	}
	return cuarray.WithPointersAs(k.op, s, func(bs backend.Stream, ptrs []backend.Ptr) error {
		hs, err := hostStream(bs)
		if err != nil {
			return err
		}
		in := make([]reflect.Value, len(args))
		j := 0
		for i, a := range args {
			if j < len(pos) && pos[j] == i {
				in[i] = hostSlice(arrs[j], ptrs[j])
				j++
				continue
			}
			in[i] = reflect.ValueOf(a)
		}
		fn := k.host
		return hs.Enqueue(func() { fn.Call(in) })
	}, arrs...)
}

// checkHostArgs matches the arguments against the HostFunc's parameters,
// so that a mismatch is an error at the launch rather than a panic on the
// stream's goroutine later.
func (k *Kernel) checkHostArgs(args []any, arrs []cuarray.Arg, pos []int) error {
	ft := k.host.Type()
	if ft.NumIn() != len(args) {
		return fmt.Errorf("rtc: %s: launched with %d arguments, but its HostFunc %s takes %d: %w", k.op, len(args), ft, ft.NumIn(), backend.ErrInvalidValue)
	}
	j := 0
	for i, a := range args {
		var got reflect.Type
		if j < len(pos) && pos[j] == i {
			got = sliceType(arrs[j].DType())
			j++
		} else {
			got = reflect.TypeOf(a)
		}
		if want := ft.In(i); got != want {
			return fmt.Errorf("rtc: %s: argument %d is passed to the HostFunc as %s, but its parameter %d is %s (HostFunc %s): %w", k.op, i, got, i, want, ft, backend.ErrInvalidValue)
		}
	}
	return nil
}
