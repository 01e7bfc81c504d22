//go:build !cgo || !linux

package curand

import "github.com/gocuda/gocuda/internal/libload"

// Without cgo there is no dlopen: loading cuRAND fails with ErrNoCURAND
// (see libload.Search.Open), and these stand-ins only keep the package
// compiling. None of them is reachable once loading has failed.

var notLoaded = cres{Stage: libload.StageCall, Code: int(StatusNotInitialized)}

func cInstall(lib uintptr) string                      { return "dlopen" }
func cVersion() (int, cres)                            { return 0, notLoaded }
func cCreate(ctx uintptr, seed uint64) (uintptr, cres) { return 0, notLoaded }
func cDestroy(ctx, g uintptr) cres                     { return notLoaded }
func cGenerate(ctx, g, stream uintptr, normal, f64 bool, out uintptr, n int, mean, stddev float64) cres {
	return notLoaded
}
