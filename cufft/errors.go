package cufft

import (
	"errors"
	"fmt"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/internal/libload"
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

var resultNames = libload.Names{
	int(ResultInvalidPlan):             "CUFFT_INVALID_PLAN",
	int(ResultAllocFailed):             "CUFFT_ALLOC_FAILED",
	int(ResultInvalidType):             "CUFFT_INVALID_TYPE",
	int(ResultInvalidValue):            "CUFFT_INVALID_VALUE",
	int(ResultInternalError):           "CUFFT_INTERNAL_ERROR",
	int(ResultExecFailed):              "CUFFT_EXEC_FAILED",
	int(ResultSetupFailed):             "CUFFT_SETUP_FAILED",
	int(ResultInvalidSize):             "CUFFT_INVALID_SIZE",
	int(ResultUnalignedData):           "CUFFT_UNALIGNED_DATA",
	int(ResultIncompleteParameterList): "CUFFT_INCOMPLETE_PARAMETER_LIST",
	int(ResultInvalidDevice):           "CUFFT_INVALID_DEVICE",
	int(ResultParseError):              "CUFFT_PARSE_ERROR",
	int(ResultNoWorkspace):             "CUFFT_NO_WORKSPACE",
	int(ResultNotImplemented):          "CUFFT_NOT_IMPLEMENTED",
	int(ResultLicenseError):            "CUFFT_LICENSE_ERROR",
	int(ResultNotSupported):            "CUFFT_NOT_SUPPORTED",
	int(ResultMissingDependency):       "CUFFT_MISSING_DEPENDENCY",
	int(ResultNVRTCFailure):            "CUFFT_NVRTC_FAILURE",
	int(ResultNVJitLinkFailure):        "CUFFT_NVJITLINK_FAILURE",
	int(ResultNVSHMEMFailure):          "CUFFT_NVSHMEM_FAILURE",
}

func (r Result) name() string { return resultNames.Name(int(r)) }

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

// cres is a C call's result (cudalib.h's cl_res): the stage that failed
// and its code, a CUresult for the context stages and a cufftResult for
// the others.
type cres libload.Res

// stageWorkArea is cuFFT's own stage: setting an execution's work area
// (FF_WORKAREA in the C preamble).
const stageWorkArea = libload.StageOwn

// err turns a C call's result into nil or an error naming op on device.
func (r cres) err(op string, device int) error {
	status := func(op string, code int) error {
		return &Error{Op: op, Device: device, Result: Result(code)}
	}
	if r.Stage == stageWorkArea {
		return status("cufftSetWorkArea", r.Code)
	}
	return library.Err(libload.Res(r), op, device, status)
}
