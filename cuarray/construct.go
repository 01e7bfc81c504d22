package cuarray

import (
	"fmt"
	"math"
	"slices"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/half"
	"github.com/gocuda/gocuda/kernels"
)

// Construction: Arange, Linspace and Eye fill a new array (or dst) with
// ranges and identities as NumPy's functions of those names do; Concat and
// Stack join arrays along an axis. Each takes a dst first: nil makes the
// result on o's stream (device 0's default stream for the zero Ops, as New
// does, or, for Concat and Stack, the first input's device), and a dst of
// exactly the result's shape is written and returned instead. Nothing is
// allocated when the arguments are wrong.

// Arange returns the values start, start+step, ... up to stop (left out),
// as NumPy's arange(start, stop, step): ceil((stop-start)/step) values (none
// when that is not positive), element i computed in T as start + i*delta
// with delta = (start+step) - start, and element 1 start+step itself, the
// way NumPy fills its array, so float32 results match NumPy's bit for bit.
// Integer lengths are exact (NumPy's go through float64). For the real
// types; step must not be 0, and float arguments must be finite. A non-nil
// dst must be one-dimensional of that length.
func (o Ops[T]) Arange(dst *Array[T], start, stop, step T) (*Array[T], error) {
	const op = "Arange"
	n, err := arangeLen(start, stop, step)
	if err != nil {
		return nil, fmt.Errorf("cuarray: %s(%v, %v, %v) %s: %w", op, start, stop, step, kernels.DTypeOf[T](), err)
	}
	return o.construct(op, dst, []int{n}, func(f Ops[T], a *Array[T]) error {
		return f.do(op, "dst", true, func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr) error {
			return kernels.Arange(dev, s, p[0], start, step, a.n)
		}, a)
	})
}

// arangeLen is NumPy's arange length, exact for integers.
func arangeLen[T Elem](start, stop, step T) (int, error) {
	switch v := any(start).(type) {
	case float32, float64, half.Float16, half.BFloat16:
		a, b, st := toFloat64(v), toFloat64(any(stop)), toFloat64(any(step))
		for _, x := range []float64{a, b, st} {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return 0, fmt.Errorf("start, stop and step must be finite: %w", backend.ErrInvalidValue)
			}
		}
		if st == 0 {
			return 0, fmt.Errorf("step is 0; it must not be: %w", backend.ErrInvalidValue)
		}
		n := math.Ceil((b - a) / st)
		if n <= 0 {
			return 0, nil
		}
		if n >= math.MaxInt {
			return 0, fmt.Errorf("%g elements are more than an array holds: %w", n, ErrShape)
		}
		return int(n), nil
	case complex64:
		return 0, fmt.Errorf("Arange takes float32, float64, int32, int64, uint8, float16, bfloat16, int8, int16, uint32: %w", kernels.ErrUnsupportedDType)
	}
	a, b, st := toInt64(start), toInt64(stop), toInt64(step)
	var span, by uint64
	switch {
	case st == 0:
		return 0, fmt.Errorf("step is 0; it must not be: %w", backend.ErrInvalidValue)
	case st > 0 && b > a:
		span, by = uint64(b)-uint64(a), uint64(st)
	case st < 0 && b < a:
		span, by = uint64(a)-uint64(b), -uint64(st) // two's complement: MinInt64 too
	default:
		return 0, nil
	}
	n := (span-1)/by + 1
	if n > math.MaxInt {
		return 0, fmt.Errorf("%d elements are more than an array holds: %w", n, ErrShape)
	}
	return int(n), nil
}

func toFloat64(v any) float64 {
	switch x := v.(type) {
	case float32:
		return float64(x)
	case float64:
		return x
	case half.Float16:
		return x.Float64()
	case half.BFloat16:
		return x.Float64()
	}
	return 0
}

// Linspace returns num values evenly spaced from start to stop, stop
// included when endpoint, as NumPy's linspace(start, stop, num, endpoint,
// dtype=T): computed in float64 (i*step + start, the last exactly stop)
// and converted to T, integers truncated toward zero (start and stop must
// then lie in T's range). For the real types. A non-nil dst must be
// one-dimensional of num elements.
func (o Ops[T]) Linspace(dst *Array[T], start, stop float64, num int, endpoint bool) (*Array[T], error) {
	const op = "Linspace"
	if num < 0 {
		return nil, fmt.Errorf("cuarray: %s %s: num = %d is negative; it must be ≥ 0: %w", op, kernels.DTypeOf[T](), num, ErrShape)
	}
	return o.construct(op, dst, []int{num}, func(f Ops[T], a *Array[T]) error {
		return f.do(op, "dst", true, func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr) error {
			return kernels.Linspace[T](dev, s, p[0], start, stop, num, endpoint)
		}, a)
	})
}

// Eye returns the n × m matrix with ones on diagonal k and zeros elsewhere,
// as NumPy's eye(n, m, k): k = 0 is the main diagonal, k > 0 one above it,
// k < 0 one below (Eye(nil, n, n, 0) is the identity). Every Elem type. A
// non-nil dst must be n × m.
func (o Ops[T]) Eye(dst *Array[T], n, m, k int) (*Array[T], error) {
	const op = "Eye"
	return o.construct(op, dst, []int{n, m}, func(f Ops[T], a *Array[T]) error {
		return f.do(op, "dst", true, func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr) error {
			return kernels.Eye[T](dev, s, p[0], n, m, k)
		}, a)
	})
}

// construct is the constructors' dst rule: nil makes an array of shape on
// o's stream and run fills it (freed if run fails); otherwise dst must have
// exactly that shape, and run fills it.
func (o Ops[T]) construct(op string, dst *Array[T], shape []int, run func(Ops[T], *Array[T]) error) (*Array[T], error) {
	if dst == nil {
		return o.newThen(op, shape, run)
	}
	if err := o.dstShaped(op, dst, shape); err != nil {
		return nil, err
	}
	if err := run(o, dst); err != nil {
		return nil, err
	}
	return dst, nil
}

// dstShaped checks that a caller's dst is live and has the result's shape.
func (o Ops[T]) dstShaped(op string, dst *Array[T], shape []int) error {
	if err := dst.check(op, "dst"); err != nil {
		return err
	}
	if !slices.Equal(dst.shape(), shape) {
		return fmt.Errorf("cuarray: %s: dst %s must have the result's shape %s (or be nil to make it): %w", op, dst, fmtShape(shape), ErrShape)
	}
	return nil
}

// into is the dst rule of operations on arrays: nil makes the result, of
// shape (see fresh: on o's stream, or like's
// device for the zero Ops); otherwise dst must have exactly that shape.
func (o Ops[T]) into(op string, dst, like *Array[T], shape []int, run func(dst *Array[T]) error) (*Array[T], error) {
	if dst == nil {
		return o.fresh(op, like, shape, run)
	}
	if err := o.dstShaped(op, dst, shape); err != nil {
		return nil, err
	}
	if err := run(dst); err != nil {
		return nil, err
	}
	return dst, nil
}

// Concat joins arrays along an existing axis, as NumPy's concatenate: every
// array has the same number of dimensions (at least one) and the same
// dimensions except along axis, where the result's is their sum. axis
// counts from the end when negative (-1 is the last). The arrays must be on
// one device and must not overlap dst; at least one is needed.
//
// It is one kernel launch for up to 8 arrays (one more for each 8 more),
// or, joining along the outermost axis (where each array is one run of
// dst), one device-to-device copy an array.
func (o Ops[T]) Concat(dst *Array[T], arrays []*Array[T], axis int) (*Array[T], error) {
	const op = "Concat"
	if err := o.checkJoin(op, arrays); err != nil {
		return nil, err
	}
	first := arrays[0].shape()
	ax, err := normAxis(op, axis, len(first), fmtShape(first))
	if err != nil {
		return nil, err
	}
	out := slices.Clone(first)
	out[ax] = 0
	for i, a := range arrays {
		sh := a.shape()
		if len(sh) != len(first) || !equalExcept(sh, first, ax) {
			return nil, fmt.Errorf("cuarray: %s along axis %d: arrays[%d] %s and arrays[0] %s differ in a dimension other than the axis; all must agree except along axis %d: %w",
				op, axis, i, a, arrays[0], ax, ErrShape)
		}
		out[ax] += sh[ax]
	}
	if _, err := checkShape(out); err != nil {
		return nil, fmt.Errorf("cuarray: %s along axis %d: the result %s: %w", op, axis, fmtShape(out), err)
	}
	rows := prod(first[:ax])
	cols := make([]int, len(arrays))
	for i, a := range arrays {
		cols[i] = prod(a.shape()[ax:])
	}
	return o.join(op, dst, arrays, out, rows, cols)
}

// Stack joins arrays of one shape along a new axis, as NumPy's stack: the
// result has one more dimension, of len(arrays), at position axis (0 to
// the arrays' dimensions; negative counts from the end of the result's, -1
// is last). The arrays must be on one device and must not overlap dst; at
// least one is needed.
func (o Ops[T]) Stack(dst *Array[T], arrays []*Array[T], axis int) (*Array[T], error) {
	const op = "Stack"
	if err := o.checkJoin(op, arrays); err != nil {
		return nil, err
	}
	first := arrays[0].shape()
	ax, err := normAxis(op, axis, len(first)+1, fmtShape(first)+" stacked")
	if err != nil {
		return nil, err
	}
	for i, a := range arrays {
		if !slices.Equal(a.shape(), first) {
			return nil, fmt.Errorf("cuarray: %s along axis %d: arrays[%d] %s and arrays[0] %s differ in shape; stacked arrays must have one shape: %w",
				op, axis, i, a, arrays[0], ErrShape)
		}
	}
	out := slices.Concat(first[:ax], []int{len(arrays)}, first[ax:])
	if _, err := checkShape(out); err != nil {
		return nil, fmt.Errorf("cuarray: %s along axis %d: the result %s: %w", op, axis, fmtShape(out), err)
	}
	cols := make([]int, len(arrays))
	for i := range cols {
		cols[i] = prod(first[ax:])
	}
	return o.join(op, dst, arrays, out, prod(first[:ax]), cols)
}

// checkJoin checks Concat's and Stack's inputs: at least one, each live,
// all on one device, and o's stream on it.
func (o Ops[T]) checkJoin(op string, arrays []*Array[T]) error {
	if len(arrays) == 0 {
		return fmt.Errorf("cuarray: %s %s: no arrays; it needs at least one: %w", op, kernels.DTypeOf[T](), backend.ErrInvalidValue)
	}
	for i, a := range arrays {
		if err := a.check(op, fmt.Sprintf("arrays[%d]", i)); err != nil {
			return err
		}
		if a.origin.dev != arrays[0].origin.dev {
			return fmt.Errorf("cuarray: %s: arrays[0] is on device %d, arrays[%d] on device %d; copy one first: %w",
				op, arrays[0].origin.dev.Ordinal(), i, a.origin.dev.Ordinal(), ErrDevice)
		}
	}
	_, err := o.streamFor(op, arrays[0].origin.dev)
	return err
}

// join runs Concat and Stack: dst (made when nil) is rows × Σcols, input i
// rows × cols[i].
func (o Ops[T]) join(op string, dst *Array[T], arrays []*Array[T], out []int, rows int, cols []int) (*Array[T], error) {
	return o.into(op, dst, arrays[0], out, func(d *Array[T]) error {
		args := make([]Arg, 0, len(arrays)+1)
		args = append(args, Out(d))
		for i, a := range arrays {
			if In(a).Overlaps(Out(d)) {
				return fmt.Errorf("cuarray: %s: arrays[%d] %s shares memory with dst %s; give the result an array of its own: %w", op, i, a, d, ErrShape)
			}
			args = append(args, In(a))
		}
		return borrow(op, o.s, func(bs backend.Stream, p []backend.Ptr) error {
			parts := make([]kernels.ConcatPart, len(arrays))
			for i := range parts {
				parts[i] = kernels.ConcatPart{Src: p[i+1], Cols: cols[i]}
			}
			return kernels.Concat[T](bs.Device(), bs, p[0], rows, parts)
		}, args)
	})
}

// normAxis maps axis (negative counts from the end) into [0, ndim), or
// returns an error naming op, the axis and the shape (what).
func normAxis(op string, axis, ndim int, what string) (int, error) {
	ax := axis
	if ax < 0 {
		ax += ndim
	}
	if ndim == 0 {
		return 0, fmt.Errorf("cuarray: %s: %s has no axes; axis %d needs an array of at least one dimension (Reshape it): %w", op, what, axis, ErrShape)
	}
	if ax < 0 || ax >= ndim {
		return 0, fmt.Errorf("cuarray: %s: axis %d is out of range for %s; it must be in [%d, %d): %w", op, axis, what, -ndim, ndim, ErrShape)
	}
	return ax, nil
}

func equalExcept(a, b []int, ax int) bool {
	for i := range a {
		if i != ax && a[i] != b[i] {
			return false
		}
	}
	return true
}

// prod is the product of dims (1 for none); the callers' shapes have been
// checked not to overflow.
func prod(dims []int) int {
	n := 1
	for _, d := range dims {
		n *= d
	}
	return n
}

// Arange returns start, start+step, ... below stop on device 0's default
// stream (see Ops.Arange).
func Arange[T Elem](dst *Array[T], start, stop, step T) (*Array[T], error) {
	return Ops[T]{}.Arange(dst, start, stop, step)
}

// Linspace returns num values evenly spaced from start to stop (see
// Ops.Linspace).
func Linspace[T Elem](dst *Array[T], start, stop float64, num int, endpoint bool) (*Array[T], error) {
	return Ops[T]{}.Linspace(dst, start, stop, num, endpoint)
}

// Eye returns the n × m matrix with ones on diagonal k (see Ops.Eye).
func Eye[T Elem](dst *Array[T], n, m, k int) (*Array[T], error) { return Ops[T]{}.Eye(dst, n, m, k) }

// Concat joins arrays along an existing axis (see Ops.Concat).
func Concat[T Elem](dst *Array[T], arrays []*Array[T], axis int) (*Array[T], error) {
	return Ops[T]{}.Concat(dst, arrays, axis)
}

// Stack joins arrays of one shape along a new axis (see Ops.Stack).
func Stack[T Elem](dst *Array[T], arrays []*Array[T], axis int) (*Array[T], error) {
	return Ops[T]{}.Stack(dst, arrays, axis)
}
