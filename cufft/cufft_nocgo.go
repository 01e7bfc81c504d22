//go:build !cgo || !linux

package cufft

import "github.com/gocuda/gocuda/internal/libload"

// Without cgo there is no dlopen: loading cuFFT fails with ErrNoCUFFT (see
// libload.Search.Open), and these stand-ins only keep the package
// compiling. None of them is reachable once loading has failed.

var notLoaded = cres{Stage: libload.StageCall, Code: int(ResultSetupFailed)}

func cInstall(lib uintptr) string { return "dlopen" }
func cVersion() (int, cres)       { return 0, notLoaded }
func cPlan(ctx uintptr, rank int, n [2]int, kind int, batch int) (int, uint64, cres) {
	return 0, 0, notLoaded
}
func cExec(ctx uintptr, plan, kind, dir int, stream, work, in, out uintptr) cres { return notLoaded }
func cDestroy(ctx uintptr, plan int) cres                                        { return notLoaded }
