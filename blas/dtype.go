package blas

import "github.com/gocuda/gocuda/half"

// dtype is an element type of a matrix operand.
type dtype int

const (
	f32 dtype = iota
	f64
	f16
	bf16
)

func (d dtype) size() uint64 {
	switch d {
	case f64:
		return 8
	case f16, bf16:
		return 2
	}
	return 4
}

func (d dtype) String() string {
	return [...]string{"float32", "float64", "float16", "bfloat16"}[d]
}

// The cudaDataType_t of each type, from library_types.h (CUDA_R_32F = 0,
// CUDA_R_64F = 1, CUDA_R_16F = 2, CUDA_R_16BF = 14), as the cuBLAS
// documentation's cublasGemmEx type table names them.
const (
	cudaR32F  = 0
	cudaR64F  = 1
	cudaR16F  = 2
	cudaR16BF = 14
)

func (d dtype) cuda() int {
	return [...]int{cudaR32F, cudaR64F, cudaR16F, cudaR16BF}[d]
}

// The cublasComputeType_t values used, from cublas_api.h (CUDA 11 and
// newer; NVIDIA's nvmath-python lists the same numbers for
// cublasComputeType_t): CUBLAS_COMPUTE_32F = 68 (float32 arithmetic, the
// tensor cores for 16-bit inputs), CUBLAS_COMPUTE_32F_FAST_TF32 = 77
// (float32 inputs rounded to TF32 for the tensor cores, float32
// accumulation), CUBLAS_COMPUTE_64F = 70. CUBLAS_GEMM_DEFAULT (-1) is
// cublasGemmAlgo_t's heuristic choice, which takes the tensor cores
// where the types allow them (CUBLAS_GEMM_DEFAULT_TENSOR_OP is deprecated
// since cuBLAS 11 and means the same).
const (
	computeF32     = 68
	computeF32TF32 = 77
	computeF64     = 70
	gemmDefault    = -1
)

// Half is the 16-bit element types of the half-precision products:
// half.Float16 and half.BFloat16 (2 bytes each, their bits as stored on the
// device).
type Half interface{ half.Float16 | half.BFloat16 }

// HalfOut is what a half-precision product may write: the inputs' own
// type, or float32.
type HalfOut interface {
	half.Float16 | half.BFloat16 | float32
}

// dtypeOf is T's dtype. The switch is on a zero value, which converts to
// an interface without allocating.
func dtypeOf[T Float | HalfOut]() dtype {
	var z T
	switch any(z).(type) {
	case float64:
		return f64
	case half.Float16:
		return f16
	case half.BFloat16:
		return bf16
	}
	return f32
}
