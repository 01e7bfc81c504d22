//go:build cgo && linux

package curand

/*
#cgo linux LDFLAGS: -ldl
#cgo CFLAGS: -I${SRCDIR}/../internal/libload

// Our own declarations of the cuRAND host API types we use: no CUDA
// headers at build time. Handles are opaque pointers; Go sees them as
// uintptr_t.
typedef int curandStatus_t;
typedef void *curandGenerator_t;

// CURAND_RNG_PSEUDO_PHILOX4_32_10 in curand.h: a counter-based generator,
// fast on every GPU and cheap to seed.
#define GR_PHILOX 161

// The symbol table (cudalib.h).
#define CL_SYMBOLS(FN) \
FN(curandStatus_t, curandCreateGenerator, (curandGenerator_t*, int)) \
FN(curandStatus_t, curandDestroyGenerator, (curandGenerator_t)) \
FN(curandStatus_t, curandGetVersion, (int*)) \
FN(curandStatus_t, curandSetPseudoRandomGeneratorSeed, (curandGenerator_t, unsigned long long)) \
FN(curandStatus_t, curandSetStream, (curandGenerator_t, CUstream)) \
FN(curandStatus_t, curandGenerateUniform, (curandGenerator_t, float*, size_t)) \
FN(curandStatus_t, curandGenerateUniformDouble, (curandGenerator_t, double*, size_t)) \
FN(curandStatus_t, curandGenerateNormal, (curandGenerator_t, float*, size_t, float, float)) \
FN(curandStatus_t, curandGenerateNormalDouble, (curandGenerator_t, double*, size_t, double, double))
#define CL_CONTEXT
#include "cudalib.h"

static int gr_version(int *v) { return p_curandGetVersion(v); }

static cl_res gr_create(uintptr_t ctx, uintptr_t *g, unsigned long long seed) {
	cl_ctx st;
	CL_ENTER(ctx, &st);
	cl_res o = cl_res_of(CL_CALL, p_curandCreateGenerator((curandGenerator_t*)g, GR_PHILOX));
	if (o.stage == CL_OK) o = cl_res_of(CL_CALL, p_curandSetPseudoRandomGeneratorSeed((curandGenerator_t)*g, seed));
	return cl_leave(&st, o);
}

static cl_res gr_destroy(uintptr_t ctx, uintptr_t g) {
	CL_IN_CONTEXT(ctx, p_curandDestroyGenerator((curandGenerator_t)g))
}

// kind: 0 uniform, 1 normal; dbl: float64. One call: context, stream
// (a host-side setting in cuRAND, cheap beside the generation), the
// generation, and the context back.
static cl_res gr_generate(uintptr_t ctx, uintptr_t g, uintptr_t stream,
		int kind, int dbl, uintptr_t out, size_t n, double mean, double stddev) {
	cl_ctx st;
	CL_ENTER(ctx, &st);
	curandGenerator_t gen = (curandGenerator_t)g;
	cl_res o = cl_res_of(CL_STREAM, p_curandSetStream(gen, (CUstream)stream));
	if (o.stage == CL_OK) {
		curandStatus_t r;
		if (kind == 0) r = dbl ? p_curandGenerateUniformDouble(gen, (double*)out, n) : p_curandGenerateUniform(gen, (float*)out, n);
		else r = dbl ? p_curandGenerateNormalDouble(gen, (double*)out, n, mean, stddev) : p_curandGenerateNormal(gen, (float*)out, n, (float)mean, (float)stddev);
		o = cl_res_of(CL_CALL, r);
	}
	return cl_leave(&st, o);
}
*/
import "C"

import "github.com/gocuda/gocuda/internal/libload"

type cu = C.uintptr_t

func cInstall(lib uintptr) string { return C.GoString(C.cl_install(cu(lib))) }

func res(o C.cl_res) cres { return cres{Stage: libload.Stage(o.stage), Code: int(o.code)} }

func cVersion() (int, cres) {
	var v C.int
	if r := C.gr_version(&v); r != 0 {
		return 0, cres{Stage: libload.StageCall, Code: int(r)}
	}
	return int(v), cres{}
}

func cCreate(ctx uintptr, seed uint64) (uintptr, cres) {
	var g C.uintptr_t
	o := C.gr_create(cu(ctx), &g, C.ulonglong(seed))
	return uintptr(g), res(o)
}

func cDestroy(ctx, g uintptr) cres {
	return res(C.gr_destroy(cu(ctx), cu(g)))
}

func cGenerate(ctx, g, stream uintptr, normal, f64 bool, out uintptr, n int, mean, stddev float64) cres {
	return res(C.gr_generate(cu(ctx), cu(g), cu(stream), cbool(normal), cbool(f64),
		cu(out), C.size_t(n), C.double(mean), C.double(stddev)))
}

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}
