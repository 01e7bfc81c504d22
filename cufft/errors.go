package cufft

import (
	"errors"
	"fmt"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/cuda"
)

// ErrNoCUFFT is wrapped by the error of every GPU transform when no cuFFT
// library can be loaded. The message names every file tried and why each
// failed, and every folder searched.
var ErrNoCUFFT = errors.New("cuFFT not found")

// Result is a cufftResult. Result values are errors, so the constants below
// work with errors.Is against any *Error the package returns.
type Result int

// The results cuFFT documents (values from cufft.h). cuFFT 12 (CUDA 13)
// dropped 10, 12 and 15 and added 17 to 20.
const (
	ResultInvalidPlan             Result = 1
	ResultAllocFailed             Result = 2
	ResultInvalidType             Result = 3
	ResultInvalidValue            Result = 4
	ResultInternalError           Result = 5
	ResultExecFailed              Result = 6
	ResultSetupFailed             Result = 7
	ResultInvalidSize             Result = 8
	ResultUnalignedData           Result = 9
	ResultIncompleteParameterList Result = 10
	ResultInvalidDevice           Result = 11
	ResultParseError              Result = 12
	ResultNoWorkspace             Result = 13
	ResultNotImplemented          Result = 14
	ResultLicenseError            Result = 15
	ResultNotSupported            Result = 16
	ResultMissingDependency       Result = 17
	ResultNVRTCFailure            Result = 18
	ResultNVJitLinkFailure        Result = 19
	ResultNVSHMEMFailure          Result = 20
)

var resultNames = map[Result]string{
	ResultInvalidPlan:             "CUFFT_INVALID_PLAN",
	ResultAllocFailed:             "CUFFT_ALLOC_FAILED",
	ResultInvalidType:             "CUFFT_INVALID_TYPE",
	ResultInvalidValue:            "CUFFT_INVALID_VALUE",
	ResultInternalError:           "CUFFT_INTERNAL_ERROR",
	ResultExecFailed:              "CUFFT_EXEC_FAILED",
	ResultSetupFailed:             "CUFFT_SETUP_FAILED",
	ResultInvalidSize:             "CUFFT_INVALID_SIZE",
	ResultUnalignedData:           "CUFFT_UNALIGNED_DATA",
	ResultIncompleteParameterList: "CUFFT_INCOMPLETE_PARAMETER_LIST",
	ResultInvalidDevice:           "CUFFT_INVALID_DEVICE",
	ResultParseError:              "CUFFT_PARSE_ERROR",
	ResultNoWorkspace:             "CUFFT_NO_WORKSPACE",
	ResultNotImplemented:          "CUFFT_NOT_IMPLEMENTED",
	ResultLicenseError:            "CUFFT_LICENSE_ERROR",
	ResultNotSupported:            "CUFFT_NOT_SUPPORTED",
	ResultMissingDependency:       "CUFFT_MISSING_DEPENDENCY",
	ResultNVRTCFailure:            "CUFFT_NVRTC_FAILURE",
	ResultNVJitLinkFailure:        "CUFFT_NVJITLINK_FAILURE",
	ResultNVSHMEMFailure:          "CUFFT_NVSHMEM_FAILURE",
}

func (r Result) name() string {
	if n, ok := resultNames[r]; ok {
		return n
	}
	return "unknown"
}

func (r Result) Error() string { return fmt.Sprintf("cuFFT result %d (%s)", int(r), r.name()) }

// Error is a failed cuFFT call: the function, the device and the result.
// It matches its Result with errors.Is, and the backend sentinels where one
// fits: CUFFT_ALLOC_FAILED matches backend.ErrOutOfMemory,
// NOT_SUPPORTED and NOT_IMPLEMENTED backend.ErrNotSupported, INVALID_VALUE
// and INVALID_SIZE backend.ErrInvalidValue.
type Error struct {
	Op     string // e.g. "cufftExecC2C"
	Device int
	Result Result
}

func (e *Error) Error() string {
	return fmt.Sprintf("cufft: %s on device %d: %s (%d)", e.Op, e.Device, e.Result.name(), int(e.Result))
}

// Is matches e's Result and the backend sentinel for it.
func (e *Error) Is(target error) bool {
	if r, ok := target.(Result); ok {
		return r == e.Result
	}
	switch e.Result {
	case ResultAllocFailed:
		return target == backend.ErrOutOfMemory
	case ResultNotSupported, ResultNotImplemented:
		return target == backend.ErrNotSupported
	case ResultInvalidValue, ResultInvalidSize:
		return target == backend.ErrInvalidValue
	}
	return false
}

// cres is where a C call failed, if it did: the stage (the FF_ enum in the
// C preamble) and its code, a CUresult for the context stages and a
// cufftResult for the others.
type cres struct{ stage, code int }

const (
	stageOK = iota
	stageCtx
	stageStream
	stageWorkArea
	stageCall
	stageRestore
)

// err turns a C call's result into nil or an error naming op on device.
func (r cres) err(op string, device int) error {
	switch r.stage {
	case stageOK:
		return nil
	case stageCtx:
		return fmt.Errorf("cufft: %s on device %d: making the device's context current: %w", op, device, cuda.Result(r.code))
	case stageRestore:
		return fmt.Errorf("cufft: %s on device %d: restoring the thread's previous context: %w", op, device, cuda.Result(r.code))
	case stageStream:
		op = "cufftSetStream"
	case stageWorkArea:
		op = "cufftSetWorkArea"
	}
	return &Error{Op: op, Device: device, Result: Result(r.code)}
}
