//go:build cgo && !(linux || darwin || freebsd)

package cuda

import "runtime"

// noBindingReason is why a cgo build for this OS cannot reach the driver:
// the binding dlopens libcuda, which it does on linux, darwin and freebsd
// only (windows would need nvcuda.dll through LoadLibrary, not written yet).
var noBindingReason = "gocuda's CUDA driver binding supports linux, darwin and freebsd, not " +
	runtime.GOOS + ": this program runs on the host backend"
