package cuarray

import (
	"fmt"
	"slices"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/kernels"
)

// BroadcastShapes returns the shape that arrays of the given shapes
// broadcast to, by NumPy's rule: align the shapes at their last dimension
// (a shorter shape is taken to have leading dimensions of 1); in each
// position the dimensions must be equal or one of them 1, and the result
// has the larger. [4 3] and [3] give [4 3]; [4 1] and [1 5] give [4 5];
// [2 3] and [3 2] do not broadcast, and neither do [4 3] and [4]. A
// dimension of 0 broadcasts only with 0 and 1, and gives 0.
//
// Shapes that do not broadcast, or a negative dimension, are an error
// wrapping ErrShape that names the two shapes and the dimension. No shapes
// give an empty (zero-dimensional) shape.
func BroadcastShapes(shapes ...[]int) ([]int, error) {
	out, x, y, why := broadcastShapes(shapes)
	switch {
	case why == "":
		return out, nil
	case y < 0:
		return nil, fmt.Errorf("shape %s: %s: %w", fmtShape(shapes[x]), why, ErrShape)
	}
	return nil, fmt.Errorf("shapes %s and %s do not broadcast: %s: %w", fmtShape(shapes[x]), fmtShape(shapes[y]), why, ErrShape)
}

// broadcastRule is what BroadcastShapes accepts, for messages.
const broadcastRule = "aligned at their last dimensions, each pair of dimensions must be equal or one of them 1"

// broadcastShapes is BroadcastShapes, with a failure as why, the shapes at
// fault (x, and y for a pair; -1 when one shape is wrong alone) and no error
// value, so that operations can word their own messages.
func broadcastShapes(shapes [][]int) (out []int, x, y int, why string) {
	nd := 0
	for j, s := range shapes {
		for i, d := range s {
			if d < 0 {
				return nil, j, -1, fmt.Sprintf("dimension %d is %d; dimensions must be ≥ 0", i, d)
			}
		}
		nd = max(nd, len(s))
	}
	out = make([]int, nd)
	from := make([]int, nd) // which shape set out[i]
	for i := range out {
		out[i] = 1
	}
	for j, s := range shapes {
		pad := nd - len(s)
		for i := len(s) - 1; i >= 0; i-- { // innermost first, as they align
			d := s[i]
			switch o := out[pad+i]; {
			case d == o || d == 1:
			case o == 1:
				out[pad+i], from[pad+i] = d, j
			default:
				return nil, from[pad+i], j, fmt.Sprintf("dimension %d of the result would be %d in one and %d in the other; %s",
					pad+i, o, d, broadcastRule)
			}
		}
	}
	return out, 0, 0, ""
}

// BroadcastStrides returns the strides, in elements, at which to read a
// row-major contiguous array of shape as if it had the larger shape out it
// broadcasts to: one stride for each dimension of out, 0 along the
// dimensions shape lacks or has as 1 (where every index reads the same
// elements), the array's own row-major strides elsewhere. Element (i0, …,
// ik) of the broadcast array is element Σ ij·strides[j] of the array. For
// shape [3] and out [4 3] they are [0 1]; for [4 1] and out [4 5], [1 0].
//
// These are the strides kernels.AddStrided and its siblings take. shape
// must broadcast to out (BroadcastShapes(shape, out) is out); otherwise the
// error wraps ErrShape.
func BroadcastStrides(shape, out []int) ([]int, error) {
	pad := len(out) - len(shape)
	if pad < 0 {
		return nil, fmt.Errorf("shape %s does not broadcast to %s: it has more dimensions: %w", fmtShape(shape), fmtShape(out), ErrShape)
	}
	strides := make([]int, len(out))
	acc := 1
	for i := len(shape) - 1; i >= 0; i-- {
		d := shape[i]
		switch {
		case d < 0:
			return nil, fmt.Errorf("shape %s: dimension %d is %d; dimensions must be ≥ 0: %w", fmtShape(shape), i, d, ErrShape)
		case d == 1:
			continue // stride 0: the one index repeats
		case d != out[pad+i]:
			return nil, fmt.Errorf("shape %s does not broadcast to %s: dimension %d of the result is %d, and %d is neither that nor 1: %w",
				fmtShape(shape), fmtShape(out), pad+i, out[pad+i], d, ErrShape)
		}
		strides[pad+i] = acc
		acc *= d
	}
	return strides, nil
}

// binaryKernels are a binary operation's kernel for operands of one shape
// and its strided twin for operands that broadcast.
type binaryKernels[T Elem] struct {
	plain   func(dev backend.Device, s backend.Stream, dst, a, b backend.Ptr, n int) error
	strided func(dev backend.Device, s backend.Stream, dst, a, b backend.Ptr, shape, aStrides, bStrides []int) error
}

func addKernels[T Elem]() binaryKernels[T] {
	return binaryKernels[T]{kernels.Add[T], kernels.AddStrided[T]}
}

func subKernels[T Elem]() binaryKernels[T] {
	return binaryKernels[T]{kernels.Sub[T], kernels.SubStrided[T]}
}

func mulKernels[T Elem]() binaryKernels[T] {
	return binaryKernels[T]{kernels.Mul[T], kernels.MulStrided[T]}
}

func divKernels[T Elem]() binaryKernels[T] {
	return binaryKernels[T]{kernels.Div[T], kernels.DivStrided[T]}
}

// binary runs dst = a op b: with the plain kernel when a and b have one
// shape, else with the strided one over the shape they broadcast to. dst
// must have exactly the result's shape.
func (o Ops[T]) binary(op string, k binaryKernels[T], dst, a, b *Array[T]) error {
	for i, x := range [...]*Array[T]{dst, a, b} {
		if x == nil {
			return x.check(op, role("dst,a,b", i))
		}
	}
	if (!a.contiguous() || !b.contiguous()) && dst.contiguous() && !overlaps(dst, a) && !overlaps(dst, b) {
		// Strided views are read through their strides by the strided
		// kernel, broadcast or not: no packing.
		return o.binaryViews(op, k, dst, a, b)
	}
	if as := a.shape(); slices.Equal(as, b.shape()) {
		if !slices.Equal(dst.shape(), as) {
			return dstShapeError(op, dst, a, b, as)
		}
		return o.do(op, "dst,a,b", true, func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr) error {
			return k.plain(dev, s, p[0], p[1], p[2], dst.n)
		}, dst, a, b)
	}
	out, err := broadcastOperands(op, a, b)
	if err != nil {
		return err
	}
	if !slices.Equal(dst.shape(), out) {
		return dstShapeError(op, dst, a, b, out)
	}
	// Both broadcast to out: BroadcastShapes said so.
	sa, _ := BroadcastStrides(a.shape(), out)
	sb, _ := BroadcastStrides(b.shape(), out)
	return o.do(op, "dst,a,b", true, func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr) error {
		return k.strided(dev, s, p[0], p[1], p[2], out, sa, sb)
	}, dst, a, b)
}

// binaryViews is binary for a contiguous dst and operands of which some
// are strided views, none overlapping dst: one strided kernel over the
// result's shape, each operand read through its own strides (0 along the
// dimensions it is broadcast over).
func (o Ops[T]) binaryViews(op string, k binaryKernels[T], dst, a, b *Array[T]) error {
	out := a.shape()
	if !slices.Equal(out, b.shape()) {
		var err error
		if out, err = broadcastOperands(op, a, b); err != nil {
			return err
		}
	}
	if !slices.Equal(dst.shape(), out) {
		return dstShapeError(op, dst, a, b, out)
	}
	sa, sb := stridesTo(a, out), stridesTo(b, out)
	return o.doRaw(op, "dst,a,b", true, func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr) error {
		return k.strided(dev, s, p[0], p[1], p[2], out, sa, sb)
	}, dst, a, b)
}

// stridesTo is a's strides (views included) as an operand broadcast to the
// shape out, which its shape broadcasts to: 0 along the dimensions it lacks
// or has as 1.
func stridesTo[T Elem](a *Array[T], out []int) []int {
	sh, st := a.shape(), a.strides()
	pad := len(out) - len(sh)
	r := make([]int, len(out))
	for i, d := range sh {
		if d != 1 {
			r[pad+i] = st[i]
		}
	}
	return r
}

// broadcastOperands is the shape a and b broadcast to, or an error naming
// them.
func broadcastOperands[T Elem](op string, a, b *Array[T]) ([]int, error) {
	out, _, _, why := broadcastShapes([][]int{a.shape(), b.shape()})
	if why != "" {
		return nil, fmt.Errorf("cuarray: %s: a %s and b %s do not broadcast: %s (Reshape one to combine them element by element): %w",
			op, a, b, why, ErrShape)
	}
	return out, nil
}

func dstShapeError[T Elem](op string, dst, a, b *Array[T], want []int) error {
	return fmt.Errorf("cuarray: %s: dst %s does not have the shape %s of the result of a %s and b %s; dst must have exactly that shape (Reshape it, or use %sNew): %w",
		op, dst, fmtShape(want), a, b, op, ErrShape)
}
