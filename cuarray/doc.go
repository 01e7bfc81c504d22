// Package cuarray is gocuda's GPU array: Array[T], an N-dimensional array
// of float32, float64, int8, int16, int32, int64, uint8, uint32, complex64,
// bool or package half's 16-bit floats in one device's memory, freed by Go's garbage collector, with operations that order
// themselves across streams so that nobody writes a synchronization.
//
//	x, err := cuarray.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3) // upload
//	y, err := cuarray.Zeros[float32](2, 3)
//	_, err = cuarray.Axpy(y, 2, x, y) // y = 2x + y, queued; returns at once
//	host, err := y.ToSlice()         // waits for the work that wrote y, only
//	y.UnsafeFree()                   // optional: memory back to the pool now
//
// On a machine without a GPU the same program runs on the host backend.
//
// # Layout
//
// Arrays are row-major (C order): the last index varies fastest, and
// element (i, j) of a [rows cols] array is element i*cols+j of its memory.
// ToSlice, CopyTo and FromSlice use that order. Reshape, View (a range of
// the flattened elements) and Slice (a range along the first axis) return
// arrays that share the parent's memory: no copy, and a write through one
// is seen through the others. Reshape may infer one dimension given as -1.
// A shape with no dimensions is a zero-dimensional array of one element.
//
// # Views
//
// Transpose, Permute, SliceAxis and BroadcastTo return strided views: they
// share the parent's memory (no copy) and step through it by strides, one
// a dimension, in elements (Strides):
//
//	at, err := a.Transpose()               // [m n] of an [n m]: element (i, j) is a's (j, i)
//	p, err := x.Permute(2, 0, 1)           // axes reordered: [c a b] of an [a b c]
//	odd, err := a.SliceAxis(1, 1, n, 2)    // every other column, from column 1
//	row, err := bias.BroadcastTo(batch, n) // stride 0 along the first axis
//	c, err := cuarray.Contiguous(at)       // packed: a new array, row-major
//
// Every operation takes views and treats them as the arrays of their
// logical elements in row-major order: ToSlice and printing give those
// elements, At and SetAt index them, Add, Sub, Mul and Div read views (and
// broadcast them) through their strides, Copy between views is one strided
// copy, MatMul, Gemm and Gemv hand a transposed view to BLAS as its
// transpose flag, and the other operations read a packed copy made on their
// stream and freed once their work is queued. A view may also be the
// destination of any operation: the result is computed in a packed copy
// and copied into the view. A broadcast view names elements more than
// once, so writing it is an error (ErrShape).
//
// IsContiguous tells the two apart. A view that happens to be row-major
// contiguous (a slice of whole rows, a transpose of a vector) is an
// ordinary array. Three things need contiguous memory and refuse a strided
// view with an error wrapping ErrShape: Reshape and View (which never copy;
// NumPy's reshape copies instead), Host, and WithPointers (raw addresses
// for code cuarray did not write). Contiguous makes the packed copy for
// them, on the array's stream; of an array that is contiguous already it
// returns a new reference to the same memory, not a copy, so the result
// can always be UnsafeFree'd on its own. Steps are positive: a reversed
// view (a negative step) is an error.
//
// At and SetAt read and write one element by its indices. Each is a copy
// and a wait, microseconds on a GPU, so a loop of them is the slow way to
// move an array: GOCUDA_SCALAR_INDEXING warns once per call site that uses
// them (the default), allows them silently (allow), or makes them fail with
// ErrScalarIndexing (error, to catch such loops in tests), as CUDA.jl's
// allowscalar does.
//
// # Lifetime
//
// The memory behind an array is a buffer: one block of the device's pool
// (gocuda.Pool, the GOCUDA_MEMORY_POOL strategy) shared by the arrays of
// one New and every view and reshape of them. The block goes back to the
// pool, on the stream the buffer was last used on, when either every one
// of those arrays was UnsafeFree'd (the last UnsafeFree frees it at once),
// or none of them is reachable any more (one runtime.AddCleanup per
// buffer, run after a collection), whichever comes first, and only once.
//
// Freeing while work on the buffer is still queued is safe, which is why a
// cleanup may run at any time after the last use: pool.Free(block, s) is
// ordered on s, the buffer's last stream. The pool hands the block out
// again at once only to later work on s, which runs after all of s's queued
// work, and to another stream only after making that stream wait for s.
// Work on the buffer queued on earlier streams precedes s's later work too,
// because each move of the buffer to a new stream made that stream wait for
// the old one (see below). Operations keep the arrays they use reachable
// (runtime.KeepAlive) until their work is queued, and host copies until the
// bytes have arrived, so the collector never frees a buffer before its
// last use is at least queued.
//
// UnsafeFree is idempotent. Any other use of an array after its
// UnsafeFree is an error wrapping ErrFreed that names the array
// ("float32[2 3]"); never a read of memory someone else now owns. A view
// keeps the buffer alive after its parent's UnsafeFree. UnsafeFree must not
// race with another goroutine's use of the same *Array.
//
// # Streams
//
// Each buffer remembers the stream it was last used on. An operation runs on
// one stream; before it, for each array it touches whose buffer was last
// used on another stream A, it records an event on A and makes its own
// stream B wait on it: the GPU orders the work, the host does not block.
// The buffer's last stream then becomes B. Readers are ordered like
// writers, so a later write on any stream waits for earlier reads
// (write-after-read) as well as earlier writes. ToSlice and CopyTo copy on
// the buffer's last stream and so wait for exactly the work queued there
// before them (which includes everything that touched the array), not for
// the whole device. A buffer's lock is held from its stream wait until the
// operation is queued, so concurrent operations on shared arrays keep this
// order; buffers are locked in address order, so they never deadlock.
//
// The event is taken from a per-device free list the first time a buffer
// moves between streams and recorded only when it moves, not after every
// operation: the recorded point may include later, unrelated work on A,
// which costs concurrency in rare cases but never correctness.
//
// # Choosing a stream
//
// The package-level functions (New, Zeros, FromSlice, Add, Sum, ...) make
// arrays on device 0 and run each operation on the default stream of its
// arrays' device (DefaultStream). A program that never names a stream gets
// correct results.
//
// For concurrency, give each goroutine its own Stream and run its work
// through On, which returns the operations of one element type on that
// stream (Go methods cannot take type parameters, so the type is named
// once, in On[T]). Arrays made through it come from the stream's pool and
// start on the stream. Arrays may be shared between goroutines: one made or
// written on another stream is waited for automatically.
//
//	w, _ := cuarray.FromSlice(weights)          // shared, read-only
//	var wg sync.WaitGroup
//	for g := range 8 {
//		wg.Add(1)
//		go func() {
//			defer wg.Done()
//			s, err := cuarray.NewStream(0)      // this goroutine's stream
//			if err != nil { ... }
//			defer s.Close()
//			f := cuarray.On[float32](s)
//			x, _ := f.Full(float32(g), len(weights))
//			_ = f.Mul(x, x, w)                  // waits for w's upload on the GPU
//			total, _ := f.Sum(x)                // waits for s only
//			...
//		}()
//	}
//	wg.Wait()
//
// NewStreamPool makes a stream whose arrays come from a given pool (tests
// use it to count one pool's frees).
//
// # A stream's life
//
// Close ends a stream; a stream the program no longer references is
// closed by a cleanup, as an array is freed. The host never waits: the
// driver's stream is destroyed once its queued work is done, and what the
// pools cached for it goes back to the driver, or to the device's default
// stream where live arrays still share its memory. Arrays last used on a
// closed stream stay valid on every other stream, ordered after an event
// recorded when it closed. Operations on a closed stream fail with
// ErrClosed. Default streams live as long as the process.
//
// Which stream a goroutine should use:
//
//   - a short-lived goroutine (a request handler) borrows one with
//     BorrowStream and gives it back with Close: streams, and the memory
//     their pools cache for them, are reused by the next request instead of
//     made and given back per request; at most MaxIdleStreams wait idle per
//     device;
//
//   - a long-lived worker makes its own with NewStream and closes it when
//     it stops.
//
// A handler borrows so:
//
//	s, err := cuarray.BorrowStream(0)
//	if err != nil { ... }
//	defer s.Close()                             // back to the device's set
//	f := cuarray.On[float32](s)
//
// Nothing needs Stream.Synchronize, but a program that wants to wait for
// a stream's work with a deadline or cancellation has
// Stream.SynchronizeContext; giving up stops the host waiting, not the
// device's work.
//
// docs/streams.md has the details, the soak test's figures and the idle
// trim (GOCUDA_IDLE_TRIM).
//
// # Memory kinds
//
// Arrays live in device memory (Device, the default, from the device's
// pool) or, through NewKind, NewUnified and NewPinned, in unified memory
// (the host and the device both address it; Host returns a Go slice of
// it after waiting for its queued work) or pinned host memory (page-locked;
// copies run at full speed and the device addresses it across the bus).
// Unified and pinned memory come from a caching pool of their own per
// device (gocuda.UnifiedPool, gocuda.PinnedPool), outside the device pool's
// limits, which PoolStatus lists under the device and ReclaimAll empties;
// unified memory is never asked for beyond what the device has free.
//
// # Devices
//
// An array belongs to the device it was made on; operations that mix
// devices are refused (ErrDevice) except Copy, which copies between
// devices: peer to peer when they can reach each other (peer access is
// enabled on first use), staged through pinned host memory when they
// cannot, ordered after both arrays' queued work and before the source's
// later work. ToDevice and Ops.Clone make the copy for you.
//
// # Batches
//
// Batches (CUDA.jl's CuIterator) turns an iterator of host batches into
// device arrays for a range loop, uploading the next batch while the body
// works on the current one and freeing each batch when the loop moves on.
//
// # Broadcasting
//
// Add, Sub, Mul and Div broadcast by NumPy's rule:
// align the operands' shapes at their last dimension (a shorter shape gains
// leading dimensions of 1); in each position the dimensions must be equal
// or one of them 1, which repeats that operand along it. A bias row added
// to every row of a batch, a column scaling every column, an outer sum:
//
//	x := cuarray.Must(cuarray.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3))
//	b := cuarray.Must(cuarray.FromSlice([]float32{10, 20, 30}))     // [3]
//	y := cuarray.Must(cuarray.Add(nil, x, b))                         // [2 3]: [[11 22 33] [14 25 36]]
//	c := cuarray.Must(cuarray.FromSlice([]float32{1, 10}, 2, 1))    // [2 1]
//	_, err := cuarray.Mul(x, x, c)                                  // x in place: [[1 2 3] [40 50 60]]
//	o := cuarray.Must(cuarray.Sub(nil, c, cuarray.Must(b.Reshape(1, 3)))) // [2 3]: [[-9 -19 -29] [0 -10 -20]]
//
// The destination must have exactly the result's shape (BroadcastShapes
// computes it); a nil destination makes it. Operands whose shapes
// neither match nor broadcast are an error wrapping ErrShape even when their
// lengths are equal ([2 3] + [3 2]): Reshape one first to combine arrays
// element by element whatever their shapes. Operands of one shape take the
// plain elementwise kernel; broadcast ones a strided kernel
// (kernels.AddStrided, with the strides BroadcastStrides gives), as fast
// when one operand is a row or a column of the other. The broadcast operand
// is read in place, never expanded in memory.
//
// # One form per operation
//
// Every operation that writes an array has one form, the method
// Ops[T].Name(dst, operands..., params) (*Array[T], error) and its
// package-level shorthand Name(dst, ...) on the default streams: a
// non-nil dst is written and returned, a nil dst makes the result and
// returns it. Add, Sub, Mul, Div and their Scalar forms, the table's
// elementwise operations (Exp, Log, Tanh, Relu, ...), Axpy(dst, alpha, x,
// y) (dst = alpha*x + y), Scale(dst, alpha, x), MatMul, Gemm(dst, transA,
// transB, alpha, a, b, beta), Gemv, the layers AddRowVector, SumCols,
// SumRows and ReluGrad, the scans and sorts all take it.
// Expressions then compose, and Must wraps each step:
//
//	h := cuarray.Must(cuarray.Relu(nil, cuarray.Must(cuarray.MatMul(nil, x, w))))
//
// and a loop reuses its destinations, allocating nothing:
//
//	_, err := cuarray.Relu(h, h) // in place
//
// Axpy and Scale in place are BLAS's axpy and scal (dst = y, dst = x);
// another dst costs a copy of y or x into it first. A made result has the
// shape the operands give (for Add, Sub, Mul and Div the shape they
// broadcast to; for Axpy y's; for the matrix products the product's; a nil
// dst of Gemm or Gemv ignores beta). On(s)'s forms make it from s's pool
// and queue the work on s; the package-level forms make it from the first
// operand's pool and memory kind, on the default stream of its device,
// where they queue the work too. On an error nothing stays allocated.
//
// Why one form rather than a pair (Add and AddNew): one name per
// operation is easier to find and to guess, go doc lists half as many,
// and the nil is as short as a suffix. A training step that reuses its
// destinations allocates nothing, where each made result takes a block
// from the pool (cheap when cached, but the memory stays taken until the
// collector or UnsafeFree gives it back). Other libraries choose one side
// too: NumPy and CuPy allocate by default and take out= for in place,
// PyTorch marks in place with a trailing underscore (add_), Julia with !
// (mul!), and gonum writes into a destination (the receiver) throughout.
//
// # Scans and sorting
//
// Cumsum, Cumprod, Cummax and Cummin run along any axis; Sort, Argsort
// (int64 indices) and TopK along the last. They take the destination
// first, nil to have it made, and return it:
//
//	c, err := cuarray.Cumsum(nil, m, -1)           // along each row
//	idx, err := cuarray.Argsort(nil, x, false)     // stable, NaN last
//	vals, is, err := cuarray.TopK(nil, nil, x, 5, true)
//
// Sorting puts NaN after every number (before, descending) and keeps -0
// and +0 equal; Argsort and TopK are stable, and so is Sort but for the
// order among zeros and among NaNs in long float rows on a GPU. float32
// scans accumulate in float64, integer scans wrap in their type.
// docs/scansort.md has the details.
//
// # Printing
//
// fmt prints an array's values (Array.Format), as NumPy and Julia do:
// fmt.Println(a) and %v give a header naming the shape, element type and
// device, then the values; any element verb (%g, %.3f, %d, %x, ...)
// gives the values alone, each formatted with it; %s and String give the
// short name "float32[2 3]" that error messages use.
//
//	fmt.Println(a)        // 2×3 float32 on device 0 (host):
//	                      // [[1 2 3]
//	                      //  [4 5 6]]
//	fmt.Printf("%.1f", a) // [[1.0 2.0 3.0]
//	                      //  [4.0 5.0 6.0]]
//	fmt.Printf("%s", a)   // float32[2 3]
//
// Arrays of more than PrintThreshold elements show the first and last
// PrintEdgeItems along each long axis, and only those are copied to the
// host; the '+' flag (%+v, %+g) prints every element.
//
// # Code cuarray did not write
//
// WithPointers hands a function the device addresses of arrays on a
// stream, for a foreign library's call (cuFFT, cuRAND through bindings of
// their own) or a kernel launched through the driver, with the guarantees
// of cuarray's own operations: the work it queues is ordered after the
// arrays' earlier work on any stream, the arrays are kept alive until it
// has run, and later uses wait for it. Each array says how it is used, In,
// Out or InOut, so that the host backend's stream checker can judge it.
//
//	err := cuarray.WithPointers(s, func(bs backend.Stream, p []backend.Ptr) error {
//		return myfft.Exec(bs, p[0], p[1], n)
//	}, cuarray.In(x), cuarray.Out(y))
//
// WithPointersAs does the same under the work's own name, which errors and
// the stream checker's reports then show. An Arg tells a launcher where
// its array lives (Device), whether it can be used (Err), and whether two
// share memory (Overlaps, SameMemory).
//
// SetAutoOrdering(false) turns the automatic waits off for one array (as
// CUDA.jl's enable_synchronization!), for programs that overlap work on
// the same memory on purpose and order their streams themselves; its free
// still waits for every stream that used it.
//
// Kernels of your own (CUDA C++ compiled at run time, or generated from an
// expression, CuPy's ElementwiseKernel) are package rtc's: its launches
// are WithPointersAs borrowings, with the same guarantees.
//
// # Reductions
//
// SumAxes, ProdAxes, MeanAxes, MaxAxes, MinAxes, ArgMaxAxes, ArgMinAxes,
// AnyAxes and AllAxes reduce an array over any set of axes into an array,
// as NumPy's sum(x, axis=..., keepdims=...): the reduced axes are dropped
// from the shape, or kept as dimensions of 1 with keep (so the result
// broadcasts back against x). No axes means every axis; negative axes
// count from the end; an axis out of range or named twice is an error
// wrapping ErrShape.
//
//	x := cuarray.Must(cuarray.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3))
//	cols := cuarray.Must(cuarray.SumAxes(nil, x, []int{0}, false))   // [3]: [5 7 9]
//	rows := cuarray.Must(cuarray.MeanAxes(nil, x, []int{-1}, true))  // [2 1]: [[2] [5]]
//	best := cuarray.Must(cuarray.ArgMaxAxes(nil, x, []int{1}, false)) // int64 [2]: [2 2]
//
// Result types follow NumPy where Go allows: integer sums and products are
// int64 (SumAxesInt64, ProdAxesInt64), integer means float64
// (MeanAxesFloat64), floats and complex64 keep their type, ArgMax and
// ArgMin give int64 indices, Any and All give bool (and take bool arrays,
// such as a comparison's result). Go cannot write "int64 for integers, T otherwise"
// in one signature, so the integer forms carry their type in the name and
// each form refuses the types the other takes, naming it. float32
// accumulates in float64 and complex64 in complex128. NaN propagates as in
// NumPy: a sum, product, mean, maximum or minimum with a NaN in it is NaN,
// and ArgMax and ArgMin give the first NaN's index; ties give the first
// index. Of no elements Sum is 0, Prod 1, Mean NaN, Any false and All
// true; Max, Min, ArgMax and ArgMin are an error wrapping kernels.ErrEmpty.
// Results are deterministic.
//
// The whole-array Sum, Max and Min return a Go value and wait for it;
// the Axes forms return a device array and do not wait. An integer Sum
// whose value does not fit the element type is an error wrapping
// ErrOverflow, never a wrapped value: SumInt64 returns the int64.
//
// # Operations
//
// Fill, Copy (equal shapes), Add, Sub, Mul, Div and their Scalar forms,
// Axpy, Scale, Exp, Log, Tanh, Relu, the reductions Sum, SumInt64, Max,
// Min and Dot, and the reductions over axes (above), on the kernels package: see its documentation for which element
// types each takes and for the arithmetic's rules. Add, Sub, Mul and Div
// broadcast (above); the other elementwise operations need operands of
// equal length. The destination may be an input of its shape (in place) but
// may not otherwise overlap one. Every operation
// returns an error rather than panicking: wrong shapes wrap ErrShape,
// arrays of different devices ErrDevice, a freed array ErrFreed, a
// closed stream ErrClosed, no room for an array ErrOutOfMemory (errors.As
// with *OutOfMemoryError gives the figures), an element type an operation
// does not take kernels.ErrUnsupportedDType.
// Must turns an error into a panic for short programs; it wraps the
// operations with a nil dst (above) as it wraps the constructors. Fill,
// Copy (see Ops.Clone) and SoftmaxCrossEntropy (two outputs, a nil
// dlogits meaning no gradient) take destinations that must not be nil.
//
// # Construction and indexing
//
// Arange, Linspace and Eye make ranges and identities as NumPy's functions
// of those names (float32 ranges are NumPy's bits); Concat joins arrays
// along an existing axis and Stack along a new one; Take gathers along an
// axis with an *Array[int64] of indices of any shape, Scatter and
// ScatterAdd write back along one (ScatterAdd adds every value an index
// repeats: atomics on a GPU, so float sums are not bit-reproducible there,
// integer sums are exact). Each takes its destination first, nil to make
// it:
//
//	r := cuarray.Must(cuarray.Arange[float32](nil, 0, 6, 1))
//	m := cuarray.Must(r.Reshape(2, 3))
//	cols, err := cuarray.Take(nil, m, idx, 1) // m[:, idx]
//
// A negative index counts from the end once. An index still out of range
// never reads or writes outside the arrays; the kernel records it and the
// operation, which waits for its stream to read that back, returns an
// error wrapping kernels.ErrIndex. docs/indexing.md has the details and an
// example.
//
// # Graphs
//
// Capture records what a function queues on a stream into a graph, which
// Launch replays with one launch: a step of hundreds of small operations
// then costs the host one launch instead of hundreds (CUDA graphs; the host
// backend records and replays the functions). Arrays the function makes
// come from a pool private to the graph; what a capture cannot record (a
// synchronisation, a read by the host) fails with ErrCapturing and leaves
// the capture intact. docs/graphs.md has the rules.
//
//	g, err := cuarray.Capture(s, func() error { return step(cuarray.On[float32](s)) })
//	defer g.Close()
//	for range steps {
//		err = g.Launch()
//	}
//
// # Random numbers
//
// Rand and Randn make float32 or float64 arrays of numbers uniform in
// (0, 1] and standard normal, as CUDA.jl's rand and randn; FillRand and
// FillRandn (with a mean and deviation) fill an array or a view in place.
// Each device has a default generator (package curand: cuRAND on a GPU, a
// Go generator on the host backend), seeded at random; Seed(device, seed)
// makes the numbers the same in every run on one backend:
//
//	_ = cuarray.Seed(0, 42)
//	w := cuarray.Must(cuarray.Randn[float32](784, 128))
//	err := cuarray.FillRandn(w, 0, 0.05)
package cuarray
