package curand

import (
	"errors"
	"fmt"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/internal/libload"
)

// ErrNoCURAND is wrapped by the error of every GPU operation when no
// cuRAND library can be loaded. The message names every file tried and
// why each failed, and every folder searched.
var ErrNoCURAND = errors.New("cuRAND not found")

// ErrClosed is wrapped by the error of an operation on a closed
// Generator.
var ErrClosed = errors.New("generator closed")

// Status is a curandStatus_t. Status values are errors, so the constants
// below work with errors.Is against any *Error the package returns.
type Status int

// The statuses cuRAND documents (values from curand.h).
const (
	StatusVersionMismatch         Status = 100
	StatusNotInitialized          Status = 101
	StatusAllocationFailed        Status = 102
	StatusTypeError               Status = 103
	StatusOutOfRange              Status = 104
	StatusLengthNotMultiple       Status = 105
	StatusDoublePrecisionRequired Status = 106
	StatusLaunchFailure           Status = 201
	StatusPreexistingFailure      Status = 202
	StatusInitializationFailed    Status = 203
	StatusArchMismatch            Status = 204
	StatusInternalError           Status = 999
)

var statusNames = libload.Names{
	int(StatusVersionMismatch):         "CURAND_STATUS_VERSION_MISMATCH",
	int(StatusNotInitialized):          "CURAND_STATUS_NOT_INITIALIZED",
	int(StatusAllocationFailed):        "CURAND_STATUS_ALLOCATION_FAILED",
	int(StatusTypeError):               "CURAND_STATUS_TYPE_ERROR",
	int(StatusOutOfRange):              "CURAND_STATUS_OUT_OF_RANGE",
	int(StatusLengthNotMultiple):       "CURAND_STATUS_LENGTH_NOT_MULTIPLE",
	int(StatusDoublePrecisionRequired): "CURAND_STATUS_DOUBLE_PRECISION_REQUIRED",
	int(StatusLaunchFailure):           "CURAND_STATUS_LAUNCH_FAILURE",
	int(StatusPreexistingFailure):      "CURAND_STATUS_PREEXISTING_FAILURE",
	int(StatusInitializationFailed):    "CURAND_STATUS_INITIALIZATION_FAILED",
	int(StatusArchMismatch):            "CURAND_STATUS_ARCH_MISMATCH",
	int(StatusInternalError):           "CURAND_STATUS_INTERNAL_ERROR",
}

func (s Status) name() string { return statusNames.Name(int(s)) }

func (s Status) Error() string { return fmt.Sprintf("cuRAND status %d (%s)", int(s), s.name()) }

// Error is a failed cuRAND call: the function, the device and the status.
// It matches its Status with errors.Is, and the backend sentinels where
// one fits: CURAND_STATUS_ALLOCATION_FAILED matches
// backend.ErrOutOfMemory, ARCH_MISMATCH and DOUBLE_PRECISION_REQUIRED
// backend.ErrNotSupported, OUT_OF_RANGE and LENGTH_NOT_MULTIPLE
// backend.ErrInvalidValue.
type Error struct {
	Op     string // e.g. "curandGenerateNormal"
	Device int
	Status Status
}

func (e *Error) Error() string {
	return fmt.Sprintf("curand: %s on device %d: %s (%d)", e.Op, e.Device, e.Status.name(), int(e.Status))
}

// Is matches e's Status and the backend sentinel for it.
func (e *Error) Is(target error) bool {
	if s, ok := target.(Status); ok {
		return s == e.Status
	}
	switch e.Status {
	case StatusAllocationFailed:
		return target == backend.ErrOutOfMemory
	case StatusArchMismatch, StatusDoublePrecisionRequired:
		return target == backend.ErrNotSupported
	case StatusOutOfRange, StatusLengthNotMultiple:
		return target == backend.ErrInvalidValue
	}
	return false
}

// cres is a C call's result (cudalib.h's cl_res): the stage that failed
// and its code, a CUresult for the context stages and a curandStatus_t
// for the others.
type cres libload.Res

// err turns a C call's result into nil or an error naming op on device.
func (r cres) err(op string, device int) error {
	return library.Err(libload.Res(r), op, device, func(op string, code int) error {
		return &Error{Op: op, Device: device, Status: Status(code)}
	})
}
