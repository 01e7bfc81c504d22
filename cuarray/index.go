package cuarray

import (
	"errors"
	"fmt"
	"slices"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/kernels"
)

// Indexing with index arrays: Take gathers along an axis, Scatter and
// ScatterAdd write along one. Indices are an *Array[int64] of any shape on
// the arrays' device. A negative index counts from the end once (-1 is the
// last), as in NumPy.
//
// Out-of-range indices: the kernels never read or write outside the arrays
// whatever the indices hold (Take reads the nearest valid element instead,
// the scatters skip the element), and they record a bad index in a word of
// device memory, which the operation reads back: so these operations wait
// for their stream to reach them, as a reduction does, and return an error
// wrapping kernels.ErrIndex that names one bad index. Checking the indices
// on the host first would cost the same wait and a copy of the indices
// besides; not checking at all would turn a wrong index into a silently
// wrong result.

// Take returns x's elements at indices along axis, as NumPy's take(x,
// indices, axis): the result's shape is x's with the axis replaced by
// indices' shape, and result[i..., j..., k...] = x[i..., indices[j...],
// k...]. axis counts from the end when negative. dst (nil makes it) must
// have that shape and must not overlap x or indices. Every Elem type.
func (o Ops[T]) Take(dst, x *Array[T], indices *Array[int64], axis int) (*Array[T], error) {
	const op = "Take"
	l, out, err := o.indexLayout(op, "x", x, indices, axis)
	if err != nil {
		return nil, err
	}
	shape := slices.Concat(out[:l.ax], indices.shape(), out[l.ax+1:])
	if _, err := checkShape(shape); err != nil {
		return nil, fmt.Errorf("cuarray: %s along axis %d of x %s: the result %s: %w", op, axis, x, fmtShape(shape), err)
	}
	return o.into(op, dst, x, shape, func(d *Array[T]) error {
		return o.runIndex(op, kernels.Take[T], d, x, indices, axis, l.IndexLayout, "x")
	})
}

// Scatter sets dst's elements at indices along axis to src's, the inverse
// of Take: dst[i..., indices[j...], k...] = src[i..., j..., k...], where
// src has dst's shape with the axis replaced by indices' shape (Take's
// result shape). With an index repeated, one of its values remains: which
// one is not fixed on a GPU (the last, in index order, on the host
// backend). dst is updated in place and returned; it cannot be nil (the
// length of its axis is not in the arguments). dst must not overlap src or
// indices. An out-of-range index leaves its elements unwritten and is an
// error once the rest is written. Every Elem type.
func (o Ops[T]) Scatter(dst, src *Array[T], indices *Array[int64], axis int) (*Array[T], error) {
	return o.scatter("Scatter", kernels.Scatter[T], dst, src, indices, axis)
}

// ScatterAdd adds src's elements to dst's at indices along axis, as
// Scatter writes them: dst[i..., indices[j...], k...] += src[i..., j...,
// k...], every value added however often its index repeats (NumPy's
// add.at, PyTorch's index_add_). On a GPU the additions are atomic and
// their order is not fixed: float results may differ in the last bits from
// run to run; integer results (which wrap, as Go's) are exact whatever the
// order. The host backend adds in index order. Every Elem type.
func (o Ops[T]) ScatterAdd(dst, src *Array[T], indices *Array[int64], axis int) (*Array[T], error) {
	if isHalf[T]() {
		return scatterAddHalf(o, dst, src, indices, axis)
	}
	return o.scatter("ScatterAdd", kernels.ScatterAdd[T], dst, src, indices, axis)
}

func (o Ops[T]) scatter(op string, k indexKernel, dst, src *Array[T], indices *Array[int64], axis int) (*Array[T], error) {
	l, err := o.scatterLayout(op, dst, src, indices, axis)
	if err != nil {
		return nil, err
	}
	if src.origin.dev != dst.origin.dev {
		return nil, fmt.Errorf("cuarray: %s: dst is on device %d, src on device %d; copy one first: %w",
			op, dst.origin.dev.Ordinal(), src.origin.dev.Ordinal(), ErrDevice)
	}
	if err := o.runIndex(op, k, dst, src, indices, axis, l.IndexLayout, "src"); err != nil {
		return nil, err
	}
	return dst, nil
}

// scatterLayout checks a scatter's dst, indices, axis and src (src's shape
// is dst's with the axis replaced by the indices' shape) and returns the
// layout.
func (o Ops[T]) scatterLayout(op string, dst, src *Array[T], indices *Array[int64], axis int) (axisLayout, error) {
	if dst == nil {
		return axisLayout{}, fmt.Errorf("cuarray: %s: dst is nil; it is the array written into and must exist (make it with Zeros): %w", op, backend.ErrInvalidValue)
	}
	l, out, err := o.indexLayout(op, "dst", dst, indices, axis)
	if err != nil {
		return axisLayout{}, err
	}
	if err := src.check(op, "src"); err != nil {
		return axisLayout{}, err
	}
	if want := slices.Concat(out[:l.ax], indices.shape(), out[l.ax+1:]); !slices.Equal(src.shape(), want) {
		return axisLayout{}, fmt.Errorf("cuarray: %s along axis %d: src %s must have dst %s's shape with the axis replaced by indices %s's, %s: %w",
			op, axis, src, dst, indices, fmtShape(want), ErrShape)
	}
	return l, nil
}

type indexKernel func(dev backend.Device, s backend.Stream, dst, src, idx backend.Ptr, l kernels.IndexLayout, checked bool) error

// axisLayout is an index operation's kernels.IndexLayout and its axis in
// [0, ndim).
type axisLayout struct {
	kernels.IndexLayout
	ax int
}

// indexLayout checks the indexed array a (x for Take, dst for the
// scatters), the indices and the axis, and returns the layout and a's
// shape.
func (o Ops[T]) indexLayout(op, name string, a *Array[T], indices *Array[int64], axis int) (axisLayout, []int, error) {
	var l axisLayout
	if err := a.check(op, name); err != nil {
		return l, nil, err
	}
	if err := indices.check(op, "indices"); err != nil {
		return l, nil, err
	}
	if indices.origin.dev != a.origin.dev {
		return l, nil, fmt.Errorf("cuarray: %s: %s is on device %d, indices on device %d; copy one first: %w",
			op, name, a.origin.dev.Ordinal(), indices.origin.dev.Ordinal(), ErrDevice)
	}
	shape := a.shape()
	ax, err := normAxis(op, axis, len(shape), name+" "+a.String())
	if err != nil {
		return l, nil, err
	}
	if _, err := o.streamFor(op, a.origin.dev); err != nil {
		return l, nil, err
	}
	l.ax = ax
	l.IndexLayout = kernels.IndexLayout{Outer: prod(shape[:ax]), Dim: shape[ax], Inner: prod(shape[ax+1:]), Indices: indices.n}
	return l, shape, nil
}

// runIndex queues an index kernel on dst, the other array (x or src, named
// name) and the indices, and reads back its range check.
func (o Ops[T]) runIndex(op string, k indexKernel, dst, other *Array[T], indices *Array[int64], axis int, l kernels.IndexLayout, name string) error {
	for _, g := range []struct {
		name string
		arg  Arg
	}{{name, In(other)}, {"indices", In(indices)}} {
		if g.arg.Overlaps(Out(dst)) {
			return fmt.Errorf("cuarray: %s: %s %s shares memory with dst %s; they must be apart: %w", op, g.name, g.arg.op, dst, ErrShape)
		}
	}
	return borrow(op, o.s, func(bs backend.Stream, p []backend.Ptr) error {
		err := k(bs.Device(), bs, p[0], p[1], p[2], l, true)
		if errors.Is(err, kernels.ErrIndex) {
			return fmt.Errorf("indices %s along axis %d of %s: %w", indices, axis, describeIndexed(op, dst, other), err)
		}
		return err
	}, []Arg{Out(dst), In(other), In(indices)})
}

// describeIndexed names the array the indices index: x for Take, dst for
// the scatters.
func describeIndexed[T Elem](op string, dst, other *Array[T]) string {
	if op == "Take" {
		return "x " + other.String()
	}
	return "dst " + dst.String()
}

// Take returns x's elements at indices along axis (see Ops.Take).
func Take[T Elem](dst, x *Array[T], indices *Array[int64], axis int) (*Array[T], error) {
	return Ops[T]{}.Take(dst, x, indices, axis)
}

// Scatter sets dst's elements at indices along axis to src's (see
// Ops.Scatter).
func Scatter[T Elem](dst, src *Array[T], indices *Array[int64], axis int) (*Array[T], error) {
	return Ops[T]{}.Scatter(dst, src, indices, axis)
}

// ScatterAdd adds src's elements to dst's at indices along axis (see
// Ops.ScatterAdd).
func ScatterAdd[T Elem](dst, src *Array[T], indices *Array[int64], axis int) (*Array[T], error) {
	return Ops[T]{}.ScatterAdd(dst, src, indices, axis)
}
