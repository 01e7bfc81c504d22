package blas

import (
	"errors"
	"fmt"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/cuda"
)

// ErrNoCUBLAS is wrapped by the error of every GPU operation when no
// cuBLAS library can be loaded. The message names the libraries tried and
// why each failed.
var ErrNoCUBLAS = errors.New("cuBLAS not found")

// Status is a cublasStatus_t. Status values are errors, so the constants
// below work with errors.Is against any *Error the package returns.
type Status int

// The statuses cuBLAS documents (values from cublas_api.h).
const (
	StatusNotInitialized  Status = 1
	StatusAllocFailed     Status = 3
	StatusInvalidValue    Status = 7
	StatusArchMismatch    Status = 8
	StatusMappingError    Status = 11
	StatusExecutionFailed Status = 13
	StatusInternalError   Status = 14
	StatusNotSupported    Status = 15
	StatusLicenseError    Status = 16
)

func (s Status) Error() string { return fmt.Sprintf("cuBLAS status %d (%s)", int(s), s.name()) }

func (s Status) name() string {
	switch s {
	case StatusNotInitialized:
		return "CUBLAS_STATUS_NOT_INITIALIZED"
	case StatusAllocFailed:
		return "CUBLAS_STATUS_ALLOC_FAILED"
	case StatusInvalidValue:
		return "CUBLAS_STATUS_INVALID_VALUE"
	case StatusArchMismatch:
		return "CUBLAS_STATUS_ARCH_MISMATCH"
	case StatusMappingError:
		return "CUBLAS_STATUS_MAPPING_ERROR"
	case StatusExecutionFailed:
		return "CUBLAS_STATUS_EXECUTION_FAILED"
	case StatusInternalError:
		return "CUBLAS_STATUS_INTERNAL_ERROR"
	case StatusNotSupported:
		return "CUBLAS_STATUS_NOT_SUPPORTED"
	case StatusLicenseError:
		return "CUBLAS_STATUS_LICENSE_ERROR"
	}
	return "unknown"
}

// Error is a failed cuBLAS call: the function, the device and the status.
// It matches its Status with errors.Is, and the backend sentinels where
// one fits: CUBLAS_STATUS_ALLOC_FAILED matches backend.ErrOutOfMemory,
// INVALID_VALUE backend.ErrInvalidValue, NOT_SUPPORTED and ARCH_MISMATCH
// backend.ErrNotSupported.
type Error struct {
	Op     string // e.g. "cublasSgemm_v2"
	Device int
	Status Status
}

func (e *Error) Error() string {
	return fmt.Sprintf("blas: %s on device %d: %s (%d)", e.Op, e.Device, e.Status.name(), int(e.Status))
}

// Is matches e's Status and the backend sentinel for it.
func (e *Error) Is(target error) bool {
	if s, ok := target.(Status); ok {
		return s == e.Status
	}
	switch e.Status {
	case StatusAllocFailed:
		return target == backend.ErrOutOfMemory
	case StatusInvalidValue:
		return target == backend.ErrInvalidValue
	case StatusNotSupported, StatusArchMismatch:
		return target == backend.ErrNotSupported
	}
	return false
}

// cres is where a C call failed, if it did: the stage (the gb_ enum in
// the C preamble) and its code, a CUresult for the context stages and a
// cublasStatus_t for the others.
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
		return fmt.Errorf("blas: %s on device %d: making the device's context current: %w", op, device, cuda.Result(r.code))
	case stageRestore:
		return fmt.Errorf("blas: %s on device %d: restoring the thread's previous context: %w", op, device, cuda.Result(r.code))
	case stageStream:
		return &Error{Op: "cublasSetStream_v2", Device: device, Status: Status(r.code)}
	}
	return &Error{Op: op, Device: device, Status: Status(r.code)}
}
