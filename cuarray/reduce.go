package cuarray

import (
	"errors"
	"fmt"
	"slices"
	"unsafe"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/kernels"
	"github.com/gocuda/gocuda/pool"
)

// Reductions over axes. Each reduces x over axes into an array: the axes
// are dropped from the shape, or, with keep, left as dimensions of 1 (so
// the result broadcasts against x). No axes (nil or empty) means every
// axis: a zero-dimensional array of one value (or, with keep, x's number
// of dimensions, each 1). Axes may be negative, counting from the end (-1
// is the last); an axis out of range or named twice is an error wrapping
// ErrShape. A nil dst makes the result on o's stream (for the zero Ops, on
// x's device and pool) and returns it; a non-nil dst must have the
// result's shape and is written and returned.
//
// Result types: Go cannot say "int64 for integer T, else T" in one
// signature, so the forms whose result type depends on T's kind carry it in
// their name, and each form takes only the element types whose result it
// holds (the other is an error wrapping kernels.ErrUnsupportedDType that
// names the form to use):
//
//	SumAxes, ProdAxes, MeanAxes        float32, float64, complex64 → the same type
//	SumAxesInt64, ProdAxesInt64        the integers → int64 (no wrap below 2^63)
//	MeanAxesFloat64                    the integers → float64
//	MaxAxes, MinAxes                   the real types → the same type
//	ArgMaxAxes, ArgMinAxes             the real types → int64
//	AnyAxes, AllAxes                   every type, bool included → bool
//
// float32 sums, products and means accumulate in float64 and complex64 ones
// in complex128, rounding once. NaN propagates as in NumPy: Max, Min and the
// sums, products and means of anything with a NaN are NaN; ArgMax and
// ArgMin give the index of the first NaN. Ties give ArgMax and ArgMin the
// first index; over several axes the index counts row-major over the
// reduced axes only. Of no elements Sum is 0, Prod 1, Mean NaN, Any 0 and
// All 1, and Max, Min, ArgMax and ArgMin are an error wrapping
// kernels.ErrEmpty. Any and All count nonzero elements (NaN included) as
// true.
//
// The whole-array forms that return a Go value (Sum, Max, Min, SumInt64)
// stay beside these: SumAxes(nil, x, nil, false) is the same sum as an
// array on the device, with no wait, where Sum waits and hands back the
// value.

// SumAxes sums x over axes (see Reductions over axes), for float32,
// float64 and complex64; integer arrays sum with SumAxesInt64.
func (o Ops[T]) SumAxes(dst, x *Array[T], axes []int, keep bool) (*Array[T], error) {
	return reduceAxes(o, "SumAxes", kernels.ReduceSum, "SumAxesInt64", dst, x, axes, keep)
}

// SumAxesInt64 sums the integer array x over axes into int64, which holds
// the exact sum below 2^63.
func (o Ops[T]) SumAxesInt64(dst *Array[int64], x *Array[T], axes []int, keep bool) (*Array[int64], error) {
	return reduceAxes(o, "SumAxesInt64", kernels.ReduceSum, "SumAxes", dst, x, axes, keep)
}

// ProdAxes multiplies x's elements over axes, for float32, float64 and
// complex64; integer arrays multiply with ProdAxesInt64.
func (o Ops[T]) ProdAxes(dst, x *Array[T], axes []int, keep bool) (*Array[T], error) {
	return reduceAxes(o, "ProdAxes", kernels.ReduceProd, "ProdAxesInt64", dst, x, axes, keep)
}

// ProdAxesInt64 multiplies the integer array x's elements over axes in
// int64 (wrapping past its range, as Go's int64 does).
func (o Ops[T]) ProdAxesInt64(dst *Array[int64], x *Array[T], axes []int, keep bool) (*Array[int64], error) {
	return reduceAxes(o, "ProdAxesInt64", kernels.ReduceProd, "ProdAxes", dst, x, axes, keep)
}

// MeanAxes is the mean of x over axes, for float32, float64 and complex64;
// integer arrays average with MeanAxesFloat64.
func (o Ops[T]) MeanAxes(dst, x *Array[T], axes []int, keep bool) (*Array[T], error) {
	return reduceAxes(o, "MeanAxes", kernels.ReduceMean, "MeanAxesFloat64", dst, x, axes, keep)
}

// MeanAxesFloat64 is the mean of the integer array x over axes, as
// float64.
func (o Ops[T]) MeanAxesFloat64(dst *Array[float64], x *Array[T], axes []int, keep bool) (*Array[float64], error) {
	return reduceAxes(o, "MeanAxesFloat64", kernels.ReduceMean, "MeanAxes", dst, x, axes, keep)
}

// MaxAxes is the largest element of x over axes, for the real types.
func (o Ops[T]) MaxAxes(dst, x *Array[T], axes []int, keep bool) (*Array[T], error) {
	return reduceAxes(o, "MaxAxes", kernels.ReduceMax, "", dst, x, axes, keep)
}

// MinAxes is the smallest element of x over axes, for the real types.
func (o Ops[T]) MinAxes(dst, x *Array[T], axes []int, keep bool) (*Array[T], error) {
	return reduceAxes(o, "MinAxes", kernels.ReduceMin, "", dst, x, axes, keep)
}

// ArgMaxAxes is the index of the largest element of x over axes (the
// first, for ties), for the real types.
func (o Ops[T]) ArgMaxAxes(dst *Array[int64], x *Array[T], axes []int, keep bool) (*Array[int64], error) {
	return reduceAxes(o, "ArgMaxAxes", kernels.ReduceArgMax, "", dst, x, axes, keep)
}

// ArgMinAxes is the index of the smallest element of x over axes (the
// first, for ties), for the real types.
func (o Ops[T]) ArgMinAxes(dst *Array[int64], x *Array[T], axes []int, keep bool) (*Array[int64], error) {
	return reduceAxes(o, "ArgMinAxes", kernels.ReduceArgMin, "", dst, x, axes, keep)
}

// AnyAxes is true where any element of x over axes is nonzero (or true).
func (o Ops[T]) AnyAxes(dst *Array[bool], x *Array[T], axes []int, keep bool) (*Array[bool], error) {
	return reduceAxes(o, "AnyAxes", kernels.ReduceAny, "", dst, x, axes, keep)
}

// AllAxes is true where every element of x over axes is nonzero (or
// true), so true over no elements.
func (o Ops[T]) AllAxes(dst *Array[bool], x *Array[T], axes []int, keep bool) (*Array[bool], error) {
	return reduceAxes(o, "AllAxes", kernels.ReduceAll, "", dst, x, axes, keep)
}

// ErrOverflow: a whole-array integer Sum whose value does not fit the
// array's element type; SumInt64 returns it.
var ErrOverflow = errors.New("result does not fit the element type")

// sumExact is Sum of an integer array: the int64 sum, if it fits T.
func (o Ops[T]) sumExact(x *Array[T]) (T, error) {
	var w int64
	err := o.do("Sum", "x", false, func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr) error {
		var err error
		w, err = kernels.SumInt64[T](dev, s, p[0], x.n)
		return err
	}, x)
	if err != nil {
		return zero[T](), err
	}
	v := fromInt64[T](w)
	if toInt64(v) != w {
		return zero[T](), fmt.Errorf("cuarray: Sum of %s: the sum %d does not fit %s; SumInt64 returns it as int64: %w", x, w, kernels.DTypeOf[T](), ErrOverflow)
	}
	return v, nil
}

// fromInt64 and toInt64 convert between an integer T and int64.
func fromInt64[T Elem](v int64) T {
	var z T
	switch any(z).(type) {
	case int32:
		return any(int32(v)).(T)
	case int64:
		return any(v).(T)
	case uint8:
		return any(uint8(v)).(T)
	case int8:
		return any(int8(v)).(T)
	case int16:
		return any(int16(v)).(T)
	case uint32:
		return any(uint32(v)).(T)
	}
	return z
}

func toInt64[T Elem](v T) int64 {
	switch x := any(v).(type) {
	case int32:
		return int64(x)
	case int64:
		return x
	case uint8:
		return int64(x)
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case uint32:
		return int64(x)
	}
	return 0
}

// SumInt64 returns the sum of the integer array x's elements as int64,
// exact below 2^63, waiting as Sum does. Sum of an integer array whose sum
// does not fit T is an error pointing here.
func (o Ops[T]) SumInt64(x *Array[T]) (int64, error) {
	var r int64
	err := o.do("SumInt64", "x", false, func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr) error {
		var err error
		r, err = kernels.SumInt64[T](dev, s, p[0], x.n)
		return err
	}, x)
	return r, err
}

// reduceAxes is every reduction over axes: it validates, makes dst if it
// is nil, and runs kernels.ReduceAxes with x's layout. other names the
// form that takes the element types this one does not (or "").
func reduceAxes[T, U Elem](o Ops[T], op string, rop kernels.ReduceOp, other string, dst *Array[U], x *Array[T], axes []int, keep bool) (*Array[U], error) {
	dt := kernels.DTypeOf[T]()
	if err := x.check(op, "x"); err != nil {
		return nil, err
	}
	if dt == kernels.Float16 || dt == kernels.BFloat16 {
		return reduceHalf(o, op, rop, other, dst, x, axes, keep)
	}
	out, err := kernels.ReduceOutput(rop, dt)
	if err != nil {
		return nil, fmt.Errorf("cuarray: %s of %s: %w", op, x, err)
	}
	if want := kernels.DTypeOf[U](); out != want {
		return nil, fmt.Errorf("cuarray: %s of %s: the %s of %s is %s, which %s does not return; use %s: %w",
			op, x, rop, dt, out, op, other, kernels.ErrUnsupportedDType)
	}
	shape := x.shape()
	red, err := normAxes(shape, axes)
	if err != nil {
		return nil, fmt.Errorf("cuarray: %s of %s, axes %v: %w", op, x, axes, err)
	}
	outShape, nout, nred := reducedShape(shape, red, keep)
	if nred == 0 && nout > 0 && (rop == kernels.ReduceMax || rop == kernels.ReduceMin || rop == kernels.ReduceArgMax || rop == kernels.ReduceArgMin) {
		return nil, fmt.Errorf("cuarray: %s of %s, axes %v: the reduced axes are empty, and %s of no elements has no value: %w", op, x, axes, rop, kernels.ErrEmpty)
	}
	if err := o.precheck(op, "x", x); err != nil {
		return nil, err
	}
	made := false
	if dst == nil {
		s := o.s
		if s == nil {
			if s, err = defaultStreamLike(x.origin); err != nil {
				return nil, fmt.Errorf("cuarray: %s: %w", op, err)
			}
		}
		if dst, err = newArray[U](op, s, outShape); err != nil {
			return nil, err
		}
		made = true
	} else {
		if err := dst.check(op, "dst"); err != nil {
			return nil, err
		}
		if !slices.Equal(dst.shape(), outShape) {
			return nil, fmt.Errorf("cuarray: %s of %s, axes %v, keep %t: dst %s must have the result's shape %s: %w", op, x, axes, keep, dst, fmtShape(outShape), ErrShape)
		}
		if dst.origin.dev != x.origin.dev {
			return nil, fmt.Errorf("cuarray: %s: x is on device %d, dst on device %d; copy one first: %w", op, x.origin.dev.Ordinal(), dst.origin.dev.Ordinal(), ErrDevice)
		}
		if !dst.contiguous() {
			return nil, fmt.Errorf("cuarray: %s: dst %s is a strided view; reductions write a contiguous array (pass nil and Copy the result into the view): %w", op, dst, ErrShape)
		}
	}
	strides := rowMajorStrides(shape)
	run := func(dev backend.Device, s backend.Stream, xp, dp backend.Ptr) error {
		return reduceScratched[T](dev, s, dst.origin.pool, rop, dp, xp, shape, strides, red)
	}
	if same, ok := any(dst).(*Array[T]); ok {
		// One element type: dst goes through do with x, which locks both.
		if sharesMemory(same, x) {
			err = fmt.Errorf("cuarray: %s: dst %s shares memory with x %s; a reduction cannot run in place: %w", op, dst, x, ErrShape)
		} else {
			err = o.do(op, "x,dst", false, func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr) error {
				return run(dev, s, p[0], p[1])
			}, x, same)
		}
	} else {
		err = o.do(op, "x", false, func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr) error {
			st, err := o.streamFor(op, dev) // do's stream, for its life
			if err != nil {
				return err
			}
			dp, unlock, err := orderForeign(op, "dst", dst, st.life)
			if err != nil {
				return err
			}
			defer unlock()
			return run(dev, s, p[0], dp)
		}, x)
	}
	if err != nil {
		if made {
			dst.UnsafeFree()
		}
		return nil, err
	}
	return dst, nil
}

// reduceHalf reduces a float16 or bfloat16 x in float32, as issue 27 and
// PyTorch do: x widens exactly into a float32 temporary, float32's
// reduction runs (sums accumulate in float32), and a result of x's type is
// rounded once; indices (ArgMax, ArgMin) and truth values (Any, All) come
// out as they are. The temporaries go back to the pool once the work is
// queued.
func reduceHalf[T, U Elem](o Ops[T], op string, rop kernels.ReduceOp, other string, dst *Array[U], x *Array[T], axes []int, keep bool) (*Array[U], error) {
	x32, err := widenHalf[float32](o, op, "x", x) // half_ops.go
	if err != nil {
		return nil, err
	}
	defer x32.UnsafeFree()
	f := Ops[float32](o)
	if kernels.DTypeOf[U]() != kernels.DTypeOf[T]() {
		return reduceAxes(f, op, rop, other, dst, x32, axes, keep)
	}
	r, err := reduceAxes[float32, float32](f, op, rop, other, nil, x32, axes, keep)
	if err != nil {
		return nil, err
	}
	defer r.UnsafeFree()
	return Convert(o.s, dst, r)
}

// reduceScratched runs kernels.ReduceAxes with the scratch it asks for,
// lent by pl on s as sumColsScratched's is.
func reduceScratched[T Elem](dev backend.Device, s backend.Stream, pl pool.Pool, rop kernels.ReduceOp, dst, x backend.Ptr, shape, strides, axes []int) error {
	var scratch kernels.Scratch
	var blk *pool.Block
	if n := kernels.ReduceScratch[T](dev, rop, shape, strides, axes); n > 0 {
		if b, err := pl.Alloc(uint64(n), s); err == nil {
			blk, scratch = b, kernels.Scratch{Ptr: b.Ptr, Bytes: n}
		}
	}
	err := kernels.ReduceAxes[T](dev, s, rop, dst, x, shape, strides, axes, scratch)
	if blk != nil {
		if ferr := pl.Free(blk, s); err == nil && ferr != nil {
			err = fmt.Errorf("giving back the reduction's scratch: %w", ferr)
		}
	}
	return err
}

// normAxes returns axes as distinct indices into shape in increasing
// order, negative ones counted from the end; none means every axis.
func normAxes(shape, axes []int) ([]int, error) {
	nd := len(shape)
	if len(axes) == 0 {
		out := make([]int, nd)
		for i := range out {
			out[i] = i
		}
		return out, nil
	}
	seen := make([]bool, nd)
	out := make([]int, 0, len(axes))
	for _, a := range axes {
		ax := a
		if ax < 0 {
			ax += nd
		}
		if ax < 0 || ax >= nd {
			return nil, fmt.Errorf("axis %d is out of range for %d dimensions; axes must be in [%d, %d): %w", a, nd, -nd, nd, ErrShape)
		}
		if seen[ax] {
			return nil, fmt.Errorf("axis %d is named twice; each axis may be reduced once: %w", a, ErrShape)
		}
		seen[ax] = true
		out = append(out, ax)
	}
	slices.Sort(out)
	return out, nil
}

// reducedShape is the result's shape of reducing shape over the sorted
// axes red, and the numbers of outputs and of elements each reduces.
func reducedShape(shape, red []int, keep bool) (out []int, nout, nred int) {
	out = make([]int, 0, len(shape))
	nout, nred = 1, 1
	for i, d := range shape {
		if slices.Contains(red, i) {
			nred *= d
			if keep {
				out = append(out, 1)
			}
			continue
		}
		nout *= d
		out = append(out, d)
	}
	return out, nout, nred
}

// rowMajorStrides is the strides, in elements, of a contiguous array of
// shape.
func rowMajorStrides(shape []int) []int {
	st := make([]int, len(shape))
	acc := 1
	for i := len(shape) - 1; i >= 0; i-- {
		st[i] = acc
		acc *= shape[i]
	}
	return st
}

// sharesMemory reports whether a and b overlap (nil and freed arrays are
// left to do's checks).
func sharesMemory[T Elem](a, b *Array[T]) bool {
	if a == nil || b == nil || a.freed.Load() || b.freed.Load() || a.buf != b.buf || a.n == 0 || b.n == 0 {
		return false
	}
	var z T
	size := uint64(unsafe.Sizeof(z))
	return a.off < b.off+uint64(b.n)*size && b.off < a.off+uint64(a.n)*size
}

// The package-level forms run on the default stream of x's device.

// SumAxes sums x over axes (see Ops.SumAxes).
func SumAxes[T Elem](dst, x *Array[T], axes []int, keep bool) (*Array[T], error) {
	return Ops[T]{}.SumAxes(dst, x, axes, keep)
}

// SumAxesInt64 sums the integer array x over axes into int64.
func SumAxesInt64[T Elem](dst *Array[int64], x *Array[T], axes []int, keep bool) (*Array[int64], error) {
	return Ops[T]{}.SumAxesInt64(dst, x, axes, keep)
}

// ProdAxes multiplies x's elements over axes.
func ProdAxes[T Elem](dst, x *Array[T], axes []int, keep bool) (*Array[T], error) {
	return Ops[T]{}.ProdAxes(dst, x, axes, keep)
}

// ProdAxesInt64 multiplies the integer array x's elements over axes in
// int64.
func ProdAxesInt64[T Elem](dst *Array[int64], x *Array[T], axes []int, keep bool) (*Array[int64], error) {
	return Ops[T]{}.ProdAxesInt64(dst, x, axes, keep)
}

// MeanAxes is the mean of x over axes.
func MeanAxes[T Elem](dst, x *Array[T], axes []int, keep bool) (*Array[T], error) {
	return Ops[T]{}.MeanAxes(dst, x, axes, keep)
}

// MeanAxesFloat64 is the mean of the integer array x over axes, as float64.
func MeanAxesFloat64[T Elem](dst *Array[float64], x *Array[T], axes []int, keep bool) (*Array[float64], error) {
	return Ops[T]{}.MeanAxesFloat64(dst, x, axes, keep)
}

// MaxAxes is the largest element of x over axes.
func MaxAxes[T Elem](dst, x *Array[T], axes []int, keep bool) (*Array[T], error) {
	return Ops[T]{}.MaxAxes(dst, x, axes, keep)
}

// MinAxes is the smallest element of x over axes.
func MinAxes[T Elem](dst, x *Array[T], axes []int, keep bool) (*Array[T], error) {
	return Ops[T]{}.MinAxes(dst, x, axes, keep)
}

// ArgMaxAxes is the index of the first largest element of x over axes.
func ArgMaxAxes[T Elem](dst *Array[int64], x *Array[T], axes []int, keep bool) (*Array[int64], error) {
	return Ops[T]{}.ArgMaxAxes(dst, x, axes, keep)
}

// ArgMinAxes is the index of the first smallest element of x over axes.
func ArgMinAxes[T Elem](dst *Array[int64], x *Array[T], axes []int, keep bool) (*Array[int64], error) {
	return Ops[T]{}.ArgMinAxes(dst, x, axes, keep)
}

// AnyAxes is 1 where any element of x over axes is nonzero, else 0.
func AnyAxes[T Elem](dst *Array[bool], x *Array[T], axes []int, keep bool) (*Array[bool], error) {
	return Ops[T]{}.AnyAxes(dst, x, axes, keep)
}

// AllAxes is 1 where every element of x over axes is nonzero, else 0.
func AllAxes[T Elem](dst *Array[bool], x *Array[T], axes []int, keep bool) (*Array[bool], error) {
	return Ops[T]{}.AllAxes(dst, x, axes, keep)
}

// SumInt64 returns the sum of the integer array x's elements as int64.
func SumInt64[T Elem](x *Array[T]) (int64, error) { return Ops[T]{}.SumInt64(x) }
