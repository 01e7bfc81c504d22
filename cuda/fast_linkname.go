//go:build cgo && (linux || darwin || freebsd) && go1.26 && !go1.27 && !gocuda_nolinkname

package cuda

// The fast path: the gc_fast_ functions run on the system stack through
// runtime.asmcgocall, without the bookkeeping a cgo call does for a call
// that may block. asmcgocall is a runtime internal, reached by
// //go:linkname, and Go promises nothing about it: its signature, and the
// rule that a function it runs must not block, grow the stack or call back
// into Go, hold for the Go versions listed in the build constraint, which
// the tests and benchmarks have run on (go1.26). Any other Go version, or
// the build tag gocuda_nolinkname, builds fast_cgo.go instead: the same C
// functions through plain cgo calls, slower by the cgo bookkeeping but
// valid on every Go. To add a Go version, run the cuda and cuarray tests
// and BenchmarkCallPath on a GPU with it, then widen the constraint here and
// in fast_cgo.go.

import "unsafe"

const callPath = "linkname asmcgocall"

// asmcgocall runs fn(arg) on the system stack; only for the gc_fast_
// functions of driver_cgo.go.
//
//go:linkname asmcgocall runtime.asmcgocall
//go:noescape
func asmcgocall(fn, arg unsafe.Pointer) int32

func fast(fn unsafe.Pointer, c, a, b uintptr) (Result, uint64) {
	f := fastArgs{ctx: c, a: a, b: b}
	asmcgocall(fn, unsafe.Pointer(&f))
	return Result(f.r), f.v
}
