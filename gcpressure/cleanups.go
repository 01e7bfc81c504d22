package gcpressure

import (
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
// deadline; it reports whether they all ran. Without the counters it
// yields a few times and reports false.
func waitCleanups(deadline time.Time) bool {
	target, done, ok := cleanupCounts()
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
	for i := 0; done < target; i++ {
		if !time.Now().Before(deadline) {
			return false
		}
		if i < 64 {
			runtime.Gosched()
		} else {
			pause = min(max(2*pause, 20*time.Microsecond), time.Millisecond)
			time.Sleep(pause)
		}
		_, done, _ = cleanupCounts()
	}
	return true
}
