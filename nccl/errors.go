package nccl

import (
	"errors"
	"fmt"

	"github.com/gocuda/gocuda/backend"
)

// ErrNoNCCL is wrapped by the error of every GPU communicator call when no
// NCCL library can be loaded. The message names every file tried and why
// each failed.
var ErrNoNCCL = errors.New("NCCL not found")

// ErrAborted is wrapped by the errors of a communicator that was aborted:
// its context was done, Abort was called, or, on the host backend,
// another rank of the same communicator aborted or failed. The error says
// which, and wraps the context's error where there is one.
var ErrAborted = errors.New("communicator aborted")

// errInvalid is what argument errors wrap.
var errInvalid = backend.ErrInvalidValue

// Result is an ncclResult_t. Results are errors, so the constants below
// work with errors.Is against any *Error the package returns.
type Result int

// The results NCCL defines (values from nccl.h). ResultInProgress is
// never returned to a caller: the package waits for the work instead.
const (
	ResultSuccess            Result = 0
	ResultUnhandledCudaError Result = 1
	ResultSystemError        Result = 2
	ResultInternalError      Result = 3
	ResultInvalidArgument    Result = 4
	ResultInvalidUsage       Result = 5
	ResultRemoteError        Result = 6
	ResultInProgress         Result = 7
	ResultTimeout            Result = 8
)

var resultNames = [...]string{
	"ncclSuccess", "ncclUnhandledCudaError", "ncclSystemError", "ncclInternalError",
	"ncclInvalidArgument", "ncclInvalidUsage", "ncclRemoteError", "ncclInProgress", "ncclTimeout",
}

func (r Result) name() string {
	if r >= 0 && int(r) < len(resultNames) {
		return resultNames[r]
	}
	return fmt.Sprintf("ncclResult(%d)", int(r))
}

func (r Result) Error() string { return fmt.Sprintf("NCCL result %d (%s)", int(r), r.name()) }

// Error is a failed NCCL call: the function, the rank and device of the
// communicator (-1 where there is none yet), the result, NCCL's text for
// the result (ncclGetErrorString) and its note on the last error
// (ncclGetLastError), which usually says what was wrong.
//
// It matches its Result with errors.Is, and the backend sentinels where
// one fits: ncclInvalidArgument and ncclInvalidUsage match
// backend.ErrInvalidValue.
type Error struct {
	Op     string // "ncclAllReduce"
	Rank   int
	Device int
	Result Result
	Text   string // ncclGetErrorString
	Last   string // ncclGetLastError, "" when NCCL had nothing to say
}

func (e *Error) Error() string {
	where := ""
	if e.Rank >= 0 {
		where = fmt.Sprintf(" on rank %d", e.Rank)
	}
	if e.Device >= 0 {
		where += fmt.Sprintf(" (device %d)", e.Device)
	}
	msg := fmt.Sprintf("nccl: %s%s: %s (%d)", e.Op, where, e.Result.name(), int(e.Result))
	if e.Text != "" {
		msg += ": " + e.Text
	}
	if e.Last != "" {
		msg += ": " + e.Last
	}
	return msg
}

// Is matches e's Result and the backend sentinel for it.
func (e *Error) Is(target error) bool {
	if r, ok := target.(Result); ok {
		return r == e.Result
	}
	switch e.Result {
	case ResultInvalidArgument, ResultInvalidUsage:
		return target == backend.ErrInvalidValue
	}
	return false
}
