//go:build cgo && linux

package nvrtc

/*
#cgo linux LDFLAGS: -ldl
#cgo CFLAGS: -I${SRCDIR}/../internal/libload
#include <stdlib.h>

// Our own declarations of the NVRTC calls we use (nvrtc.h, stable since
// CUDA 7 but for the cubin calls of 11.1 and the arch list of 11.2): no
// CUDA headers at build time. A program is an opaque pointer; Go sees it
// as uintptr_t.
typedef int nvrtcResult;
typedef void *nvrtcProgram;

// The symbol table (cudalib.h). NVRTC runs on the host: no context calls.
// nvrtcGetErrorString is not called (Status words the results itself),
// but an NVRTC without it is not one this package was written for.
#define CL_SYMBOLS(FN) \
FN(const char *, nvrtcGetErrorString, (nvrtcResult)) \
FN(nvrtcResult, nvrtcVersion, (int*, int*)) \
FN(nvrtcResult, nvrtcCreateProgram, (nvrtcProgram*, const char*, const char*, int, const char* const*, const char* const*)) \
FN(nvrtcResult, nvrtcDestroyProgram, (nvrtcProgram*)) \
FN(nvrtcResult, nvrtcCompileProgram, (nvrtcProgram, int, const char* const*)) \
FN(nvrtcResult, nvrtcGetPTXSize, (nvrtcProgram, size_t*)) \
FN(nvrtcResult, nvrtcGetPTX, (nvrtcProgram, char*)) \
FN(nvrtcResult, nvrtcGetProgramLogSize, (nvrtcProgram, size_t*)) \
FN(nvrtcResult, nvrtcGetProgramLog, (nvrtcProgram, char*))
// Optional: older NVRTCs lack them, and a program that never asks for a
// cubin or the arch list still works with such a library.
#define CL_OPTIONAL(FN) \
FN(nvrtcResult, nvrtcGetCUBINSize, (nvrtcProgram, size_t*)) \
FN(nvrtcResult, nvrtcGetCUBIN, (nvrtcProgram, char*)) \
FN(nvrtcResult, nvrtcGetNumSupportedArchs, (int*)) \
FN(nvrtcResult, nvrtcGetSupportedArchs, (int*))
#include "cudalib.h"

#define GN_MISSING 1000 // not an nvrtcResult: an optional call the library lacks

static int gn_version(int *major, int *minor) { return p_nvrtcVersion(major, minor); }

static int gn_num_archs(int *n) {
	if (!p_nvrtcGetNumSupportedArchs) return GN_MISSING;
	return p_nvrtcGetNumSupportedArchs(n);
}
static int gn_archs(int *out) {
	if (!p_nvrtcGetSupportedArchs) return GN_MISSING;
	return p_nvrtcGetSupportedArchs(out);
}

static int gn_create(uintptr_t *prog, const char *src, const char *name) {
	return p_nvrtcCreateProgram((nvrtcProgram*)prog, src, name, 0, 0, 0);
}
static int gn_destroy(uintptr_t prog) {
	nvrtcProgram p = (nvrtcProgram)prog;
	return p_nvrtcDestroyProgram(&p);
}
static int gn_compile(uintptr_t prog, int n, char **opts) {
	return p_nvrtcCompileProgram((nvrtcProgram)prog, n, (const char* const*)opts);
}
static int gn_log_size(uintptr_t prog, size_t *n) { return p_nvrtcGetProgramLogSize((nvrtcProgram)prog, n); }
static int gn_log(uintptr_t prog, char *out) { return p_nvrtcGetProgramLog((nvrtcProgram)prog, out); }
static int gn_ptx_size(uintptr_t prog, size_t *n) { return p_nvrtcGetPTXSize((nvrtcProgram)prog, n); }
static int gn_ptx(uintptr_t prog, char *out) { return p_nvrtcGetPTX((nvrtcProgram)prog, out); }
static int gn_cubin_size(uintptr_t prog, size_t *n) {
	if (!p_nvrtcGetCUBINSize) return GN_MISSING;
	return p_nvrtcGetCUBINSize((nvrtcProgram)prog, n);
}
static int gn_cubin(uintptr_t prog, char *out) {
	if (!p_nvrtcGetCUBIN) return GN_MISSING;
	return p_nvrtcGetCUBIN((nvrtcProgram)prog, out);
}
*/
import "C"

import "unsafe"

const missingCall = C.GN_MISSING

func cInstall(lib uintptr) string { return C.GoString(C.cl_install(C.uintptr_t(lib))) }

func cVersion() (major, minor, r int) {
	var ma, mi C.int
	x := C.gn_version(&ma, &mi)
	return int(ma), int(mi), int(x)
}

func cSupportedArchs() ([]int, int) {
	var n C.int
	if x := C.gn_num_archs(&n); x != 0 {
		return nil, int(x)
	}
	if n <= 0 {
		return nil, 0
	}
	buf := make([]C.int, int(n))
	if x := C.gn_archs(&buf[0]); x != 0 {
		return nil, int(x)
	}
	out := make([]int, len(buf))
	for i, a := range buf {
		out[i] = int(a)
	}
	return out, 0
}

// cProgram is one NVRTC program, from creation to destruction.
type cProgram uintptr

func cCreate(src, name string) (cProgram, int) {
	cs, cn := C.CString(src), C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	defer C.free(unsafe.Pointer(cn))
	var p C.uintptr_t
	x := C.gn_create(&p, cs, cn)
	return cProgram(p), int(x)
}

func (p cProgram) destroy() { C.gn_destroy(C.uintptr_t(p)) }

func (p cProgram) compile(opts []string) int {
	// The options go to C as an array of C strings in C memory: Go memory
	// holding Go pointers may not be handed to C.
	n := len(opts)
	arr := (**C.char)(C.malloc(C.size_t(max(n, 1)) * C.size_t(unsafe.Sizeof(uintptr(0)))))
	defer C.free(unsafe.Pointer(arr))
	list := unsafe.Slice(arr, max(n, 1))
	for i, o := range opts {
		list[i] = C.CString(o)
	}
	defer func() {
		for i := range opts {
			C.free(unsafe.Pointer(list[i]))
		}
	}()
	return int(C.gn_compile(C.uintptr_t(p), C.int(n), arr))
}

// get reads one of the program's outputs: its size, then its bytes,
// without the NUL NVRTC counts in the size of text outputs.
func (p cProgram) get(size func(C.uintptr_t, *C.size_t) C.int, read func(C.uintptr_t, *C.char) C.int) ([]byte, int) {
	var n C.size_t
	if x := size(C.uintptr_t(p), &n); x != 0 {
		return nil, int(x)
	}
	if n == 0 {
		return nil, 0
	}
	buf := C.malloc(n)
	defer C.free(buf)
	if x := read(C.uintptr_t(p), (*C.char)(buf)); x != 0 {
		return nil, int(x)
	}
	return C.GoBytes(buf, C.int(n)), 0
}

func (p cProgram) log() ([]byte, int) {
	return p.get(func(h C.uintptr_t, n *C.size_t) C.int { return C.gn_log_size(h, n) },
		func(h C.uintptr_t, b *C.char) C.int { return C.gn_log(h, b) })
}

func (p cProgram) ptx() ([]byte, int) {
	return p.get(func(h C.uintptr_t, n *C.size_t) C.int { return C.gn_ptx_size(h, n) },
		func(h C.uintptr_t, b *C.char) C.int { return C.gn_ptx(h, b) })
}

func (p cProgram) cubin() ([]byte, int) {
	return p.get(func(h C.uintptr_t, n *C.size_t) C.int { return C.gn_cubin_size(h, n) },
		func(h C.uintptr_t, b *C.char) C.int { return C.gn_cubin(h, b) })
}
