//go:build cgo && linux

package curand

/*
#cgo linux LDFLAGS: -ldl
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>

// Our own declarations of the cuRAND host API and driver types we use: no
// CUDA headers at build time. Handles are opaque pointers; Go sees them as
// uintptr_t.
typedef int curandStatus_t;
typedef void *curandGenerator_t;
typedef int CUresult;
typedef void *CUcontext, *CUstream;

// CURAND_RNG_PSEUDO_PHILOX4_32_10 in curand.h: a counter-based generator,
// fast on every GPU and cheap to seed.
#define GR_PHILOX 161

#define FN(ret, name, args) static ret (*p_##name) args;
#define FUNCS \
FN(curandStatus_t, curandCreateGenerator, (curandGenerator_t*, int)) \
FN(curandStatus_t, curandDestroyGenerator, (curandGenerator_t)) \
FN(curandStatus_t, curandGetVersion, (int*)) \
FN(curandStatus_t, curandSetPseudoRandomGeneratorSeed, (curandGenerator_t, unsigned long long)) \
FN(curandStatus_t, curandSetStream, (curandGenerator_t, CUstream)) \
FN(curandStatus_t, curandGenerateUniform, (curandGenerator_t, float*, size_t)) \
FN(curandStatus_t, curandGenerateUniformDouble, (curandGenerator_t, double*, size_t)) \
FN(curandStatus_t, curandGenerateNormal, (curandGenerator_t, float*, size_t, float, float)) \
FN(curandStatus_t, curandGenerateNormalDouble, (curandGenerator_t, double*, size_t, double, double))
FUNCS
#undef FN
static CUresult (*p_cuCtxGetCurrent)(CUcontext*);
static CUresult (*p_cuCtxSetCurrent)(CUcontext);

// gr_install resolves every entry point from an opened libcurand, and the
// two context calls from the driver package cuda has already loaded (the
// dlopen only takes another reference). It returns the name of the first
// missing symbol, or 0.
static const char *gr_install(uintptr_t lib) {
	void *cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!cu) cu = dlopen("libcuda.so", RTLD_NOW | RTLD_LOCAL);
	if (!cu) return "libcuda.so.1";
	p_cuCtxGetCurrent = (CUresult (*)(CUcontext*))dlsym(cu, "cuCtxGetCurrent");
	p_cuCtxSetCurrent = (CUresult (*)(CUcontext))dlsym(cu, "cuCtxSetCurrent");
	if (!p_cuCtxGetCurrent) return "cuCtxGetCurrent";
	if (!p_cuCtxSetCurrent) return "cuCtxSetCurrent";
#define FN(ret, name, args) p_##name = (ret (*) args)dlsym((void*)lib, #name); if (!p_##name) return #name;
	FUNCS
#undef FN
	return 0;
}

static int gr_version(int *v) { return p_curandGetVersion(v); }

// The device's context is made current inside the same C call that uses
// it, and the thread's own is put back after, as package blas does (its
// comment says why): a goroutine may change threads between Go
// statements, and package cuda trusts its per-thread note of what is
// current.
typedef struct { CUcontext prev; int switched; } gr_ctx_state;
static CUresult gr_enter(CUcontext want, gr_ctx_state *st) {
	st->switched = 0;
	CUresult r = p_cuCtxGetCurrent(&st->prev);
	if (r) return r;
	if (st->prev == want) return 0;
	r = p_cuCtxSetCurrent(want);
	if (r) return r;
	st->switched = st->prev != 0;
	return 0;
}
static CUresult gr_leave(gr_ctx_state *st) {
	return st->switched ? p_cuCtxSetCurrent(st->prev) : 0;
}

// Where a call failed, for the Go side's error: the stage and its code (a
// CUresult for the context stages, a curandStatus_t for the others).
enum { GR_OK, GR_CTX, GR_STREAM, GR_CALL, GR_RESTORE };
typedef struct { int stage; int code; } gr_res;

static gr_res gr_res_of(int stage, int code) { gr_res o = {code ? stage : GR_OK, code}; return o; }

static gr_res gr_create(uintptr_t ctx, uintptr_t *g, unsigned long long seed) {
	gr_ctx_state st; gr_res o;
	CUresult cr = gr_enter((CUcontext)ctx, &st);
	if (cr) return gr_res_of(GR_CTX, cr);
	o = gr_res_of(GR_CALL, p_curandCreateGenerator((curandGenerator_t*)g, GR_PHILOX));
	if (o.stage == GR_OK) o = gr_res_of(GR_CALL, p_curandSetPseudoRandomGeneratorSeed((curandGenerator_t)*g, seed));
	cr = gr_leave(&st);
	if (o.stage == GR_OK && cr) o = gr_res_of(GR_RESTORE, cr);
	return o;
}

static gr_res gr_destroy(uintptr_t ctx, uintptr_t g) {
	gr_ctx_state st; gr_res o;
	CUresult cr = gr_enter((CUcontext)ctx, &st);
	if (cr) return gr_res_of(GR_CTX, cr);
	o = gr_res_of(GR_CALL, p_curandDestroyGenerator((curandGenerator_t)g));
	cr = gr_leave(&st);
	if (o.stage == GR_OK && cr) o = gr_res_of(GR_RESTORE, cr);
	return o;
}

// kind: 0 uniform, 1 normal; dbl: float64. One call: context, stream
// (a host-side setting in cuRAND, cheap beside the generation), the
// generation, and the context back.
static gr_res gr_generate(uintptr_t ctx, uintptr_t g, uintptr_t stream,
		int kind, int dbl, uintptr_t out, size_t n, double mean, double stddev) {
	gr_ctx_state st; gr_res o;
	CUresult cr = gr_enter((CUcontext)ctx, &st);
	if (cr) return gr_res_of(GR_CTX, cr);
	curandGenerator_t gen = (curandGenerator_t)g;
	o = gr_res_of(GR_STREAM, p_curandSetStream(gen, (CUstream)stream));
	if (o.stage == GR_OK) {
		curandStatus_t r;
		if (kind == 0) r = dbl ? p_curandGenerateUniformDouble(gen, (double*)out, n) : p_curandGenerateUniform(gen, (float*)out, n);
		else r = dbl ? p_curandGenerateNormalDouble(gen, (double*)out, n, mean, stddev) : p_curandGenerateNormal(gen, (float*)out, n, (float)mean, (float)stddev);
		o = gr_res_of(GR_CALL, r);
	}
	cr = gr_leave(&st);
	if (o.stage == GR_OK && cr) o = gr_res_of(GR_RESTORE, cr);
	return o;
}
*/
import "C"

type cu = C.uintptr_t

func cInstall(lib uintptr) string {
	if s := C.gr_install(cu(lib)); s != nil {
		return C.GoString(s)
	}
	return ""
}

func cVersion() (int, cres) {
	var v C.int
	if r := C.gr_version(&v); r != 0 {
		return 0, cres{stage: stageCall, code: int(r)}
	}
	return int(v), cres{}
}

func cCreate(ctx uintptr, seed uint64) (uintptr, cres) {
	var g C.uintptr_t
	o := C.gr_create(cu(ctx), &g, C.ulonglong(seed))
	return uintptr(g), cres{stage: int(o.stage), code: int(o.code)}
}

func cDestroy(ctx, g uintptr) cres {
	o := C.gr_destroy(cu(ctx), cu(g))
	return cres{stage: int(o.stage), code: int(o.code)}
}

func cGenerate(ctx, g, stream uintptr, normal, f64 bool, out uintptr, n int, mean, stddev float64) cres {
	o := C.gr_generate(cu(ctx), cu(g), cu(stream), cbool(normal), cbool(f64),
		cu(out), C.size_t(n), C.double(mean), C.double(stddev))
	return cres{stage: int(o.stage), code: int(o.code)}
}

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}
