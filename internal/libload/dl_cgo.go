//go:build cgo && linux

package libload

/*
#cgo linux LDFLAGS: -ldl
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
