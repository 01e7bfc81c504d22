package gcpressure

import (
	"errors"
	"fmt"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/pool"
)

// retry is the out-of-memory ladder, run when the wrapped pool's Alloc
// failed with err. Other errors are returned as they are. Each step ends
// with a retry, so the ladder stops at the first step that found room:
//
//  1. give the pool's cache back (Reclaim(All)): a cache holding blocks
//     of the wrong sizes is the cheapest memory to find;
//  2. collect, and wait until the cleanups the collection queued have
//     run (see waitCleanups): unreachable arrays give their blocks back;
//  3. synchronize the device, so that frees ordered on streams have
//     happened, and give the cache back again: what step 2 freed went to
//     the cache, maybe as blocks of the wrong size.
//
// A request that can never fit (pool.Source.Fits: beyond the hard limit or
// the device) skips the ladder. Only then does it fail, with an error that matches
// backend.ErrOutOfMemory and *pool.OutOfMemoryError, whose text has the
// request, the limit and the pool's status.
func (w *Pool) retry(size uint64, s backend.Stream, err error) (*pool.Block, error) {
	if !errors.Is(err, backend.ErrOutOfMemory) {
		return nil, err
	}
	if w.src.Fits(size) != nil {
		// Beyond the hard limit or the device: no step of the ladder can
		// make room, and each would cost (a collection, the cache).
		w.counts.failures.Add(1)
		if pool.Observed() {
			pool.Emit(pool.Event{Kind: pool.EventOOM, Device: w.dev.Ordinal(), Memory: pool.MemoryOfDevice(w.dev), Bytes: size, Reserved: w.src.Reserved()})
		}
		return nil, w.oomError(size, err)
	}
	w.oomMu.Lock()
	defer w.oomMu.Unlock()
	start := time.Now()
	defer func() { w.counts.waited.Add(int64(time.Since(start))) }()
	// While this goroutine waited for the lock, another may have climbed
	// the ladder and freed what this allocation needs.
	b, err := w.Pool.Alloc(size, s)
	if !errors.Is(err, backend.ErrOutOfMemory) {
		return b, err
	}
	w.counts.retries.Add(1)
	if pool.Observed() {
		pool.Emit(pool.Event{Kind: pool.EventOOMRetry, Device: w.dev.Ordinal(), Memory: pool.MemoryOfDevice(w.dev), Bytes: size, Reserved: w.src.Reserved()})
	}

	steps := [...]func() bool{
		func() bool { return w.Pool.Reclaim(pool.All) > 0 },
		func() bool { w.collectNow(); return true },
		func() bool {
			// A failed synchronization means the device is broken; the
			// next Alloc will say so better than we can here.
			_ = w.dev.Synchronize()
			w.Pool.Reclaim(pool.All)
			return true
		},
	}
	for _, step := range steps {
		if !step() {
			continue // nothing changed: the same Alloc would fail the same way
		}
		b, err = w.Pool.Alloc(size, s)
		if !errors.Is(err, backend.ErrOutOfMemory) {
			return b, err
		}
	}
	w.counts.failures.Add(1)
	if pool.Observed() {
		pool.Emit(pool.Event{Kind: pool.EventOOM, Device: w.dev.Ordinal(), Memory: pool.MemoryOfDevice(w.dev), Bytes: size, Reserved: w.src.Reserved()})
	}
	return nil, w.oomError(size, err)
}

// collectNow runs a collection for the out-of-memory path, after the one
// already running if there is one. Waiting for that one is not enough: Go
// marks what is allocated during a cycle live, so the arrays dropped since
// it began (a burst of short-lived ones, which is what fills a small
// limit) survive it, and only a cycle begun now finds them. The 2-GPU run
// of 2026-11-25 failed ExampleWrap this way under a 16 MiB limit.
func (w *Pool) collectNow() {
	w.mu.Lock()
	for w.running != nil {
		c := w.running
		w.mu.Unlock()
		<-c.done
		w.mu.Lock()
	}
	now := time.Now()
	c := w.begin(now, w.Pool.Stats().Live)
	w.mu.Unlock()
	w.collect(c, now, "oom", true)
}

// oomError builds the final error: the wrapped pool's *OutOfMemoryError
// (or a new one) with the caller's request and the pool's status, wrapped
// in a sentence that says the ladder ran and what limit applied.
func (w *Pool) oomError(size uint64, err error) error {
	var e pool.OutOfMemoryError
	var inner *pool.OutOfMemoryError
	if errors.As(err, &inner) {
		e = *inner
	} else {
		e = pool.OutOfMemoryError{Limit: w.src.Limits().Hard, Reserved: w.src.Reserved(), Device: w.dev.Ordinal(), Err: err}
	}
	e.Request = size
	if w.opts.Status != nil {
		e.Status = w.opts.Status()
	} else {
		e.Status = w.Pool.Stats().String()
	}
	w.mu.Lock()
	// Read afresh: other processes may have taken memory since.
	w.limit, w.limitAt = EffectiveLimit(w.src.Limits(), w.src.Reserved(), w.dev), time.Now()
	limit := w.limit
	w.mu.Unlock()
	what := "no hard limit; the device can give " + humanize.IBytes(limit)
	if h := w.src.Limits().Hard; h > 0 {
		what = fmt.Sprintf("hard limit %s (%d bytes)", humanize.IBytes(h), h)
	}
	return fmt.Errorf("gcpressure: %s (%d bytes) does not fit on device %d under %s, even after giving the cache back, collecting garbage and synchronizing: %w",
		humanize.IBytes(size), size, w.dev.Ordinal(), what, &e)
}
