//go:build !cgo || !linux

package main

// Without cgo there is no dlopen: loadCUFFT fails with errNoCUFFT before
// anything below is called; these only keep the program compiling.

const cgoAvailable = false

func dlopen(path string) (uintptr, string)          { return 0, "built without cgo" }
func install(lib uintptr) string                    { return "dlopen" }
func version() int                                  { return 0 }
func cPlan(ctx uintptr, n, batch int) (int, result) { return 0, result{stageCall, 1} }
func cExec(ctx uintptr, plan int, stream, in, out uintptr, dir int) result {
	return result{stageCall, 1}
}
func cDestroy(ctx uintptr, plan int) result { return result{stageCall, 1} }
