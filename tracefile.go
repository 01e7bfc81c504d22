package gocuda

import (
	"log/slog"
	"sync"

	"github.com/gocuda/gocuda/config"
	"github.com/gocuda/gocuda/internal/recorder"
	"github.com/gocuda/gocuda/pool"
)

// recording is the GOCUDA_TRACE recorder, made with the first pool.
var recording struct {
	sync.Mutex
	r     *recorder.Recorder
	tried bool
}

// wrapTrace wraps p to record its allocations when GOCUDA_TRACE is set;
// otherwise p is returned as it is, so an unset knob costs nothing. It
// wraps the strategy itself, inside the pressure layer, so that the trace
// holds what the strategy served: allocations that succeeded, retries
// included once.
func wrapTrace(p pool.Pool, c config.Config) pool.Pool {
	if c.Trace == "" {
		return p
	}
	recording.Lock()
	defer recording.Unlock()
	if !recording.tried {
		recording.tried = true
		r, err := recorder.Create(c.Trace)
		if err != nil {
			// A debugging aid that cannot open its file must not stop
			// the program: say so once and run without it.
			slog.Error("gocuda: not recording a trace", "err", err)
			return p
		}
		recording.r = r
	}
	if recording.r == nil {
		return p
	}
	return recording.r.Wrap(p)
}

// StopTrace ends the GOCUDA_TRACE recording: it writes out what is
// buffered, ends the gzip stream of a .gz file and closes the file, which
// gocuda replay can then read. Allocations after it are not recorded.
//
// A program that records calls it before it exits, usually with
//
//	defer gocuda.StopTrace()
//
// in main: Go runs no finalizers at exit, so without it the end of the
// trace is lost (and a .gz file cannot be read at all). Closing every
// device pool ends the recording too. Without GOCUDA_TRACE it does
// nothing and returns nil; the error is a failed write or close.
func StopTrace() error {
	recording.Lock()
	r := recording.r
	recording.Unlock()
	if r == nil {
		return nil
	}
	return r.Close()
}
