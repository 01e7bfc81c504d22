package curand

import (
	"errors"
	"fmt"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/cuda"
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

var statusNames = map[Status]string{
	StatusVersionMismatch:         "CURAND_STATUS_VERSION_MISMATCH",
	StatusNotInitialized:          "CURAND_STATUS_NOT_INITIALIZED",
	StatusAllocationFailed:        "CURAND_STATUS_ALLOCATION_FAILED",
	StatusTypeError:               "CURAND_STATUS_TYPE_ERROR",
	StatusOutOfRange:              "CURAND_STATUS_OUT_OF_RANGE",
	StatusLengthNotMultiple:       "CURAND_STATUS_LENGTH_NOT_MULTIPLE",
	StatusDoublePrecisionRequired: "CURAND_STATUS_DOUBLE_PRECISION_REQUIRED",
	StatusLaunchFailure:           "CURAND_STATUS_LAUNCH_FAILURE",
	StatusPreexistingFailure:      "CURAND_STATUS_PREEXISTING_FAILURE",
	StatusInitializationFailed:    "CURAND_STATUS_INITIALIZATION_FAILED",
	StatusArchMismatch:            "CURAND_STATUS_ARCH_MISMATCH",
	StatusInternalError:           "CURAND_STATUS_INTERNAL_ERROR",
}

func (s Status) name() string {
	if n, ok := statusNames[s]; ok {
		return n
	}
	return "unknown"
}

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

// cres is where a C call failed, if it did: the stage (the GR_ enum in the
// C preamble) and its code, a CUresult for the context stages and a
// curandStatus_t for the others.
type cres struct{ stage, code int }

const (
	stageOK = iota
	stageCtx
	stageStream
	stageCall
	stageRestore
)

// err turns a C call's result into nil or an error naming op on device.
func (r cres) err(op string, device int) error {
	switch r.stage {
	case stageOK:
		return nil
	case stageCtx:
		return fmt.Errorf("curand: %s on device %d: making the device's context current: %w", op, device, cuda.Result(r.code))
	case stageRestore:
		return fmt.Errorf("curand: %s on device %d: restoring the thread's previous context: %w", op, device, cuda.Result(r.code))
	case stageStream:
		return &Error{Op: "curandSetStream", Device: device, Status: Status(r.code)}
	}
	return &Error{Op: op, Device: device, Status: Status(r.code)}
}
