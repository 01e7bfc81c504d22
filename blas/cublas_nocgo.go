//go:build !cgo || !linux

package blas

import "github.com/gocuda/gocuda/internal/libload"

// Without cgo there is no dlopen: loading cuBLAS fails with ErrNoCUBLAS
// (see libload.Search.Open), and these stand-ins only keep the package compiling. None of
// them is reachable once loading has failed.

var notLoaded = cres{Stage: libload.StageCall, Code: int(StatusNotInitialized)}

func cInstall(lib uintptr) string              { return "dlopen" }
func cCreate(ctx uintptr) (uintptr, int, cres) { return 0, 0, notLoaded }
func cSgemm(ctx, h, s uintptr, setStream bool, ta, tb int, m, n, k int, alpha float32, a uintptr, lda int, b uintptr, ldb int, beta float32, c uintptr, ldc int) cres {
	return notLoaded
}
func cDgemm(ctx, h, s uintptr, setStream bool, ta, tb int, m, n, k int, alpha float64, a uintptr, lda int, b uintptr, ldb int, beta float64, c uintptr, ldc int) cres {
	return notLoaded
}
func cSgemv(ctx, h, s uintptr, setStream bool, t int, m, n int, alpha float32, a uintptr, lda int, x uintptr, beta float32, y uintptr) cres {
	return notLoaded
}
func cDgemv(ctx, h, s uintptr, setStream bool, t int, m, n int, alpha float64, a uintptr, lda int, x uintptr, beta float64, y uintptr) cres {
	return notLoaded
}
func cBenchSgemm(ctx, h, s uintptr, setStream bool, m, n, k int, a, b, c uintptr, calls int64) int64 {
	return -1
}

func cGemmEx(ctx, h, s uintptr, setStream bool, x *exCall) cres { return notLoaded }

// symbols is empty: without cgo there is no table.
func symbols() []string { return nil }
