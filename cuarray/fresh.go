package cuarray

import (
	"fmt"
	"slices"
)

// A nil dst: every operation that takes a dst makes its result when dst is
// nil, after checking its operands, so that nothing is allocated for an
// operation that cannot run (precheck) and the result goes back at once
// if queuing the work fails (fresh). See the package documentation ("One
// form per operation") for where results live.

// binaryInto is Add's form for the four broadcasting operations: into dst,
// or into a new array of the broadcast shape when dst is nil.
func (o Ops[T]) binaryInto(op string, k binaryKernels[T], dst, a, b *Array[T]) (*Array[T], error) {
	if dst != nil {
		if err := o.binary(op, k, dst, a, b); err != nil {
			return nil, err
		}
		return dst, nil
	}
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

// precheck makes the checks an operation's do makes on its operands (nil,
// freed, one device, o's stream on it) before an operation makes its
// result for a nil dst, so that errors name the caller's arrays and nothing is
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

// fresh makes the result of an operation given a nil dst, of shape, and has run fill it;
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
