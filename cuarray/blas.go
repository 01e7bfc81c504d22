package cuarray

import (
	"fmt"
	"unsafe"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/blas"
	"github.com/gocuda/gocuda/kernels"
)

// Matrix products through package blas: cuBLAS on a GPU, gonum on the host
// backend. Arrays are row-major and contiguous, so a 2-D array's leading
// dimension is its number of columns.

// Gemm sets dst = alpha·op(a)·op(b) + beta·dst for 2-D arrays, where op(x)
// is x, or xᵀ when its flag is set: op(a) is m × k, op(b) k × n and dst
// m × n. Only float32 and float64. With beta = 0, dst is written without
// being read. A nil dst makes the m × n result (beta is then ignored) on
// o's stream, as Add does. dst may not share memory with a or b.
func Gemm[T Elem](dst *Array[T], transA, transB bool, alpha T, a, b *Array[T], beta T) (*Array[T], error) {
	return Ops[T]{}.Gemm(dst, transA, transB, alpha, a, b, beta)
}

// MatMul sets dst = a·b for 2-D arrays: a is m × k, b k × n, dst m × n; a
// nil dst makes it (see Gemm).
func MatMul[T Elem](dst, a, b *Array[T]) (*Array[T], error) { return Ops[T]{}.MatMul(dst, a, b) }

// Gemv sets dst = alpha·op(a)·x + beta·dst for a 2-D array a and 1-D arrays
// x and dst, where op(a) is a, or aᵀ with trans. Only float32 and float64.
// A nil dst makes the result (beta is then ignored), as Gemm does. dst may
// not share memory with a or x.
func Gemv[T Elem](dst *Array[T], trans bool, alpha T, a, x *Array[T], beta T) (*Array[T], error) {
	return Ops[T]{}.Gemv(dst, trans, alpha, a, x, beta)
}

// Gemm is the package-level Gemm on o's stream.
func (o Ops[T]) Gemm(dst *Array[T], transA, transB bool, alpha T, a, b *Array[T], beta T) (*Array[T], error) {
	if dst == nil {
		return o.gemmNew("Gemm", transA, transB, alpha, a, b)
	}
	if err := o.gemm("Gemm", transA, transB, alpha, a, b, beta, dst); err != nil {
		return nil, err
	}
	return dst, nil
}

// MatMul is the package-level MatMul on o's stream.
func (o Ops[T]) MatMul(dst, a, b *Array[T]) (*Array[T], error) {
	if dst == nil {
		return o.gemmNew("MatMul", false, false, one[T](), a, b)
	}
	if err := o.gemm("MatMul", false, false, one[T](), a, b, zero[T](), dst); err != nil {
		return nil, err
	}
	return dst, nil
}

// gemmNew is Gemm into a new array: the shapes are checked before it is
// made.
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

// Gemv is the package-level Gemv on o's stream.
func (o Ops[T]) Gemv(dst *Array[T], trans bool, alpha T, a, x *Array[T], beta T) (*Array[T], error) {
	const op = "Gemv"
	if dst != nil {
		if err := o.gemv(trans, alpha, a, x, beta, dst); err != nil {
			return nil, err
		}
		return dst, nil
	}
	if err := floatDType[T](op); err != nil {
		return nil, err
	}
	if err := o.precheck(op, "a,x", a, x); err != nil {
		return nil, err
	}
	m, n, err := matShape(op, "a", a)
	if err != nil {
		return nil, err
	}
	rows := m
	if trans {
		rows = n
	}
	if _, _, err := gemvShapes(op, trans, a, x, nil); err != nil {
		return nil, err
	}
	return o.fresh(op, a, []int{rows}, func(y *Array[T]) error {
		return o.gemv(trans, alpha, a, x, zero[T](), y)
	})
}

func (o Ops[T]) gemv(trans bool, alpha T, a, x *Array[T], beta T, y *Array[T]) error {
	const op, names = "Gemv", "y,a,x"
	if isHalf[T]() {
		return gemvHalf(o, trans, alpha, a, x, beta, y)
	}
	if err := floatDType[T](op); err != nil {
		return err
	}
	for i, arr := range [...]*Array[T]{y, a, x} {
		if err := arr.check(op, role(names, i)); err != nil {
			return err
		}
	}
	m, n, err := gemvShapes(op, trans, a, x, y)
	if err != nil {
		return err
	}
	if err := noOverlap(op, names, y, a, x); err != nil {
		return err
	}
	if t, ok := untransposed(a); ok { // as in gemm
		defer t.UnsafeFree()
		a, trans, m, n = t, !trans, n, m
	}
	return o.do(op, names, true, func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr) error {
		if f32, ok := asF32(alpha, beta); ok {
			return blas.Gemv(dev, s, trans, m, n, f32[0], p[1], max(1, n), p[2], f32[1], p[0])
		}
		f64 := asF64(alpha, beta)
		return blas.Gemv(dev, s, trans, m, n, f64[0], p[1], max(1, n), p[2], f64[1], p[0])
	}, y, a, x)
}

func (o Ops[T]) gemm(op string, transA, transB bool, alpha T, a, b *Array[T], beta T, c *Array[T]) error {
	const names = "c,a,b"
	if isHalf[T]() {
		return gemmHalf(o, op, transA, transB, alpha, a, b, beta, c)
	}
	if err := floatDType[T](op); err != nil {
		return err
	}
	for i, arr := range [...]*Array[T]{c, a, b} {
		if err := arr.check(op, role(names, i)); err != nil {
			return err
		}
	}
	m, n, k, err := gemmShapes(op, transA, transB, a, b, c)
	if err != nil {
		return err
	}
	if err := noOverlap(op, names, c, a, b); err != nil {
		return err
	}
	// A transposed view of a contiguous matrix is that matrix with BLAS's
	// transpose flag flipped: no packing.
	if t, ok := untransposed(a); ok {
		defer t.UnsafeFree()
		a, transA = t, !transA
	}
	if t, ok := untransposed(b); ok {
		defer t.UnsafeFree()
		b, transB = t, !transB
	}
	// Stored column counts are the leading dimensions; an empty matrix
	// still needs one of at least 1.
	lda, ldb, ldc := max(1, a.shape()[1]), max(1, b.shape()[1]), max(1, n)
	return o.do(op, names, true, func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr) error {
		if f32, ok := asF32(alpha, beta); ok {
			return blas.Gemm(dev, s, transA, transB, m, n, k, f32[0], p[1], lda, p[2], ldb, f32[1], p[0], ldc)
		}
		f64 := asF64(alpha, beta)
		return blas.Gemm(dev, s, transA, transB, m, n, k, f64[0], p[1], lda, p[2], ldb, f64[1], p[0], ldc)
	}, c, a, b)
}

// floatDType rejects the element types other than float32 and float64,
// which BLAS and the random generators take (float16 and bfloat16 go
// their own way before it: half_ops.go).
func floatDType[T Elem](op string) error {
	switch kernels.DTypeOf[T]() {
	case kernels.Float32, kernels.Float64:
		return nil
	}
	return fmt.Errorf("cuarray: %s does not take %s; it takes float32, float64, float16, bfloat16: %w", op, kernels.DTypeOf[T](), kernels.ErrUnsupportedDType)
}

// asF32 reinterprets two T as float32 when T is float32. Reading through
// a pointer, rather than converting to an interface and back, keeps the
// call free of allocations.
func asF32[T Elem](alpha, beta T) ([2]float32, bool) {
	if kernels.DTypeOf[T]() != kernels.Float32 {
		return [2]float32{}, false
	}
	return [2]float32{*(*float32)(unsafe.Pointer(&alpha)), *(*float32)(unsafe.Pointer(&beta))}, true
}

// asF64 is asF32 for float64; the caller has ruled every other type out.
func asF64[T Elem](alpha, beta T) [2]float64 {
	return [2]float64{*(*float64)(unsafe.Pointer(&alpha)), *(*float64)(unsafe.Pointer(&beta))}
}

// matShape is a 2-D array's shape, or an error saying it is not 2-D.
func matShape[T Elem](op, name string, a *Array[T]) (rows, cols int, err error) {
	sh := a.shape()
	if len(sh) != 2 {
		return 0, 0, fmt.Errorf("cuarray: %s: %s is %s: it must be a 2-D matrix; use Reshape: %w", op, name, fmtShape(sh), ErrShape)
	}
	return sh[0], sh[1], nil
}

// described is "a is [3 4]", with how it is used when transposed.
func described[T Elem](name string, a *Array[T], trans bool) string {
	sh := a.shape()
	if trans && len(sh) == 2 {
		return fmt.Sprintf("%s is %s (transposed: %s)", name, fmtShape(sh), fmtShape([]int{sh[1], sh[0]}))
	}
	return fmt.Sprintf("%s is %s", name, fmtShape(sh))
}

func gemmShapes[T Elem](op string, transA, transB bool, a, b, c *Array[T]) (m, n, k int, err error) {
	if m, n, k, err = productDims(op, transA, transB, a, b); err != nil {
		return 0, 0, 0, err
	}
	cr, cc, err := matShape(op, "c", c)
	if err != nil {
		return 0, 0, 0, err
	}
	if cr != m || cc != n {
		return 0, 0, 0, fmt.Errorf("cuarray: %s: %s, %s: the product is %s, but c is %s: %w",
			op, described("a", a, transA), described("b", b, transB), fmtShape([]int{m, n}), fmtShape([]int{cr, cc}), ErrShape)
	}
	return m, n, k, nil
}

// productDims is op(a)·op(b)'s m × k · k × n, for 2-D a and b of any
// element types (GemmEx's operands and result differ).
func productDims[A, B Elem](op string, transA, transB bool, a *Array[A], b *Array[B]) (m, n, k int, err error) {
	ar, ac, err := matShape(op, "a", a)
	if err != nil {
		return 0, 0, 0, err
	}
	br, bc, err := matShape(op, "b", b)
	if err != nil {
		return 0, 0, 0, err
	}
	m, k = ar, ac
	if transA {
		m, k = ac, ar
	}
	kb, n := br, bc
	if transB {
		kb, n = bc, br
	}
	if k != kb {
		return 0, 0, 0, fmt.Errorf("cuarray: %s: %s, %s: inner dimensions %d and %d differ: %w",
			op, described("a", a, transA), described("b", b, transB), k, kb, ErrShape)
	}
	return m, n, k, nil
}

func gemvShapes[T Elem](op string, trans bool, a, x, y *Array[T]) (m, n int, err error) {
	if m, n, err = matShape(op, "a", a); err != nil {
		return 0, 0, err
	}
	for _, v := range [...]struct {
		name string
		arr  *Array[T]
	}{{"x", x}, {"y", y}} {
		if v.arr != nil && v.arr.Ndim() != 1 {
			return 0, 0, fmt.Errorf("cuarray: %s: %s is %s: it must be a 1-D vector; use Reshape: %w", op, v.name, fmtShape(v.arr.shape()), ErrShape)
		}
	}
	rows, inner := m, n
	if trans {
		rows, inner = n, m
	}
	if x.n != inner {
		return 0, 0, fmt.Errorf("cuarray: %s: %s, x is %s: inner dimensions %d and %d differ: %w",
			op, described("a", a, trans), fmtShape(x.shape()), inner, x.n, ErrShape)
	}
	if y != nil && y.n != rows { // nil: Gemv makes y
		return 0, 0, fmt.Errorf("cuarray: %s: %s, x is %s: the product is %s, but y is %s: %w",
			op, described("a", a, trans), fmtShape(x.shape()), fmtShape([]int{rows}), fmtShape(y.shape()), ErrShape)
	}
	return m, n, nil
}

// untransposed returns the contiguous matrix a 2-D view is the transpose of
// (a new reference to the same buffer), when it is one.
func untransposed[T Elem](a *Array[T]) (*Array[T], bool) {
	if a.contiguous() || a.ndim != 2 {
		return nil, false
	}
	r, c := a.dims[0], a.dims[1]
	if st := a.x.strides; st[0] != 1 || st[1] != r {
		return nil, false
	}
	t, _ := a.share(0, a.n, []int{c, r})
	return t, true
}

// noOverlap rejects a destination that shares any memory with an input:
// BLAS reads its inputs while it writes, so unlike elementwise kernels it
// cannot run in place.
func noOverlap[T Elem](op, names string, dst *Array[T], inputs ...*Array[T]) error {
	for i, a := range inputs {
		if overlapsBytes(dst, a) {
			return fmt.Errorf("cuarray: %s: %s %s shares memory with %s %s; the result may not overlap an input: write into another array: %w",
				op, role(names, 0), dst, role(names, i+1), a, ErrShape)
		}
	}
	return nil
}
