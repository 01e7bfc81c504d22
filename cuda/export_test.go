package cuda

import "fmt"

// Benchmark scaffolding, exported to this package's tests only. Anchors for
// measuring the binding's own overhead in the same run as the calls it
// wraps: a cgo call that does nothing, and a cgo call into the driver's
// cuCtxGetCurrent through its function pointer, with none of our context
// handling. Their C halves live in driver_cgo.go (a _test file cannot use
// cgo); they change nothing.

// NoopCall makes one cgo call to an empty C function.
func NoopCall() { cNoop() }

// RawCtxGetCurrent calls cuCtxGetCurrent directly, as a plain dlopen'd
// binding would.
func RawCtxGetCurrent() (uintptr, error) {
	c, x := cRawCtxGetCurrent()
	return c, check("cuCtxGetCurrent", x)
}

// CurrentDevice returns the context's device as the driver reports it
// (cuCtxGetDevice): a cheap call through the full context path, used to
// measure the binding.
func CurrentDevice(c *Context) (int, error) {
	d, x := cCtxGetDevice(c.h)
	return d, check("cuCtxGetDevice", x)
}

// DriverLoopCost is the time one call of a driver function takes when made
// from C in a loop of n, with no Go or cgo around it: what the driver
// itself costs, to subtract from a Go benchmark of the same call. which is
// "cuStreamQuery" (h a *Stream), "cuEventQuery" (h an *Event),
// "cuCtxGetDevice" or "cuCtxGetCurrent".
func DriverLoopCost(c *Context, which string, h any, n int64) (float64, error) {
	var k int
	var handle uintptr
	switch which {
	case "cuStreamQuery":
		k, handle = 0, h.(*Stream).h
	case "cuEventQuery":
		k, handle = 1, h.(*Event).h
	case "cuCtxGetDevice":
		k = 2
	case "cuCtxGetCurrent":
		k = 3
	default:
		return 0, fmt.Errorf("cuda: DriverLoopCost: unknown call %q", which)
	}
	ns := cBenchC(k, c.h, handle, n)
	if ns < 0 {
		return 0, ErrNoDriver
	}
	return float64(ns) / float64(n), nil
}

// LaunchLoopCost is the host time of one launch of f on s made from C in a
// loop, the parameters built once: what cuLaunchKernel itself costs, to
// subtract from a Go benchmark of Stream.Launch. f must take a pointer and
// a 32-bit count, as the tests' add_one does; it runs on grid × block
// threads over p. The n launches go in bursts of burst with an untimed
// synchronization between them, so that the driver's queue never fills
// (a launch into a full queue waits for the GPU); measure Launch the same
// way.
func LaunchLoopCost(s *Stream, f *Function, p DevicePtr, count, grid, block uint32, n, burst int64) (float64, error) {
	if burst < 1 || n < burst {
		return 0, fmt.Errorf("cuda: LaunchLoopCost: %d launches in bursts of %d: both must be positive, bursts no more than launches: %w", n, burst, ErrInvalidValue)
	}
	n -= n % burst
	ns := cBenchLaunch(s.ctx.h, f.h, s.h, p, count, grid, block, n, burst)
	if ns < 0 {
		return 0, fmt.Errorf("cuda: LaunchLoopCost: a launch or a synchronization failed, or the driver lacks one: %w", ErrNoDriver)
	}
	return float64(ns) / float64(n), nil
}

// WordAt is what a kernel parameter of size bytes (4 or 8) at argument i
// reads of words as LaunchWords hands them to the driver: the words go
// through the same by-value cgo call, into C, and back.
func WordAt(words []uint64, i, size int) uint64 { return cWordsAt(words, i, size) }
