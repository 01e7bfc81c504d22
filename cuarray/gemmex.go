package cuarray

import (
	"fmt"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/blas"
	"github.com/gocuda/gocuda/half"
	"github.com/gocuda/gocuda/kernels"
)

// GemmEx sets dst = alpha·op(a)·op(b) + beta·dst for 2-D arrays of
// half.Float16 or half.BFloat16, on the tensor cores with float32
// products and sums, the result rounded once to dst's element type C: the
// inputs' own type or float32 (blas.GemmEx). op(x) is x, or xᵀ when its
// flag is set: op(a) is m × k, op(b) k × n and dst m × n. A nil dst
// allocates it (m × n, on s or, with a nil s, on a's device's default
// stream) and beta must then be 0; dst may not share memory with a or b.
// This is the mixed-precision product of training: bfloat16 operands, a
// float32 result (examples/train -bf16). For products of one type, Gemm
// and MatMul.
func GemmEx[C, T Elem](s *Stream, dst *Array[C], transA, transB bool, alpha float32, a, b *Array[T], beta float32) (*Array[C], error) {
	in, out := kernels.DTypeOf[T](), kernels.DTypeOf[C]()
	op := "GemmEx " + in.String() + " to " + out.String()
	if (in != kernels.Float16 && in != kernels.BFloat16) || (out != in && out != kernels.Float32) {
		return nil, fmt.Errorf("cuarray: %s: takes float16 or bfloat16 operands and writes their own type or float32; for float32 and float64 operands use Gemm: %w",
			op, kernels.ErrUnsupportedDType)
	}
	if err := a.check(op, "a"); err != nil {
		return nil, err
	}
	if err := b.check(op, "b"); err != nil {
		return nil, err
	}
	m, n, k, err := productDims(op, transA, transB, a, b)
	if err != nil {
		return nil, err
	}
	if a.device() != b.device() {
		return nil, fmt.Errorf("cuarray: %s: a is on device %d, b on device %d; copy one first: %w",
			op, a.device().Ordinal(), b.device().Ordinal(), ErrDevice)
	}
	if dst != nil {
		if err := dst.check(op, "dst"); err != nil {
			return nil, err
		}
		if sh := dst.shape(); len(sh) != 2 || sh[0] != m || sh[1] != n {
			return nil, fmt.Errorf("cuarray: %s: %s, %s: the product is %s, but dst is %s: %w",
				op, described("a", a, transA), described("b", b, transB), fmtShape([]int{m, n}), fmtShape(sh), ErrShape)
		}
		if dst.device() != a.device() {
			return nil, fmt.Errorf("cuarray: %s: dst is on device %d, the operands on device %d; copy one first: %w",
				op, dst.device().Ordinal(), a.device().Ordinal(), ErrDevice)
		}
		if !dst.contiguous() {
			return nil, fmt.Errorf("cuarray: %s: dst %s is a strided view: write into a contiguous array and Copy it into the view: %w", op, dst, ErrShape)
		}
		if overlapsBytes(dst, a) || overlapsBytes(dst, b) {
			return nil, fmt.Errorf("cuarray: %s: dst shares memory with an operand; the result may not overlap an input: %w", op, ErrShape)
		}
	} else if beta != 0 {
		return nil, fmt.Errorf("cuarray: %s: beta is %v with a nil dst: there is no dst to add; give dst, or beta 0: %w", op, beta, backend.ErrInvalidValue)
	}
	// A transposed view of a contiguous matrix is that matrix with BLAS's
	// transpose flag flipped; other views are packed.
	if a, transA, err = gemmOperand(a, transA); err != nil {
		return nil, err
	}
	defer a.UnsafeFree()
	if b, transB, err = gemmOperand(b, transB); err != nil {
		return nil, err
	}
	defer b.UnsafeFree()
	if s == nil {
		if s, err = defaultStreamLike(a.home()); err != nil {
			return nil, fmt.Errorf("cuarray: %s: %w", op, err)
		}
	}
	made := dst == nil
	if made {
		if dst, err = newArray[C](op, s, []int{m, n}); err != nil {
			return nil, err
		}
	}
	lda, ldb, ldc := max(1, a.shape()[1]), max(1, b.shape()[1]), max(1, n)
	acc := Write
	if beta != 0 {
		acc = ReadWrite
	}
	err = borrow(op, s, func(bs backend.Stream, p []backend.Ptr) error {
		return gemmEx(in, out, a.device(), bs, transA, transB, m, n, k, alpha, p[1], lda, p[2], ldb, beta, p[0], ldc)
	}, []Arg{{op: dst, acc: acc}, In(a), In(b)})
	if err != nil {
		if made {
			dst.UnsafeFree()
		}
		return nil, err
	}
	return dst, nil
}

// gemmOperand is a GemmEx operand as BLAS takes it: a new reference to a
// contiguous matrix and its transpose flag. The caller frees it (which
// frees a packed copy, and only drops a reference otherwise).
func gemmOperand[T Elem](a *Array[T], trans bool) (*Array[T], bool, error) {
	if a.contiguous() {
		t, err := a.share(0, a.n, a.shape())
		return t, trans, err
	}
	if t, ok := untransposed(a); ok {
		return t, !trans, nil
	}
	t, err := Contiguous(a)
	return t, trans, err
}

// overlapsBytes reports whether x and y, of any element types, share
// bytes of one buffer (their byte spans, views taken as covering element 0
// to their last); an empty array shares none.
func overlapsBytes(x, y operand) bool {
	if x.buffer() != y.buffer() {
		return false
	}
	xf, xt := x.byteSpan()
	yf, yt := y.byteSpan()
	return xf < xt && yf < yt && xf < yt && yf < xt
}

// gemmEx calls blas.GemmEx's instance for the element types in and out,
// which GemmEx has checked.
func gemmEx(in, out kernels.DType, dev backend.Device, s backend.Stream, transA, transB bool, m, n, k int,
	alpha float32, a backend.Ptr, lda int, b backend.Ptr, ldb int, beta float32, c backend.Ptr, ldc int) error {
	switch {
	case in == kernels.Float16 && out == kernels.Float16:
		return blas.GemmEx[half.Float16, half.Float16](dev, s, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	case in == kernels.Float16:
		return blas.GemmEx[half.Float16, float32](dev, s, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	case out == kernels.BFloat16:
		return blas.GemmEx[half.BFloat16, half.BFloat16](dev, s, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	default:
		return blas.GemmEx[half.BFloat16, float32](dev, s, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	}
}
