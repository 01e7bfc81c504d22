package kernels

import (
	"math"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/internal/devstream"
)

// The layers of a small neural network, on row-major batches (rows are
// examples, columns are features or classes), for float32 and float64:
// what a dense layer with a bias and a softmax cross-entropy loss need
// beyond matrix products (cuarray's BLAS), Relu and ReluGrad. Like the
// elementwise operations they are queued on the stream and return at once.

// AddRowVector sets dst[r, c] = x[r, c] + b[c] for the row-major rows × cols
// matrices dst and x and the vector b of cols elements: a bias added to
// every row of a batch. dst may be x (in place); b must not overlap dst.
func AddRowVector[T Elem](dev backend.Device, s backend.Stream, dst, x, b backend.Ptr, rows, cols int) error {
	dt := DTypeOf[T]()
	t, err := matrixOp("AddRowVector", dt, dev, s, rows, cols, ptrArg{"dst", dst}, ptrArg{"x", x})
	if err != nil || rows == 0 || cols == 0 {
		return err
	}
	if err := t.checkSpan(ptrArg{"b", b}, uint64(cols)*uint64(dt.Size())); err != nil {
		return err
	}
	if t.cu != nil {
		return t.launchW(kAddRowVec, 0, rowsGrid(rows, t.sms), wp(dst), wp(x), wp(b), uint64(rows), uint64(cols))
	}
	return t.enqueue(func() { hostAddRowVec(dt, dst, x, b, rows, cols) })
}

// SumCols sets dst[c] to the sum of column c of the row-major rows × cols
// matrix x (0 when rows is 0): the gradient of a bias, summed over the
// batch. float32 accumulates in float64, and the result is deterministic,
// as Sum's is.
//
// scratch is device memory SumCols may use while it runs on s, for the
// partial sums of runs of rows: with it a narrow matrix (a 1024-column batch
// is 32 column tiles, 32 blocks on a GPU that keeps a thousand resident)
// spreads over the whole GPU. SumColsScratch says how much helps; with less,
// or none (Scratch{}), SumCols uses fewer runs and is slower, never wrong.
// The caller must not reuse the scratch before s has run SumCols (a pool's
// stream-ordered free on s does that).
func SumCols[T Elem](dev backend.Device, s backend.Stream, dst, x backend.Ptr, rows, cols int, scratch Scratch) error {
	dt := DTypeOf[T]()
	if err := checkMatrix("SumCols", dt, rows, cols); err != nil {
		return err
	}
	t, err := prepare("SumCols", floatTypes, dt, dev, s, cols, ptrArg{"dst", dst})
	if err != nil || cols == 0 {
		return err
	}
	if rows > 0 {
		if err := t.checkSpan(ptrArg{"x", x}, uint64(rows)*uint64(cols)*uint64(dt.Size())); err != nil {
			return err
		}
	}
	// Checked on both backends, though only the GPU uses it, so that a
	// program's mistake shows on the host too.
	if scratch.Ptr%8 != 0 || scratch.Bytes < 0 {
		return t.errorf("scratch %#x, %d bytes: it must be 8-byte aligned and not negative: %w", uint64(scratch.Ptr), scratch.Bytes, backend.ErrInvalidValue)
	}
	if t.cu == nil {
		return t.enqueue(func() { hostSumCols(dt, dst, x, rows, cols) })
	}
	if scratch.Ptr == 0 {
		scratch.Bytes = 0
	}
	if p, ok := sumColsByReduce(dt, x, rows, cols); ok {
		// ReduceAxes' column reduction reads 16-byte vectors of columns
		// and splits the rows of wide tiles (colSplit): the same float64
		// sums, as deterministic, faster than sum_cols's tiles of single
		// elements. Its scratch must be 16-byte aligned (pool blocks are).
		if scratch.Ptr%16 != 0 {
			scratch = Scratch{}
		}
		return t.gpuReduceAxes(ReduceSum, dst, x, &p, scratch)
	}
	grid, chunks := sumColsPlan(rows, cols, t.sms, scratch.Bytes)
	if err := t.launch(kSumCols, 0, grid, dptr(dst), dptr(scratch.Ptr), dptr(x), int64(rows), int64(cols), int64(chunks)); err != nil {
		return err
	}
	if chunks == 1 {
		return nil
	}
	// Pass 2 sums the chunks × cols partials as pass 1 sums x, in one run.
	return t.launch(kSumCols, 1, clampGrid((cols+31)/32, t.sms*blocksPerSM), dptr(dst), dptr(scratch.Ptr), int64(cols), int64(chunks))
}

// Scratch is device memory lent to an operation for its intermediate
// results. The zero Scratch is none.
type Scratch struct {
	Ptr   backend.Ptr
	Bytes int
}

// SumColsScratch is the scratch, in bytes, with which SumCols of a rows ×
// cols matrix on dev runs fastest: 0 when it needs none (the host backend,
// a matrix wide enough to fill the GPU with its column tiles, or too few
// rows to split).
func SumColsScratch(dev backend.Device, rows, cols int) int {
	if rows <= 0 || cols <= 0 {
		return 0
	}
	// Through the package's seam: only a GPU splits the sum.
	on, err := devstream.Device(dev)
	if err != nil || on.GPU == nil {
		return 0
	}
	return sumColsScratchBytes(rows, cols, max(on.GPU.Info().MultiProcessors, 1))
}

// sumColsScratchBytes is SumColsScratch on a GPU of sms multiprocessors:
// the most that either path of SumCols (ReduceAxes' columns of float32 or
// float64 vectors, or sum_cols) takes, since the element type and x's
// alignment, which pick the path, are not arguments.
func sumColsScratchBytes(rows, cols, sms int) int {
	if rows <= 0 || cols <= 0 {
		return 0 // nothing to sum (and no tiles to divide by)
	}
	n := 0
	if _, chunks := sumColsPlan(rows, cols, sms, math.MaxInt); chunks > 1 {
		n = chunks * cols * sumColsAccBytes
	}
	for _, dt := range []DType{Float32, Float64} {
		if p, ok := sumColsByReduce(dt, 0, rows, cols); ok {
			if l := p.launch(ReduceSum, dt, 0, sms, math.MaxInt); l.chunks > 1 {
				n = max(n, l.chunks*p.nout*reduceAccBytes(ReduceSum, dt))
			}
		}
	}
	return n
}

// sumColsByReduce is the plan of ReduceAxes' Sum of the row-major rows ×
// cols matrix x over its rows, and whether SumCols takes it: when the
// column reduction reads x in 16-byte vectors (x aligned, cols a whole
// number of them) and there are rows to sum.
func sumColsByReduce(dt DType, x backend.Ptr, rows, cols int) (reducePlan, bool) {
	if rows <= 0 || cols <= 0 {
		return reducePlan{}, false
	}
	p, err := planReduce([]int{rows, cols}, []int{cols, 1}, []int{0})
	if err != nil || p.nout == 0 || p.nred == 0 {
		return reducePlan{}, false
	}
	return p, p.colVec(dt, x)
}

// sumColsAccBytes is the size of a partial sum: float64 for both dtypes.
const sumColsAccBytes = 8

// sumColsMinRows is the fewest rows a run of SumCols' first pass takes: 8
// a warp. A run writes 8 bytes of partial sum a column for the 256 (float32)
// it reads, so the partials add at most 3 % to the memory traffic.
const sumColsMinRows = 64

// sumColsPlan sizes SumCols' first pass: a block for each 32-column tile
// and run of rows (chunks runs), as many as make one wave of the GPU, no
// more runs than the rows allow or than scratchBytes holds partial sums
// for. With one run the grid is at most a wave and blocks stride over the
// tiles.
func sumColsPlan(rows, cols, sms, scratchBytes int) (grid uint32, chunks int) {
	tiles, wave := (cols+31)/32, sms*blocksPerSM
	chunks = 1
	if tiles < wave { // else the tiles alone fill the GPU (and cols*8 could overflow)
		chunks = min(wave/tiles, rows/sumColsMinRows, scratchBytes/sumColsAccBytes/cols)
	}
	if chunks <= 1 {
		return clampGrid(tiles, wave), 1
	}
	return uint32(tiles * chunks), chunks
}

// SoftmaxCrossEntropy computes, for each row r of the row-major rows × cols
// matrix of logits x and its class labels[r] (an int32 in [0, cols)), the
// cross-entropy of the softmax of the row against that class,
//
//	loss[r] = log(Σ_c exp(x[r, c])) - x[r, labels[r]]
//
// and, unless dx is 0, its gradient with respect to the logits times scale,
//
//	dx[r, c] = scale * (softmax(x[r, :])[c] - (1 if c == labels[r] else 0))
//
// so that scale = 1/rows gives the gradient of the mean loss. The softmax
// subtracts each row's maximum before exponentiating, so large logits do
// not overflow; sums accumulate in float64. A label outside [0, cols)
// cannot be checked without reading the labels back to the host, so it is
// not an error here: that row's loss and gradient are NaN. dx must not
// overlap x.
func SoftmaxCrossEntropy[T Elem](dev backend.Device, s backend.Stream, loss, dx, x, labels backend.Ptr, rows, cols int, scale T) error {
	dt := DTypeOf[T]()
	t, err := matrixOp("SoftmaxCrossEntropy", dt, dev, s, rows, cols)
	if err != nil || rows == 0 {
		return err
	}
	if cols == 0 {
		return t.errorf("rows of no classes have no softmax; cols must be at least 1: %w", ErrEmpty)
	}
	// loss is one value a row; x and dx are the whole matrix, prepare's n.
	if err := t.checkSpan(ptrArg{"loss", loss}, uint64(rows)*uint64(dt.Size())); err != nil {
		return err
	}
	if err := t.checkPtr(ptrArg{"x", x}); err != nil {
		return err
	}
	if dx != 0 {
		if err := t.checkPtr(ptrArg{"dx", dx}); err != nil {
			return err
		}
	}
	// labels are int32 whatever T is: checked by hand, not by checkPtr's
	// T-sized alignment.
	if labels == 0 {
		return t.errorf("pointer labels is nil: %w", backend.ErrInvalidValue)
	}
	if labels%4 != 0 {
		return t.errorf("pointer labels = %#x is not 4-byte aligned, as int32 labels must be: %w", uintptr(labels), backend.ErrInvalidValue)
	}
	t.declare("labels", labels, uint64(rows)*4)
	bits := bitsOf(scale)
	if t.cu != nil {
		return t.launch(kSoftmaxXent, 0, rowsGrid(rows, t.sms),
			dptr(loss), dptr(dx), dptr(x), dptr(labels), int64(rows), int64(cols), bits)
	}
	return t.enqueue(func() { hostSoftmaxXent(dt, loss, dx, x, labels, rows, cols, bits) })
}

// checkMatrix rejects a negative shape or one whose element count
// overflows, before anything multiplies rows by cols.
func checkMatrix(op string, dt DType, rows, cols int) error {
	if rows < 0 || cols < 0 {
		return opErrorf(op, dt, "shape %d × %d is negative: %w", rows, cols, backend.ErrInvalidValue)
	}
	if cols > 0 && (rows*cols)/cols != rows {
		return opErrorf(op, dt, "shape %d × %d overflows: %w", rows, cols, backend.ErrInvalidValue)
	}
	return nil
}

// matrixOp checks a rows × cols operation whose pointers are all used when
// the matrix has elements (ptrs), and resolves its stream.
func matrixOp(op string, dt DType, dev backend.Device, s backend.Stream, rows, cols int, ptrs ...ptrArg) (target, error) {
	if err := checkMatrix(op, dt, rows, cols); err != nil {
		return target{op: op, dt: dt, s: s}, err
	}
	return prepare(op, floatTypes, dt, dev, s, rows*cols, ptrs...)
}
