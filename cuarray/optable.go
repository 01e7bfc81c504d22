package cuarray

import (
	"fmt"
	"slices"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/kernels"
)

// The runtime of the operations generated from the table of elementwise
// operations (ops_gen.go; kernels/internal/optable): one shape for all of
// them, Op(dst, operands...) (*Array, error), where a nil dst makes the
// result on o's stream (or, for the zero Ops, on the default stream of the
// operands' device, from their pool and memory kind) and a dst is written
// and returned. Unary operands and dst have one shape; the inputs of two
// and three operands broadcast (broadcast_ops.go).
//
// Comparisons, Where and Convert mix element types (bool results and
// conditions, a conversion's two types), which do cannot (its arrays are
// all *Array[T]): they go through borrow, WithPointers' core, which locks
// and orders arrays of any types.

// unaryOp runs a same-type operation of one operand.
func (o Ops[T]) unaryOp(op string, k func(dev backend.Device, s backend.Stream, dst, x backend.Ptr, n int) error, dst, x *Array[T]) (*Array[T], error) {
	if dst != nil && x != nil && slices.Equal(dst.shape(), x.shape()) {
		// Into a dst of x's shape, as loops run: do's closure is the one
		// allocation, as sameTypeOp's slices and closures would add more;
		// precheck2 then do make the checks sameTypeOp would, in its order.
		if err := o.precheck2(op, "x", x, nil); err != nil {
			return nil, err
		}
		if err := o.do(op, "dst,x", true, func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr) error {
			return k(dev, s, p[0], p[1], dst.n)
		}, dst, x); err != nil {
			return nil, err
		}
		return dst, nil
	}
	return o.sameTypeOp(op, "dst,x", dst, []*Array[T]{x}, nil, func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr, n int) error {
		return k(dev, s, p[0], p[1], n)
	})
}

// precheck2 is precheck of one or two operands (b nil: one) without its
// variadic slice, which escapes: an allocation on every call.
func (o Ops[T]) precheck2(op, names string, a, b *Array[T]) error {
	if a == nil || a.freed.Load() {
		return a.check(op, role(names, 0))
	}
	dev := a.origin.dev
	if b != nil {
		if b.freed.Load() {
			return b.check(op, role(names, 1))
		}
		if b.origin.dev != dev {
			return fmt.Errorf("cuarray: %s: %s is on device %d, %s on device %d; copy one first: %w",
				op, role(names, 0), dev.Ordinal(), role(names, 1), b.origin.dev.Ordinal(), ErrDevice)
		}
	}
	_, err := o.streamFor(op, dev)
	return err
}

// binaryOp runs a same-type operation of two operands, which broadcast to
// each other (broadcast_ops.go).
func (o Ops[T]) binaryOp(op string, k func(dev backend.Device, s backend.Stream, dst, a, b backend.Ptr, n int) error, dst, a, b *Array[T]) (*Array[T], error) {
	if a == nil || b == nil || !plainInputs(a, b) {
		return o.binaryBroadcast(op, k, dst, a, b)
	}
	if dst != nil && slices.Equal(dst.shape(), a.shape()) {
		if err := o.precheck2(op, "a,b", a, b); err != nil { // as unaryOp
			return nil, err
		}
		if err := o.do(op, "dst,a,b", true, func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr) error {
			return k(dev, s, p[0], p[1], p[2], dst.n)
		}, dst, a, b); err != nil {
			return nil, err
		}
		return dst, nil
	}
	return o.sameTypeOp(op, "dst,a,b", dst, []*Array[T]{a, b}, nil, func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr, n int) error {
		return k(dev, s, p[0], p[1], p[2], n)
	})
}

// clampOp runs Clamp's shape: one operand and two scalars.
func (o Ops[T]) clampOp(op string, k func(dev backend.Device, s backend.Stream, dst, x backend.Ptr, lo, hi T, n int) error, dst, x *Array[T], lo, hi T) (*Array[T], error) {
	return o.sameTypeOp(op, "dst,x", dst, []*Array[T]{x}, nil, func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr, n int) error {
		return k(dev, s, p[0], p[1], lo, hi, n)
	})
}

// sameTypeOp runs an operation whose operands and dst are all of T. With
// shape nil they must have one shape; otherwise the caller has checked
// that dst (if any) has shape, the result's, and that the inputs are ready
// to read for it (broadcastInput).
func (o Ops[T]) sameTypeOp(op, names string, dst *Array[T], in []*Array[T], shape []int, run func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr, n int) error) (*Array[T], error) {
	if err := o.precheck(op, names[len("dst,"):], in...); err != nil {
		return nil, err
	}
	if shape == nil {
		if err := oneShape(op, names, dst, in); err != nil {
			return nil, err
		}
		shape = in[0].shape()
	}
	queue := func(dst *Array[T]) error {
		arrs := append([]*Array[T]{dst}, in...)
		return o.do(op, names, true, func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr) error {
			return run(dev, s, p, dst.n)
		}, arrs...)
	}
	if dst == nil {
		// The kernel on no elements checks what it can before anything
		// is allocated: the element type, the device and stream.
		if err := o.dryRun(op, in[0].origin.dev, func(dev backend.Device, s backend.Stream) error {
			return run(dev, s, [maxOperands]backend.Ptr{}, 0)
		}); err != nil {
			return nil, err
		}
		return o.fresh(op, in[0], shape, queue)
	}
	if err := queue(dst); err != nil {
		return nil, err
	}
	return dst, nil
}

// oneShape checks that the operands, and dst when it is not nil, have the
// first operand's shape.
func oneShape[T Elem](op, names string, dst *Array[T], in []*Array[T]) error {
	ops := make([]operand, 0, len(in)+1)
	if dst != nil {
		ops = append(ops, dst)
	} else {
		names = names[len("dst,"):]
	}
	for _, a := range in {
		ops = append(ops, a)
	}
	return shapesMatch(op, names, ops)
}

func shapesMatch(op, names string, ops []operand) error {
	for i, a := range ops[1:] {
		if !slices.Equal(a.shapeOf(), ops[0].shapeOf()) {
			return fmt.Errorf("cuarray: %s: %s %s and %s %s differ in shape; the operands and dst of %s need one shape (no broadcasting; Reshape or copy first): %w",
				op, role(names, 0), ops[0], role(names, i+1), a, op, ErrShape)
		}
	}
	return nil
}

// compareOp runs a comparison: bool results of two operands of T, which
// broadcast to each other.
func compareOp[T Elem](o Ops[T], op string, k func(dev backend.Device, s backend.Stream, dst, a, b backend.Ptr, n int) error, dst *Array[bool], a, b *Array[T]) (*Array[bool], error) {
	if a == nil || b == nil || !plainInputs(a, b) {
		return compareBroadcast(o, op, k, dst, a, b)
	}
	return mixedOp(o.s, op, "dst,a,b", dst, []operand{a, b}, nil, func(dev backend.Device, s backend.Stream, p [4]backend.Ptr, n int) error {
		return k(dev, s, p[0], p[1], p[2], n)
	})
}

// whereOp runs Where: a bool condition and two operands of T, the three
// broadcasting to each other.
func (o Ops[T]) whereOp(op string, k func(dev backend.Device, s backend.Stream, dst, cond, a, b backend.Ptr, n int) error, dst *Array[T], cond *Array[bool], a, b *Array[T]) (*Array[T], error) {
	if cond == nil || a == nil || b == nil || !plainInputs(cond, a, b) {
		return o.whereBroadcast(op, k, dst, cond, a, b)
	}
	return mixedOp(o.s, op, "dst,cond,a,b", dst, []operand{cond, a, b}, nil, func(dev backend.Device, s backend.Stream, p [4]backend.Ptr, n int) error {
		return k(dev, s, p[0], p[1], p[2], p[3], n)
	})
}

// Convert sets dst = x converted elementwise to U, on stream s (nil: the
// default stream of x's device), and returns dst; a nil dst makes the
// result, of x's shape, on s (or from x's device, pool and memory kind).
// dst must have x's shape. Every pair of element types converts: numbers
// as Go converts them, except float → integer, which truncates toward zero
// and saturates (NaN → 0; see kernels.Convert and docs/operations.md);
// anything → bool is x != 0; bool → a number is 0 or 1.
func Convert[U, T Elem](s *Stream, dst *Array[U], x *Array[T]) (*Array[U], error) {
	op := "Convert " + kernels.DTypeOf[T]().String() + " to " + kernels.DTypeOf[U]().String()
	return mixedOp(s, op, "dst,x", dst, []operand{x}, nil, func(dev backend.Device, bs backend.Stream, p [4]backend.Ptr, n int) error {
		return kernels.Convert[U, T](dev, bs, p[0], p[1], n)
	})
}

// mixedOp is sameTypeOp for operands of several element types: it checks
// them, makes dst if it is nil, and runs the kernel through borrow. With
// shape nil the operands and dst must have one shape; otherwise shape is
// the result's, which the caller has checked dst has, and the operands are
// ready to read for it (broadcastInput).
func mixedOp[U Elem](s *Stream, op, names string, dst *Array[U], in []operand, shape []int, run func(dev backend.Device, s backend.Stream, p [4]backend.Ptr, n int) error) (*Array[U], error) {
	for i, a := range in {
		if err := a.check(op, role(names, i+1)); err != nil {
			return nil, err
		}
	}
	ops := in
	if dst != nil {
		if err := dst.check(op, "dst"); err != nil {
			return nil, err
		}
		ops = append([]operand{dst}, in...)
	} else {
		names = names[len("dst,"):]
	}
	if shape == nil {
		if err := shapesMatch(op, names, ops); err != nil {
			return nil, err
		}
		shape = in[0].shapeOf()
	}
	dev := in[0].device()
	for i, a := range in[1:] {
		if d := a.device(); d != dev {
			return nil, fmt.Errorf("cuarray: %s: %s is on device %d, %s on device %d; copy one first: %w",
				op, role(names, len(ops)-len(in)), dev.Ordinal(), role(names, len(ops)-len(in)+i+1), d.Ordinal(), ErrDevice)
		}
	}
	if dst != nil {
		if dst.origin.dev != dev {
			return nil, fmt.Errorf("cuarray: %s: dst is on device %d, the operands on device %d; copy one first: %w",
				op, dst.origin.dev.Ordinal(), dev.Ordinal(), ErrDevice)
		}
		if err := overlapping(op, names, ops); err != nil {
			return nil, err
		}
	}
	if _, err := (Ops[U]{s: s}).streamFor(op, dev); err != nil {
		return nil, err
	}
	count := 1
	for _, d := range shape {
		count *= d
	}
	queue := func(d *Array[U]) error {
		args := make([]Arg, 0, 4)
		args = append(args, Out(d))
		for _, a := range in {
			args = append(args, Arg{op: a, acc: Read})
		}
		return borrow(op, s, func(bs backend.Stream, p []backend.Ptr) error {
			var q [4]backend.Ptr
			copy(q[:], p)
			return run(dev, bs, q, count)
		}, args)
	}
	if dst != nil {
		if err := queue(dst); err != nil {
			return nil, err
		}
		return dst, nil
	}
	if err := (Ops[U]{s: s}).dryRun(op, dev, func(dev backend.Device, bs backend.Stream) error {
		return run(dev, bs, [4]backend.Ptr{}, 0)
	}); err != nil {
		return nil, err
	}
	if s == nil {
		var err error
		if s, err = defaultStreamLike(in[0].home()); err != nil {
			return nil, fmt.Errorf("cuarray: %s: %w", op, err)
		}
	}
	d, err := newArray[U](op, s, shape)
	if err != nil {
		return nil, err
	}
	if err := queue(d); err != nil {
		d.UnsafeFree()
		return nil, err
	}
	return d, nil
}

// overlapping rejects a dst (ops[0]) that shares memory with an operand
// without being exactly its elements.
func overlapping(op, names string, ops []operand) error {
	d := ops[0]
	df, dt := d.byteSpan()
	for i, a := range ops[1:] {
		if a.buffer() != d.buffer() {
			continue
		}
		af, at := a.byteSpan()
		if af == at || df == dt || (af == df && at == dt) {
			continue
		}
		if af < dt && df < at {
			return fmt.Errorf("cuarray: %s: %s %s and %s %s overlap in memory without being the same elements; use a copy or the same array: %w",
				op, role(names, 0), d, role(names, i+1), a, ErrShape)
		}
	}
	return nil
}

// dryRun runs an operation's kernel on no elements, on the stream the
// operation would use: the kernels check the element type, device and
// stream and queue nothing.
func (o Ops[T]) dryRun(op string, dev backend.Device, run func(dev backend.Device, s backend.Stream) error) error {
	s, err := o.streamFor(op, dev)
	if err != nil {
		return err
	}
	if err := run(dev, s.bs); err != nil {
		return fmt.Errorf("cuarray: %w", err)
	}
	return nil
}
