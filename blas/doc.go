// Package blas is matrix multiply (Gemm) and matrix-vector multiply (Gemv)
// for float32 and float64 on device memory: through NVIDIA's cuBLAS on the
// CUDA backend and through gonum on the host backend, queued on a stream
// like any kernel. cuarray's Gemm, MatMul and Gemv are built on it; use it
// directly when you hold backend pointers rather than arrays.
//
// # Half precision, batches and TF32
//
// GemmEx multiplies half.Float16 or half.BFloat16 matrices on the tensor
// cores, in float32 arithmetic, writing C in the inputs' type or float32;
// GemmStridedBatchedEx does a batch of such products in one call, and
// GemmStridedBatched the same for float32 and float64. TF32 (SetTF32,
// GOCUDA_TF32; off by default, as PyTorch's allow_tf32) lets float32
// products round their inputs to TF32 on GPUs of compute capability 8.0
// and newer. TensorCoresOf says which products a GPU runs on its tensor
// cores: bfloat16 before 8.0 is refused with an error, float16 before 7.0
// and TF32 before 8.0 fall back to float32 arithmetic. On the host
// backend 16-bit products are computed in float32 and rounded with package
// half; docs/half.md has the tolerance the tests hold them to.
//
// # Finding cuBLAS
//
// cuBLAS is loaded at first use with dlopen, as package cuda loads the
// driver: no CUDA toolkit is needed to build, and a program that never
// multiplies on a GPU never loads it. GOCUDA_CUBLAS_LIBRARY names the file
// to load; unset, the loader's usual search (ldconfig's cache,
// LD_LIBRARY_PATH) is asked for libcublas.so.13, libcublas.so.12,
// libcublas.so.11 and libcublas.so, those no newer than the driver, and
// then the CUDA toolkit's folders and the folders where pip's wheels put
// it (nvidia/cublas/lib of nvidia-cublas-cu12, which PyTorch installs, and
// nvidia/cu13/lib of CUDA 13's) are searched under the python3.* folders
// of the active virtual or conda environment, ~/.local and the system.
// When none loads, every GPU operation returns an error wrapping
// ErrNoCUBLAS that lists each file with the loader's reason and each
// folder searched, and says what to install; the host backend
// (GOCUDA_BACKEND=host) needs no cuBLAS. Library reports which one was
// loaded, Version the cuBLAS version.
//
// Each device gets one cuBLAS handle for the life of the process (cuBLAS
// handles allocate device workspace and are slow to create). Calls set the
// handle's stream under a lock, and skip that when the stream is the one
// set last. Every call makes the device's primary context current inside
// the same C call and gives the thread back its previous context after,
// so goroutines need not lock OS threads, and package cuda's note of each
// thread's current context stays true.
//
// # Overhead
//
// A call costs, beyond cuBLAS's own, the argument checks, a map lookup of
// the device's handle, its lock, one cgo call and a cuCtxGetCurrent. The
// benchmark BenchmarkSgemmOverhead measures it on a GPU against
// cublasSgemm_v2 called from a C loop on the same stream and sizes, and
// reports the difference (overhead-ns/op), the ratio (x-cublas) and what
// a cublasSetStream_v2 before every call would add (setstream-ns/op),
// which is what one handle per stream would save when streams alternate; BenchmarkSgemmParallelStreams has goroutines on their
// own streams share the handle. The figures, with the device and date,
// are in docs/benchmarks.md.
//
// # Row-major
//
// Matrices are row-major, as Go's [][]T and cuarray arrays are: element
// (i, j) of a matrix with leading dimension ld is at i*ld + j. cuBLAS is
// column-major, and a row-major matrix read column-major is its transpose;
// so C = op(A)·op(B) is computed as Cᵀ = op(B)ᵀ·op(A)ᵀ, which swaps the
// operands and m with n, and copies nothing. gonum is row-major already.
//
// # Example
//
// C (2 × 2) = A (2 × 3) · B (3 × 2) on device 0's stream s, with a, b, c
// device pointers holding the row-major matrices:
//
//	err := blas.Gemm[float32](dev, s, false, false, 2, 2, 3,
//		1, a, 3, // alpha, A and its leading dimension (3 columns)
//		b, 2, // B, 2 columns
//		0, c, 2) // beta, C, 2 columns
//
// The call returns once the product is queued; a copy to the host on the
// same stream (dev.CopyDtoH) waits for it.
package blas
