// Package rtc runs kernels compiled at run time on cuarray arrays: CUDA C++
// source that NVRTC compiles for each device on first use (NewKernel), PTX,
// a cubin or a fatbin the program ships (NewKernelImage), and kernels it
// writes itself from a C expression, in the manner of CuPy's
// ElementwiseKernel (NewElementwiseKernel). It sits above cuarray, as
// CuPy keeps its ElementwiseKernel outside its array core, and uses
// nothing of cuarray that a launcher of one's own could not:
// cuarray.WithPointersAs borrows the arrays' device addresses on a stream
// with the guarantees of cuarray's own operations (ordered after the
// arrays' earlier work on any stream, kept alive until the kernel has run,
// marked as last used on the stream), and declares their reads and writes
// to the host backend's stream checker.
//
// Compiled code is kept per NVRTC version, kernel name, options and source,
// in memory and on disk (GOCUDA_KERNEL_CACHE), and loaded once per device.
// Each kernel may have a Go form (HostFunc), which the host backend runs
// instead of GPU code, so that programs and their tests run without a GPU.
// An elementwise kernel needs none: its body is written once and runs on
// both backends, compiled by NVRTC on a GPU and evaluated in Go on the
// host; a Go form, when given, runs there instead, for speed.
//
// A kernel of one's own takes arrays wrapped by cuarray.In, Out or InOut
// (how the kernel uses them) and scalars, in its parameter order; Linear(n)
// shapes a 1-D grid-stride launch for the device:
//
//	k, err := rtc.NewKernel("saxpy", saxpySource, rtc.HostFunc(
//		func(a float32, x, y []float32, n int64) {
//			for i := range n { y[i] += a * x[i] }
//		}))
//	err = k.Launch(s, rtc.Linear(n), float32(2), cuarray.In(x), cuarray.InOut(y), int64(n))
//
// A generated elementwise kernel takes typed inputs and outputs and a body
// for one element, the same on both backends; inputs are arrays, which
// broadcast as cuarray's Add does, or scalars:
//
//	axpy, err := rtc.NewElementwiseKernel("axpy",
//		"float32 a, float32 x, float32 y", "float32 z", "z = a * x + y")
//	err = axpy.Launch(s, float32(2), x, y, z)           // z has the result's shape
//	z, err := rtc.Apply[float32](axpy, s, float32(2), x, y) // a new z
//
// docs/interop.md has the rules: arguments, shapes, compiling and caching,
// the body on the host, the Go form, and what the generated code does.
package rtc
