//go:build cgo && linux

package cufft

/*
#cgo linux LDFLAGS: -ldl
#cgo CFLAGS: -I${SRCDIR}/../internal/libload

// Our own declarations of the cuFFT host API types we use: no CUDA
// headers at build time. A plan is an int handle; streams, contexts and
// device addresses are opaque pointers, uintptr_t on the Go side.
typedef int cufftResult;
typedef int cufftHandle;

// The symbol table (cudalib.h).
#define CL_SYMBOLS(FN) \
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
#define CL_CONTEXT
#include "cudalib.h"

// Setting the execution's work area failed: cuFFT's own stage
// (errors.go's stageWorkArea).
#define FF_WORKAREA CL_OWN

static int ff_version(int *v) { return p_cufftGetVersion(v); }

// ff_plan makes a plan for batch contiguous transforms of rank 1 or 2
// (sizes n) of type (CUFFT_C2C 0x29, R2C 0x2a, C2R 0x2c), with cuFFT's
// own work area turned off: each execution is given one from the array's
// pool (cufftSetWorkArea), as CuPy and PyTorch do, so that pool limits
// count it. *work is the bytes an execution needs.
static cl_res ff_plan(uintptr_t ctx, int rank, long long n0, long long n1, int type, long long batch,
		int *plan, size_t *work) {
	cl_ctx st;
	CL_ENTER(ctx, &st);
	long long n[2] = {n0, n1};
	cufftHandle h = 0;
	cl_res o = cl_res_of(CL_CALL, p_cufftCreate(&h));
	if (o.stage == CL_OK) {
		o = cl_res_of(CL_CALL, p_cufftSetAutoAllocation(h, 0));
		// NULL embeddings: contiguous rows, the complex side of a real
		// transform n/2+1 long in its last dimension.
		if (o.stage == CL_OK) o = cl_res_of(CL_CALL, p_cufftMakePlanMany64(h, rank, n, NULL, 1, 0, NULL, 1, 0, type, batch, work));
		if (o.stage != CL_OK) p_cufftDestroy(h);
		else *plan = h;
	}
	return cl_leave(&st, o);
}

// ff_exec queues one transform of plan on stream with work as its work
// area (0 when the plan needs none): the stream, the work area and the
// execution in one call, under the Go side's lock of the plan, so that
// goroutines sharing a plan never see each other's settings. kind is the
// plan's type; dir is CUFFT_FORWARD (-1) or CUFFT_INVERSE (1) for C2C.
static cl_res ff_exec(uintptr_t ctx, int plan, int kind, int dir, uintptr_t stream, uintptr_t work,
		uintptr_t in, uintptr_t out) {
	cl_ctx st;
	CL_ENTER(ctx, &st);
	cl_res o = cl_res_of(CL_STREAM, p_cufftSetStream(plan, (CUstream)stream));
	if (o.stage == CL_OK && work) o = cl_res_of(FF_WORKAREA, p_cufftSetWorkArea(plan, (void*)work));
	if (o.stage == CL_OK) {
		cufftResult r;
		switch (kind) {
		case 0x2a: r = p_cufftExecR2C(plan, (void*)in, (void*)out); break;
		case 0x2c: r = p_cufftExecC2R(plan, (void*)in, (void*)out); break;
		default: r = p_cufftExecC2C(plan, (void*)in, (void*)out, dir);
		}
		o = cl_res_of(CL_CALL, r);
	}
	return cl_leave(&st, o);
}

static cl_res ff_destroy(uintptr_t ctx, int plan) {
	CL_IN_CONTEXT(ctx, p_cufftDestroy(plan))
}
*/
import "C"

import "github.com/gocuda/gocuda/internal/libload"

type cu = C.uintptr_t

func cInstall(lib uintptr) string { return C.GoString(C.cl_install(cu(lib))) }

func res(o C.cl_res) cres { return cres{Stage: libload.Stage(o.stage), Code: int(o.code)} }

func cVersion() (int, cres) {
	var v C.int
	if r := C.ff_version(&v); r != 0 {
		return 0, cres{Stage: libload.StageCall, Code: int(r)}
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
