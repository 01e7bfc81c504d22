//go:build cgo && (linux || darwin || freebsd)

package drivertest

/*
#cgo linux LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>

typedef int (*ctx_get_current_fn)(void **);

// raw_ctx_get_current calls cuCtxGetCurrent of the loaded driver, or
// returns -1 when there is none. RTLD_NOLOAD: only a driver that package
// cuda (or anything else) has loaded already; a test reads that state.
static int raw_ctx_get_current(uintptr_t *out) {
#ifdef __APPLE__
	void *lib = dlopen("libcuda.dylib", RTLD_NOW | RTLD_NOLOAD);
#else
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
#endif
	if (!lib) return -1;
	ctx_get_current_fn f = (ctx_get_current_fn)dlsym(lib, "cuCtxGetCurrent");
	if (!f) { dlclose(lib); return -1; }
	void *c = 0;
	int r = f(&c);
	*out = (uintptr_t)c;
	dlclose(lib);
	return r;
}
*/
import "C"

import "fmt"

// CtxGetCurrent returns the calling thread's current CUcontext as the
// driver reports it (cuCtxGetCurrent). Lock the goroutine to its thread
// around what it checks. The driver must have been loaded already (by
// package cuda's Init).
func CtxGetCurrent() (uintptr, error) {
	var c C.uintptr_t
	switch r := C.raw_ctx_get_current(&c); r {
	case 0:
		return uintptr(c), nil
	case -1:
		return 0, fmt.Errorf("drivertest: no CUDA driver loaded in this process (call cuda.Init first)")
	default:
		return 0, fmt.Errorf("drivertest: cuCtxGetCurrent failed with CUresult %d", int(r))
	}
}
