package cuarray

import (
	"fmt"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/kernels"
)

// Sort sets dst to x sorted along its last axis (each row of a matrix, a
// 1-D array whole), ascending, or descending if descending. NaN counts as
// the largest value (last ascending, first descending, as NumPy's sort and
// torch's descending sort), -0 and +0 compare equal, and every element
// keeps its bits. The sort is stable — equal keys keep their order in x —
// except for float32, float16 and bfloat16 rows longer than 4096 on a GPU,
// where every -0 comes before every +0 (after, descending) and NaNs come
// in an order fixed by their bits (docs/scansort.md). A nil dst makes the result on o's stream and returns it; a non-nil
// dst must have x's shape and may be x (in place). For the real types.
func (o Ops[T]) Sort(dst, x *Array[T], descending bool) (*Array[T], error) {
	const op = "Sort"
	if isHalf[T]() {
		return sortHalf(o, dst, x, descending)
	}
	if err := realOnly[T](op); err != nil {
		return nil, err
	}
	rows, n, err := lastAxis(op, x)
	if err != nil {
		return nil, err
	}
	run := func(dst *Array[T]) error {
		return o.do(op, "dst,x", true, func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr) error {
			return withScratch(dev, s, dst.origin.pool, op, kernels.SortScratch[T](dev, rows, n), func(sc kernels.Scratch) error {
				return kernels.Sort[T](dev, s, p[0], p[1], rows, n, descending, sc)
			})
		}, dst, x)
	}
	if dst == nil {
		if err := o.precheck(op, "x", x); err != nil {
			return nil, err
		}
		return o.fresh(op, x, x.shape(), run)
	}
	if err := dst.check(op, "dst"); err != nil {
		return nil, err
	}
	if err := sameShapeAs(op, "dst", dst, "x", x); err != nil {
		return nil, err
	}
	if err := run(dst); err != nil {
		return nil, err
	}
	return dst, nil
}

// Argsort sets dst to the int64 indices along x's last axis that sort it
// with Sort's order: dst[…, j] is the position in its row of the row's
// j'th element in sorted order, and among equal keys the lower position
// comes first (stable). A nil dst makes the result; a non-nil one must
// have x's shape and must not share memory with x.
func (o Ops[T]) Argsort(dst *Array[int64], x *Array[T], descending bool) (*Array[int64], error) {
	const op = "Argsort"
	if isHalf[T]() {
		return argsortHalf(o, dst, x, descending)
	}
	if err := realOnly[T](op); err != nil {
		return nil, err
	}
	rows, n, err := lastAxis(op, x)
	if err != nil {
		return nil, err
	}
	shape := x.shape()
	if dst != nil {
		if err := dst.check(op, "dst"); err != nil {
			return nil, err
		}
		if !sameDims(dst.shape(), shape) {
			return nil, fmt.Errorf("cuarray: %s: dst %s must have the shape of x %s: %w", op, dst, x, ErrShape)
		}
		if err := sameDevice(op, "dst", dst, x); err != nil {
			return nil, err
		}
	}
	var made *Array[int64]
	if dst == nil {
		if err := o.precheck(op, "x", x); err != nil {
			return nil, err
		}
		if made, err = newResult[int64](o, op, x, shape); err != nil {
			return nil, err
		}
		dst = made
	}
	err = o.withIndices(op, "x", dst, []*Array[T]{x}, func(dev backend.Device, s backend.Stream, ip backend.Ptr, p [maxOperands]backend.Ptr) error {
		return withScratch(dev, s, x.origin.pool, op, kernels.ArgsortScratch[T](dev, rows, n), func(sc kernels.Scratch) error {
			return kernels.Argsort[T](dev, s, ip, p[0], rows, n, descending, sc)
		})
	})
	if err != nil {
		if made != nil {
			made.UnsafeFree()
		}
		return nil, err
	}
	return dst, nil
}

// TopK sets values and indices to the k elements of each row of x (its
// last axis) that sort first: the largest, in descending order, if
// largest, else the smallest, ascending; indices are their positions in
// the row (int64). It is the first k of Sort and Argsort with descending =
// largest: NaN counts as the largest value, and ties keep index order.
// Both results have x's shape with the last dimension k; a nil one is
// made on o's stream. 0 ≤ k ≤ the last dimension. Neither result may share
// memory with x.
func (o Ops[T]) TopK(values *Array[T], indices *Array[int64], x *Array[T], k int, largest bool) (*Array[T], *Array[int64], error) {
	const op = "TopK"
	if isHalf[T]() {
		return topKHalf(o, values, indices, x, k, largest)
	}
	if err := realOnly[T](op); err != nil {
		return nil, nil, err
	}
	rows, n, err := lastAxis(op, x)
	if err != nil {
		return nil, nil, err
	}
	if k < 0 || k > n {
		return nil, nil, fmt.Errorf("cuarray: %s: k = %d is outside [0, %d], the length of x %s's last axis: %w", op, k, n, x, ErrShape)
	}
	shape := x.Shape()
	shape[len(shape)-1] = k
	if values != nil {
		if err := values.check(op, "values"); err != nil {
			return nil, nil, err
		}
		if !sameDims(values.shape(), shape) {
			return nil, nil, fmt.Errorf("cuarray: %s: values %s must have the shape %v (x %s with k = %d last): %w", op, values, shape, x, k, ErrShape)
		}
		if overlaps(values, x) {
			return nil, nil, fmt.Errorf("cuarray: %s: values %s shares memory with x %s: %w", op, values, x, ErrShape)
		}
	}
	if indices != nil {
		if err := indices.check(op, "indices"); err != nil {
			return nil, nil, err
		}
		if !sameDims(indices.shape(), shape) {
			return nil, nil, fmt.Errorf("cuarray: %s: indices %s must have the shape %v (x %s with k = %d last): %w", op, indices, shape, x, k, ErrShape)
		}
		if err := sameDevice(op, "indices", indices, x); err != nil {
			return nil, nil, err
		}
	}
	if values == nil || indices == nil {
		if err := o.precheck(op, "x", x); err != nil {
			return nil, nil, err
		}
	}
	var madeV *Array[T]
	var madeI *Array[int64]
	undo := func() {
		if madeV != nil {
			madeV.UnsafeFree()
		}
		if madeI != nil {
			madeI.UnsafeFree()
		}
	}
	if values == nil {
		if madeV, err = newResult[T](o, op, x, shape); err != nil {
			return nil, nil, err
		}
		values = madeV
	}
	if indices == nil {
		if madeI, err = newResult[int64](o, op, x, shape); err != nil {
			undo()
			return nil, nil, err
		}
		indices = madeI
	}
	err = o.withIndices(op, "values,x", indices, []*Array[T]{values, x}, func(dev backend.Device, s backend.Stream, ip backend.Ptr, p [maxOperands]backend.Ptr) error {
		return withScratch(dev, s, x.origin.pool, op, kernels.TopKScratch[T](dev, rows, n), func(sc kernels.Scratch) error {
			return kernels.TopK[T](dev, s, p[0], ip, p[1], rows, n, k, largest, sc)
		})
	})
	if err != nil {
		undo()
		return nil, nil, err
	}
	return values, indices, nil
}

// Sort is Ops.Sort on the default streams.
func Sort[T Elem](dst, x *Array[T], descending bool) (*Array[T], error) {
	return Ops[T]{}.Sort(dst, x, descending)
}

// Argsort is Ops.Argsort on the default streams.
func Argsort[T Elem](dst *Array[int64], x *Array[T], descending bool) (*Array[int64], error) {
	return Ops[T]{}.Argsort(dst, x, descending)
}

// TopK is Ops.TopK on the default streams.
func TopK[T Elem](values *Array[T], indices *Array[int64], x *Array[T], k int, largest bool) (*Array[T], *Array[int64], error) {
	return Ops[T]{}.TopK(values, indices, x, k, largest)
}

// lastAxis is x's rows and row length for an operation along its last
// axis: a live array of the real types with at least one dimension.
func lastAxis[T Elem](op string, x *Array[T]) (rows, n int, err error) {
	if err := realOnly[T](op); err != nil {
		return 0, 0, err
	}
	if err := x.check(op, "x"); err != nil {
		return 0, 0, err
	}
	if x.ndim == 0 {
		return 0, 0, fmt.Errorf("cuarray: %s: x %s has no axes; it works along the last axis of an array of at least one dimension (Reshape it): %w", op, x, ErrShape)
	}
	shape := x.shape()
	n = shape[len(shape)-1]
	if n == 0 {
		return 0, 0, nil
	}
	return x.n / n, n, nil
}

// withIndices runs an operation on arrays of T (arrs, which do checks and
// orders as usual) that also writes the int64 array idx, passing fn idx's
// pointer. For T = int64 idx is one more operand of do, which then also
// checks that it does not overlap the others; for other types it is
// ordered and locked as a foreign array (orderForeign), which cannot share
// memory with arrays of T.
func (o Ops[T]) withIndices(op, names string, idx *Array[int64], arrs []*Array[T], fn func(dev backend.Device, s backend.Stream, ip backend.Ptr, p [maxOperands]backend.Ptr) error) error {
	if same, ok := any(idx).(*Array[T]); ok {
		for i, a := range arrs {
			if overlaps(same, a) {
				return fmt.Errorf("cuarray: %s: the indices %s share memory with %s %s: %w", op, idx, role(names, i), a, ErrShape)
			}
		}
		all := append([]*Array[T]{same}, arrs...)
		return o.do(op, "indices,"+names, true, func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr) error {
			var q [maxOperands]backend.Ptr
			copy(q[:], p[1:])
			return fn(dev, s, p[0], q)
		}, all...)
	}
	return o.do(op, names, true, func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr) error {
		st, err := o.streamFor(op, dev) // do's stream, for its life
		if err != nil {
			return err
		}
		ip, unlock, err := orderForeign(op, "indices", idx, st.life)
		if err != nil {
			return err
		}
		defer unlock()
		return fn(dev, s, ip, p)
	}, arrs...)
}

// newResult makes an operation's result of element type U and shape on
// o's stream, or, for the zero Ops, on like's device's default stream with
// like's pool and kind (as fresh does for T).
func newResult[U, T Elem](o Ops[T], op string, like *Array[T], shape []int) (*Array[U], error) {
	s := o.s
	if s == nil {
		var err error
		if s, err = defaultStreamLike(like.origin); err != nil {
			return nil, fmt.Errorf("cuarray: %s: %w", op, err)
		}
	}
	return newArray[U](op, s, shape)
}

func sameDims(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// sameDevice checks that an int64 operand is on x's device.
func sameDevice[T Elem](op, name string, a *Array[int64], x *Array[T]) error {
	if x == nil || x.freed.Load() || a.origin.dev == x.origin.dev {
		return nil
	}
	return fmt.Errorf("cuarray: %s: x is on device %d, %s on device %d; copy one first: %w",
		op, x.origin.dev.Ordinal(), name, a.origin.dev.Ordinal(), ErrDevice)
}
