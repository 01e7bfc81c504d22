package kernels

import (
	"fmt"
	"math"
	"slices"

	"github.com/gocuda/gocuda/backend"
)

// AddStrided sets dst = a + b over the row-major shape of dst, reading a
// and b through strides: element (i0, …, ik) of dst is
//
//	a[i0·aStrides[0] + … + ik·aStrides[k]] + b[i0·bStrides[0] + … + ik·bStrides[k]]
//
// Strides are in elements and must not be negative. A stride of 0 repeats an
// operand along that dimension, which is how NumPy's broadcasting reaches
// the kernels: adding a row vector b of m elements to every row of an n × m
// matrix a is shape [n m], aStrides [m 1], bStrides [0 1]. Integers wrap as
// in Add; every Elem type.
//
// The shape is simplified before it runs (dimensions of 1 dropped,
// neighbours that are contiguous in both operands merged), so that
// broadcasting a row or a column, the common cases, take paths as fast as
// Add's, and any number of dimensions works. dst may be the same memory as
// an input only when that input's strides are dst's own (row-major,
// contiguous); otherwise dst must not overlap an input.
func AddStrided[T Elem](dev backend.Device, s backend.Stream, dst, a, b backend.Ptr, shape, aStrides, bStrides []int) error {
	return strided("AddStrided", kAdd, DTypeOf[T](), dev, s, dst, a, b, shape, aStrides, bStrides)
}

// SubStrided sets dst = a - b with AddStrided's layout.
func SubStrided[T Elem](dev backend.Device, s backend.Stream, dst, a, b backend.Ptr, shape, aStrides, bStrides []int) error {
	return strided("SubStrided", kSub, DTypeOf[T](), dev, s, dst, a, b, shape, aStrides, bStrides)
}

// MulStrided sets dst = a * b with AddStrided's layout.
func MulStrided[T Elem](dev backend.Device, s backend.Stream, dst, a, b backend.Ptr, shape, aStrides, bStrides []int) error {
	return strided("MulStrided", kMul, DTypeOf[T](), dev, s, dst, a, b, shape, aStrides, bStrides)
}

// DivStrided sets dst = a / b with AddStrided's layout and Div's arithmetic
// (an integer divided by zero is 0).
func DivStrided[T Elem](dev backend.Device, s backend.Stream, dst, a, b backend.Ptr, shape, aStrides, bStrides []int) error {
	return strided("DivStrided", kDiv, DTypeOf[T](), dev, s, dst, a, b, shape, aStrides, bStrides)
}

// stridedDims is the most dimensions one strided kernel launch takes; a
// layout with more that cannot be merged runs as several launches over its
// outer dimensions.
const stridedDims = 6

// Modes of the strided kernels (kernels.cu's STRIDED_* values).
const (
	stridedGeneral = 0 // any layout of up to stridedDims dimensions
	stridedRow     = 1 // [rows cols]: the small operand is one row, read at i % cols
	stridedCol     = 2 // [rows cols]: the small operand is one column, read at i / cols
	stridedSwap    = 4 // with stridedRow or stridedCol: the small operand is a, not b
)

// stridedLayout is a strided operation's layout after simplification: no
// dimension of 1, no two neighbours that could be one. n is the element
// count; with n == 0 the rest is empty.
type stridedLayout struct {
	n                int
	shape, sa, sb    []int
	extentA, extentB int // elements spanned by a and b: 1 + Σ (d-1)·stride
}

// planStrided checks a strided operation's shape and strides and
// simplifies them.
func planStrided(shape, sa, sb []int) (stridedLayout, error) {
	var l stridedLayout
	if len(sa) != len(shape) || len(sb) != len(shape) {
		return l, fmt.Errorf("shape %v has %d dimensions, aStrides %v %d, bStrides %v %d; each needs one stride a dimension: %w",
			shape, len(shape), sa, len(sa), sb, len(sb), backend.ErrInvalidValue)
	}
	n := 1
	for i, d := range shape {
		if d < 0 || sa[i] < 0 || sb[i] < 0 {
			return l, fmt.Errorf("shape %v, aStrides %v, bStrides %v: dimension %d is negative; dimensions and strides must be ≥ 0: %w",
				shape, sa, sb, i, backend.ErrInvalidValue)
		}
		if d != 0 && n > math.MaxInt/d {
			return l, fmt.Errorf("shape %v: the product of the dimensions overflows int: %w", shape, backend.ErrInvalidValue)
		}
		n *= d
	}
	l.n = n
	if n == 0 {
		return l, nil
	}
	// From the innermost dimension out: drop dimensions of 1, and fold a
	// dimension into the one inside it when both operands step over the
	// inner one exactly as the outer one's stride.
	ext := [2]int{1, 1}
	for i := len(shape) - 1; i >= 0; i-- {
		d := shape[i]
		if d == 1 {
			continue
		}
		for j, st := range [2]int{sa[i], sb[i]} {
			if st != 0 && (d-1) > (math.MaxInt-ext[j])/st {
				return l, fmt.Errorf("shape %v, aStrides %v, bStrides %v: the operands' extents overflow int: %w", shape, sa, sb, backend.ErrInvalidValue)
			}
			ext[j] += (d - 1) * st
		}
		if k := len(l.shape) - 1; k >= 0 && sa[i] == l.sa[k]*l.shape[k] && sb[i] == l.sb[k]*l.shape[k] {
			l.shape[k] *= d
			continue
		}
		l.shape = append(l.shape, d)
		l.sa = append(l.sa, sa[i])
		l.sb = append(l.sb, sb[i])
	}
	slices.Reverse(l.shape)
	slices.Reverse(l.sa)
	slices.Reverse(l.sb)
	l.extentA, l.extentB = ext[0], ext[1]
	return l, nil
}

// contiguous reports whether both operands are laid out as dst is, so the
// plain elementwise kernel runs it.
func (l *stridedLayout) contiguous() bool {
	return len(l.shape) == 0 || len(l.shape) == 1 && l.sa[0] == 1 && l.sb[0] == 1
}

// rowCol is the fast mode for a layout of one full operand and one row or
// column, and the number of columns; 0 when it is neither.
func (l *stridedLayout) rowCol() (mode, rows, cols int) {
	full := func(s []int, c int) bool { return s[0] == c && s[1] == 1 }
	switch len(l.shape) {
	case 1: // a single value against a vector: one row, broadcast along it
		switch {
		case l.sa[0] == 1 && l.sb[0] == 0:
			return stridedCol, 1, l.n
		case l.sa[0] == 0 && l.sb[0] == 1:
			return stridedCol | stridedSwap, 1, l.n
		}
	case 2:
		r, c := l.shape[0], l.shape[1]
		switch {
		case full(l.sa, c) && l.sb[0] == 0 && l.sb[1] == 1:
			return stridedRow, r, c
		case full(l.sa, c) && l.sb[0] == 1 && l.sb[1] == 0:
			return stridedCol, r, c
		case full(l.sb, c) && l.sa[0] == 0 && l.sa[1] == 1:
			return stridedRow | stridedSwap, r, c
		case full(l.sb, c) && l.sa[0] == 1 && l.sa[1] == 0:
			return stridedCol | stridedSwap, r, c
		}
	}
	return -1, 0, 0
}

func strided(op string, k kop, dt DType, dev backend.Device, s backend.Stream, dst, a, b backend.Ptr, shape, sa, sb []int) error {
	l, err := planStrided(shape, sa, sb)
	if err != nil {
		return opErrorf(op, dt, "%w", err)
	}
	t, err := prepare(op, kops[k].types, dt, dev, s, l.n, ptrArg{"dst", dst})
	if err != nil || l.n == 0 {
		return err
	}
	size := uint64(dt.Size())
	if err := t.checkSpan(ptrArg{"a", a}, uint64(l.extentA)*size); err != nil {
		return err
	}
	if err := t.checkSpan(ptrArg{"b", b}, uint64(l.extentB)*size); err != nil {
		return err
	}
	if l.contiguous() {
		// The plain kernel, under the plain kernel's name for the checker.
		if t.cu != nil {
			return t.launchW(k, 0, elementwiseGrid(l.n, dt, t.sms), wp(dst), wp(a), wp(b), uint64(l.n))
		}
		return t.enqueue(func() { hostBinary(k, dt, dst, a, b, l.n) })
	}
	if t.cu == nil {
		return t.enqueue(func() { hostStrided(k, dt, dst, a, b, &l) })
	}
	return t.gpuStrided(stridedKop(k), dst, a, b, &l)
}

// stridedKop is the strided family of a binary operation.
func stridedKop(k kop) kop { return k - kAdd + kAddStrided }

// gpuStrided launches the strided kernel: in the row or column mode when
// the layout is one, else in the general mode, once for each index of the
// dimensions beyond the kernel's stridedDims innermost.
func (t *target) gpuStrided(k kop, dst, a, b backend.Ptr, l *stridedLayout) error {
	var args [4 + 1 + 3*stridedDims]any
	size := backend.Ptr(t.dt.Size())
	if mode, rows, cols := l.rowCol(); mode >= 0 {
		args[0], args[1], args[2], args[3], args[4] = dptr(dst), dptr(a), dptr(b), int64(l.n), int32(mode)
		stridedInner{shape: []int{rows, cols}}.fill(args[5:])
		return t.launch(k, 0, elementwiseGrid(l.n, t.dt, t.sms), args[:]...)
	}
	return l.eachOuter(func(in stridedInner, off, oa, ob int) error {
		args[0], args[1], args[2] = dptr(dst+backend.Ptr(off)*size), dptr(a+backend.Ptr(oa)*size), dptr(b+backend.Ptr(ob)*size)
		args[3], args[4] = int64(in.n), int32(stridedGeneral)
		in.fill(args[5:])
		return t.launch(k, 0, in.grid(t.sms), args[:]...)
	})
}

// stridedInner is the part of a layout one strided launch takes: its
// stridedDims innermost dimensions (all of them for most layouts), the
// strides of a and b along them (nil for the row and column modes, which
// need only the shape) and their element count.
type stridedInner struct {
	shape, sa, sb []int
	n             int
}

// fill sets a strided launch's layout arguments: the shape and the two
// operands' strides, each right-aligned in stridedDims values (dimensions
// of 1, stride 0, in front).
func (in stridedInner) fill(args []any) {
	pad := stridedDims - len(in.shape)
	for i := range stridedDims {
		d, x, y := int64(1), int64(0), int64(0)
		if j := i - pad; j >= 0 {
			d = int64(in.shape[j])
			if in.sa != nil {
				x, y = int64(in.sa[j]), int64(in.sb[j])
			}
		}
		args[i], args[stridedDims+i], args[2*stridedDims+i] = d, x, y
	}
}

// grid is a launch over the inner elements: a thread each, up to a wave.
func (in stridedInner) grid(sms int) uint32 {
	return clampGrid((in.n+threads-1)/threads, sms*blocksPerSM)
}

// eachOuter calls launch once for each index of l's dimensions beyond the
// stridedDims innermost (once, for a layout of no more), with the inner
// layout and the element offsets of that index: off in a contiguous array
// of l's shape, oa through l.sa and ob through l.sb. The strided binary
// kernels and the strided copy both launch through it.
func (l *stridedLayout) eachOuter(launch func(in stridedInner, off, oa, ob int) error) error {
	nd := len(l.shape)
	outer := max(nd-stridedDims, 0)
	in := stridedInner{shape: l.shape[outer:], sa: l.sa[outer:], sb: l.sb[outer:], n: 1}
	for _, d := range in.shape {
		in.n *= d
	}
	// idx counts through the outer dimensions (none when nd ≤ stridedDims).
	idx := make([]int, outer)
	for off := 0; off < l.n; off += in.n {
		oa, ob := 0, 0
		for i, v := range idx {
			oa += v * l.sa[i]
			ob += v * l.sb[i]
		}
		if err := launch(in, off, oa, ob); err != nil {
			return err
		}
		for i := outer - 1; i >= 0; i-- {
			if idx[i]++; idx[i] < l.shape[i] {
				break
			}
			idx[i] = 0
		}
	}
	return nil
}
