//go:build cgo && linux

package main

/*
#cgo linux LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

// Our own declarations of the few cuFFT and driver entry points we call:
// no CUDA headers at build time. A plan is an int handle; streams and
// contexts are opaque pointers, uintptr_t on the Go side.
typedef int cufftResult;
typedef int cufftHandle;
typedef int CUresult;
typedef void *CUcontext, *CUstream;

static cufftResult (*p_cufftGetVersion)(int*);
static cufftResult (*p_cufftPlanMany)(cufftHandle*, int rank, int *n, int *inembed, int istride, int idist,
	int *onembed, int ostride, int odist, int type, int batch);
static cufftResult (*p_cufftSetStream)(cufftHandle, CUstream);
static cufftResult (*p_cufftExecC2C)(cufftHandle, void *in, void *out, int direction);
static cufftResult (*p_cufftDestroy)(cufftHandle);
static CUresult (*p_cuCtxGetCurrent)(CUcontext*);
static CUresult (*p_cuCtxSetCurrent)(CUcontext);

static char open_error[512];

// ff_open tries one library path; on failure dlerror's reason is kept
// for ff_open_error.
static uintptr_t ff_open(const char *name) {
	void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (!h) snprintf(open_error, sizeof open_error, "%s", dlerror());
	return (uintptr_t)h;
}
static const char *ff_open_error(void) { return open_error; }

// ff_install resolves the entry points; it returns the first missing one.
static const char *ff_install(uintptr_t lib) {
	void *cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!cu) return "libcuda.so.1";
	if (!(p_cuCtxGetCurrent = (CUresult (*)(CUcontext*))dlsym(cu, "cuCtxGetCurrent"))) return "cuCtxGetCurrent";
	if (!(p_cuCtxSetCurrent = (CUresult (*)(CUcontext))dlsym(cu, "cuCtxSetCurrent"))) return "cuCtxSetCurrent";
#define SYM(name) if (!(*(void**)&p_##name = dlsym((void*)lib, #name))) return #name;
	SYM(cufftGetVersion) SYM(cufftPlanMany) SYM(cufftSetStream) SYM(cufftExecC2C) SYM(cufftDestroy)
#undef SYM
	return 0;
}

// The driver's current context is per OS thread and a goroutine may change
// threads between two Go statements, so every call below makes the
// device's context current itself, in the same C call as the library call,
// and puts back what was current before (package cuda trusts its own note
// of the current context; blas/cublas_cgo.go says more).
typedef struct { CUcontext prev; int switched; } ff_ctx;
static CUresult ff_enter(uintptr_t want, ff_ctx *st) {
	st->switched = 0;
	CUresult r = p_cuCtxGetCurrent(&st->prev);
	if (r || st->prev == (CUcontext)want) return r;
	if ((r = p_cuCtxSetCurrent((CUcontext)want))) return r;
	st->switched = st->prev != 0;
	return 0;
}
static void ff_leave(ff_ctx *st) { if (st->switched) p_cuCtxSetCurrent(st->prev); }

// Each call returns where it failed and the code: stage 0 is success, 1
// making the context current (code is a CUresult), 2 cufftSetStream and 3
// the call itself (code is a cufftResult).
typedef struct { int stage, code; } ff_res;

static int ff_version(void) { int v = 0; p_cufftGetVersion(&v); return v; }

// ff_plan makes a plan for batch contiguous 1-D complex-to-complex
// transforms (CUFFT_C2C, 0x29) of n elements each.
static ff_res ff_plan(uintptr_t ctx, int n, int batch, int *plan) {
	ff_ctx st;
	ff_res o = {1, ff_enter(ctx, &st)};
	if (o.code) return o;
	o.stage = 3;
	o.code = p_cufftPlanMany(plan, 1, &n, NULL, 1, n, NULL, 1, n, 0x29, batch);
	if (!o.code) o.stage = 0;
	ff_leave(&st);
	return o;
}

// ff_exec points the plan at stream s and queues the transform there:
// direction -1 is CUFFT_FORWARD, +1 CUFFT_INVERSE.
static ff_res ff_exec(uintptr_t ctx, int plan, uintptr_t s, uintptr_t in, uintptr_t out, int direction) {
	ff_ctx st;
	ff_res o = {1, ff_enter(ctx, &st)};
	if (o.code) return o;
	o.stage = 2;
	o.code = p_cufftSetStream(plan, (CUstream)s);
	if (!o.code) {
		o.stage = 3;
		o.code = p_cufftExecC2C(plan, (void*)in, (void*)out, direction);
	}
	if (!o.code) o.stage = 0;
	ff_leave(&st);
	return o;
}

static ff_res ff_destroy(uintptr_t ctx, int plan) {
	ff_ctx st;
	ff_res o = {1, ff_enter(ctx, &st)};
	if (o.code) return o;
	o.stage = 3;
	o.code = p_cufftDestroy(plan);
	if (!o.code) o.stage = 0;
	ff_leave(&st);
	return o;
}
*/
import "C"

import "unsafe"

const cgoAvailable = true

func dlopen(path string) (uintptr, string) {
	cs := C.CString(path)
	defer C.free(unsafe.Pointer(cs))
	if h := C.ff_open(cs); h != 0 {
		return uintptr(h), ""
	}
	return 0, C.GoString(C.ff_open_error())
}

func install(lib uintptr) string {
	if s := C.ff_install(C.uintptr_t(lib)); s != nil {
		return C.GoString(s)
	}
	return ""
}

func version() int { return int(C.ff_version()) }

func res(o C.ff_res) result { return result{stage: int(o.stage), code: int(o.code)} }

func cPlan(ctx uintptr, n, batch int) (int, result) {
	var p C.int
	r := res(C.ff_plan(C.uintptr_t(ctx), C.int(n), C.int(batch), &p))
	return int(p), r
}

func cExec(ctx uintptr, plan int, stream, in, out uintptr, dir int) result {
	return res(C.ff_exec(C.uintptr_t(ctx), C.int(plan), C.uintptr_t(stream), C.uintptr_t(in), C.uintptr_t(out), C.int(dir)))
}

func cDestroy(ctx uintptr, plan int) result { return res(C.ff_destroy(C.uintptr_t(ctx), C.int(plan))) }
