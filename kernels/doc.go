// Package kernels is the array kernels of gocuda, for both backends: fills,
// elementwise arithmetic, and the unary maps and reductions a small training
// loop needs. cuarray builds its operations on them; they take raw device
// pointers and lengths, not arrays.
//
// Every operation takes a backend.Device and one of its streams and is
// queued on that stream, in order with everything else queued there
// (copies, memsets, other kernels), and returns without waiting. Reductions
// (Sum, Max, Min, Dot) return a Go value, and so wait until the stream has
// run everything before them, and only that.
//
//	b, _ := auto.Default() // the GPU if there is one, else the host
//	dev, _ := b.Device(0)
//	s, _ := dev.NewStream()
//	x, _ := dev.Alloc(n * 4)
//	y, _ := dev.Alloc(n * 4)
//	kernels.Fill(dev, s, x, float32(2), n)
//	kernels.Fill(dev, s, y, float32(1), n)
//	kernels.Axpy(dev, s, float32(3), x, y, n) // y = 3x + y
//	kernels.Relu[float32](dev, s, y, y, n)     // in place
//	total, err := kernels.Sum[float32](dev, s, y, n) // waits for the above
//
// # Element types
//
// The functions are generic over Elem (float32, float64, int8, int16,
// int32, int64, uint8, uint32, complex64, bool, and package half's Float16
// and BFloat16), so that code generic over an array's element type can
// call any of them. Each operation takes the types it makes sense for —
// arithmetic the numbers, Axpy and Scale the floats and complex64, the unary
// maps float32 and float64, Max and Min the real types — and returns an
// error wrapping ErrUnsupportedDType, naming the types it takes, for the
// others. DType names the types at run time.
//
// Semantics are Go's on every backend, with one exception: integer
// arithmetic wraps, MinInt / -1 is MinInt, but an integer divided by zero
// is 0 (on a GPU there is nothing to panic; the host backend does the
// same). Floats are IEEE 754: division and sqrt are correctly rounded on
// both backends; exp, log and tanh on a GPU are within the CUDA math
// library's bounds (2 ulp for float32, 1 ulp for float64; the kernels are
// not compiled with --use_fast_math). Reductions are deterministic: the same
// inputs on the same device give the same bits. float32 sums and dot
// products accumulate in float64, complex64 sums in complex128, integer sums
// in int64 (SumInt64 returns that int64; Sum converts it to T). Max and Min
// return NaN if any element is NaN; of an empty array they are an error
// wrapping ErrEmpty.
//
// # Backends
//
// On the CUDA backend the kernels are CUDA C (kernels/cuda/kernels.cu)
// compiled by scripts/gen-ptx.sh to machine code for sm_80 and sm_90 (A100
// and the other 8.x GPUs, H100, H200) and to PTX for compute_80, both
// embedded in the package. A context's first kernel loads the machine code
// when the GPU is one of those, else the PTX, which the driver compiles for
// the GPU: that takes seconds (6.3 s for all the kernels on an H100) unless
// the driver's cache (~/.nv/ComputeCache, or CUDA_CACHE_PATH) holds the
// result from an earlier process. The module and each kernel are looked up
// once per context.
// Until the PTX has been generated the embedded file is a placeholder and
// every kernel on a GPU fails with ErrNoPTX. Launches are sized from the
// device's multiprocessor count (256-thread blocks, at most 8 blocks per
// SM, grid-stride loops) and move 16-byte vectors when every pointer is
// 16-byte aligned, as pool allocations are; a view at another offset takes
// the element-at-a-time path. Reductions run in two passes, per-block
// partials then one block, in a small scratch buffer per concurrent
// reduction that the package keeps per device. SumCols, which returns no
// value to wait for, takes its scratch from the caller instead (Scratch,
// sized by SumColsScratch): cuarray lends it from the array's pool, freed
// on the stream, so it counts toward the pool's limits.
//
// On the host backend the same operations are Go loops over the device's
// memory, queued through the stream's Enqueue capability (a host stream
// runs the Go functions queued on it in order) so that they are ordered
// exactly as GPU kernels are; large arrays are split across goroutines. Any other
// backend.Device is an error wrapping backend.ErrNotSupported.
//
// # Arguments
//
// Lengths are in elements. A negative length, a nil or misaligned pointer
// (for n > 0), or a stream of another device is an error wrapping
// backend.ErrInvalidValue, returned before anything is queued; nothing
// panics. With n == 0 nothing is queued and pointers may be nil. dst may be
// the same pointer as an input (in place) but must not otherwise overlap
// one. The kernels do not check that pointers lie inside allocations: as
// with any CUDA kernel, a wrong pointer faults on the device.
//
// # Strided operands
//
// AddStrided, SubStrided, MulStrided and DivStrided take a shape and, for
// each input, strides in elements instead of a length: a stride of 0
// repeats an input along a dimension, which is how broadcasting (cuarray's
// [n m] + [m]) reaches the kernels. They simplify the layout first, so that
// a row or a column broadcast over a matrix moves 16-byte vectors as Add
// does, and any number of dimensions works.
//
// # Reductions over axes
//
// ReduceAxes reduces an operand given by shape and strides over any set of
// axes (Sum, Prod, Mean, Max, Min, ArgMax, ArgMin, Any, All) into a
// contiguous array over the kept axes. ReduceOutput says the result's type:
// integer sums and products are int64, integer means float64, ArgMax and
// ArgMin int64, Any and All bool; float32 accumulates in float64. NaN
// propagates as NumPy's does, ties give the first index, and the result is
// deterministic. On a GPU it reads 16-byte vectors along a contiguous axis
// and down a strided one, and splits the reduced axis across blocks (with a
// second, fixed-order pass) when the outputs are too few to fill the GPU,
// in scratch the caller lends (ReduceScratch says how much). On compute
// capability 9.0 and up, Sum, Mean, Max and Min of float32 and float64
// down the columns of a matrix of 1024 rows or more split the rows among
// the 8 blocks of a thread-block cluster, which add their results through
// the cluster's shared memory: one pass, no scratch, as deterministic.
// # Construction and indexing
//
// Arange and Linspace fill ranges with NumPy's arithmetic, Eye an identity
// with its diagonal offset, Concat lays row-major parts side by side (an
// array joined along an axis). Take, Scatter and ScatterAdd index along an
// axis given as an IndexLayout (outer × dim × inner) with int64 indices: a
// negative index counts from the end once, and one still out of range
// never reads or writes out of bounds; checked, the operation waits for the
// stream and returns an error wrapping ErrIndex. ScatterAdd uses atomic adds
// on a GPU (not deterministic for floats; exact for integers).
package kernels
