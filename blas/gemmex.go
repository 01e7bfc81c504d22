package blas

import (
	"fmt"

	"github.com/gocuda/gocuda/backend"
)

// GemmEx queues C = alpha·op(A)·op(B) + beta·C on stream s of dev for
// 16-bit A and B of type T (half.Float16 or half.BFloat16) and C of type C:
// T itself or float32. Products and sums are float32 (cuBLAS's
// CUBLAS_COMPUTE_32F, on the tensor cores where the GPU has them), and the
// result is rounded to C's type once, at the end. Matrices are row-major
// and laid out as Gemm's; pointers must be 2-byte aligned for 16-bit
// elements, 4-byte for float32. A float16 product cannot write bfloat16
// nor the other way round (an error wrapping backend.ErrInvalidValue).
//
// bfloat16 needs a GPU of compute capability 8.0 or newer (an error
// wrapping backend.ErrNotSupported names the device otherwise); float16
// runs on the tensor cores from 7.0 and on cuBLAS's slower path below.
// On the host backend the product is computed in float32 from the exactly
// widened inputs and rounded to C's type (docs/half.md states the
// tolerance against float64).
func GemmEx[T Half, C HalfOut](dev backend.Device, s backend.Stream, transA, transB bool, m, n, k int,
	alpha float32, a backend.Ptr, lda int, b backend.Ptr, ldb int, beta float32, c backend.Ptr, ldc int) error {
	x := exArgs{gemmArgs: gemmArgs{
		in: dtypeOf[T](), out: dtypeOf[C](), transA: transA, transB: transB, m: m, n: n, k: k,
		alpha: float64(alpha), a: a, lda: lda, b: b, ldb: ldb, beta: float64(beta), c: c, ldc: ldc,
	}, batch: 1}
	return x.run(dev, s, "GemmEx", "cublasGemmEx")
}

// GemmStridedBatchedEx queues batch products of GemmEx's kind on stream s:
// for i from 0 to batch-1, C_i = alpha·op(A_i)·op(B_i) + beta·C_i, where
// A_i starts strideA elements after A_{i-1} (likewise B and C). A stride
// of 0 uses one matrix for every product (a broadcast); C's stride must
// keep the outputs apart: at least the elements one C spans. One call of
// cublasGemmStridedBatchedEx on a GPU.
func GemmStridedBatchedEx[T Half, C HalfOut](dev backend.Device, s backend.Stream, transA, transB bool, m, n, k int,
	alpha float32, a backend.Ptr, lda, strideA int, b backend.Ptr, ldb, strideB int,
	beta float32, c backend.Ptr, ldc, strideC int, batch int) error {
	x := exArgs{gemmArgs: gemmArgs{
		in: dtypeOf[T](), out: dtypeOf[C](), transA: transA, transB: transB, m: m, n: n, k: k,
		alpha: float64(alpha), a: a, lda: lda, b: b, ldb: ldb, beta: float64(beta), c: c, ldc: ldc,
	}, batch: batch, strided: true, strideA: strideA, strideB: strideB, strideC: strideC}
	return x.run(dev, s, "GemmStridedBatchedEx", "cublasGemmStridedBatchedEx")
}

// GemmStridedBatched is GemmStridedBatchedEx for float32 and float64:
// batch products of Gemm's kind in one call, the i-th operands stride
// elements after the (i-1)-th. float32 products honour the TF32 setting
// as Gemm does (SetTF32, GOCUDA_TF32).
func GemmStridedBatched[T Float](dev backend.Device, s backend.Stream, transA, transB bool, m, n, k int,
	alpha T, a backend.Ptr, lda, strideA int, b backend.Ptr, ldb, strideB int,
	beta T, c backend.Ptr, ldc, strideC int, batch int) error {
	dt := dtypeOf[T]()
	x := exArgs{gemmArgs: gemmArgs{
		f32: dt == f32, in: dt, out: dt, transA: transA, transB: transB, m: m, n: n, k: k,
		alpha: float64(alpha), a: a, lda: lda, b: b, ldb: ldb, beta: float64(beta), c: c, ldc: ldc,
	}, batch: batch, strided: true, strideA: strideA, strideB: strideB, strideC: strideC}
	return x.run(dev, s, "GemmStridedBatched", "cublasGemmStridedBatchedEx")
}

// exArgs is one GemmEx, or a strided batch of products.
type exArgs struct {
	gemmArgs
	batch                     int
	strided                   bool // cublasGemmStridedBatchedEx rather than cublasGemmEx
	strideA, strideB, strideC int  // in elements
}

// strides are A's, B's and C's, in matrices()'s order.
func (x *exArgs) strides() [3]int { return [3]int{x.strideA, x.strideB, x.strideC} }

// at is mt's i-th matrix of a batch, stride elements apart.
func (mt matrix) at(i, stride int) matrix {
	mt.p += backend.Ptr(uint64(i) * uint64(stride) * mt.dt.size())
	return mt
}

// span is the elements mt's batch of count matrices spans.
func (mt matrix) span(count, stride int) int {
	if count == 0 || mt.elems() == 0 {
		return 0
	}
	return (count-1)*stride + mt.elems()
}

func (x *exArgs) run(dev backend.Device, s backend.Stream, op, cublas string) error {
	t := target{op: op, in: x.in, out: x.out, cublas: cublas}
	if err := x.check(&t); err != nil {
		return err
	}
	if err := t.resolve(dev, s); err != nil {
		return err
	}
	compute := computeF64
	if t.cu != nil {
		in := t.d.Info()
		var err error
		if compute, err = computeFor(x.in, in.Major, in.Minor, TF32()); err != nil {
			return t.errorf("device %d (%s): %w", t.d.Ordinal(), in.Name, err)
		}
	}
	if x.batch == 0 || x.m == 0 || x.n == 0 {
		return nil
	}
	if x.k == 0 {
		if done, err := x.scale(&t); done || err != nil {
			return err
		}
	}
	if t.cu != nil {
		return cudaGemmEx(&t, x, compute)
	}
	return hostGemmEx(&t, x)
}

// scale does what a product with no terms does, C = beta·C, where it can
// without the library, and reports whether it did: every float32 and
// float64 C (kernels), and a 16-bit C for beta 1 (nothing) and beta 0
// (zero bits: memset, so NaN in C does not survive). Other betas on a
// 16-bit C are the library's (cuBLAS with k = 0, the host's own loop).
func (x *exArgs) scale(t *target) (bool, error) {
	c := x.matrices()[2]
	for i := range x.batch {
		ci := c.at(i, x.strideC)
		switch {
		case x.out == f32 || x.out == f64:
			if err := scaleRows(t, ci.p, ci.rows, ci.cols, ci.ld, x.beta); err != nil {
				return true, err
			}
		case x.beta == 1:
			return true, nil
		case x.beta == 0:
			if err := zeroRows(t, ci); err != nil {
				return true, err
			}
		default:
			return false, nil
		}
	}
	return true, nil
}

// zeroRows sets mt's elements to zero bits, row by row (the padding
// between rows is left alone), in one memset when the rows are adjacent.
func zeroRows(t *target, mt matrix) error {
	rows, cols := mt.rows, mt.cols
	if mt.ld == cols {
		cols, rows = rows*cols, 1
	}
	size := mt.dt.size()
	for r := range rows {
		q := mt.p + backend.Ptr(uint64(r)*uint64(mt.ld)*size)
		if err := t.d.Memset8(q, 0, uint64(cols)*size, t.s); err != nil {
			return fmt.Errorf("blas: %s: zeroing C for beta 0: %w", t.op, err)
		}
	}
	return nil
}

func (x *exArgs) check(t *target) error {
	if x.in == f16 && x.out == bf16 || x.in == bf16 && x.out == f16 {
		return t.errorf("%s inputs give %s or float32; mixed 16-bit types are not supported: %w", x.in, x.in, errInvalid)
	}
	if x.batch < 0 || x.batch > maxDim {
		return t.errorf("batch = %d: the count must be between 0 and %d: %w", x.batch, maxDim, errInvalid)
	}
	if err := x.gemmArgs.checkShapes(t); err != nil {
		return err
	}
	mats := x.matrices()
	strides := x.strides()
	for i, mt := range mats {
		st := strides[i]
		if st < 0 {
			return t.errorf("stride%s = %d: strides must be 0 or more (0 uses one %s for every product): %w", mt.name, st, mt.name, errInvalid)
		}
		if x.batch < 2 {
			continue
		}
		// In uint64, which holds maxBytes on every platform; checkMatrix
		// has kept one matrix's elements under the limit.
		limit := maxBytes / mt.dt.size()
		if uint64(st) > (limit-uint64(mt.elems()))/uint64(x.batch-1) {
			return t.errorf("%s's batch of %d, %d elements apart, spans more than any device holds: %w", mt.name, x.batch, st, errInvalid)
		}
	}
	if c := mats[2]; x.batch > 1 && x.strideC < c.elems() {
		return t.errorf("strideC = %d: the %d outputs would overlap; C spans %d elements (%d × %d, ldc = %d), so strideC must be at least that: %w",
			x.strideC, x.batch, c.elems(), c.rows, c.cols, c.ld, errInvalid)
	}
	if x.batch == 0 {
		return nil
	}
	return x.gemmArgs.checkPointers(t)
}

// errNoBF16 is why a GPU before compute capability 8.0 is refused bfloat16.
var errNoBF16 = fmt.Errorf("bfloat16 products need compute capability 8.0 or newer (Ampere, Hopper), where cuBLAS has bfloat16 tensor cores: %w", backend.ErrNotSupported)

// computeFor is the cublasComputeType_t of a product of in on a GPU of
// compute capability major.minor, with TF32 allowed or not; an error
// wrapping backend.ErrNotSupported when the GPU cannot run it:
//
//   - float64: CUBLAS_COMPUTE_64F.
//   - float32: CUBLAS_COMPUTE_32F_FAST_TF32 with tf32 on a GPU from 8.0;
//     else CUBLAS_COMPUTE_32F. TF32 on an older GPU falls back to full
//     float32, which is never less accurate (doctor says so).
//   - float16: CUBLAS_COMPUTE_32F: tensor cores from 7.0 (Volta), cuBLAS's
//     slower float32 path before.
//   - bfloat16: CUBLAS_COMPUTE_32F from 8.0; refused before.
func computeFor(in dtype, major, minor int, tf32 bool) (int, error) {
	tc := TensorCoresOf(major, minor)
	switch in {
	case f64:
		return computeF64, nil
	case f32:
		if tf32 && tc.TF32 {
			return computeF32TF32, nil
		}
	case bf16:
		if !tc.BFloat16 {
			return 0, fmt.Errorf("compute capability %d.%d: %w", major, minor, errNoBF16)
		}
	}
	return computeF32, nil
}

// TensorCores says which matrix products a GPU runs on its tensor cores.
type TensorCores struct {
	// Float16: float16 inputs, float32 accumulation (compute capability
	// 7.0, Volta, and newer). Older GPUs still multiply float16, slower.
	Float16 bool
	// BFloat16: bfloat16 inputs (8.0, Ampere, and newer). Older GPUs are
	// refused bfloat16 products.
	BFloat16 bool
	// TF32: float32 inputs rounded to TF32 when SetTF32 or GOCUDA_TF32
	// allows it (8.0 and newer). Older GPUs multiply in full float32.
	TF32 bool
}

// TensorCoresOf is what a GPU of compute capability major.minor has, as
// the tensor-core generations of NVIDIA's architectures give it.
func TensorCoresOf(major, minor int) TensorCores {
	return TensorCores{Float16: major >= 7, BFloat16: major >= 8, TF32: major >= 8}
}
