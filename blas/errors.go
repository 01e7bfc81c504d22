package blas

import (
	"errors"
	"fmt"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/internal/libload"
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

var statusNames = libload.Names{
	int(StatusNotInitialized):  "CUBLAS_STATUS_NOT_INITIALIZED",
	int(StatusAllocFailed):     "CUBLAS_STATUS_ALLOC_FAILED",
	int(StatusInvalidValue):    "CUBLAS_STATUS_INVALID_VALUE",
	int(StatusArchMismatch):    "CUBLAS_STATUS_ARCH_MISMATCH",
	int(StatusMappingError):    "CUBLAS_STATUS_MAPPING_ERROR",
	int(StatusExecutionFailed): "CUBLAS_STATUS_EXECUTION_FAILED",
	int(StatusInternalError):   "CUBLAS_STATUS_INTERNAL_ERROR",
	int(StatusNotSupported):    "CUBLAS_STATUS_NOT_SUPPORTED",
	int(StatusLicenseError):    "CUBLAS_STATUS_LICENSE_ERROR",
}

func (s Status) name() string { return statusNames.Name(int(s)) }

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

// cres is a C call's result (cudalib.h's cl_res): the stage that failed
// and its code, a CUresult for the context stages and a cublasStatus_t
// for the others.
type cres libload.Res

// err turns a C call's result into nil or an error naming op on device.
func (r cres) err(op string, device int) error {
	return library.Err(libload.Res(r), op, device, func(op string, code int) error {
		return &Error{Op: op, Device: device, Status: Status(code)}
	})
}
