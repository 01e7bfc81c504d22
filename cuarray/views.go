package cuarray

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/kernels"
)

// Strided views.
//
// A view made by Transpose, Permute, SliceAxis or BroadcastTo shares its
// parent's buffer and reads its elements through strides (in elements,
// one a dimension, all ≥ 0) from its element 0 at a.off. Strides are
// stored only for views that are not row-major contiguous (a.x.strides);
// a view that happens to be contiguous (a transpose of a vector, a slice
// of whole rows) stores none and is an ordinary array, so the contiguous
// path every operation takes stays as it was.
//
// Operations accept every view. do (stream.go) packs a non-contiguous
// operand into a temporary contiguous copy on the operation's stream
// before running the operation, and computes a non-contiguous destination
// in a temporary that it then scatters into the view; the temporaries are
// freed once the work is queued (their memory is reused only after it has
// run). Some operations read strides natively instead: the binary
// operations (through kernels' strided kernels) and Copy (one strided
// copy). A broadcast view (a stride of 0 along a dimension of more than
// one element) names some elements several times, so it cannot be written:
// as a destination it is an error wrapping ErrShape.
//
// Internal accessors for operations (other files use these, not a.x):
//
//   - a.contiguous() reports whether a is row-major contiguous (no strides
//     stored): its a.n elements lie at a.ptr() in order.
//   - a.strides() is a's strides in elements: the stored ones for a view,
//     the row-major ones (computed) for a contiguous array.
//   - a.extent() is the number of elements from element 0 to the last
//     element a reads, a.n for a contiguous array.
//   - a.broadcast() reports whether a names an element more than once.
//   - o.packed(op, role, a) is a contiguous array of a's elements for an
//     operation to read, and a release func to call (defer) once the
//     operation is queued: a itself and a no-op for a contiguous a.
//   - o.copyStrided(op, dst, src) copies src to dst (same shape), either
//     or both strided, in one kernel.
//   - o.writeBack(op, dst, tmp) is copyStrided for a result computed in a
//     contiguous tmp, into the non-contiguous dst, then frees tmp.

// contiguous reports whether a is row-major contiguous: its a.n elements
// lie in order from a.ptr().
func (a *Array[T]) contiguous() bool { return a.x == nil || a.x.strides == nil }

// strides returns a's strides in elements, one for each dimension: the
// row-major strides for a contiguous array (a new slice), a view's own
// otherwise (which the caller must not modify).
func (a *Array[T]) strides() []int {
	if !a.contiguous() {
		return a.x.strides
	}
	return rowMajor(a.shape())
}

// rowMajor is the strides of a contiguous array of shape.
func rowMajor(shape []int) []int {
	st := make([]int, len(shape))
	acc := 1
	for i := len(shape) - 1; i >= 0; i-- {
		st[i] = acc
		acc *= max(shape[i], 1)
	}
	return st
}

// extent is the number of elements from a's element 0 to the last element
// it reads, inclusive: a.n for a contiguous array, 0 for an empty one.
func (a *Array[T]) extent() int {
	if a.n == 0 {
		return 0
	}
	if a.contiguous() {
		return a.n
	}
	e := 1
	for i, d := range a.shape() {
		e += (d - 1) * a.x.strides[i]
	}
	return e
}

// broadcast reports whether a names some element more than once (a
// stride of 0 along a dimension of more than one element): it cannot be
// written.
func (a *Array[T]) broadcast() bool {
	if a.contiguous() {
		return false
	}
	for i, d := range a.shape() {
		if d > 1 && a.x.strides[i] == 0 {
			return true
		}
	}
	return false
}

// IsContiguous reports whether a's elements lie in row-major order, one
// after another, in its buffer: true for every array made by New, FromSlice
// or an operation, and for Reshape, View and Slice of one; false for most
// views made by Transpose, Permute, SliceAxis with a step or of an inner
// axis, and BroadcastTo. Every operation accepts both; WithPointers needs a
// contiguous array (Contiguous makes one).
func (a *Array[T]) IsContiguous() bool { return a != nil && a.contiguous() }

// Strides returns a's strides in elements, one for each dimension: moving
// one index along dimension i moves Strides()[i] elements in the buffer.
// A contiguous array has its row-major strides ([12 4 1] for shape
// [2 3 4]); a broadcast dimension has stride 0.
func (a *Array[T]) Strides() []int { return slices.Clone(a.strides()) }

// view makes an array of shape and strides sharing a's buffer, its element
// 0 at element offset off of a's element 0; contiguous (no strides stored)
// when the strides are shape's row-major ones along every dimension of
// more than one element.
func (a *Array[T]) view(off int, shape, strides []int) *Array[T] {
	n := 1
	for _, d := range shape {
		n *= d
	}
	var z T
	v := wrap(a, a.off+uint64(off)*uint64(unsafe.Sizeof(z)), n, shape)
	runtime.KeepAlive(a) // a's reference keeps the buffer alive until v holds its own
	if n > 0 && !isRowMajor(shape, strides) {
		v.x = &extra{strides: slices.Clone(strides)}
	}
	return v
}

// isRowMajor reports whether strides step through shape in row-major
// order, ignoring dimensions of one element (whose stride is never used).
func isRowMajor(shape, strides []int) bool {
	acc := 1
	for i := len(shape) - 1; i >= 0; i-- {
		if shape[i] == 1 {
			continue
		}
		if strides[i] != acc {
			return false
		}
		acc *= shape[i]
	}
	return true
}

// Transpose returns the transpose of a two-dimensional array as a view
// sharing a's buffer (no copy): element (i, j) of the result is element
// (j, i) of a. Arrays of other dimensions are an error wrapping ErrShape;
// Permute reorders the axes of any array.
func (a *Array[T]) Transpose() (*Array[T], error) {
	if err := a.check("Transpose", "array"); err != nil {
		return nil, err
	}
	if a.ndim != 2 {
		return nil, fmt.Errorf("cuarray: Transpose of %s: it has %d dimensions; Transpose takes 2 (use Permute to reorder the axes of others): %w", a, a.ndim, ErrShape)
	}
	return a.permute([]int{1, 0}), nil
}

// Permute returns a view of a with its axes reordered, sharing a's buffer
// (no copy): axis i of the result is axis axes[i] of a, so that for a of
// shape [2 3 4], Permute(2, 0, 1) has shape [4 2 3] and element (k, i, j)
// is a's (i, j, k). axes must name each of a's axes once; a negative axis
// counts from the end (-1 is the last).
func (a *Array[T]) Permute(axes ...int) (*Array[T], error) {
	if err := a.check("Permute", "array"); err != nil {
		return nil, err
	}
	nd := int(a.ndim)
	if len(axes) != nd {
		return nil, fmt.Errorf("cuarray: Permute(%s) of %s: %d axes for %d dimensions; name each axis 0…%d once: %w",
			fmtAxes(axes), a, len(axes), nd, nd-1, ErrShape)
	}
	perm := make([]int, nd)
	seen := make([]bool, nd)
	for i, ax := range axes {
		k, err := a.axis("Permute("+fmtAxes(axes)+")", ax)
		if err != nil {
			return nil, err
		}
		if seen[k] {
			return nil, fmt.Errorf("cuarray: Permute(%s) of %s: axis %d appears more than once; name each axis 0…%d once: %w",
				fmtAxes(axes), a, k, nd-1, ErrShape)
		}
		seen[k], perm[i] = true, k
	}
	return a.permute(perm), nil
}

// permute is Permute of a checked permutation.
func (a *Array[T]) permute(perm []int) *Array[T] {
	shape, st := a.shape(), a.strides()
	ns, nst := make([]int, len(perm)), make([]int, len(perm))
	for i, k := range perm {
		ns[i], nst[i] = shape[k], st[k]
	}
	return a.view(0, ns, nst)
}

// axis checks an axis of a (negative counts from the end) and returns it
// in 0…Ndim-1.
func (a *Array[T]) axis(op string, ax int) (int, error) {
	nd := int(a.ndim)
	k := ax
	if k < 0 {
		k += nd
	}
	if k < 0 || k >= nd {
		if nd == 0 {
			return 0, fmt.Errorf("cuarray: %s of %s: axis %d: a zero-dimensional array has no axes: %w", op, a, ax, ErrShape)
		}
		return 0, fmt.Errorf("cuarray: %s of %s: axis %d is out of range; axes are 0…%d, or -%d…-1 from the end: %w",
			op, a, ax, nd-1, nd, ErrShape)
	}
	return k, nil
}

// SliceAxis returns the elements start, start+step, … before stop along
// axis (negative counts from the end) as a view sharing a's buffer (no
// copy): for a of shape [4 6], SliceAxis(1, 1, 6, 2) has shape [4 3] and
// holds columns 1, 3 and 5. 0 ≤ start ≤ stop ≤ the axis's length, and
// step ≥ 1; start == stop gives an empty axis. A negative step (reversal)
// is not supported: it is an error wrapping ErrShape, as are the others.
// Slice(i, j) is SliceAxis(0, i, j, 1).
func (a *Array[T]) SliceAxis(axis, start, stop, step int) (*Array[T], error) {
	op := fmt.Sprintf("SliceAxis(%d, %d, %d, %d)", axis, start, stop, step)
	if err := a.check(op, "array"); err != nil {
		return nil, err
	}
	k, err := a.axis(op, axis)
	if err != nil {
		return nil, err
	}
	shape := a.shape()
	d := shape[k]
	switch {
	case step < 1:
		return nil, fmt.Errorf("cuarray: %s of %s: step %d; the step must be ≥ 1 (reversed views are not supported): %w", op, a, step, ErrShape)
	case start < 0 || stop < start || stop > d:
		return nil, fmt.Errorf("cuarray: %s of %s: need 0 ≤ start ≤ stop ≤ %d (the length of axis %d): %w", op, a, d, k, ErrShape)
	}
	ns, st := slices.Clone(shape), slices.Clone(a.strides())
	ns[k] = (stop - start + step - 1) / step
	off := 0
	if ns[k] > 0 {
		off = start * st[k]
	}
	st[k] *= step
	return a.view(off, ns, st), nil
}

// BroadcastTo returns a as an array of shape, by NumPy's rule
// (BroadcastShapes: a's shape, aligned at the last dimension, must have
// each dimension equal to shape's or 1), as a view sharing a's buffer in
// which the broadcast dimensions have stride 0: every index along them
// reads the same elements. Such a view can be read by every operation but
// not written (it names elements more than once).
func (a *Array[T]) BroadcastTo(shape ...int) (*Array[T], error) {
	if err := a.check("BroadcastTo", "array"); err != nil {
		return nil, err
	}
	as := a.shape()
	out, _, _, why := broadcastShapes([][]int{as, shape})
	if why == "" && !slices.Equal(out, shape) {
		why = fmt.Sprintf("the shapes broadcast to %s, not to %s", fmtShape(out), fmtShape(shape))
	}
	if why != "" {
		return nil, fmt.Errorf("cuarray: BroadcastTo%s of %s: %s: %w", fmtShape(shape), a, why, ErrShape)
	}
	st, pad := a.strides(), len(shape)-len(as)
	nst := make([]int, len(shape))
	for i := range as {
		if as[i] != 1 {
			nst[pad+i] = st[i]
		}
	}
	return a.view(0, shape, nst), nil
}

// Contiguous returns a's elements as a contiguous array: for a view that is
// not contiguous, a new array of a's shape on o's stream (for the zero Ops,
// a's device's default stream) holding a copy of its elements in row-major
// order; for a contiguous array, a new reference to a's own buffer (no
// copy), as Reshape makes. Either way the result is the caller's to
// UnsafeFree without affecting a.
func (o Ops[T]) Contiguous(a *Array[T]) (*Array[T], error) {
	if err := o.precheck("Contiguous", "a", a); err != nil {
		return nil, err
	}
	if a.contiguous() {
		return a.share(0, a.n, a.shape())
	}
	return o.fresh("Contiguous", a, a.shape(), func(dst *Array[T]) error {
		return o.copyStrided("Contiguous", dst, a)
	})
}

// Contiguous is Ops.Contiguous on the default streams.
func Contiguous[T Elem](a *Array[T]) (*Array[T], error) { return Ops[T]{}.Contiguous(a) }

// copyStrided copies src into dst, of the same shape, either or both
// strided, with one strided copy (kernels.CopyStrided). dst must not be a
// broadcast view nor overlap src (the callers' temporaries do not).
func (o Ops[T]) copyStrided(op string, dst, src *Array[T]) error {
	shape := dst.shape()
	ds, ss := dst.strides(), src.strides()
	return o.doRaw(op, "dst,src", true, func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr) error {
		return kernels.CopyStrided[T](dev, s, p[0], p[1], shape, ds, ss)
	}, dst, src)
}

// packed returns a as a contiguous array for operation op to read (role
// names a in messages): a itself when it is contiguous, else a copy made on
// o's stream (a's device's default stream for the zero Ops). release frees
// the copy; call it once the operation that reads it is queued (the memory
// is reused only after that work has run), on success and on error alike.
// release is never nil.
func (o Ops[T]) packed(op, role string, a *Array[T]) (p *Array[T], release func(), err error) {
	if err := a.check(op, role); err != nil {
		return nil, func() {}, err
	}
	if a.contiguous() {
		return a, func() {}, nil
	}
	c, err := o.fresh(op, a, a.shape(), func(dst *Array[T]) error {
		return o.copyStrided(op, dst, a)
	})
	if err != nil {
		return nil, func() {}, err
	}
	return c, c.UnsafeFree, nil
}

// writeBack copies the result an operation computed in the contiguous tmp
// into the non-contiguous dst it stands for, then frees tmp.
func (o Ops[T]) writeBack(op string, dst, tmp *Array[T]) error {
	defer tmp.UnsafeFree()
	return o.copyStrided(op, dst, tmp)
}

// writable rejects a broadcast view as the destination of op.
func (a *Array[T]) writable(op, role string) error {
	if a.broadcast() {
		return fmt.Errorf("cuarray: %s: %s %s is a broadcast view (strides %v): it names some elements more than once, so it cannot be written; write a contiguous array (Contiguous, or New): %w",
			op, role, a, a.x.strides, ErrShape)
	}
	return nil
}

// doViews is do for operands of which some are not contiguous: each input
// is packed into a contiguous temporary, and a non-contiguous destination
// is packed too (operations such as Axpy read it), computed in place there
// and copied back into the view. Every temporary is freed once the work is
// queued, on success and on error.
func (o Ops[T]) doViews(op, names string, write bool, fn func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr) error, arrs ...*Array[T]) error {
	if write {
		if err := arrs[0].writable(op, role(names, 0)); err != nil {
			return err
		}
	}
	var in [maxOperands]*Array[T]
	for i, a := range arrs {
		p, release, err := o.packed(op, role(names, i), a)
		defer release()
		if err != nil {
			return err
		}
		in[i] = p
	}
	packed := in[:len(arrs)]
	if err := o.doRaw(op, names, write, fn, packed...); err != nil {
		return err
	}
	if write && packed[0] != arrs[0] {
		return o.copyStrided(op, arrs[0], packed[0])
	}
	return nil
}

// fmtAxes writes axes as "2, 0, 1".
func fmtAxes(axes []int) string {
	s := make([]string, len(axes))
	for i, a := range axes {
		s[i] = strconv.Itoa(a)
	}
	return strings.Join(s, ", ")
}

// copyViews is Copy on one device when dst or src is a strided view: one
// strided copy, or, when their memory may overlap, a packed copy of src
// first (so that every element is read before any is written).
func (o Ops[T]) copyViews(dst, src *Array[T]) error {
	const op = "Copy"
	if err := dst.writable(op, "dst"); err != nil {
		return err
	}
	if dst.buf == src.buf && dst.n > 0 {
		var z T
		size := uint64(unsafe.Sizeof(z))
		if dst.off < src.off+uint64(src.extent())*size && src.off < dst.off+uint64(dst.extent())*size {
			p, release, err := o.packedCopy(op, "src", src)
			if err != nil {
				return err
			}
			defer release()
			src = p
		}
	}
	return o.copyStrided(op, dst, src)
}

// packedCopy is packed, but always a copy: of a contiguous src too.
func (o Ops[T]) packedCopy(op, role string, a *Array[T]) (*Array[T], func(), error) {
	if !a.contiguous() {
		return o.packed(op, role, a)
	}
	c, err := o.fresh(op, a, a.shape(), func(dst *Array[T]) error {
		return o.doRaw(op, "dst,"+role, true, func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr) error {
			return kernels.Copy[T](dev, s, p[0], p[1], a.n)
		}, dst, a)
	})
	if err != nil {
		return nil, func() {}, err
	}
	return c, c.UnsafeFree, nil
}

// copyAcrossViews is Copy between devices when dst or src is a strided
// view: src is packed on its own device, copied across into dst or, when
// dst is strided, into a contiguous temporary on dst's device that is then
// copied into dst.
func (o Ops[T]) copyAcrossViews(dst, src *Array[T]) error {
	const op = "Copy"
	if err := dst.writable(op, "dst"); err != nil {
		return err
	}
	p, release, err := Ops[T]{}.packed(op, "src", src)
	if err != nil {
		return err
	}
	defer release()
	if dst.contiguous() {
		return o.copyAcross(dst, p)
	}
	tmp, err := o.fresh(op, dst, dst.shape(), func(t *Array[T]) error { return o.copyAcross(t, p) })
	if err != nil {
		return err
	}
	return o.writeBack(op, dst, tmp)
}
