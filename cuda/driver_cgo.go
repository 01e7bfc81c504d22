//go:build cgo && (linux || darwin || freebsd)

// The binding needs cgo and dlopen: linux, darwin and freebsd have both.
// Elsewhere (cgo off, windows, ...) driver_nocgo.go stands in and every
// entry point returns ErrNoDriver with the reason.

package cuda

/*
#cgo linux LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// Our own declarations of the driver types we use: no CUDA headers at build
// time. Handles are opaque pointers on the driver's side; Go sees them as
// uintptr_t so that no C pointer type leaks into Go structs.
typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext, *CUstream, *CUevent, *CUmodule, *CUfunction, *CUmemoryPool;
typedef void *CUgraph, *CUgraphExec, *CUgraphNode;
// cuda.h's CUgraphExecUpdateResultInfo (CUDA 12.0): the result
// (CUgraphExecUpdateResult: CU_GRAPH_EXEC_UPDATE_SUCCESS = 0,
// CU_GRAPH_EXEC_UPDATE_ERROR = 1, ..._ERROR_TOPOLOGY_CHANGED = 2,
// ..._ERROR_NODE_TYPE_CHANGED = 3, ..._ERROR_FUNCTION_CHANGED = 4,
// ..._ERROR_PARAMETERS_CHANGED = 5, ..._ERROR_NOT_SUPPORTED = 6,
// ..._ERROR_UNSUPPORTED_FUNCTION_CHANGE = 7,
// ..._ERROR_ATTRIBUTES_CHANGED = 8) and the nodes it is about.
typedef struct { int result; CUgraphNode errorNode; CUgraphNode errorFromNode; } CUgraphExecUpdateResultInfo;
typedef unsigned long long CUdeviceptr;
typedef unsigned long long CUmemHandle;
typedef struct { unsigned char bytes[16]; } CUuuid;

typedef struct { int type; int id; } CUmemLocation;
typedef struct {
	int type;                 // CU_MEM_ALLOCATION_TYPE_PINNED = 1
	int requestedHandleTypes; // 0: none
	CUmemLocation location;   // CU_MEM_LOCATION_TYPE_DEVICE = 1
	void *win32HandleMetaData;
	unsigned char allocFlags[8];
} CUmemAllocationProp;
typedef struct { CUmemLocation location; int flags; } CUmemAccessDesc;
typedef struct {
	int allocType;
	int handleTypes;
	CUmemLocation location;
	void *win32SecurityAttributes;
	unsigned char reserved[64];
} CUmemPoolProps;

#define GC_MISSING (-2)
#define GC_NODRIVER (-1)

// Entry points, resolved by dlsym at load. The versioned names (_v2) are the
// ones cuda.h maps the plain names to.
#define FN(ret, name, args) static ret (*p_##name) args;
#define FUNCS \
FN(CUresult, cuInit, (unsigned)) \
FN(CUresult, cuDriverGetVersion, (int*)) \
FN(CUresult, cuGetErrorName, (CUresult, const char**)) \
FN(CUresult, cuGetErrorString, (CUresult, const char**)) \
FN(CUresult, cuDeviceGetCount, (int*)) \
FN(CUresult, cuDeviceGet, (CUdevice*, int)) \
FN(CUresult, cuDeviceGetName, (char*, int, CUdevice)) \
FN(CUresult, cuDeviceTotalMem_v2, (size_t*, CUdevice)) \
FN(CUresult, cuDeviceGetAttribute, (int*, int, CUdevice)) \
FN(CUresult, cuDeviceGetPCIBusId, (char*, int, CUdevice)) \
FN(CUresult, cuDeviceGetUuid, (CUuuid*, CUdevice)) \
FN(CUresult, cuDeviceGetUuid_v2, (CUuuid*, CUdevice)) \
FN(CUresult, cuDeviceCanAccessPeer, (int*, CUdevice, CUdevice)) \
FN(CUresult, cuDevicePrimaryCtxRetain, (CUcontext*, CUdevice)) \
FN(CUresult, cuDevicePrimaryCtxRelease_v2, (CUdevice)) \
FN(CUresult, cuCtxSetCurrent, (CUcontext)) \
FN(CUresult, cuCtxGetCurrent, (CUcontext*)) \
FN(CUresult, cuCtxGetDevice, (CUdevice*)) \
FN(CUresult, cuCtxSynchronize, (void)) \
FN(CUresult, cuCtxEnablePeerAccess, (CUcontext, unsigned)) \
FN(CUresult, cuMemGetInfo_v2, (size_t*, size_t*)) \
FN(CUresult, cuMemAlloc_v2, (CUdeviceptr*, size_t)) \
FN(CUresult, cuMemFree_v2, (CUdeviceptr)) \
FN(CUresult, cuMemAllocManaged, (CUdeviceptr*, size_t, unsigned)) \
FN(CUresult, cuMemAllocHost_v2, (void**, size_t)) \
FN(CUresult, cuMemFreeHost, (void*)) \
FN(CUresult, cuMemcpyHtoD_v2, (CUdeviceptr, const void*, size_t)) \
FN(CUresult, cuMemcpyDtoH_v2, (void*, CUdeviceptr, size_t)) \
FN(CUresult, cuMemcpyDtoD_v2, (CUdeviceptr, CUdeviceptr, size_t)) \
FN(CUresult, cuMemcpyHtoDAsync_v2, (CUdeviceptr, const void*, size_t, CUstream)) \
FN(CUresult, cuMemcpyDtoHAsync_v2, (void*, CUdeviceptr, size_t, CUstream)) \
FN(CUresult, cuMemcpyDtoDAsync_v2, (CUdeviceptr, CUdeviceptr, size_t, CUstream)) \
FN(CUresult, cuMemcpyPeerAsync, (CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t, CUstream)) \
FN(CUresult, cuMemsetD8Async, (CUdeviceptr, unsigned char, size_t, CUstream)) \
FN(CUresult, cuMemsetD32Async, (CUdeviceptr, unsigned int, size_t, CUstream)) \
FN(CUresult, cuStreamCreate, (CUstream*, unsigned)) \
FN(CUresult, cuStreamDestroy_v2, (CUstream)) \
FN(CUresult, cuStreamSynchronize, (CUstream)) \
FN(CUresult, cuStreamQuery, (CUstream)) \
FN(CUresult, cuStreamWaitEvent, (CUstream, CUevent, unsigned)) \
FN(CUresult, cuEventCreate, (CUevent*, unsigned)) \
FN(CUresult, cuEventDestroy_v2, (CUevent)) \
FN(CUresult, cuEventRecord, (CUevent, CUstream)) \
FN(CUresult, cuEventQuery, (CUevent)) \
FN(CUresult, cuEventSynchronize, (CUevent)) \
FN(CUresult, cuEventElapsedTime, (float*, CUevent, CUevent)) \
FN(CUresult, cuModuleLoadData, (CUmodule*, const void*)) \
FN(CUresult, cuModuleUnload, (CUmodule)) \
FN(CUresult, cuModuleGetFunction, (CUfunction*, CUmodule, const char*)) \
FN(CUresult, cuLaunchKernel, (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void**, void**)) \
FN(CUresult, cuMemGetAllocationGranularity, (size_t*, const CUmemAllocationProp*, int)) \
FN(CUresult, cuMemAddressReserve, (CUdeviceptr*, size_t, size_t, CUdeviceptr, unsigned long long)) \
FN(CUresult, cuMemAddressFree, (CUdeviceptr, size_t)) \
FN(CUresult, cuMemCreate, (CUmemHandle*, size_t, const CUmemAllocationProp*, unsigned long long)) \
FN(CUresult, cuMemRelease, (CUmemHandle)) \
FN(CUresult, cuMemMap, (CUdeviceptr, size_t, size_t, CUmemHandle, unsigned long long)) \
FN(CUresult, cuMemUnmap, (CUdeviceptr, size_t)) \
FN(CUresult, cuMemSetAccess, (CUdeviceptr, size_t, const CUmemAccessDesc*, size_t)) \
FN(CUresult, cuMemPoolCreate, (CUmemoryPool*, const CUmemPoolProps*)) \
FN(CUresult, cuMemPoolDestroy, (CUmemoryPool)) \
FN(CUresult, cuMemPoolSetAttribute, (CUmemoryPool, int, void*)) \
FN(CUresult, cuMemPoolGetAttribute, (CUmemoryPool, int, void*)) \
FN(CUresult, cuMemPoolTrimTo, (CUmemoryPool, size_t)) \
FN(CUresult, cuMemAllocFromPoolAsync, (CUdeviceptr*, size_t, CUmemoryPool, CUstream)) \
FN(CUresult, cuMemFreeAsync, (CUdeviceptr, CUstream)) \
FN(CUresult, cuStreamBeginCapture_v2, (CUstream, int)) \
FN(CUresult, cuStreamEndCapture, (CUstream, CUgraph*)) \
FN(CUresult, cuStreamIsCapturing, (CUstream, int*)) \
FN(CUresult, cuGraphInstantiateWithFlags, (CUgraphExec*, CUgraph, unsigned long long)) \
FN(CUresult, cuGraphLaunch, (CUgraphExec, CUstream)) \
FN(CUresult, cuGraphExecUpdate_v2, (CUgraphExec, CUgraph, CUgraphExecUpdateResultInfo*)) \
FN(CUresult, cuGraphExecDestroy, (CUgraphExec)) \
FN(CUresult, cuGraphDestroy, (CUgraph)) \
FN(CUresult, cuGraphGetNodes, (CUgraph, void**, size_t*))
FUNCS
#undef FN

static void *lib;
static char load_error[512];

// The driver's file: macOS drivers (CUDA 10.2 and before) installed a
// dylib; linux and freebsd install libcuda.so.1.
#ifdef __APPLE__
#define GC_LIBS {"libcuda.dylib", "/usr/local/cuda/lib/libcuda.dylib", 0}
#else
#define GC_LIBS {"libcuda.so.1", "libcuda.so", 0}
#endif

// gc_load opens the driver and resolves every entry point. A missing entry
// point is not fatal: its wrapper reports GC_MISSING, so an older driver
// still serves everything it has.
static int gc_load(void) {
	const char *names[] = GC_LIBS;
	for (int i = 0; names[i] && !lib; i++) {
		lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
		// Report why the first, canonical name failed: that is the one a
		// driver installs.
		const char *e = lib ? 0 : dlerror();
		if (i == 0 && e) snprintf(load_error, sizeof load_error, "%s", e);
	}
	if (!lib) return 0;
#define FN(ret, name, args) p_##name = (ret (*) args)dlsym(lib, #name);
	FUNCS
#undef FN
	if (!p_cuInit || !p_cuCtxSetCurrent) {
		snprintf(load_error, sizeof load_error, "%s lacks cuInit or cuCtxSetCurrent", names[0]);
		return 0;
	}
	return 1;
}
static const char *gc_load_error(void) { return load_error; }

// The driver's current context is per OS thread, and a goroutine may move
// between threads between any two Go statements. So every wrapper that needs
// a context receives it and makes it current inside the same C call. The
// thread-local cache makes that free when the thread already has it.
static __thread CUcontext tls_ctx;
#define CTX(c) do { \
	if (tls_ctx != (CUcontext)(c)) { \
		CUresult r_ = p_cuCtxSetCurrent((CUcontext)(c)); \
		if (r_) return r_; \
		tls_ctx = (CUcontext)(c); \
	} } while (0)
#define NEED(name) if (!p_##name) return GC_MISSING

// Calls that produce a value return it with the result in a struct: a Go
// variable whose address is passed to C escapes to the heap, one allocation
// per call on paths that must not allocate.
typedef struct { CUresult r; unsigned long long v; } gc_rv;

// For benchmarks: the cost of a bare cgo call, and of a cgo call into the
// driver through its function pointer with no context handling of ours.
static void gc_noop(void) {}
static gc_rv gc_raw_ctx_get_current(void) {
	gc_rv o = {GC_MISSING, 0}; CUcontext c = 0;
	if (p_cuCtxGetCurrent) { o.r = p_cuCtxGetCurrent(&c); o.v = (uintptr_t)c; }
	return o;
}

// Fast calls. A cgo call costs about 55 ns on the H100 machine, most of it
// the runtime's bookkeeping for a call that might block (entersyscall, a
// possible hand-off of the P). The calls below never block: they read or
// queue, and return. They take one pointer to an argument block, so that
// they can run on the system stack through runtime.asmcgocall, which skips
// that bookkeeping (about 9 ns instead of 27 on the build machine): see
// fast_linkname.go for when. Otherwise gc_fast_cgo runs them through a
// plain cgo call (fast_cgo.go). Anything that may wait (synchronize,
// allocate, free, copy to the host) is always a plain cgo call.
typedef struct { uintptr_t ctx, a, b; CUresult r; unsigned long long v; } gc_fast;
_Static_assert(sizeof(gc_fast) == 40, "gc_fast must match Go's fastArgs");
#define FAST_CTX(f) do { \
	if (tls_ctx != (CUcontext)(f)->ctx) { \
		(f)->r = p_cuCtxSetCurrent((CUcontext)(f)->ctx); \
		if ((f)->r) return; \
		tls_ctx = (CUcontext)(f)->ctx; \
	} } while (0)
#define FAST_NEED(f, name) if (!p_##name) { (f)->r = GC_MISSING; return; }
static void gc_fast_stream_query(void *p) { gc_fast *f = p; FAST_NEED(f, cuStreamQuery); FAST_CTX(f); f->r = p_cuStreamQuery((CUstream)f->a); }
static void gc_fast_event_query(void *p) { gc_fast *f = p; FAST_NEED(f, cuEventQuery); FAST_CTX(f); f->r = p_cuEventQuery((CUevent)f->a); }
static void gc_fast_event_record(void *p) { gc_fast *f = p; FAST_NEED(f, cuEventRecord); FAST_CTX(f); f->r = p_cuEventRecord((CUevent)f->a, (CUstream)f->b); }
static void gc_fast_stream_wait_event(void *p) { gc_fast *f = p; FAST_NEED(f, cuStreamWaitEvent); FAST_CTX(f); f->r = p_cuStreamWaitEvent((CUstream)f->a, (CUevent)f->b, 0); }
static void gc_fast_ctx_get_device(void *p) { gc_fast *f = p; CUdevice d = 0; FAST_NEED(f, cuCtxGetDevice); FAST_CTX(f); f->r = p_cuCtxGetDevice(&d); f->v = (unsigned long long)d; }
// gc_fast_sum touches no driver: it returns a+b, so that tests and
// benchmarks can check and time the call path itself on any machine.
static void gc_fast_sum(void *p) { gc_fast *f = p; f->r = 0; f->v = (unsigned long long)(f->a + f->b); }
static void *gc_fast_fn(int which) {
	switch (which) {
	case 0: return (void*)gc_fast_stream_query;
	case 1: return (void*)gc_fast_event_query;
	case 2: return (void*)gc_fast_event_record;
	case 3: return (void*)gc_fast_stream_wait_event;
	case 4: return (void*)gc_fast_ctx_get_device;
	case 5: return (void*)gc_fast_sum;
	}
	return 0;
}
// gc_fast_cgo runs a gc_fast_ function through a plain cgo call. The
// argument block lives on the C stack and the result comes back by value:
// a Go pointer handed to C would escape, one allocation a call.
static gc_rv gc_fast_cgo(void *fn, uintptr_t ctx, uintptr_t a, uintptr_t b) {
	gc_fast f = {ctx, a, b, 0, 0};
	((void (*)(void*))fn)(&f);
	gc_rv o = {f.r, f.v};
	return o;
}

// gc_bench_c times n calls of one driver function made from C, so that
// the Go benchmark can subtract what the driver itself costs and report the
// binding's own overhead. which: 0 cuStreamQuery(h), 1 cuEventQuery(h),
// 2 cuCtxGetDevice, 3 cuCtxGetCurrent.
#include <time.h>
static long long gc_bench_c(int which, uintptr_t ctx, uintptr_t h, long long n) {
	if (tls_ctx != (CUcontext)ctx) { if (p_cuCtxSetCurrent((CUcontext)ctx)) return -1; tls_ctx = (CUcontext)ctx; }
	struct timespec a, b; CUdevice d; CUcontext c;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long long i = 0; i < n; i++) {
		switch (which) {
		case 0: p_cuStreamQuery((CUstream)h); break;
		case 1: p_cuEventQuery((CUevent)h); break;
		case 2: p_cuCtxGetDevice(&d); break;
		case 3: p_cuCtxGetCurrent(&c); break;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (long long)(b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec);
}

// gc_bench_launch times n launches, made from C with their parameters built
// once, of a kernel taking a pointer and a 32-bit count (the tests'
// add_one) on stream s: what cuLaunchKernel itself costs the host. It
// launches in bursts of burst and synchronizes between them, untimed, so
// that the driver's launch queue never fills: a full queue makes a launch
// wait for the GPU, and the loop would time the GPU instead.
static long long gc_bench_launch(uintptr_t ctx, uintptr_t f, uintptr_t s, CUdeviceptr p, unsigned m,
		unsigned grid, unsigned block, long long n, long long burst) {
	if (!p_cuLaunchKernel || !p_cuStreamSynchronize) return -1;
	if (tls_ctx != (CUcontext)ctx) { if (p_cuCtxSetCurrent((CUcontext)ctx)) return -1; tls_ctx = (CUcontext)ctx; }
	void *params[2] = {&p, &m};
	struct timespec a, b;
	long long total = 0;
	for (long long done = 0; done < n; done += burst) {
		if (p_cuStreamSynchronize((CUstream)s)) return -1;
		clock_gettime(CLOCK_MONOTONIC, &a);
		for (long long i = 0; i < burst; i++)
			if (p_cuLaunchKernel((CUfunction)f, grid, 1, 1, block, 1, 1, 0, (CUstream)s, params, 0)) return -1;
		clock_gettime(CLOCK_MONOTONIC, &b);
		total += (long long)(b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec);
	}
	return total;
}

static CUresult gc_init(void) { return p_cuInit(0); }
static CUresult gc_driver_version(int *v) { NEED(cuDriverGetVersion); return p_cuDriverGetVersion(v); }
static const char *gc_error_name(CUresult r) {
	const char *s = 0;
	if (!p_cuGetErrorName || p_cuGetErrorName(r, &s)) return "";
	return s ? s : "";
}
static const char *gc_error_string(CUresult r) {
	const char *s = 0;
	if (!p_cuGetErrorString || p_cuGetErrorString(r, &s)) return "";
	return s ? s : "";
}
static CUresult gc_device_count(int *n) { NEED(cuDeviceGetCount); return p_cuDeviceGetCount(n); }
static CUresult gc_device_get(int *d, int ord) { NEED(cuDeviceGet); return p_cuDeviceGet(d, ord); }
static CUresult gc_device_name(char *b, int n, int d) { NEED(cuDeviceGetName); return p_cuDeviceGetName(b, n, d); }
static CUresult gc_device_total_mem(size_t *s, int d) { NEED(cuDeviceTotalMem_v2); return p_cuDeviceTotalMem_v2(s, d); }
static CUresult gc_device_attr(int *v, int a, int d) { NEED(cuDeviceGetAttribute); return p_cuDeviceGetAttribute(v, a, d); }
static CUresult gc_device_pci(char *b, int n, int d) { NEED(cuDeviceGetPCIBusId); return p_cuDeviceGetPCIBusId(b, n, d); }
// _v2 (CUDA 11.4 and later) gives a MIG instance's own UUID where the
// first version gives its GPU's; older drivers have only the first.
static CUresult gc_device_uuid(unsigned char *out, int d) {
	CUuuid u; CUresult r;
	if (p_cuDeviceGetUuid_v2) r = p_cuDeviceGetUuid_v2(&u, d);
	else if (p_cuDeviceGetUuid) r = p_cuDeviceGetUuid(&u, d);
	else return GC_MISSING;
	if (!r) memcpy(out, u.bytes, 16);
	return r;
}
static CUresult gc_device_can_access_peer(int *v, int d, int p) { NEED(cuDeviceCanAccessPeer); return p_cuDeviceCanAccessPeer(v, d, p); }
static CUresult gc_primary_retain(uintptr_t *c, int d) { NEED(cuDevicePrimaryCtxRetain); return p_cuDevicePrimaryCtxRetain((CUcontext*)c, d); }

static CUresult gc_ctx_sync(uintptr_t c) { CTX(c); NEED(cuCtxSynchronize); return p_cuCtxSynchronize(); }
static CUresult gc_ctx_enable_peer(uintptr_t c, uintptr_t peer) { CTX(c); NEED(cuCtxEnablePeerAccess); return p_cuCtxEnablePeerAccess((CUcontext)peer, 0); }
static CUresult gc_mem_info(uintptr_t c, size_t *f, size_t *t) { CTX(c); NEED(cuMemGetInfo_v2); return p_cuMemGetInfo_v2(f, t); }
static gc_rv gc_mem_alloc(uintptr_t c, size_t n) {
	gc_rv o = {GC_MISSING, 0}; CUdeviceptr p = 0;
	if (tls_ctx != (CUcontext)c) { o.r = p_cuCtxSetCurrent((CUcontext)c); if (o.r) return o; tls_ctx = (CUcontext)c; }
	if (p_cuMemAlloc_v2) { o.r = p_cuMemAlloc_v2(&p, n); o.v = p; }
	return o;
}
static CUresult gc_mem_free(uintptr_t c, CUdeviceptr p) { CTX(c); NEED(cuMemFree_v2); return p_cuMemFree_v2(p); }
static CUresult gc_mem_alloc_managed(uintptr_t c, CUdeviceptr *p, size_t n, unsigned f) { CTX(c); NEED(cuMemAllocManaged); return p_cuMemAllocManaged(p, n, f); }
static CUresult gc_mem_alloc_host(uintptr_t c, void **p, size_t n) { CTX(c); NEED(cuMemAllocHost_v2); return p_cuMemAllocHost_v2(p, n); }
static CUresult gc_mem_free_host(uintptr_t c, void *p) { CTX(c); NEED(cuMemFreeHost); return p_cuMemFreeHost(p); }
static CUresult gc_htod(uintptr_t c, CUdeviceptr d, const void *h, size_t n) { CTX(c); NEED(cuMemcpyHtoD_v2); return p_cuMemcpyHtoD_v2(d, h, n); }
static CUresult gc_dtoh(uintptr_t c, void *h, CUdeviceptr d, size_t n) { CTX(c); NEED(cuMemcpyDtoH_v2); return p_cuMemcpyDtoH_v2(h, d, n); }
static CUresult gc_dtod(uintptr_t c, CUdeviceptr d, CUdeviceptr s, size_t n) { CTX(c); NEED(cuMemcpyDtoD_v2); return p_cuMemcpyDtoD_v2(d, s, n); }
static CUresult gc_htod_async(uintptr_t c, CUdeviceptr d, const void *h, size_t n, uintptr_t s) { CTX(c); NEED(cuMemcpyHtoDAsync_v2); return p_cuMemcpyHtoDAsync_v2(d, h, n, (CUstream)s); }
static CUresult gc_dtoh_async(uintptr_t c, void *h, CUdeviceptr d, size_t n, uintptr_t s) { CTX(c); NEED(cuMemcpyDtoHAsync_v2); return p_cuMemcpyDtoHAsync_v2(h, d, n, (CUstream)s); }
static CUresult gc_dtod_async(uintptr_t c, CUdeviceptr d, CUdeviceptr src, size_t n, uintptr_t s) { CTX(c); NEED(cuMemcpyDtoDAsync_v2); return p_cuMemcpyDtoDAsync_v2(d, src, n, (CUstream)s); }
static CUresult gc_peer_async(uintptr_t c, CUdeviceptr d, uintptr_t dc, CUdeviceptr src, uintptr_t sc, size_t n, uintptr_t s) { CTX(c); NEED(cuMemcpyPeerAsync); return p_cuMemcpyPeerAsync(d, (CUcontext)dc, src, (CUcontext)sc, n, (CUstream)s); }
static CUresult gc_memset8_async(uintptr_t c, CUdeviceptr d, unsigned char v, size_t n, uintptr_t s) { CTX(c); NEED(cuMemsetD8Async); return p_cuMemsetD8Async(d, v, n, (CUstream)s); }
static CUresult gc_memset32_async(uintptr_t c, CUdeviceptr d, unsigned v, size_t n, uintptr_t s) { CTX(c); NEED(cuMemsetD32Async); return p_cuMemsetD32Async(d, v, n, (CUstream)s); }

static CUresult gc_stream_create(uintptr_t c, uintptr_t *s, unsigned f) { CTX(c); NEED(cuStreamCreate); return p_cuStreamCreate((CUstream*)s, f); }
static CUresult gc_stream_destroy(uintptr_t c, uintptr_t s) { CTX(c); NEED(cuStreamDestroy_v2); return p_cuStreamDestroy_v2((CUstream)s); }
static CUresult gc_stream_sync(uintptr_t c, uintptr_t s) { CTX(c); NEED(cuStreamSynchronize); return p_cuStreamSynchronize((CUstream)s); }
static CUresult gc_event_create(uintptr_t c, uintptr_t *e, unsigned f) { CTX(c); NEED(cuEventCreate); return p_cuEventCreate((CUevent*)e, f); }
static CUresult gc_event_destroy(uintptr_t c, uintptr_t e) { CTX(c); NEED(cuEventDestroy_v2); return p_cuEventDestroy_v2((CUevent)e); }
static CUresult gc_event_sync(uintptr_t c, uintptr_t e) { CTX(c); NEED(cuEventSynchronize); return p_cuEventSynchronize((CUevent)e); }
static CUresult gc_event_elapsed(uintptr_t c, float *ms, uintptr_t a, uintptr_t b) { CTX(c); NEED(cuEventElapsedTime); return p_cuEventElapsedTime(ms, (CUevent)a, (CUevent)b); }

static CUresult gc_module_load(uintptr_t c, uintptr_t *m, const void *image) { CTX(c); NEED(cuModuleLoadData); return p_cuModuleLoadData((CUmodule*)m, image); }
static CUresult gc_module_unload(uintptr_t c, uintptr_t m) { CTX(c); NEED(cuModuleUnload); return p_cuModuleUnload((CUmodule)m); }
static CUresult gc_module_function(uintptr_t c, uintptr_t *f, uintptr_t m, const char *name) { CTX(c); NEED(cuModuleGetFunction); return p_cuModuleGetFunction((CUfunction*)f, (CUmodule)m, name); }

// gc_launch takes the kernel's arguments packed in one buffer with their
// offsets, and builds the array of pointers cuLaunchKernel wants on the C
// stack: a Go slice of pointers into Go memory may not be handed to C.
static CUresult gc_launch(uintptr_t c, uintptr_t f, unsigned gx, unsigned gy, unsigned gz,
		unsigned bx, unsigned by, unsigned bz, unsigned shmem, uintptr_t s,
		char *argbuf, const int *offsets, int nargs) {
	CTX(c); NEED(cuLaunchKernel);
	void *params[64];
	if (nargs > 64) return 1; // CUDA_ERROR_INVALID_VALUE
	for (int i = 0; i < nargs; i++) params[i] = argbuf + offsets[i];
	return p_cuLaunchKernel((CUfunction)f, gx, gy, gz, bx, by, bz, shmem, (CUstream)s, params, 0);
}

// gc_launch_words is gc_launch for arguments of one 64-bit word each (a
// pointer, a 64-bit value, or a 32-bit value in the word's first four
// bytes): the words come by value, copied into the cgo call's frame, so
// the Go side hands C no pointer and allocates nothing, and the pointers
// cuLaunchKernel wants are built here on the C stack.
#define GC_MAX_WORDS 16
typedef struct { unsigned long long v[GC_MAX_WORDS]; } gc_words;
static CUresult gc_launch_words(uintptr_t c, uintptr_t f, unsigned gx, unsigned gy, unsigned gz,
		unsigned bx, unsigned by, unsigned bz, unsigned shmem, uintptr_t s, gc_words w, int n) {
	CTX(c); NEED(cuLaunchKernel);
	void *params[GC_MAX_WORDS];
	if (n < 0 || n > GC_MAX_WORDS) return 1; // CUDA_ERROR_INVALID_VALUE
	for (int i = 0; i < n; i++) params[i] = &w.v[i];
	return p_cuLaunchKernel((CUfunction)f, gx, gy, gz, bx, by, bz, shmem, (CUstream)s, params, 0);
}
// gc_words_at reads word i of w as a kernel parameter of 4 (size 4) or 8
// bytes at &w.v[i] would: for tests of what LaunchWords hands the driver.
static unsigned long long gc_words_at(gc_words w, int i, int size) {
	if (i < 0 || i >= GC_MAX_WORDS) return 0;
	if (size == 4) { unsigned x; memcpy(&x, &w.v[i], 4); return x; }
	return w.v[i];
}

static void gc_prop(CUmemAllocationProp *p, int dev) {
	memset(p, 0, sizeof *p);
	p->type = 1;          // CU_MEM_ALLOCATION_TYPE_PINNED
	p->location.type = 1; // CU_MEM_LOCATION_TYPE_DEVICE
	p->location.id = dev;
}
static CUresult gc_granularity(uintptr_t c, size_t *g, int dev, int recommended) {
	CTX(c); NEED(cuMemGetAllocationGranularity);
	CUmemAllocationProp p; gc_prop(&p, dev);
	return p_cuMemGetAllocationGranularity(g, &p, recommended ? 1 : 0);
}
static CUresult gc_address_reserve(uintptr_t c, CUdeviceptr *p, size_t n, size_t align) { CTX(c); NEED(cuMemAddressReserve); return p_cuMemAddressReserve(p, n, align, 0, 0); }
static CUresult gc_address_free(uintptr_t c, CUdeviceptr p, size_t n) { CTX(c); NEED(cuMemAddressFree); return p_cuMemAddressFree(p, n); }
static CUresult gc_mem_create(uintptr_t c, CUmemHandle *h, size_t n, int dev) {
	CTX(c); NEED(cuMemCreate);
	CUmemAllocationProp p; gc_prop(&p, dev);
	return p_cuMemCreate(h, n, &p, 0);
}
static CUresult gc_mem_release(uintptr_t c, CUmemHandle h) { CTX(c); NEED(cuMemRelease); return p_cuMemRelease(h); }
static CUresult gc_mem_map(uintptr_t c, CUdeviceptr va, size_t n, CUmemHandle h) { CTX(c); NEED(cuMemMap); return p_cuMemMap(va, n, 0, h, 0); }
static CUresult gc_mem_unmap(uintptr_t c, CUdeviceptr va, size_t n) { CTX(c); NEED(cuMemUnmap); return p_cuMemUnmap(va, n); }
static CUresult gc_mem_set_access(uintptr_t c, CUdeviceptr va, size_t n, int dev) {
	CTX(c); NEED(cuMemSetAccess);
	CUmemAccessDesc d; d.location.type = 1; d.location.id = dev; d.flags = 3; // PROT_READWRITE
	return p_cuMemSetAccess(va, n, &d, 1);
}
static CUresult gc_pool_create(uintptr_t c, uintptr_t *pool, int dev) {
	CTX(c); NEED(cuMemPoolCreate);
	CUmemPoolProps p; memset(&p, 0, sizeof p);
	p.allocType = 1; p.location.type = 1; p.location.id = dev;
	return p_cuMemPoolCreate((CUmemoryPool*)pool, &p);
}
static CUresult gc_pool_destroy(uintptr_t c, uintptr_t pool) { CTX(c); NEED(cuMemPoolDestroy); return p_cuMemPoolDestroy((CUmemoryPool)pool); }
// Attributes 1-3 are ints, 4-8 are 64-bit: take a 64-bit value and pass the
// width the attribute has.
static CUresult gc_pool_set(uintptr_t c, uintptr_t pool, int attr, unsigned long long v) {
	CTX(c); NEED(cuMemPoolSetAttribute);
	int i = (int)v;
	return p_cuMemPoolSetAttribute((CUmemoryPool)pool, attr, attr <= 3 ? (void*)&i : (void*)&v);
}
static CUresult gc_pool_get(uintptr_t c, uintptr_t pool, int attr, unsigned long long *v) {
	CTX(c); NEED(cuMemPoolGetAttribute);
	int i = 0; *v = 0;
	CUresult r = p_cuMemPoolGetAttribute((CUmemoryPool)pool, attr, attr <= 3 ? (void*)&i : (void*)v);
	if (attr <= 3) *v = (unsigned long long)i;
	return r;
}
static CUresult gc_pool_trim(uintptr_t c, uintptr_t pool, size_t keep) { CTX(c); NEED(cuMemPoolTrimTo); return p_cuMemPoolTrimTo((CUmemoryPool)pool, keep); }
static gc_rv gc_alloc_async(uintptr_t c, size_t n, uintptr_t pool, uintptr_t s) {
	gc_rv o = {GC_MISSING, 0}; CUdeviceptr p = 0;
	if (tls_ctx != (CUcontext)c) { o.r = p_cuCtxSetCurrent((CUcontext)c); if (o.r) return o; tls_ctx = (CUcontext)c; }
	if (p_cuMemAllocFromPoolAsync) { o.r = p_cuMemAllocFromPoolAsync(&p, n, (CUmemoryPool)pool, (CUstream)s); o.v = p; }
	return o;
}
static CUresult gc_free_async(uintptr_t c, CUdeviceptr p, uintptr_t s) { CTX(c); NEED(cuMemFreeAsync); return p_cuMemFreeAsync(p, (CUstream)s); }

// Stream capture and graphs. The capture mode is cuda.h's
// CUstreamCaptureMode (CU_STREAM_CAPTURE_MODE_GLOBAL = 0, _THREAD_LOCAL =
// 1, _RELAXED = 2); the status CUstreamCaptureStatus
// (CU_STREAM_CAPTURE_STATUS_NONE = 0, _ACTIVE = 1, _INVALIDATED = 2).
static CUresult gc_begin_capture(uintptr_t c, uintptr_t s, int mode) { CTX(c); NEED(cuStreamBeginCapture_v2); return p_cuStreamBeginCapture_v2((CUstream)s, mode); }
static CUresult gc_end_capture(uintptr_t c, uintptr_t s, uintptr_t *g) { CTX(c); NEED(cuStreamEndCapture); return p_cuStreamEndCapture((CUstream)s, (CUgraph*)g); }
static CUresult gc_is_capturing(uintptr_t c, uintptr_t s, int *st) { CTX(c); NEED(cuStreamIsCapturing); return p_cuStreamIsCapturing((CUstream)s, st); }
static CUresult gc_graph_instantiate(uintptr_t c, uintptr_t *e, uintptr_t g) { CTX(c); NEED(cuGraphInstantiateWithFlags); return p_cuGraphInstantiateWithFlags((CUgraphExec*)e, (CUgraph)g, 0); }
static CUresult gc_graph_launch(uintptr_t c, uintptr_t e, uintptr_t s) { CTX(c); NEED(cuGraphLaunch); return p_cuGraphLaunch((CUgraphExec)e, (CUstream)s); }
static CUresult gc_graph_exec_update(uintptr_t c, uintptr_t e, uintptr_t g, int *result) {
	CTX(c); NEED(cuGraphExecUpdate_v2);
	CUgraphExecUpdateResultInfo info; memset(&info, 0, sizeof info);
	CUresult r = p_cuGraphExecUpdate_v2((CUgraphExec)e, (CUgraph)g, &info);
	*result = info.result;
	return r;
}
static CUresult gc_graph_exec_destroy(uintptr_t c, uintptr_t e) { CTX(c); NEED(cuGraphExecDestroy); return p_cuGraphExecDestroy((CUgraphExec)e); }
static CUresult gc_graph_destroy(uintptr_t c, uintptr_t g) { CTX(c); NEED(cuGraphDestroy); return p_cuGraphDestroy((CUgraph)g); }
static CUresult gc_graph_nodes(uintptr_t c, uintptr_t g, size_t *n) { CTX(c); NEED(cuGraphGetNodes); return p_cuGraphGetNodes((CUgraph)g, 0, n); }
*/
import "C"

import (
	"unsafe"
)

type u = C.uintptr_t

const haveBinding = true

func r(x C.CUresult) Result { return Result(x) }

func cLoad() (bool, string) {
	if C.gc_load() == 0 {
		return false, C.GoString(C.gc_load_error())
	}
	return true, ""
}

func loaded() bool { return state.ok }

func errorName(x Result) string {
	if !loaded() || x < 0 {
		return ""
	}
	return C.GoString(C.gc_error_name(C.CUresult(x)))
}

func errorString(x Result) string {
	if !loaded() || x < 0 {
		return ""
	}
	return C.GoString(C.gc_error_string(C.CUresult(x)))
}

func cInit() Result { return r(C.gc_init()) }

func cNoop() { C.gc_noop() }

func cRawCtxGetCurrent() (uintptr, Result) {
	o := C.gc_raw_ctx_get_current()
	return uintptr(o.v), r(o.r)
}

func cCtxGetDevice(c uintptr) (int, Result) {
	x, v := fast(fastCtxGetDevice, c, 0, 0)
	return int(v), x
}

// fastArgs mirrors gc_fast.
type fastArgs struct {
	ctx, a, b uintptr
	r         int32
	_         int32
	v         uint64
}

var (
	fastStreamQuery     = C.gc_fast_fn(0)
	fastEventQuery      = C.gc_fast_fn(1)
	fastEventRecord     = C.gc_fast_fn(2)
	fastStreamWaitEvent = C.gc_fast_fn(3)
	fastCtxGetDevice    = C.gc_fast_fn(4)
	fastSum             = C.gc_fast_fn(5)
)

// fastCgo runs one of the gc_fast_ functions through a plain cgo call: the
// path every Go version supports.
func fastCgo(fn unsafe.Pointer, c, a, b uintptr) (Result, uint64) {
	o := C.gc_fast_cgo(fn, u(c), u(a), u(b))
	return Result(o.r), uint64(o.v)
}

func cBenchC(which int, c, h uintptr, n int64) int64 {
	return int64(C.gc_bench_c(C.int(which), u(c), u(h), C.longlong(n)))
}

func cBenchLaunch(c, f, s uintptr, p DevicePtr, m, grid, block uint32, n, burst int64) int64 {
	return int64(C.gc_bench_launch(u(c), u(f), u(s), C.CUdeviceptr(p), C.unsigned(m), C.unsigned(grid), C.unsigned(block), C.longlong(n), C.longlong(burst)))
}

func cDriverVersion() (int, Result) {
	var v C.int
	x := C.gc_driver_version(&v)
	return int(v), r(x)
}

func cDeviceCount() (int, Result) {
	var n C.int
	x := C.gc_device_count(&n)
	return int(n), r(x)
}

func cDeviceGet(ord int) (int, Result) {
	var d C.int
	x := C.gc_device_get(&d, C.int(ord))
	return int(d), r(x)
}

func cDeviceName(d int) (string, Result) {
	var buf [256]C.char
	x := C.gc_device_name(&buf[0], C.int(len(buf)), C.int(d))
	return C.GoString(&buf[0]), r(x)
}

func cDeviceTotalMem(d int) (uint64, Result) {
	var n C.size_t
	x := C.gc_device_total_mem(&n, C.int(d))
	return uint64(n), r(x)
}

func cDeviceAttr(a, d int) (int, Result) {
	var v C.int
	x := C.gc_device_attr(&v, C.int(a), C.int(d))
	return int(v), r(x)
}

func cDevicePCIBusID(d int) (string, Result) {
	var buf [64]C.char
	x := C.gc_device_pci(&buf[0], C.int(len(buf)), C.int(d))
	return C.GoString(&buf[0]), r(x)
}

func cDeviceUUID(d int) ([16]byte, Result) {
	var b [16]C.uchar
	x := C.gc_device_uuid(&b[0], C.int(d))
	var out [16]byte
	for i := range b {
		out[i] = byte(b[i])
	}
	return out, r(x)
}

func cDeviceCanAccessPeer(d, p int) (bool, Result) {
	var v C.int
	x := C.gc_device_can_access_peer(&v, C.int(d), C.int(p))
	return v != 0, r(x)
}

func cPrimaryRetain(d int) (uintptr, Result) {
	var c u
	x := C.gc_primary_retain(&c, C.int(d))
	return uintptr(c), r(x)
}

func cCtxSync(c uintptr) Result { return r(C.gc_ctx_sync(u(c))) }

func cCtxEnablePeer(c, peer uintptr) Result { return r(C.gc_ctx_enable_peer(u(c), u(peer))) }

func cMemInfo(c uintptr) (uint64, uint64, Result) {
	var f, t C.size_t
	x := C.gc_mem_info(u(c), &f, &t)
	return uint64(f), uint64(t), r(x)
}

func cMemAlloc(c uintptr, n uint64) (DevicePtr, Result) {
	o := C.gc_mem_alloc(u(c), C.size_t(n))
	return DevicePtr(o.v), r(o.r)
}

func cMemFree(c uintptr, p DevicePtr) Result { return r(C.gc_mem_free(u(c), C.CUdeviceptr(p))) }

func cMemAllocManaged(c uintptr, n uint64, flags uint32) (DevicePtr, Result) {
	var p C.CUdeviceptr
	x := C.gc_mem_alloc_managed(u(c), &p, C.size_t(n), C.unsigned(flags))
	return DevicePtr(p), r(x)
}

func cMemAllocHost(c uintptr, n uint64) (unsafe.Pointer, Result) {
	var p unsafe.Pointer
	x := C.gc_mem_alloc_host(u(c), &p, C.size_t(n))
	return p, r(x)
}

func cMemFreeHost(c uintptr, p unsafe.Pointer) Result { return r(C.gc_mem_free_host(u(c), p)) }

func cHtoD(c uintptr, d DevicePtr, h unsafe.Pointer, n uint64) Result {
	return r(C.gc_htod(u(c), C.CUdeviceptr(d), h, C.size_t(n)))
}

func cDtoH(c uintptr, h unsafe.Pointer, d DevicePtr, n uint64) Result {
	return r(C.gc_dtoh(u(c), h, C.CUdeviceptr(d), C.size_t(n)))
}

func cDtoD(c uintptr, d, s DevicePtr, n uint64) Result {
	return r(C.gc_dtod(u(c), C.CUdeviceptr(d), C.CUdeviceptr(s), C.size_t(n)))
}

func cHtoDAsync(c uintptr, d DevicePtr, h unsafe.Pointer, n uint64, s uintptr) Result {
	return r(C.gc_htod_async(u(c), C.CUdeviceptr(d), h, C.size_t(n), u(s)))
}

func cDtoHAsync(c uintptr, h unsafe.Pointer, d DevicePtr, n uint64, s uintptr) Result {
	return r(C.gc_dtoh_async(u(c), h, C.CUdeviceptr(d), C.size_t(n), u(s)))
}

func cDtoDAsync(c uintptr, d, src DevicePtr, n uint64, s uintptr) Result {
	return r(C.gc_dtod_async(u(c), C.CUdeviceptr(d), C.CUdeviceptr(src), C.size_t(n), u(s)))
}

func cPeerAsync(c uintptr, d DevicePtr, dc uintptr, src DevicePtr, sc uintptr, n uint64, s uintptr) Result {
	return r(C.gc_peer_async(u(c), C.CUdeviceptr(d), u(dc), C.CUdeviceptr(src), u(sc), C.size_t(n), u(s)))
}

func cMemset8Async(c uintptr, d DevicePtr, v uint8, n uint64, s uintptr) Result {
	return r(C.gc_memset8_async(u(c), C.CUdeviceptr(d), C.uchar(v), C.size_t(n), u(s)))
}

func cMemset32Async(c uintptr, d DevicePtr, v uint32, n uint64, s uintptr) Result {
	return r(C.gc_memset32_async(u(c), C.CUdeviceptr(d), C.unsigned(v), C.size_t(n), u(s)))
}

func cStreamCreate(c uintptr, flags uint32) (uintptr, Result) {
	var s u
	x := C.gc_stream_create(u(c), &s, C.unsigned(flags))
	return uintptr(s), r(x)
}

func cStreamDestroy(c, s uintptr) Result      { return r(C.gc_stream_destroy(u(c), u(s))) }
func cStreamSync(c, s uintptr) Result         { return r(C.gc_stream_sync(u(c), u(s))) }
func cStreamQuery(c, s uintptr) Result        { x, _ := fast(fastStreamQuery, c, s, 0); return x }
func cStreamWaitEvent(c, s, e uintptr) Result { x, _ := fast(fastStreamWaitEvent, c, s, e); return x }

func cEventCreate(c uintptr, flags uint32) (uintptr, Result) {
	var e u
	x := C.gc_event_create(u(c), &e, C.unsigned(flags))
	return uintptr(e), r(x)
}

func cEventDestroy(c, e uintptr) Result   { return r(C.gc_event_destroy(u(c), u(e))) }
func cEventRecord(c, e, s uintptr) Result { x, _ := fast(fastEventRecord, c, e, s); return x }
func cEventQuery(c, e uintptr) Result     { x, _ := fast(fastEventQuery, c, e, 0); return x }
func cEventSync(c, e uintptr) Result      { return r(C.gc_event_sync(u(c), u(e))) }

func cEventElapsed(c, start, end uintptr) (float32, Result) {
	var ms C.float
	x := C.gc_event_elapsed(u(c), &ms, u(start), u(end))
	return float32(ms), r(x)
}

func cModuleLoad(c uintptr, image []byte) (uintptr, Result) {
	// The driver reads PTX as a NUL-terminated string: copy it to C memory
	// with the terminator rather than trust the caller's slice.
	img := C.CBytes(append(image[:len(image):len(image)], 0))
	defer C.free(img)
	var m u
	x := C.gc_module_load(u(c), &m, img)
	return uintptr(m), r(x)
}

func cModuleUnload(c, m uintptr) Result { return r(C.gc_module_unload(u(c), u(m))) }

func cModuleFunction(c, m uintptr, name string) (uintptr, Result) {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	var f u
	x := C.gc_module_function(u(c), &f, u(m), cs)
	return uintptr(f), r(x)
}

func cLaunch(c, f uintptr, grid, block Dim3, shmem uint32, s uintptr, argbuf []byte, offsets []int32) Result {
	var bp *C.char
	if len(argbuf) > 0 {
		bp = (*C.char)(unsafe.Pointer(&argbuf[0]))
	}
	var op *C.int
	if len(offsets) > 0 {
		op = (*C.int)(unsafe.Pointer(&offsets[0]))
	}
	return r(C.gc_launch(u(c), u(f), C.unsigned(grid.X), C.unsigned(grid.Y), C.unsigned(grid.Z),
		C.unsigned(block.X), C.unsigned(block.Y), C.unsigned(block.Z), C.unsigned(shmem), u(s),
		bp, op, C.int(len(offsets))))
}

// maxWords is GC_MAX_WORDS.
const maxWords = C.GC_MAX_WORDS

// toWords copies words into the C struct passed by value.
func toWords(words []uint64) C.gc_words {
	var w C.gc_words
	for i, x := range words {
		w.v[i] = C.ulonglong(x)
	}
	return w
}

// cLaunchWords is cLaunch for one-word arguments; len(words) <= maxWords.
func cLaunchWords(c, f uintptr, grid, block Dim3, shmem uint32, s uintptr, words []uint64) Result {
	return r(C.gc_launch_words(u(c), u(f), C.unsigned(grid.X), C.unsigned(grid.Y), C.unsigned(grid.Z),
		C.unsigned(block.X), C.unsigned(block.Y), C.unsigned(block.Z), C.unsigned(shmem), u(s),
		toWords(words), C.int(len(words))))
}

// cWordsAt is what a kernel parameter of size bytes at word i reads.
func cWordsAt(words []uint64, i, size int) uint64 {
	return uint64(C.gc_words_at(toWords(words), C.int(i), C.int(size)))
}

func cGranularity(c uintptr, dev int, recommended bool) (uint64, Result) {
	var g C.size_t
	rec := C.int(0)
	if recommended {
		rec = 1
	}
	x := C.gc_granularity(u(c), &g, C.int(dev), rec)
	return uint64(g), r(x)
}

func cAddressReserve(c uintptr, n, align uint64) (DevicePtr, Result) {
	var p C.CUdeviceptr
	x := C.gc_address_reserve(u(c), &p, C.size_t(n), C.size_t(align))
	return DevicePtr(p), r(x)
}

func cAddressFree(c uintptr, p DevicePtr, n uint64) Result {
	return r(C.gc_address_free(u(c), C.CUdeviceptr(p), C.size_t(n)))
}

func cMemCreate(c uintptr, n uint64, dev int) (uint64, Result) {
	var h C.CUmemHandle
	x := C.gc_mem_create(u(c), &h, C.size_t(n), C.int(dev))
	return uint64(h), r(x)
}

func cMemRelease(c uintptr, h uint64) Result { return r(C.gc_mem_release(u(c), C.CUmemHandle(h))) }

func cMemMap(c uintptr, va DevicePtr, n uint64, h uint64) Result {
	return r(C.gc_mem_map(u(c), C.CUdeviceptr(va), C.size_t(n), C.CUmemHandle(h)))
}

func cMemUnmap(c uintptr, va DevicePtr, n uint64) Result {
	return r(C.gc_mem_unmap(u(c), C.CUdeviceptr(va), C.size_t(n)))
}

func cMemSetAccess(c uintptr, va DevicePtr, n uint64, dev int) Result {
	return r(C.gc_mem_set_access(u(c), C.CUdeviceptr(va), C.size_t(n), C.int(dev)))
}

func cPoolCreate(c uintptr, dev int) (uintptr, Result) {
	var p u
	x := C.gc_pool_create(u(c), &p, C.int(dev))
	return uintptr(p), r(x)
}

func cPoolDestroy(c, p uintptr) Result { return r(C.gc_pool_destroy(u(c), u(p))) }

func cPoolSet(c, p uintptr, attr int, v uint64) Result {
	return r(C.gc_pool_set(u(c), u(p), C.int(attr), C.ulonglong(v)))
}

func cPoolGet(c, p uintptr, attr int) (uint64, Result) {
	var v C.ulonglong
	x := C.gc_pool_get(u(c), u(p), C.int(attr), &v)
	return uint64(v), r(x)
}

func cPoolTrim(c, p uintptr, keep uint64) Result {
	return r(C.gc_pool_trim(u(c), u(p), C.size_t(keep)))
}

func cAllocAsync(c uintptr, n uint64, pool, s uintptr) (DevicePtr, Result) {
	o := C.gc_alloc_async(u(c), C.size_t(n), u(pool), u(s))
	return DevicePtr(o.v), r(o.r)
}

func cFreeAsync(c uintptr, p DevicePtr, s uintptr) Result {
	return r(C.gc_free_async(u(c), C.CUdeviceptr(p), u(s)))
}

func cBeginCapture(c, s uintptr, mode int) Result {
	return r(C.gc_begin_capture(u(c), u(s), C.int(mode)))
}

func cEndCapture(c, s uintptr) (uintptr, Result) {
	var g C.uintptr_t
	x := C.gc_end_capture(u(c), u(s), &g)
	return uintptr(g), r(x)
}

func cIsCapturing(c, s uintptr) (int, Result) {
	var st C.int
	x := C.gc_is_capturing(u(c), u(s), &st)
	return int(st), r(x)
}

func cGraphInstantiate(c, g uintptr) (uintptr, Result) {
	var e C.uintptr_t
	x := C.gc_graph_instantiate(u(c), &e, u(g))
	return uintptr(e), r(x)
}

func cGraphLaunch(c, e, s uintptr) Result { return r(C.gc_graph_launch(u(c), u(e), u(s))) }

func cGraphExecUpdate(c, e, g uintptr) (int, Result) {
	var res C.int
	x := C.gc_graph_exec_update(u(c), u(e), u(g), &res)
	return int(res), r(x)
}

func cGraphExecDestroy(c, e uintptr) Result { return r(C.gc_graph_exec_destroy(u(c), u(e))) }
func cGraphDestroy(c, g uintptr) Result     { return r(C.gc_graph_destroy(u(c), u(g))) }

func cGraphNodes(c, g uintptr) (int, Result) {
	var n C.size_t
	x := C.gc_graph_nodes(u(c), u(g), &n)
	return int(n), r(x)
}
