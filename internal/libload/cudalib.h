/*
 * cudalib.h is the C side of package libload's binding, shared by every
 * package that calls a dlopen'd CUDA library (blas, curand, cufft, nccl, nvrtc).
 * No CUDA headers exist at build time: a package declares the types and
 * entry points it uses itself, then includes this file:
 *
 *	#cgo CFLAGS: -I${SRCDIR}/../internal/libload
 *	typedef int cublasStatus_t;              // the library's own types
 *	#define CL_SYMBOLS(FN) \
 *	FN(cublasStatus_t, cublasCreate_v2, (void**)) \
 *	FN(cublasStatus_t, cublasDestroy_v2, (void*))
 *	#define CL_OPTIONAL(FN)                  // entry points it may lack (optional)
 *	#define CL_CONTEXT                       // its calls run in a device's context (optional)
 *	#include "cudalib.h"
 *
 * and gets p_cublasCreate_v2 and the rest, cl_install, and with
 * CL_CONTEXT cl_enter/cl_leave and the CL_ENTER and CL_IN_CONTEXT
 * macros. Everything here is static: each package has its own copy of the
 * table, filled once by cl_install. A package includes it from one cgo file
 * only (cgo's C names are package-wide).
 */
#ifndef GOCUDA_CUDALIB_H
#define GOCUDA_CUDALIB_H

#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>

typedef int CUresult;
typedef void *CUcontext, *CUstream;

// Where a call failed, for the Go side's error (libload.Res): the stage
// and its code, a CUresult for the context stages and the library's own
// status for the others. The numbers are libload.Stage's; a package's own
// stages start at CL_OWN.
enum { CL_OK, CL_CTX, CL_STREAM, CL_CALL, CL_RESTORE, CL_OWN };
typedef struct { int stage; int code; } cl_res;

// cl_res_of is stage with code, or CL_OK when code is 0 (success for the
// driver and for every CUDA library).
static inline cl_res cl_res_of(int stage, int code) { cl_res o = {code ? stage : CL_OK, code}; return o; }

#ifndef CL_SYMBOLS
#error "define CL_SYMBOLS(FN), the library's required entry points, before including cudalib.h"
#endif
#ifndef CL_OPTIONAL
#define CL_OPTIONAL(FN)
#endif

// One pointer per entry point: p_<name>, 0 until cl_install (and for an
// optional one the library lacks).
#define CL_DECLARE(ret, name, args) static ret (*p_##name) args;
CL_SYMBOLS(CL_DECLARE)
CL_OPTIONAL(CL_DECLARE)
#undef CL_DECLARE

#ifdef CL_CONTEXT
static CUresult (*p_cuCtxGetCurrent)(CUcontext*);
static CUresult (*p_cuCtxSetCurrent)(CUcontext);
#endif

// cl_install resolves every entry point from an opened library (the
// handle libload.Search.Open returned) and, with CL_CONTEXT, the two
// context calls from the driver package cuda has already loaded (the
// dlopen only takes another reference). It returns the name of the first
// missing required symbol ("libcuda.so.1" when the driver would not open),
// or 0: what libload.Library.Installed words.
static inline const char *cl_install(uintptr_t lib) {
#ifdef CL_CONTEXT
	void *cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!cu) cu = dlopen("libcuda.so", RTLD_NOW | RTLD_LOCAL);
	if (!cu) return "libcuda.so.1";
	p_cuCtxGetCurrent = (CUresult (*)(CUcontext*))dlsym(cu, "cuCtxGetCurrent");
	p_cuCtxSetCurrent = (CUresult (*)(CUcontext))dlsym(cu, "cuCtxSetCurrent");
	if (!p_cuCtxGetCurrent) return "cuCtxGetCurrent";
	if (!p_cuCtxSetCurrent) return "cuCtxSetCurrent";
#endif
#define CL_REQUIRE(ret, name, args) p_##name = (ret (*) args)dlsym((void*)lib, #name); if (!p_##name) return #name;
	CL_SYMBOLS(CL_REQUIRE)
#undef CL_REQUIRE
#define CL_RESOLVE(ret, name, args) p_##name = (ret (*) args)dlsym((void*)lib, #name);
	CL_OPTIONAL(CL_RESOLVE)
#undef CL_RESOLVE
	return 0;
}

#ifdef CL_CONTEXT
// The driver's current context is per OS thread, and a goroutine may move
// between threads between any two Go statements, so each call makes the
// device's context current inside the same C call that uses it. Package
// cuda keeps its own thread-local note of what it made current, which it
// trusts without asking the driver; a context left current behind its
// back would make its next call run in the wrong context. So cl_enter asks
// the driver what is current (a thread-local read in the driver), switches
// only when it differs, and cl_leave switches back: every thread leaves
// with the context it came with. A thread with none current keeps ours:
// cuda's note on it is then either empty or already wrong whatever we do.
// want 0 switches nothing and only notes the thread's context, for calls
// that need none but may change it.
//
// A library that switches contexts itself inside a call (NCCL does, in
// group launches and init) defines CL_LIBRARY_SWITCHES_CONTEXT: cl_leave
// then asks the driver again what is current and puts the thread's own
// back whenever it differs, at the cost of one more thread-local read.
typedef struct { CUcontext prev; int switched; } cl_ctx;

static inline CUresult cl_enter(CUcontext want, cl_ctx *st) {
	st->switched = 0;
	CUresult r = p_cuCtxGetCurrent(&st->prev);
	if (r) return r;
	if (!want || st->prev == want) return 0;
	r = p_cuCtxSetCurrent(want);
	if (r) return r;
	st->switched = st->prev != 0;
	return 0;
}

static inline CUresult cl_restore(cl_ctx *st) {
#ifdef CL_LIBRARY_SWITCHES_CONTEXT
	CUcontext cur;
	CUresult r = p_cuCtxGetCurrent(&cur);
	if (r) return r;
	return st->prev && cur != st->prev ? p_cuCtxSetCurrent(st->prev) : 0;
#else
	return st->switched ? p_cuCtxSetCurrent(st->prev) : 0;
#endif
}

// cl_leave puts the thread's context back and returns o, or the
// CL_RESTORE stage when o succeeded and the restore did not.
static inline cl_res cl_leave(cl_ctx *st, cl_res o) {
	CUresult r = cl_restore(st);
	if (o.stage == CL_OK && r) return cl_res_of(CL_RESTORE, r);
	return o;
}

// CL_ENTER makes ctx current in st for the rest of the function, or
// returns the CL_CTX stage from it.
#define CL_ENTER(ctx, st) do { \
	CUresult cl_r_ = cl_enter((CUcontext)(ctx), (st)); \
	if (cl_r_) return cl_res_of(CL_CTX, cl_r_); \
} while (0)

// CL_IN_CONTEXT is the whole body of a function that makes one library
// call in ctx: enter, the call (its status at CL_CALL), leave.
#define CL_IN_CONTEXT(ctx, call) \
	cl_ctx cl_st_; \
	CL_ENTER(ctx, &cl_st_); \
	return cl_leave(&cl_st_, cl_res_of(CL_CALL, (call)));
#endif // CL_CONTEXT

#endif // GOCUDA_CUDALIB_H
