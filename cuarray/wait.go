package cuarray

import (
	"context"
	"fmt"
	"time"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/pool"
)

// ErrOutOfMemory: an allocation found no room on its device, within the
// hard limit, even after the pools gave their caches back and the
// collector ran. It is backend.ErrOutOfMemory, re-exported here so that
// errors.Is(err, cuarray.ErrOutOfMemory) works without importing backend;
// errors.As with *OutOfMemoryError gives the figures.
var ErrOutOfMemory = backend.ErrOutOfMemory

// OutOfMemoryError is the error behind ErrOutOfMemory: the request, the
// hard limit, what was reserved, and the pool's status at the failure.
type OutOfMemoryError = pool.OutOfMemoryError

// Polling bounds of SynchronizeContext: the first waits are short, for
// work that is nearly done; the longest keeps a long wait to about a
// thousand cheap queries a second.
const (
	syncPollMin = 10 * time.Microsecond
	syncPollMax = time.Millisecond
)

// SynchronizeContext is Synchronize that gives up when ctx is done: it
// returns nil once all work queued on s before the call has finished, or
// ctx.Err() if ctx is cancelled or passes its deadline first. Giving up
// does not cancel the device's work, which runs to its end; it only stops
// the host waiting for it (the work stays ordered before later work on s,
// and arrays it writes are waited for by their next use as usual).
//
// It starts no goroutine: it records an event on s and polls it, at
// first every few microseconds and then at most once a millisecond, so it
// returns within about a millisecond of the work finishing; with a ctx
// that can never be done (context.Background) it waits as Synchronize
// does, without polling.
func (s *Stream) SynchronizeContext(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if ctx.Done() == nil {
		return s.Synchronize()
	}
	if s.Closed() || !s.life.acquire() {
		return closedError("SynchronizeContext", s)
	}
	if err := s.notCapturing("SynchronizeContext"); err != nil {
		s.life.release()
		return err
	}
	ev, err := backend.NewEvent(s.dev)
	if err == nil {
		if err = ev.Record(s.bs); err != nil {
			backend.RecycleEvent(s.dev, ev)
		}
	}
	s.life.release()
	if err != nil {
		return fmt.Errorf("cuarray: SynchronizeContext: stream %d: %w", s.bs.ID(), err)
	}
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for wait := syncPollMin; ; wait = min(2*wait, syncPollMax) {
		done, err := ev.Query()
		if err != nil {
			backend.RecycleEvent(s.dev, ev)
			return fmt.Errorf("cuarray: SynchronizeContext: stream %d: %w", s.bs.ID(), err)
		}
		if done {
			backend.RecycleEvent(s.dev, ev)
			return nil
		}
		if timer == nil {
			timer = time.NewTimer(wait)
		} else {
			timer.Reset(wait)
		}
		select {
		case <-ctx.Done():
			// The event's work has not finished: destroy it rather than
			// hand it out again while still pending (the driver frees it
			// once the work is done).
			_ = ev.Destroy()
			return ctx.Err()
		case <-timer.C:
		}
	}
}
