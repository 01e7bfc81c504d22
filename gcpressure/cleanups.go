package gcpressure

import (
	"context"
	"errors"
	"runtime"
	"runtime/metrics"
	"time"
)

// Waiting for cleanups.
//
// runtime.GC returns once the collection has marked and swept: every
// cleanup (runtime.AddCleanup) of an object it found unreachable is then
// queued, but not run. The runtime runs them on its own goroutines, up to
// GOMAXPROCS/4 of them in parallel in Go 1.26, in batches whose order is
// not defined. A single sentinel cleanup proves nothing about the others:
// it may run first, on another goroutine, while they are still queued.
//
// The runtime counts both sides, and publishes the counts through
// runtime/metrics: /gc/cleanups/queued is every cleanup ever queued,
// /gc/cleanups/executed every one that has returned. A cleanup counts as
// executed only after its whole batch returned. So: read queued right
// after runtime.GC (it includes all of this collection's cleanups, which
// sweeping queued before GC returned), then wait until executed reaches
// it. At that moment every cleanup queued up to our collection has run,
// and with it every pool.Free that a cuarray cleanup makes.
//
// One corner is left: if the program's own collections queue more
// cleanups meanwhile and those run first, executed can reach the target
// while one of ours still runs. That needs another whole collection cycle
// inside the wait (microseconds to milliseconds), and costs only a retry
// that comes a little early; the ladder's next step collects again.
var cleanupMetrics = [2]string{"/gc/cleanups/queued:cleanups", "/gc/cleanups/executed:cleanups"}

// cleanupCounts reads the two counters; ok is false if this runtime does
// not publish them.
func cleanupCounts() (queued, executed uint64, ok bool) {
	s := [2]metrics.Sample{{Name: cleanupMetrics[0]}, {Name: cleanupMetrics[1]}}
	metrics.Read(s[:])
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
		return 0, 0, false
	}
	return s[0].Value.Uint64(), s[1].Value.Uint64(), true
}

// waitCleanups blocks until the cleanups queued so far have run, or until
// deadline (none when zero) or done is closed (never when nil); it reports
// whether they all ran. Without the counters it yields a few times and
// reports false.
func waitCleanups(deadline time.Time, done <-chan struct{}) bool {
	target, executed, ok := cleanupCounts()
	if !ok {
		for range 100 {
			runtime.Gosched()
		}
		return false
	}
	// Poll: first by yielding (the cleanup goroutines are runnable and
	// each batch takes microseconds), then sleeping with a growing pause,
	// so a stuck cleanup does not cost a spinning core until deadline.
	pause := time.Duration(0)
	for i := 0; executed < target; i++ {
		if !deadline.IsZero() && !time.Now().Before(deadline) {
			return false
		}
		select {
		case <-done:
			return false
		default:
		}
		if i < 64 {
			runtime.Gosched()
		} else {
			pause = min(max(2*pause, 20*time.Microsecond), time.Millisecond)
			time.Sleep(pause)
		}
		_, executed, _ = cleanupCounts()
	}
	return true
}

// ErrCleanupsUnknown is what Collect returns when the Go runtime does not
// publish the cleanup counters (/gc/cleanups/queued and executed in
// runtime/metrics) it waits on.
var ErrCleanupsUnknown = errors.New("gcpressure: this Go runtime does not publish " + cleanupMetrics[0] + " and " +
	cleanupMetrics[1] + " in runtime/metrics, so whether cleanups have run cannot be known")

// Collect runs a full collection (runtime.GC) and waits until the
// cleanups it queued have run. runtime.GC alone returns once the
// collection has swept, before the cleanups that give unreachable
// arrays' device memory back to their pools have run (the runtime runs
// them on goroutines of its own). After Collect that memory is back in
// the pools: a leak report, PoolStatus or a pool's Stats shows only what
// is still referenced. It is Julia's GC.gc() before CUDA.reclaim(), or
// Python's gc.collect() before torch.cuda.empty_cache().
//
// It returns ctx's error if ctx ends first (a cleanup that blocks holds
// Collect up as long), ErrCleanupsUnknown where the runtime cannot tell.
// Cleanups that earlier collections queued and that have not run yet are
// waited for too.
func Collect(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	runtime.GC()
	// ctx's deadline closes its Done channel: no deadline of our own.
	if waitCleanups(time.Time{}, ctx.Done()) {
		return nil
	}
	if _, _, ok := cleanupCounts(); !ok {
		return ErrCleanupsUnknown
	}
	return ctx.Err() // Done was closed: not nil
}
