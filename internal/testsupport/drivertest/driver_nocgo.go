//go:build !cgo || !(linux || darwin || freebsd)

package drivertest

import "errors"

// CtxGetCurrent cannot reach a driver in this build: package cuda cannot
// either, so no test that needs it gets this far.
func CtxGetCurrent() (uintptr, error) {
	return 0, errors.New("drivertest: this build has no CUDA driver binding (cgo off or an OS without dlopen support)")
}
