package kernels

import (
	"fmt"
	"slices"

	"github.com/gocuda/gocuda/backend"
)

// CopyStrided copies the elements of an array of shape from src to dst,
// each read and written through its own element strides: element
// (i0, …, ik) is read at src[i0·srcStrides[0] + … + ik·srcStrides[k]] and
// written at dst[i0·dstStrides[0] + … + ik·dstStrides[k]]. It is how a
// strided view (a transpose, a permutation of axes, a slice with a step, a
// broadcast) is packed into a contiguous array, and how a contiguous result
// is scattered into a strided view.
//
// Strides are in elements and must be ≥ 0. A src stride of 0 repeats an
// element (a broadcast); a dst stride of 0 along a dimension of more than
// one element would write one element several times and is an error. dst
// must not overlap src. Every Elem type; the kernels move elements by size
// (1, 2, 4 or 8 bytes), so a type of one of those sizes rides on them.
//
// The layout is simplified first (dimensions of 1 dropped, the dimensions
// ordered by dst's strides, neighbours contiguous in both merged, as for
// AddStrided), so that a copy that is contiguous in both is one DtoD copy,
// and a transposition (one dimension contiguous in src, another in dst,
// batched over at most one more) runs through 64×64 tiles in shared memory
// (32×32 for 16-byte elements), reading and writing whole rows of each.
func CopyStrided[T Elem](dev backend.Device, s backend.Stream, dst, src backend.Ptr, shape, dstStrides, srcStrides []int) error {
	return copyStrided("CopyStrided", DTypeOf[T](), dev, s, dst, src, shape, dstStrides, srcStrides)
}

func copyStrided(op string, dt DType, dev backend.Device, s backend.Stream, dst, src backend.Ptr, shape, ds, ss []int) error {
	l, err := planCopy(shape, ds, ss)
	if err != nil {
		return opErrorf(op, dt, "%w", err)
	}
	t, err := prepare(op, kops[kCopyStrided].types|narrowInts|setOf(Bool), dt, dev, s, l.n)
	if err != nil || l.n == 0 {
		return err
	}
	size := uint64(dt.Size())
	if err := t.checkSpan(ptrArg{"dst", dst}, uint64(l.extentA)*size); err != nil {
		return err
	}
	if err := t.checkSpan(ptrArg{"src", src}, uint64(l.extentB)*size); err != nil {
		return err
	}
	if l.contiguous() {
		if err := dev.CopyDtoD(dst, src, uint64(l.n)*size, s); err != nil {
			return t.errorf("%w", err)
		}
		return nil
	}
	if t.cu == nil {
		return t.enqueue(func() { hostCopyStrided(dt.Size(), dst, src, &l) })
	}
	if tr, ok := l.transpose(); ok {
		return t.gpuTranspose(dst, src, tr)
	}
	return t.gpuCopyStrided(dst, src, &l)
}

// planCopy checks a strided copy's layout and simplifies it: dst's strides
// as planStrided's a, src's as its b. A copy visits its elements in any
// order, so the dimensions are first sorted by dst's strides, outermost
// largest: a scatter into a transposed view then writes along dst's
// contiguous dimension, and neighbours merge wherever they can.
func planCopy(shape, ds, ss []int) (stridedLayout, error) {
	if len(ds) != len(shape) || len(ss) != len(shape) {
		return stridedLayout{}, fmt.Errorf("shape %v has %d dimensions, dstStrides %v %d, srcStrides %v %d; each needs one stride a dimension: %w",
			shape, len(shape), ds, len(ds), ss, len(ss), backend.ErrInvalidValue)
	}
	for i, d := range shape {
		// An empty copy writes nothing: any strides will do.
		if d > 1 && ds[i] == 0 && !slices.Contains(shape, 0) {
			return stridedLayout{}, fmt.Errorf("shape %v, dstStrides %v: dimension %d has %d elements and dst stride 0, which writes one element %d times; dst strides must address each element once: %w",
				shape, ds, i, d, d, backend.ErrInvalidValue)
		}
	}
	order := make([]int, len(shape))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int { return ds[j] - ds[i] })
	sh, a, b := make([]int, len(shape)), make([]int, len(shape)), make([]int, len(shape))
	for k, i := range order {
		sh[k], a[k], b[k] = shape[i], ds[i], ss[i]
	}
	return planStrided(sh, a, b)
}

// transposeLayout is a copy the tiled kernel runs: batch × rows × cols
// elements, src contiguous along rows, dst along cols.
type transposeLayout struct {
	batch, rows, cols int
	dBatch, dRow      int // dst's strides (its col stride is 1)
	sBatch, sCol      int // src's strides (its row stride is 1)
}

// transpose reports whether the simplified layout is a (batched)
// transposition: one dimension contiguous in dst, another in src, and at
// most one more.
func (l *stridedLayout) transpose() (transposeLayout, bool) {
	nd := len(l.shape)
	if nd < 2 || nd > 3 {
		return transposeLayout{}, false
	}
	c := slices.Index(l.sa, 1) // dst's contiguous dimension
	r := slices.Index(l.sb, 1) // src's
	if c < 0 || r < 0 || c == r {
		return transposeLayout{}, false
	}
	tr := transposeLayout{batch: 1, rows: l.shape[r], cols: l.shape[c], dRow: l.sa[r], sCol: l.sb[c]}
	if nd == 3 {
		b := 3 - c - r
		tr.batch, tr.dBatch, tr.sBatch = l.shape[b], l.sa[b], l.sb[b]
	}
	return tr, true
}

// transposeTile is the side of the transpose kernel's square tiles in
// shared memory for elements of size bytes (strided_copy.cuh's TR_S): 64,
// or 32 for 16-byte elements, whose 64-tile would not fit a block's static
// shared memory.
func transposeTile(size int) int {
	if size <= 8 {
		return 64
	}
	return 32
}

// maxTransposeBlocks caps the transpose grid; past it blocks loop.
const maxTransposeBlocks = 1 << 20

// transposeGrid is a block for each tile: a block's work is short, and a
// grid of many blocks balances the tail better than one wave that loops.
func transposeGrid(size int, tr transposeLayout) uint32 {
	s := transposeTile(size)
	return clampGrid(tr.batch*ceilDiv(tr.rows, s)*ceilDiv(tr.cols, s), maxTransposeBlocks)
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// gpuTranspose launches the transpose kernel, grid-strided over its tiles.
func (t *target) gpuTranspose(dst, src backend.Ptr, tr transposeLayout) error {
	return t.launchAs(moveAs(t.dt), kTranspose, transposeGrid(t.dt.Size(), tr), dptr(dst), dptr(src),
		int64(tr.batch), int64(tr.rows), int64(tr.cols), int64(tr.dBatch), int64(tr.dRow), int64(tr.sBatch), int64(tr.sCol))
}

// gpuCopyStrided launches the general kernel once for each index of the
// dimensions beyond its stridedDims innermost (none for most layouts).
func (t *target) gpuCopyStrided(dst, src backend.Ptr, l *stridedLayout) error {
	var args [3 + 3*stridedDims]any
	size := backend.Ptr(t.dt.Size())
	return l.eachOuter(func(in stridedInner, _, oa, ob int) error {
		args[0], args[1], args[2] = dptr(dst+backend.Ptr(oa)*size), dptr(src+backend.Ptr(ob)*size), int64(in.n)
		in.fill(args[3:])
		return t.launchAs(moveAs(t.dt), kCopyStrided, in.grid(t.sms), args[:]...)
	})
}
