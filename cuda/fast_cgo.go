//go:build cgo && (linux || darwin || freebsd) && !(go1.26 && !go1.27 && !gocuda_nolinkname)

package cuda

// The fallback: the gc_fast_ functions through plain cgo calls, on a Go
// version the linkname fast path has not been verified on, or with the
// build tag gocuda_nolinkname (fast_linkname.go says why).

import "unsafe"

const callPath = "cgo"

func fast(fn unsafe.Pointer, c, a, b uintptr) (Result, uint64) { return fastCgo(fn, c, a, b) }
