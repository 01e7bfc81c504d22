package cuarray

import (
	"fmt"
	"slices"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/kernels"
)

// Broadcasting in the table's operations of two and three inputs (Pow,
// Minimum, the comparisons, the logical ones, Where): their inputs
// broadcast to each other by NumPy's rule (BroadcastShapes) and dst has
// the shape they broadcast to. An input is read one of three ways:
//
//   - as it is, when it has the result's shape and is contiguous;
//   - as a scalar, when every element of the result reads its one element
//     (a 0-d or one-element array, or a broadcast view of one): the
//     kernels read that element on the GPU (kernels.WithScalars), so
//     where(x > 0, x, 0) reads x once per kernel and nothing else of size;
//   - otherwise (a row or column vector, a strided view) packed into a
//     contiguous temporary of the result's shape, freed once the work is
//     queued.

// plainInputs reports whether the inputs have one shape and are contiguous:
// the operation runs as it did before broadcasting, errors included.
func plainInputs(in ...operand) bool {
	for _, a := range in {
		if a.isNil() || !a.contiguous() || !slices.Equal(a.shapeOf(), in[0].shapeOf()) {
			return false
		}
	}
	return true
}

// broadcastPlan checks op's inputs (named by names, without dst) and dst
// (nil for none) and returns the shape the inputs broadcast to and its
// element count; a dst must have that shape.
func broadcastPlan(op, names string, dst operand, in []operand) ([]int, int, error) {
	shapes := make([][]int, len(in))
	for i, a := range in {
		if err := a.check(op, role(names, i)); err != nil {
			return nil, 0, err
		}
		shapes[i] = a.shapeOf()
	}
	out, x, y, why := broadcastShapes(shapes)
	if why != "" {
		return nil, 0, fmt.Errorf("cuarray: %s: %s %s and %s %s do not broadcast: %s: %w",
			op, role(names, x), in[x], role(names, max(y, 0)), in[max(y, 0)], why, ErrShape)
	}
	if dst != nil {
		if err := dst.check(op, "dst"); err != nil {
			return nil, 0, err
		}
		if !slices.Equal(dst.shapeOf(), out) {
			return nil, 0, fmt.Errorf("cuarray: %s: dst %s does not have the shape %s that %s broadcast to; dst must have exactly that shape: %w",
				op, dst, fmtShape(out), listOperands(names, in), ErrShape)
		}
	}
	count := 1
	for _, d := range out {
		count *= d
	}
	return out, count, nil
}

// listOperands names the inputs for messages: "a float32[3 1] and b float32[4]".
func listOperands(names string, in []operand) string {
	s := ""
	for i, a := range in {
		switch {
		case i == 0:
		case i == len(in)-1:
			s += " and "
		default:
			s += ", "
		}
		s += role(names, i) + " " + a.String()
	}
	return s
}

// broadcastInput makes input a of an operation whose result has shape out
// (which a's shape broadcasts to) and count elements readable by the
// kernels: a itself (contiguous, of shape out, or count 0), a one-element
// contiguous view of its element 0 when every element of the result reads
// that element (scalar), or a contiguous copy of a broadcast to out, made
// on s. release frees what it made; it is never nil.
func broadcastInput[E Elem](s *Stream, op, role string, a *Array[E], out []int, count int) (p *Array[E], scalar bool, release func(), err error) {
	none := func() {}
	if count == 0 || a.contiguous() && a.n == count && count > 1 {
		// A contiguous input of as many elements as the result differs from
		// it only by dimensions of 1: the same elements in the same order.
		return a, false, none, nil
	}
	single := true
	for _, st := range stridesTo(a, out) {
		single = single && st == 0
	}
	if single {
		if a.contiguous() && a.n == 1 {
			return a, true, none, nil
		}
		v := a.view(0, []int{1}, []int{1})
		return v, true, v.UnsafeFree, nil
	}
	o := Ops[E]{s: s}
	c, err := o.fresh(op, a, out, func(d *Array[E]) error {
		bv, err := a.BroadcastTo(out...)
		if err != nil {
			return err
		}
		defer bv.UnsafeFree()
		shape, ds, ss := d.shape(), d.strides(), bv.strides()
		return o.doRaw(op, "dst,"+role, true, func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr) error {
			return kernels.CopyStrided[E](dev, s, p[0], p[1], shape, ds, ss)
		}, d, bv)
	})
	if err != nil {
		return nil, false, none, fmt.Errorf("cuarray: %s: broadcasting %s %s to %s: %w", op, role, a, fmtShape(out), err)
	}
	return c, false, c.UnsafeFree, nil
}

// binaryBroadcast is binaryOp for inputs that broadcast (or are views).
func (o Ops[T]) binaryBroadcast(op string, k func(dev backend.Device, s backend.Stream, dst, a, b backend.Ptr, n int) error, dst, a, b *Array[T]) (*Array[T], error) {
	var d operand
	if dst != nil {
		d = dst
	}
	pa, pb, out, run, release, err := broadcastPair(o.s, op, k, d, a, b)
	defer release()
	if err != nil {
		return nil, err
	}
	return o.sameTypeOp(op, "dst,a,b", dst, []*Array[T]{pa, pb}, out, func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr, n int) error {
		return run(dev, s, p[0], p[1], p[2], n)
	})
}

// broadcastPair is the part binaryBroadcast and compareBroadcast share:
// the broadcast shape of a and b (and dst, when given), each input as the
// kernel reads it (release frees what it made, on every path), and the
// launch: k, or its scalar form when an input is one element.
func broadcastPair[T Elem](s *Stream, op string, k func(dev backend.Device, s backend.Stream, dst, a, b backend.Ptr, n int) error, d operand, a, b *Array[T]) (
	pa, pb *Array[T], out []int, run func(dev backend.Device, s backend.Stream, dst, a, b backend.Ptr, n int) error, release func(), err error) {
	release = func() {}
	out, count, err := broadcastPlan(op, "a,b", d, []operand{a, b})
	if err != nil {
		return nil, nil, nil, nil, release, err
	}
	pa, sa, ra, err := broadcastInput(s, op, "a", a, out, count)
	release = ra
	if err != nil {
		return nil, nil, nil, nil, release, err
	}
	pb, sb, rb, err := broadcastInput(s, op, "b", b, out, count)
	release = func() { ra(); rb() }
	if err != nil {
		return nil, nil, nil, nil, release, err
	}
	sc := scalarSet(sa, sb)
	run = func(dev backend.Device, s backend.Stream, dst, a, b backend.Ptr, n int) error {
		if sc == 0 {
			return k(dev, s, dst, a, b, n)
		}
		return kernels.WithScalars[T](op, dev, s, dst, []backend.Ptr{a, b}, sc, n)
	}
	return pa, pb, out, run, release, nil
}

// scalarSet is the kernels.Scalars of inputs by whether each is a scalar.
func scalarSet(scalar ...bool) kernels.Scalars {
	var sc kernels.Scalars
	for i, s := range scalar {
		if s {
			sc |= 1 << i
		}
	}
	return sc
}

// compareBroadcast is compareOp for inputs that broadcast (or are views).
func compareBroadcast[T Elem](o Ops[T], op string, k func(dev backend.Device, s backend.Stream, dst, a, b backend.Ptr, n int) error, dst *Array[bool], a, b *Array[T]) (*Array[bool], error) {
	var d operand
	if dst != nil {
		d = dst
	}
	pa, pb, out, run, release, err := broadcastPair(o.s, op, k, d, a, b)
	defer release()
	if err != nil {
		return nil, err
	}
	return mixedOp(o.s, op, "dst,a,b", dst, []operand{pa, pb}, out, func(dev backend.Device, s backend.Stream, p [4]backend.Ptr, n int) error {
		return run(dev, s, p[0], p[1], p[2], n)
	})
}

// whereBroadcast is whereOp for inputs that broadcast (or are views).
func (o Ops[T]) whereBroadcast(op string, k func(dev backend.Device, s backend.Stream, dst, cond, a, b backend.Ptr, n int) error, dst *Array[T], cond *Array[bool], a, b *Array[T]) (*Array[T], error) {
	var d operand
	if dst != nil {
		d = dst
	}
	out, count, err := broadcastPlan(op, "cond,a,b", d, []operand{cond, a, b})
	if err != nil {
		return nil, err
	}
	pc, sc0, rc, err := broadcastInput(o.s, op, "cond", cond, out, count)
	defer rc()
	if err != nil {
		return nil, err
	}
	pa, sa, ra, err := broadcastInput(o.s, op, "a", a, out, count)
	defer ra()
	if err != nil {
		return nil, err
	}
	pb, sb, rb, err := broadcastInput(o.s, op, "b", b, out, count)
	defer rb()
	if err != nil {
		return nil, err
	}
	sc := scalarSet(sc0, sa, sb)
	return mixedOp(o.s, op, "dst,cond,a,b", dst, []operand{pc, pa, pb}, out, func(dev backend.Device, s backend.Stream, p [4]backend.Ptr, n int) error {
		if sc == 0 {
			return k(dev, s, p[0], p[1], p[2], p[3], n)
		}
		return kernels.WithScalars[T](op, dev, s, p[0], []backend.Ptr{p[1], p[2], p[3]}, sc, n)
	})
}
