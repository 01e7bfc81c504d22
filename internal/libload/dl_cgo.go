//go:build cgo && linux

package libload

/*
#cgo linux LDFLAGS: -ldl
#cgo CFLAGS: -I${SRCDIR}
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>

// ll_open opens one library, RTLD_LOCAL so that its symbols do not
// resolve another library's; on failure *why is dlerror's reason (valid
// until the next dlerror on this thread: copied at once by the caller).
static uintptr_t ll_open(const char *name, const char **why) {
	void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	*why = h ? 0 : dlerror();
	return (uintptr_t)h;
}

// The header compiles here too, with an empty table and the context
// calls, so that its stage numbers can be checked against Stage's.
#define CL_SYMBOLS(FN)
#define CL_CONTEXT
#include "cudalib.h"
static int ll_stage(int i) {
	static const int stages[] = {CL_OK, CL_CTX, CL_STREAM, CL_CALL, CL_RESTORE, CL_OWN};
	return stages[i];
}
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// Available says libraries can be loaded: built with cgo, on Linux.
func Available() bool { return true }

// open dlopens name; on failure it returns 0 and the loader's reason.
func open(name string) (uintptr, string) {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	// dlerror's text is per thread: read it on the thread that failed.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var why *C.char
	h := C.ll_open(cs, &why)
	if h != 0 {
		return uintptr(h), ""
	}
	if why == nil {
		return 0, "unknown dlopen error"
	}
	return 0, C.GoString(why)
}

// cStages are the C side's stage numbers, in Stage's order.
func cStages() []Stage {
	out := make([]Stage, StageOwn+1)
	for i := range out {
		out[i] = Stage(C.ll_stage(C.int(i)))
	}
	return out
}
