package cuda

import (
	"errors"
	"fmt"
)

// Result is a CUresult code. Result values are errors, so the sentinels
// below work with errors.Is against any *Error the package returns.
type Result int

// Sentinels for the driver results callers act on.
const (
	ErrInvalidValue      Result = 1
	ErrOutOfMemory       Result = 2
	ErrNotInitialized    Result = 3
	ErrDeinitialized     Result = 4
	ErrStubLibrary       Result = 34
	ErrNoDevice          Result = 100
	ErrInvalidDevice     Result = 101
	ErrInvalidImage      Result = 200
	ErrInvalidContext    Result = 201
	ErrInvalidPTX        Result = 218
	ErrInvalidHandle     Result = 400
	ErrNotFound          Result = 500
	ErrNotReady          Result = 600
	ErrIllegalAddress    Result = 700
	ErrLaunchFailed      Result = 719
	ErrPeerAccessEnabled Result = 704
	ErrPeerAccessUnsup   Result = 217
	ErrTooManyPeers      Result = 711
	ErrNotPermitted      Result = 800
	ErrNotSupported      Result = 801
	ErrUnknown           Result = 999
	errMissingFunction   Result = -2 // the loaded driver lacks the entry point
	errNoDriver          Result = -1 // no libcuda could be loaded
)

func (r Result) Error() string { return fmt.Sprintf("CUDA error %d (%s)", int(r), r.name()) }

func (r Result) name() string {
	switch r {
	case errNoDriver:
		return "no CUDA driver"
	case errMissingFunction:
		return "function missing from the CUDA driver"
	}
	if n := errorName(r); n != "" {
		return n
	}
	return "unknown"
}

// ErrNoDriver is returned by every entry point when libcuda.so.1 cannot be
// loaded or initialized (no driver, no GPU), or when the program was built
// without a way to reach one (CGO_ENABLED=0, or an OS other than linux,
// darwin and freebsd); the error's text says which.
var ErrNoDriver = errors.New("cuda: no CUDA driver")

// Error is a failed driver call: the call, the code, and the driver's own
// name and text for it.
type Error struct {
	Op   string // the driver function, e.g. "cuMemAlloc_v2"
	Code Result
	Name string // e.g. "CUDA_ERROR_OUT_OF_MEMORY"
	Text string // e.g. "out of memory"
}

func (e *Error) Error() string {
	return fmt.Sprintf("cuda: %s: %s (%d): %s", e.Op, e.Name, int(e.Code), e.Text)
}

// Is matches the Result sentinels, and ErrNoDriver for a missing driver.
func (e *Error) Is(target error) bool {
	switch t := target.(type) {
	case Result:
		return t == e.Code || (t == ErrNotSupported && e.Code == errMissingFunction)
	}
	return target == ErrNoDriver && e.Code == errNoDriver
}

// check turns a result into nil or an *Error for op.
func check(op string, r Result) error {
	if r == 0 {
		return nil
	}
	return newError(op, r)
}

func newError(op string, r Result) error {
	e := &Error{Op: op, Code: r}
	switch r {
	case errNoDriver:
		e.Name, e.Text = "GOCUDA_NO_DRIVER", noDriverReason()
	case errMissingFunction:
		e.Name, e.Text = "GOCUDA_MISSING_FUNCTION", "the installed CUDA driver does not export "+op+"; a newer driver is needed"
	default:
		e.Name, e.Text = errorName(r), errorString(r)
		if e.Name == "" {
			e.Name = "CUDA_ERROR_UNKNOWN"
		}
	}
	return e
}
