//go:build cgo && linux

package nccl

/*
#cgo linux LDFLAGS: -ldl
#cgo CFLAGS: -I${SRCDIR}/../internal/libload
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Our own declarations of the NCCL types we use: no NCCL or CUDA headers
// at build time. Handles are opaque pointers; Go sees them as uintptr_t.
// ncclDataType_t and ncclRedOp_t are C enums, passed as int.
typedef int ncclResult_t;
typedef void *ncclComm_t;
typedef struct { char internal[128]; } ncclUniqueId;

// ncclConfig_t as NCCL 2.14 declared it. NCCL reads a config by the size
// and version written in it and takes its defaults for every field a
// newer version added, so this prefix is valid for 2.14 and every later
// release; the version must be 2.14.0 or later for blocking to be read.
typedef struct {
	size_t size;
	unsigned int magic;
	unsigned int version;
	int blocking;
} gn_config;

// The symbol table (cudalib.h).
#define CL_SYMBOLS(FN) \
FN(ncclResult_t, ncclGetVersion, (int*)) \
FN(ncclResult_t, ncclGetUniqueId, (ncclUniqueId*)) \
FN(ncclResult_t, ncclCommInitRankConfig, (ncclComm_t*, int, ncclUniqueId, int, gn_config*)) \
FN(ncclResult_t, ncclCommFinalize, (ncclComm_t)) \
FN(ncclResult_t, ncclCommDestroy, (ncclComm_t)) \
FN(ncclResult_t, ncclCommAbort, (ncclComm_t)) \
FN(ncclResult_t, ncclCommGetAsyncError, (ncclComm_t, ncclResult_t*)) \
FN(const char*, ncclGetErrorString, (ncclResult_t)) \
FN(const char*, ncclGetLastError, (ncclComm_t)) \
FN(ncclResult_t, ncclCommCount, (ncclComm_t, int*)) \
FN(ncclResult_t, ncclCommCuDevice, (ncclComm_t, int*)) \
FN(ncclResult_t, ncclCommUserRank, (ncclComm_t, int*)) \
FN(ncclResult_t, ncclAllReduce, (const void*, void*, size_t, int, int, ncclComm_t, CUstream)) \
FN(ncclResult_t, ncclBroadcast, (const void*, void*, size_t, int, int, ncclComm_t, CUstream)) \
FN(ncclResult_t, ncclReduce, (const void*, void*, size_t, int, int, int, ncclComm_t, CUstream)) \
FN(ncclResult_t, ncclAllGather, (const void*, void*, size_t, int, ncclComm_t, CUstream)) \
FN(ncclResult_t, ncclReduceScatter, (const void*, void*, size_t, int, int, ncclComm_t, CUstream)) \
FN(ncclResult_t, ncclSend, (const void*, size_t, int, int, ncclComm_t, CUstream)) \
FN(ncclResult_t, ncclRecv, (void*, size_t, int, int, ncclComm_t, CUstream)) \
FN(ncclResult_t, ncclGroupStart, (void)) \
FN(ncclResult_t, ncclGroupEnd, (void))
// Buffer registration came with NCCL 2.19: optional, so that 2.14 to
// 2.18 still load; 0 when the library lacks them.
#define CL_OPTIONAL(FN) \
FN(ncclResult_t, ncclCommRegister, (ncclComm_t, void*, size_t, void**)) \
FN(ncclResult_t, ncclCommDeregister, (ncclComm_t, void*))
// NCCL finds its device through the CUDA runtime, which takes the device
// of the thread's current context, so each call makes the communicator's
// context current inside the same C call (cudalib.h says why). NCCL itself
// may switch devices inside a call (group launches, init), so leaving
// asks the driver again what is current.
#define CL_CONTEXT
#define CL_LIBRARY_SWITCHES_CONTEXT
#include "cudalib.h"

// The stage of an operation refused for its group (cudalib.h's first
// stage of a package's own).
#define GN_UNGROUPED CL_OWN

// gn_group_depth is this thread's depth of ncclGroupStart calls made
// through gn_group_start: NCCL's group state is per thread, and an
// operation on a communicator outside the group the thread is in would
// join that group behind the caller's back.
static __thread int gn_group_depth;

static cl_res gn_version(int *v) { CL_IN_CONTEXT(0, p_ncclGetVersion(v)) }

static cl_res gn_unique_id(void *out) { CL_IN_CONTEXT(0, p_ncclGetUniqueId((ncclUniqueId*)out)) }

static gn_config gn_nonblocking(void) {
	gn_config c = {sizeof(gn_config), 0xcafebeef, 21400, 0};
	return c;
}

// gn_init_rank starts a nonblocking ncclCommInitRankConfig on ctx's
// device: it returns ncclInProgress (or ncclSuccess) at once and the Go
// side polls ncclCommGetAsyncError, so that it can give up.
static cl_res gn_init_rank(uintptr_t ctx, uintptr_t *comm, int nranks, const void *id, int rank) {
	gn_config cfg = gn_nonblocking();
	ncclUniqueId uid;
	memcpy(&uid, id, sizeof uid);
	CL_IN_CONTEXT(ctx, p_ncclCommInitRankConfig((ncclComm_t*)comm, nranks, uid, rank, &cfg))
}

// gn_init_all is ncclCommInitAll with nonblocking communicators: one
// unique id, and in one group each device's ncclCommInitRankConfig with
// its context current, as ncclCommInitAll does with cudaSetDevice. The
// first failure is returned; every communicator made is in comms, for
// the caller to abort.
static cl_res gn_init_all(const uintptr_t *ctxs, uintptr_t *comms, int n) {
	cl_ctx st;
	ncclUniqueId uid;
	gn_config cfg = gn_nonblocking();
	cl_res o = cl_res_of(CL_OK, 0);
	CL_ENTER(0, &st); // notes the thread's context, to put back
	CUresult cr;
	ncclResult_t r = p_ncclGetUniqueId(&uid);
	if (r) return cl_res_of(CL_CALL, r);
	r = p_ncclGroupStart();
	if (r) return cl_res_of(CL_CALL, r);
	for (int i = 0; i < n; i++) {
		cr = p_cuCtxSetCurrent((CUcontext)ctxs[i]);
		if (cr) { if (o.stage == CL_OK) o = cl_res_of(CL_CTX, cr); continue; }
		// NCCL asks that the group be ended whatever these return.
		r = p_ncclCommInitRankConfig((ncclComm_t*)&comms[i], n, uid, i, &cfg);
		if (r && r != 7 && o.stage == CL_OK) o = cl_res_of(CL_CALL, r);
	}
	r = p_ncclGroupEnd();
	if (r && r != 7 && o.stage == CL_OK) o = cl_res_of(CL_CALL, r);
	return cl_leave(&st, o);
}

static cl_res gn_async_error(uintptr_t comm, int *res) {
	return cl_res_of(CL_CALL, p_ncclCommGetAsyncError((ncclComm_t)comm, (ncclResult_t*)res));
}

static cl_res gn_finalize(uintptr_t ctx, uintptr_t comm) { CL_IN_CONTEXT(ctx, p_ncclCommFinalize((ncclComm_t)comm)) }
static cl_res gn_destroy(uintptr_t ctx, uintptr_t comm) { CL_IN_CONTEXT(ctx, p_ncclCommDestroy((ncclComm_t)comm)) }
static cl_res gn_abort(uintptr_t ctx, uintptr_t comm) { CL_IN_CONTEXT(ctx, p_ncclCommAbort((ncclComm_t)comm)) }

static int gn_has_register(void) { return p_ncclCommRegister && p_ncclCommDeregister; }

// gn_register registers [buf, buf+size) with comm for its collectives;
// *handle is what gn_deregister takes back.
static cl_res gn_register(uintptr_t ctx, uintptr_t comm, uintptr_t buf, size_t size, uintptr_t *handle) {
	void *h = 0;
	cl_ctx st;
	CL_ENTER(ctx, &st);
	cl_res o = cl_res_of(CL_CALL, p_ncclCommRegister((ncclComm_t)comm, (void*)buf, size, &h));
	*handle = (uintptr_t)h;
	return cl_leave(&st, o);
}
static cl_res gn_deregister(uintptr_t ctx, uintptr_t comm, uintptr_t handle) {
	CL_IN_CONTEXT(ctx, p_ncclCommDeregister((ncclComm_t)comm, (void*)handle))
}

static cl_res gn_comm_info(uintptr_t comm, int *count, int *rank, int *dev) {
	ncclResult_t r = p_ncclCommCount((ncclComm_t)comm, count);
	if (!r) r = p_ncclCommUserRank((ncclComm_t)comm, rank);
	if (!r) r = p_ncclCommCuDevice((ncclComm_t)comm, dev);
	return cl_res_of(CL_CALL, r);
}

static const char *gn_error_string(int r) { return p_ncclGetErrorString ? p_ncclGetErrorString(r) : ""; }
static const char *gn_last_error(uintptr_t comm) { return p_ncclGetLastError ? p_ncclGetLastError((ncclComm_t)comm) : ""; }

// The operations, in the order of the Go side's opKind.
enum { GN_ALLREDUCE = 1, GN_BROADCAST, GN_REDUCE, GN_ALLGATHER, GN_REDUCESCATTER, GN_SEND, GN_RECV };

// gn_op queues one operation on stream. grouped says that the Go side
// put comm in the group this thread is in; an operation whose
// communicator is in no group, on a thread inside one, or the other way
// round, is refused before NCCL sees it.
static cl_res gn_op(uintptr_t ctx, uintptr_t comm, int grouped, int kind, uintptr_t send, uintptr_t recv,
		size_t count, int dtype, int op, int root, uintptr_t stream) {
	if ((gn_group_depth > 0) != (grouped != 0)) return cl_res_of(GN_UNGROUPED, 1);
	ncclComm_t c = (ncclComm_t)comm;
	CUstream s = (CUstream)stream;
	const void *sb = (const void*)send;
	void *rb = (void*)recv;
	ncclResult_t r;
	cl_ctx st;
	CL_ENTER(ctx, &st);
	switch (kind) {
	case GN_ALLREDUCE: r = p_ncclAllReduce(sb, rb, count, dtype, op, c, s); break;
	case GN_BROADCAST: r = p_ncclBroadcast(sb, rb, count, dtype, root, c, s); break;
	case GN_REDUCE: r = p_ncclReduce(sb, rb, count, dtype, op, root, c, s); break;
	case GN_ALLGATHER: r = p_ncclAllGather(sb, rb, count, dtype, c, s); break;
	case GN_REDUCESCATTER: r = p_ncclReduceScatter(sb, rb, count, dtype, op, c, s); break;
	case GN_SEND: r = p_ncclSend(sb, count, dtype, root, c, s); break;
	case GN_RECV: r = p_ncclRecv(rb, count, dtype, root, c, s); break;
	default: r = 4; // ncclInvalidArgument
	}
	return cl_leave(&st, cl_res_of(CL_CALL, r));
}

static cl_res gn_group_start(void) {
	ncclResult_t r = p_ncclGroupStart();
	if (!r) gn_group_depth++;
	return cl_res_of(CL_CALL, r);
}

// gn_group_end launches the group's work; NCCL switches devices while it
// does, so the thread's context is put back.
static cl_res gn_group_end(void) {
	cl_ctx st;
	CL_ENTER(0, &st);
	gn_group_depth--;
	return cl_leave(&st, cl_res_of(CL_CALL, p_ncclGroupEnd()));
}
*/
import "C"

import (
	"unsafe"

	"github.com/gocuda/gocuda/internal/libload"
)

type cu = C.uintptr_t

func cInstall(lib uintptr) string { return C.GoString(C.cl_install(cu(lib))) }

func res(o C.cl_res) cres { return cres{Stage: libload.Stage(o.stage), Code: int(o.code)} }

func cVersion() (int, cres) {
	var v C.int
	o := C.gn_version(&v)
	return int(v), res(o)
}

func cUniqueID() (UniqueID, cres) {
	var id UniqueID
	o := C.gn_unique_id(unsafe.Pointer(&id[0]))
	return id, res(o)
}

func cInitRank(ctx uintptr, nranks int, id UniqueID, rank int) (uintptr, cres) {
	var comm C.uintptr_t
	o := C.gn_init_rank(cu(ctx), &comm, C.int(nranks), unsafe.Pointer(&id[0]), C.int(rank))
	return uintptr(comm), res(o)
}

func cInitAll(ctxs []uintptr) ([]uintptr, cres) {
	n := len(ctxs)
	// Go memory holding no Go pointers may be handed to C for the call.
	cc := make([]C.uintptr_t, n)
	out := make([]C.uintptr_t, n)
	for i, c := range ctxs {
		cc[i] = cu(c)
	}
	o := C.gn_init_all(&cc[0], &out[0], C.int(n))
	comms := make([]uintptr, n)
	for i := range out {
		comms[i] = uintptr(out[i])
	}
	return comms, res(o)
}

func cAsyncError(comm uintptr) (Result, cres) {
	var r C.int
	o := C.gn_async_error(cu(comm), &r)
	return Result(r), res(o)
}

func cFinalize(ctx, comm uintptr) cres { return res(C.gn_finalize(cu(ctx), cu(comm))) }
func cDestroy(ctx, comm uintptr) cres  { return res(C.gn_destroy(cu(ctx), cu(comm))) }
func cAbort(ctx, comm uintptr) cres    { return res(C.gn_abort(cu(ctx), cu(comm))) }

func cCommInfo(comm uintptr) (count, rank, dev int, r cres) {
	var c, rk, d C.int
	o := C.gn_comm_info(cu(comm), &c, &rk, &d)
	return int(c), int(rk), int(d), res(o)
}

func cHasRegister() bool { return C.gn_has_register() != 0 }

func cRegister(ctx, comm, buf uintptr, size uint64) (uintptr, cres) {
	var h C.uintptr_t
	o := C.gn_register(cu(ctx), cu(comm), cu(buf), C.size_t(size), &h)
	return uintptr(h), res(o)
}

func cDeregister(ctx, comm, handle uintptr) cres {
	return res(C.gn_deregister(cu(ctx), cu(comm), cu(handle)))
}

func cErrorString(r Result) string   { return C.GoString(C.gn_error_string(C.int(r))) }
func cLastError(comm uintptr) string { return C.GoString(C.gn_last_error(cu(comm))) }

func cOp(ctx, comm uintptr, grouped bool, kind opKind, send, recv uintptr, count uint64, dtype, op, root int, stream uintptr) cres {
	g := C.int(0)
	if grouped {
		g = 1
	}
	return res(C.gn_op(cu(ctx), cu(comm), g, C.int(kind), cu(send), cu(recv), C.size_t(count),
		C.int(dtype), C.int(op), C.int(root), cu(stream)))
}

func cGroupStart() cres { return res(C.gn_group_start()) }
func cGroupEnd() cres   { return res(C.gn_group_end()) }
