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

// StopTrace ends the GOCUDA_TRACE recording: it writes out the events not
// yet in the file, adds an end line, ends the gzip stream of a .gz file
// and closes the file. Allocations after it are not recorded.
//
// It is optional. While the program runs, a background writer puts the
// events in the file within 100 ms, flushing the gzip stream each time,
// so a program that exits, is killed or crashes without StopTrace leaves
// a trace that gocuda replay reads up to the last flush, saying where it
// ends. Call it (or defer it in main) to keep the last events too;
// closing every device pool ends the recording as well. Without
// GOCUDA_TRACE it does nothing and returns nil; the error is a failed
// write or close.
func StopTrace() error {
	recording.Lock()
	r := recording.r
	recording.Unlock()
	if r == nil {
		return nil
	}
	return r.Close()
}
