package cuarray

import (
	"fmt"
	"slices"

	"github.com/gocuda/gocuda/kernels"
)

// The allocating forms: the elementwise operations, Axpy, Scale and the
// matrix products, Op(dst, ...) error, each have a twin OpNew(...)
// (*Array[T], error) that makes the destination and returns it, so that expressions compose and Must wraps
// them. See the package documentation ("Allocating forms") for where
// results live and why the names end in New.

// AddNew returns a + b elementwise, a new array of the shape a and b
// broadcast to (a's shape when they have the same one); see Add for the
// rules.
func (o Ops[T]) AddNew(a, b *Array[T]) (*Array[T], error) {
	return o.binaryNew("AddNew", addKernels[T](), a, b)
}

// SubNew returns a - b elementwise, with AddNew's rules.
func (o Ops[T]) SubNew(a, b *Array[T]) (*Array[T], error) {
	return o.binaryNew("SubNew", subKernels[T](), a, b)
}

// MulNew returns a * b elementwise, with AddNew's rules.
func (o Ops[T]) MulNew(a, b *Array[T]) (*Array[T], error) {
	return o.binaryNew("MulNew", mulKernels[T](), a, b)
}

// DivNew returns a / b elementwise, with AddNew's rules and Div's
// arithmetic.
func (o Ops[T]) DivNew(a, b *Array[T]) (*Array[T], error) {
	return o.binaryNew("DivNew", divKernels[T](), a, b)
}

// AddScalarNew returns a + v elementwise, a new array of a's shape.
func (o Ops[T]) AddScalarNew(a *Array[T], v T) (*Array[T], error) {
	return o.scalarNew("AddScalarNew", kernels.AddScalar[T], a, v)
}

// SubScalarNew returns a - v elementwise.
func (o Ops[T]) SubScalarNew(a *Array[T], v T) (*Array[T], error) {
	return o.scalarNew("SubScalarNew", kernels.SubScalar[T], a, v)
}

// MulScalarNew returns a * v elementwise.
func (o Ops[T]) MulScalarNew(a *Array[T], v T) (*Array[T], error) {
	return o.scalarNew("MulScalarNew", kernels.MulScalar[T], a, v)
}

// DivScalarNew returns a / v elementwise.
func (o Ops[T]) DivScalarNew(a *Array[T], v T) (*Array[T], error) {
	return o.scalarNew("DivScalarNew", kernels.DivScalar[T], a, v)
}

// ExpNew returns e**x elementwise, for float32 and float64.
func (o Ops[T]) ExpNew(x *Array[T]) (*Array[T], error) {
	return o.unaryNew("ExpNew", kernels.Exp[T], x)
}

// LogNew returns ln(x) elementwise, for float32 and float64.
func (o Ops[T]) LogNew(x *Array[T]) (*Array[T], error) {
	return o.unaryNew("LogNew", kernels.Log[T], x)
}

// TanhNew returns tanh(x) elementwise, for float32 and float64.
func (o Ops[T]) TanhNew(x *Array[T]) (*Array[T], error) {
	return o.unaryNew("TanhNew", kernels.Tanh[T], x)
}

// ReluNew returns max(x, 0) elementwise, for float32 and float64.
func (o Ops[T]) ReluNew(x *Array[T]) (*Array[T], error) {
	return o.unaryNew("ReluNew", kernels.Relu[T], x)
}

// AxpyNew returns alpha*x + y, a new array of y's shape, leaving y as it
// was; for float32, float64 and complex64. It costs a copy of y more than
// Axpy.
func (o Ops[T]) AxpyNew(alpha T, x, y *Array[T]) (*Array[T], error) {
	const op = "AxpyNew"
	if err := o.precheck(op, "x,y", x, y); err != nil {
		return nil, err
	}
	if err := sameLen(op, "y,x", y, x); err != nil {
		return nil, err
	}
	return o.fresh(op, y, y.shape(), func(dst *Array[T]) error {
		if err := o.Copy(dst, y); err != nil {
			return err
		}
		return o.Axpy(alpha, x, dst)
	})
}

// ScaleNew returns alpha*x, a new array of x's shape, for float32,
// float64 and complex64.
func (o Ops[T]) ScaleNew(alpha T, x *Array[T]) (*Array[T], error) {
	const op = "ScaleNew"
	if err := o.precheck(op, "x", x); err != nil {
		return nil, err
	}
	return o.fresh(op, x, x.shape(), func(dst *Array[T]) error {
		if err := o.Copy(dst, x); err != nil {
			return err
		}
		return o.Scale(alpha, dst)
	})
}

// MatMulNew returns a·b for 2-D arrays a (m × k) and b (k × n): a new m × n
// array, for float32 and float64.
func (o Ops[T]) MatMulNew(a, b *Array[T]) (*Array[T], error) {
	return o.gemmNew("MatMulNew", false, false, one[T](), a, b)
}

// GemmNew returns alpha·op(a)·op(b) for 2-D arrays, where op(x) is x, or
// xᵀ when its flag is set: a new array of op(a)'s rows and op(b)'s
// columns, for float32 and float64.
func (o Ops[T]) GemmNew(transA, transB bool, alpha T, a, b *Array[T]) (*Array[T], error) {
	return o.gemmNew("GemmNew", transA, transB, alpha, a, b)
}

func (o Ops[T]) gemmNew(op string, transA, transB bool, alpha T, a, b *Array[T]) (*Array[T], error) {
	if err := floatDType[T](op); err != nil {
		return nil, err
	}
	if err := o.precheck(op, "a,b", a, b); err != nil {
		return nil, err
	}
	ar, ac, err := matShape(op, "a", a)
	if err != nil {
		return nil, err
	}
	br, bc, err := matShape(op, "b", b)
	if err != nil {
		return nil, err
	}
	if transA {
		ar, ac = ac, ar
	}
	if transB {
		br, bc = bc, br
	}
	if ac != br {
		return nil, fmt.Errorf("cuarray: %s: %s, %s: inner dimensions %d and %d differ: %w",
			op, described("a", a, transA), described("b", b, transB), ac, br, ErrShape)
	}
	return o.fresh(op, a, []int{ar, bc}, func(c *Array[T]) error {
		return o.gemm(op, transA, transB, alpha, a, b, zero[T](), c)
	})
}

func (o Ops[T]) binaryNew(op string, k binaryKernels[T], a, b *Array[T]) (*Array[T], error) {
	if err := o.precheck(op, "a,b", a, b); err != nil {
		return nil, err
	}
	shape := a.shape()
	if !slices.Equal(shape, b.shape()) {
		var err error
		if shape, err = broadcastOperands(op, a, b); err != nil {
			return nil, err
		}
	}
	return o.fresh(op, a, shape, func(dst *Array[T]) error { return o.binary(op, k, dst, a, b) })
}

func (o Ops[T]) scalarNew(op string, k scalarKernel[T], a *Array[T], v T) (*Array[T], error) {
	if err := o.precheck(op, "a", a); err != nil {
		return nil, err
	}
	return o.fresh(op, a, a.shape(), func(dst *Array[T]) error { return o.scalar(op, k, dst, a, v) })
}

func (o Ops[T]) unaryNew(op string, k unaryKernel, x *Array[T]) (*Array[T], error) {
	if err := o.precheck(op, "x", x); err != nil {
		return nil, err
	}
	return o.fresh(op, x, x.shape(), func(dst *Array[T]) error { return o.unary(op, k, dst, x) })
}

// precheck makes the checks an operation's do makes on its operands (nil,
// freed, one device, o's stream on it) before an allocating form makes its
// result, so that errors name the caller's arrays and nothing is
// allocated for an operation that cannot run.
func (o Ops[T]) precheck(op, names string, arrs ...*Array[T]) error {
	for i, a := range arrs {
		if err := a.check(op, role(names, i)); err != nil {
			return err
		}
	}
	dev := arrs[0].origin.dev
	for i, a := range arrs[1:] {
		if a.origin.dev != dev {
			return fmt.Errorf("cuarray: %s: %s is on device %d, %s on device %d; copy one first: %w",
				op, role(names, 0), dev.Ordinal(), role(names, i+1), a.origin.dev.Ordinal(), ErrDevice)
		}
	}
	_, err := o.streamFor(op, dev)
	return err
}

// fresh makes an allocating form's result, of shape, and has run fill it;
// if run fails the result is freed at once. The result comes from o's
// stream and its pool, or, for the zero Ops, from like's device, pool and
// memory kind, on that device's default stream.
func (o Ops[T]) fresh(op string, like *Array[T], shape []int, run func(dst *Array[T]) error) (*Array[T], error) {
	s := o.s
	if s == nil {
		var err error
		if s, err = defaultStreamLike(like.origin); err != nil {
			return nil, fmt.Errorf("cuarray: %s: %w", op, err)
		}
	}
	dst, err := newArray[T](op, s, shape)
	if err != nil {
		return nil, err
	}
	if err := run(dst); err != nil {
		dst.UnsafeFree()
		return nil, err
	}
	return dst, nil
}

// defaultStreamLike is the default stream of h's device with h's pool and
// kind: device 0's default stream itself for arrays made on it (no
// allocation), else a handle on the device's default backend stream.
func defaultStreamLike(h *home) (*Stream, error) {
	if s := defaults.stream0.Load(); s != nil && s.home == h {
		return s, nil
	}
	l, err := defaultLife(h.dev)
	if err != nil {
		return nil, err
	}
	return &Stream{home: h, bs: l.bs, life: l}, nil
}
