package cuda

// Anchors for measuring the binding's own overhead in the same run as the
// calls it wraps: a cgo call that does nothing, and a cgo call into the
// driver's cuCtxGetCurrent through its function pointer, with none of our
// context handling. They exist for benchmarks and doctor; they change
// nothing.

// NoopCall makes one cgo call to an empty C function.
func NoopCall() { cNoop() }

// RawCtxGetCurrent calls cuCtxGetCurrent directly, as a plain dlopen'd
// binding would.
func RawCtxGetCurrent() (uintptr, error) {
	c, x := cRawCtxGetCurrent()
	return c, check("cuCtxGetCurrent", x)
}
