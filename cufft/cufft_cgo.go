//go:build cgo && linux

package cufft

/*
#cgo linux LDFLAGS: -ldl
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>

// Our own declarations of the cuFFT host API and driver types we use: no
// CUDA headers at build time. A plan is an int handle; streams, contexts
// and device addresses are opaque pointers, uintptr_t on the Go side.
typedef int cufftResult;
typedef int cufftHandle;
typedef int CUresult;
typedef void *CUcontext, *CUstream;

#define FN(ret, name, args) static ret (*p_##name) args;
#define FUNCS \
FN(cufftResult, cufftGetVersion, (int*)) \
FN(cufftResult, cufftCreate, (cufftHandle*)) \
FN(cufftResult, cufftDestroy, (cufftHandle)) \
FN(cufftResult, cufftSetAutoAllocation, (cufftHandle, int)) \
FN(cufftResult, cufftMakePlanMany64, (cufftHandle, int, long long*, long long*, long long, long long, \
	long long*, long long, long long, int, long long, size_t*)) \
FN(cufftResult, cufftSetStream, (cufftHandle, CUstream)) \
FN(cufftResult, cufftSetWorkArea, (cufftHandle, void*)) \
FN(cufftResult, cufftExecC2C, (cufftHandle, void*, void*, int)) \
FN(cufftResult, cufftExecR2C, (cufftHandle, void*, void*)) \
FN(cufftResult, cufftExecC2R, (cufftHandle, void*, void*))
FUNCS
#undef FN
static CUresult (*p_cuCtxGetCurrent)(CUcontext*);
static CUresult (*p_cuCtxSetCurrent)(CUcontext);

// ff_install resolves every entry point from an opened libcufft, and the
// two context calls from the driver package cuda has already loaded (the
// dlopen only takes another reference). It returns the name of the first
// missing symbol, or 0.
static const char *ff_install(uintptr_t lib) {
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

static int ff_version(int *v) { return p_cufftGetVersion(v); }

// The device's context is made current inside the same C call that uses
// it, and the thread's own is put back after, as packages blas and curand
// do (blas/cublas_cgo.go says why): a goroutine may change threads between
// Go statements, and package cuda trusts its per-thread note of what is
// current.
typedef struct { CUcontext prev; int switched; } ff_ctx_state;
static CUresult ff_enter(CUcontext want, ff_ctx_state *st) {
	st->switched = 0;
	CUresult r = p_cuCtxGetCurrent(&st->prev);
	if (r) return r;
	if (st->prev == want) return 0;
	r = p_cuCtxSetCurrent(want);
	if (r) return r;
	st->switched = st->prev != 0;
	return 0;
}
static CUresult ff_leave(ff_ctx_state *st) {
	return st->switched ? p_cuCtxSetCurrent(st->prev) : 0;
}

// Where a call failed, for the Go side's error: the stage and its code (a
// CUresult for the context stages, a cufftResult for the others).
enum { FF_OK, FF_CTX, FF_STREAM, FF_WORKAREA, FF_CALL, FF_RESTORE };
typedef struct { int stage; int code; } ff_res;

static ff_res ff_res_of(int stage, int code) { ff_res o = {code ? stage : FF_OK, code}; return o; }

// ff_plan makes a plan for batch contiguous transforms of rank 1 or 2
// (sizes n) of type (CUFFT_C2C 0x29, R2C 0x2a, C2R 0x2c), with cuFFT's
// own work area turned off: each execution is given one from the array's
// pool (cufftSetWorkArea), as CuPy and PyTorch do, so that pool limits
// count it. *work is the bytes an execution needs.
static ff_res ff_plan(uintptr_t ctx, int rank, long long n0, long long n1, int type, long long batch,
		int *plan, size_t *work) {
	ff_ctx_state st; ff_res o;
	CUresult cr = ff_enter((CUcontext)ctx, &st);
	if (cr) return ff_res_of(FF_CTX, cr);
	long long n[2] = {n0, n1};
	cufftHandle h = 0;
	o = ff_res_of(FF_CALL, p_cufftCreate(&h));
	if (o.stage == FF_OK) {
		o = ff_res_of(FF_CALL, p_cufftSetAutoAllocation(h, 0));
		// NULL embeddings: contiguous rows, the complex side of a real
		// transform n/2+1 long in its last dimension.
		if (o.stage == FF_OK) o = ff_res_of(FF_CALL, p_cufftMakePlanMany64(h, rank, n, NULL, 1, 0, NULL, 1, 0, type, batch, work));
		if (o.stage != FF_OK) p_cufftDestroy(h);
		else *plan = h;
	}
	cr = ff_leave(&st);
	if (o.stage == FF_OK && cr) o = ff_res_of(FF_RESTORE, cr);
	return o;
}

// ff_exec queues one transform of plan on stream with work as its work
// area (0 when the plan needs none): the stream, the work area and the
// execution in one call, under the Go side's lock of the plan, so that
// goroutines sharing a plan never see each other's settings. kind is the
// plan's type; dir is CUFFT_FORWARD (-1) or CUFFT_INVERSE (1) for C2C.
static ff_res ff_exec(uintptr_t ctx, int plan, int kind, int dir, uintptr_t stream, uintptr_t work,
		uintptr_t in, uintptr_t out) {
	ff_ctx_state st; ff_res o;
	CUresult cr = ff_enter((CUcontext)ctx, &st);
	if (cr) return ff_res_of(FF_CTX, cr);
	o = ff_res_of(FF_STREAM, p_cufftSetStream(plan, (CUstream)stream));
	if (o.stage == FF_OK && work) o = ff_res_of(FF_WORKAREA, p_cufftSetWorkArea(plan, (void*)work));
	if (o.stage == FF_OK) {
		cufftResult r;
		switch (kind) {
		case 0x2a: r = p_cufftExecR2C(plan, (void*)in, (void*)out); break;
		case 0x2c: r = p_cufftExecC2R(plan, (void*)in, (void*)out); break;
		default: r = p_cufftExecC2C(plan, (void*)in, (void*)out, dir);
		}
		o = ff_res_of(FF_CALL, r);
	}
	cr = ff_leave(&st);
	if (o.stage == FF_OK && cr) o = ff_res_of(FF_RESTORE, cr);
	return o;
}

static ff_res ff_destroy(uintptr_t ctx, int plan) {
	ff_ctx_state st; ff_res o;
	CUresult cr = ff_enter((CUcontext)ctx, &st);
	if (cr) return ff_res_of(FF_CTX, cr);
	o = ff_res_of(FF_CALL, p_cufftDestroy(plan));
	cr = ff_leave(&st);
	if (o.stage == FF_OK && cr) o = ff_res_of(FF_RESTORE, cr);
	return o;
}
*/
import "C"

type cu = C.uintptr_t

func res(o C.ff_res) cres { return cres{stage: int(o.stage), code: int(o.code)} }

func cInstall(lib uintptr) string {
	if s := C.ff_install(cu(lib)); s != nil {
		return C.GoString(s)
	}
	return ""
}

func cVersion() (int, cres) {
	var v C.int
	if r := C.ff_version(&v); r != 0 {
		return 0, cres{stage: stageCall, code: int(r)}
	}
	return int(v), cres{}
}

func cPlan(ctx uintptr, rank int, n [2]int, kind int, batch int) (plan int, work uint64, r cres) {
	var h C.int
	var w C.size_t
	o := C.ff_plan(cu(ctx), C.int(rank), C.longlong(n[0]), C.longlong(n[1]), C.int(kind), C.longlong(batch), &h, &w)
	return int(h), uint64(w), res(o)
}

func cExec(ctx uintptr, plan, kind, dir int, stream, work, in, out uintptr) cres {
	return res(C.ff_exec(cu(ctx), C.int(plan), C.int(kind), C.int(dir), cu(stream), cu(work), cu(in), cu(out)))
}

func cDestroy(ctx uintptr, plan int) cres { return res(C.ff_destroy(cu(ctx), C.int(plan))) }
