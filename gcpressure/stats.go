package gcpressure

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/dustin/go-humanize"
)

// counts are written on slow paths only (collections and the ladder), so
// plain shared atomics are fine.
type counts struct {
	early, imminent, oom          atomic.Int64
	earlyDur, imminentDur, oomDur atomic.Int64 // nanoseconds
	waited                        atomic.Int64 // nanoseconds
	freed                         atomic.Uint64
	retries, failures             atomic.Uint64
}

// add counts a collection by its note: "early", "imminent" or "oom".
func (c *counts) add(note string, d time.Duration, freed uint64) {
	switch note {
	case "early":
		c.early.Add(1)
		c.earlyDur.Add(int64(d))
	case "imminent":
		c.imminent.Add(1)
		c.imminentDur.Add(int64(d))
	default:
		c.oom.Add(1)
		c.oomDur.Add(int64(d))
	}
	c.freed.Add(freed)
}

// Stats are the pressure layer's figures for one device since Wrap.
type Stats struct {
	// EarlyCollections ran because the heuristic chose to, within its
	// budget; ImminentCollections because the out-of-memory path was
	// about to (Input.Imminent); OOMCollections on the out-of-memory path.
	EarlyCollections, ImminentCollections, OOMCollections int
	// EarlyTime, ImminentTime and OOMTime are their durations:
	// runtime.GC's, plus the wait for cleanups when an allocation waited
	// for them. The budget bounds EarlyTime.
	EarlyTime, ImminentTime, OOMTime time.Duration
	// Waited is how long allocations were held up by collections and the
	// ladder; background collections do not hold anyone up.
	Waited time.Duration
	// Freed is the bytes that collections gave back to the pool.
	Freed uint64
	// OOMRetries counts allocations that failed and went up the ladder;
	// OOMFailures those that failed even then.
	OOMRetries, OOMFailures uint64
	// PeakReserved is the wrapped pool's highest reserved bytes.
	PeakReserved uint64
	// Limit is the effective limit as last read (see EffectiveLimit).
	Limit uint64
	// RunTime is the time since Wrap.
	RunTime time.Duration
}

// Collections is all collections run.
func (s Stats) Collections() int {
	return s.EarlyCollections + s.ImminentCollections + s.OOMCollections
}

// CollectTime is all collection time.
func (s Stats) CollectTime() time.Duration { return s.EarlyTime + s.ImminentTime + s.OOMTime }

// Share is collection time as a share of run time.
func (s Stats) Share() float64 {
	if s.RunTime <= 0 {
		return 0
	}
	return float64(s.CollectTime()) / float64(s.RunTime)
}

// EarlyShare is early collection time as a share of run time: what the
// budget bounds (see Decide).
func (s Stats) EarlyShare() float64 {
	if s.RunTime <= 0 {
		return 0
	}
	return float64(s.EarlyTime) / float64(s.RunTime)
}

func (s Stats) String() string {
	return fmt.Sprintf("%d collections (%d early, %d imminent, %d out of memory) took %v, %.2f%% of %v; waited %v; freed %s; %d out-of-memory retries, %d failures; peak reserved %s of %s",
		s.Collections(), s.EarlyCollections, s.ImminentCollections, s.OOMCollections, s.CollectTime().Round(time.Microsecond), 100*s.Share(),
		s.RunTime.Round(time.Millisecond), s.Waited.Round(time.Microsecond), humanize.IBytes(s.Freed),
		s.OOMRetries, s.OOMFailures, humanize.IBytes(s.PeakReserved), humanize.IBytes(s.Limit))
}

// PressureStats returns the figures so far. (The wrapped pool's own
// figures are Stats, as for any pool.)
func (w *Pool) PressureStats() Stats {
	c := &w.counts
	st := Stats{
		EarlyCollections: int(c.early.Load()), ImminentCollections: int(c.imminent.Load()), OOMCollections: int(c.oom.Load()),
		EarlyTime: time.Duration(c.earlyDur.Load()), ImminentTime: time.Duration(c.imminentDur.Load()), OOMTime: time.Duration(c.oomDur.Load()),
		Waited: time.Duration(c.waited.Load()), Freed: c.freed.Load(),
		OOMRetries: c.retries.Load(), OOMFailures: c.failures.Load(),
		PeakReserved: w.Pool.Stats().ReservedPeak,
		RunTime:      time.Since(w.start),
	}
	w.mu.Lock()
	if w.limit == 0 {
		w.refreshLimit(time.Now(), w.src.Reserved())
	}
	st.Limit = w.limit
	w.mu.Unlock()
	return st
}
