//go:build cgo && linux

package blas

/*
#cgo linux LDFLAGS: -ldl
#cgo CFLAGS: -I${SRCDIR}/../internal/libload
#include <stdlib.h>
#include <time.h>

// Our own declarations of the cuBLAS types we use: no CUDA headers at
// build time. Handles are opaque pointers; Go sees them as uintptr_t.
typedef int cublasStatus_t;
typedef void *cublasHandle_t;
// cudaDataType_t, cublasComputeType_t and cublasGemmAlgo_t are C enums,
// passed as int; the values used are in dtype.go.

// The symbol table (cudalib.h). The _v2 names are what cublas_v2.h maps
// the plain ones to; the plain names in libcublas are the legacy API, with
// another calling convention.
#define CL_SYMBOLS(FN) \
FN(cublasStatus_t, cublasCreate_v2, (cublasHandle_t*)) \
FN(cublasStatus_t, cublasDestroy_v2, (cublasHandle_t)) \
FN(cublasStatus_t, cublasGetVersion_v2, (cublasHandle_t, int*)) \
FN(cublasStatus_t, cublasSetStream_v2, (cublasHandle_t, CUstream)) \
FN(cublasStatus_t, cublasSetPointerMode_v2, (cublasHandle_t, int)) \
FN(cublasStatus_t, cublasSgemm_v2, (cublasHandle_t, int, int, int, int, int, const float*, const float*, int, const float*, int, const float*, float*, int)) \
FN(cublasStatus_t, cublasDgemm_v2, (cublasHandle_t, int, int, int, int, int, const double*, const double*, int, const double*, int, const double*, double*, int)) \
FN(cublasStatus_t, cublasSgemv_v2, (cublasHandle_t, int, int, int, const float*, const float*, int, const float*, int, const float*, float*, int)) \
FN(cublasStatus_t, cublasDgemv_v2, (cublasHandle_t, int, int, int, const double*, const double*, int, const double*, int, const double*, double*, int)) \
FN(cublasStatus_t, cublasGemmEx, (cublasHandle_t, int, int, int, int, int, const void*, const void*, int, int, const void*, int, int, const void*, void*, int, int, int, int)) \
FN(cublasStatus_t, cublasGemmStridedBatchedEx, (cublasHandle_t, int, int, int, int, int, const void*, const void*, int, int, long long, const void*, int, int, long long, const void*, void*, int, int, long long, int, int, int))
#define CL_CONTEXT
#include "cudalib.h"

static cl_res gb_create(uintptr_t ctx, uintptr_t *h, int *version) {
	cl_ctx st;
	CL_ENTER(ctx, &st);
	cl_res o = cl_res_of(CL_CALL, p_cublasCreate_v2((cublasHandle_t*)h));
	// Scalars (alpha, beta) are read from host memory: they are on the C
	// stack of each call, and nothing has to be copied to the device.
	if (o.stage == CL_OK) o = cl_res_of(CL_CALL, p_cublasSetPointerMode_v2((cublasHandle_t)*h, 0));
	if (o.stage == CL_OK) o = cl_res_of(CL_CALL, p_cublasGetVersion_v2((cublasHandle_t)*h, version));
	return cl_leave(&st, o);
}

// One call per operation: context, stream (only when the handle was last
// set to another one: setStream), the operation, and the context back.
#define GB_CALL_BODY(CALL) \
	cl_ctx st; \
	CL_ENTER(ctx, &st); \
	cl_res o = cl_res_of(CL_OK, 0); \
	if (setStream) o = cl_res_of(CL_STREAM, p_cublasSetStream_v2((cublasHandle_t)h, (CUstream)stream)); \
	if (o.stage == CL_OK) o = cl_res_of(CL_CALL, CALL); \
	return cl_leave(&st, o);

static cl_res gb_sgemm(uintptr_t ctx, uintptr_t h, uintptr_t stream, int setStream,
		int ta, int tb, int m, int n, int k, float alpha, uintptr_t a, int lda,
		uintptr_t b, int ldb, float beta, uintptr_t c, int ldc) {
	GB_CALL_BODY(p_cublasSgemm_v2((cublasHandle_t)h, ta, tb, m, n, k, &alpha,
		(const float*)a, lda, (const float*)b, ldb, &beta, (float*)c, ldc))
}
static cl_res gb_dgemm(uintptr_t ctx, uintptr_t h, uintptr_t stream, int setStream,
		int ta, int tb, int m, int n, int k, double alpha, uintptr_t a, int lda,
		uintptr_t b, int ldb, double beta, uintptr_t c, int ldc) {
	GB_CALL_BODY(p_cublasDgemm_v2((cublasHandle_t)h, ta, tb, m, n, k, &alpha,
		(const double*)a, lda, (const double*)b, ldb, &beta, (double*)c, ldc))
}
static cl_res gb_sgemv(uintptr_t ctx, uintptr_t h, uintptr_t stream, int setStream,
		int t, int m, int n, float alpha, uintptr_t a, int lda, uintptr_t x,
		float beta, uintptr_t y) {
	GB_CALL_BODY(p_cublasSgemv_v2((cublasHandle_t)h, t, m, n, &alpha,
		(const float*)a, lda, (const float*)x, 1, &beta, (float*)y, 1))
}
static cl_res gb_dgemv(uintptr_t ctx, uintptr_t h, uintptr_t stream, int setStream,
		int t, int m, int n, double alpha, uintptr_t a, int lda, uintptr_t x,
		double beta, uintptr_t y) {
	GB_CALL_BODY(p_cublasDgemv_v2((cublasHandle_t)h, t, m, n, &alpha,
		(const double*)a, lda, (const double*)x, 1, &beta, (double*)y, 1))
}

// gb_gemm_ex is cublasGemmEx, or with batched cublasGemmStridedBatchedEx,
// with CUBLAS_GEMM_DEFAULT. The scalars are float for the float32 compute
// types and double for CUBLAS_COMPUTE_64F (70), as cuBLAS reads them.
static cl_res gb_gemm_ex(uintptr_t ctx, uintptr_t h, uintptr_t stream, int setStream, int batched,
		int ta, int tb, int m, int n, int k, double alpha,
		uintptr_t a, int atype, int lda, long long sa,
		uintptr_t b, int btype, int ldb, long long sb, double beta,
		uintptr_t c, int ctype, int ldc, long long sc, int batch, int compute) {
	float af = (float)alpha, bf = (float)beta;
	const void *pa = compute == 70 ? (const void*)&alpha : (const void*)&af;
	const void *pb = compute == 70 ? (const void*)&beta : (const void*)&bf;
	GB_CALL_BODY(batched
		? p_cublasGemmStridedBatchedEx((cublasHandle_t)h, ta, tb, m, n, k, pa,
			(const void*)a, atype, lda, sa, (const void*)b, btype, ldb, sb, pb,
			(void*)c, ctype, ldc, sc, batch, compute, -1)
		: p_cublasGemmEx((cublasHandle_t)h, ta, tb, m, n, k, pa,
			(const void*)a, atype, lda, (const void*)b, btype, ldb, pb,
			(void*)c, ctype, ldc, compute, -1))
}

// gb_symbols lists the symbol table's required entry points, comma
// separated, for the test that the binding looks each up.
#define GB_NAME(ret, name, args) #name ","
static const char *gb_symbols(void) { return CL_SYMBOLS(GB_NAME); }
#undef GB_NAME

// gb_bench_sgemm times calls of cublasSgemm_v2 made from a C loop, with the
// context made current once and, with setStream, cublasSetStream_v2 before
// each: what cuBLAS itself costs per call, for the Go benchmark to compare
// its own path with. Returns nanoseconds, or -1 if a call failed.
static long long gb_bench_sgemm(uintptr_t ctx, uintptr_t h, uintptr_t stream, int setStream,
		int m, int n, int k, uintptr_t a, uintptr_t b, uintptr_t c, long long calls) {
	cl_ctx st;
	if (cl_enter((CUcontext)ctx, &st)) return -1;
	if (p_cublasSetStream_v2((cublasHandle_t)h, (CUstream)stream)) { cl_restore(&st); return -1; }
	float alpha = 1, beta = 0;
	struct timespec t0, t1;
	int bad = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long long i = 0; i < calls; i++) {
		if (setStream) bad |= p_cublasSetStream_v2((cublasHandle_t)h, (CUstream)stream);
		bad |= p_cublasSgemm_v2((cublasHandle_t)h, 0, 0, m, n, k, &alpha,
			(const float*)a, m, (const float*)b, k, &beta, (float*)c, m);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	cl_restore(&st);
	if (bad) return -1;
	return (long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec);
}
*/
import "C"

import (
	"strings"

	"github.com/gocuda/gocuda/internal/libload"
)

type cu = C.uintptr_t

func cInstall(lib uintptr) string { return C.GoString(C.cl_install(cu(lib))) }

func res(o C.cl_res) cres { return cres{Stage: libload.Stage(o.stage), Code: int(o.code)} }

func b2i(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

func cCreate(ctx uintptr) (uintptr, int, cres) {
	var h C.uintptr_t
	var v C.int
	o := C.gb_create(cu(ctx), &h, &v)
	return uintptr(h), int(v), res(o)
}

func cSgemm(ctx, h, s uintptr, setStream bool, ta, tb int, m, n, k int, alpha float32, a uintptr, lda int, b uintptr, ldb int, beta float32, c uintptr, ldc int) cres {
	return res(C.gb_sgemm(cu(ctx), cu(h), cu(s), b2i(setStream), C.int(ta), C.int(tb), C.int(m), C.int(n), C.int(k),
		C.float(alpha), cu(a), C.int(lda), cu(b), C.int(ldb), C.float(beta), cu(c), C.int(ldc)))
}

func cDgemm(ctx, h, s uintptr, setStream bool, ta, tb int, m, n, k int, alpha float64, a uintptr, lda int, b uintptr, ldb int, beta float64, c uintptr, ldc int) cres {
	return res(C.gb_dgemm(cu(ctx), cu(h), cu(s), b2i(setStream), C.int(ta), C.int(tb), C.int(m), C.int(n), C.int(k),
		C.double(alpha), cu(a), C.int(lda), cu(b), C.int(ldb), C.double(beta), cu(c), C.int(ldc)))
}

func cSgemv(ctx, h, s uintptr, setStream bool, t int, m, n int, alpha float32, a uintptr, lda int, x uintptr, beta float32, y uintptr) cres {
	return res(C.gb_sgemv(cu(ctx), cu(h), cu(s), b2i(setStream), C.int(t), C.int(m), C.int(n),
		C.float(alpha), cu(a), C.int(lda), cu(x), C.float(beta), cu(y)))
}

func cDgemv(ctx, h, s uintptr, setStream bool, t int, m, n int, alpha float64, a uintptr, lda int, x uintptr, beta float64, y uintptr) cres {
	return res(C.gb_dgemv(cu(ctx), cu(h), cu(s), b2i(setStream), C.int(t), C.int(m), C.int(n),
		C.double(alpha), cu(a), C.int(lda), cu(x), C.double(beta), cu(y)))
}

func cGemmEx(ctx, h, s uintptr, setStream bool, x *exCall) cres {
	return res(C.gb_gemm_ex(cu(ctx), cu(h), cu(s), b2i(setStream), b2i(x.batched),
		C.int(x.ta), C.int(x.tb), C.int(x.m), C.int(x.n), C.int(x.k), C.double(x.alpha),
		cu(x.a), C.int(x.atype), C.int(x.lda), C.longlong(x.strideA),
		cu(x.b), C.int(x.btype), C.int(x.ldb), C.longlong(x.strideB), C.double(x.beta),
		cu(x.c), C.int(x.ctype), C.int(x.ldc), C.longlong(x.strC), C.int(x.batch), C.int(x.compute)))
}

// symbols is the entry points the binding resolves at load, in its
// table's order; loading fails, naming the first missing one, unless all
// resolve.
func symbols() []string {
	return strings.Split(strings.TrimSuffix(C.GoString(C.gb_symbols()), ","), ",")
}

func cBenchSgemm(ctx, h, s uintptr, setStream bool, m, n, k int, a, b, c uintptr, calls int64) int64 {
	return int64(C.gb_bench_sgemm(cu(ctx), cu(h), cu(s), b2i(setStream), C.int(m), C.int(n), C.int(k),
		cu(a), cu(b), cu(c), C.longlong(calls)))
}
