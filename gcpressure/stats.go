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
	early, imminent, oom, pacer             atomic.Int64
	earlyDur, imminentDur, oomDur, pacerDur atomic.Int64 // nanoseconds
	waited                                  atomic.Int64 // nanoseconds
	freed, pacerFreed, pacerReclaimed       atomic.Uint64
	retries, failures                       atomic.Uint64
	// liveAfter and peakLiveAfter are the live bytes the last collection
	// left and the most any left.
	liveAfter, peakLiveAfter atomic.Uint64
}

// noteLive records what a collection left live.
func (c *counts) noteLive(live uint64) {
	c.liveAfter.Store(live)
	for {
		p := c.peakLiveAfter.Load()
		if live <= p || c.peakLiveAfter.CompareAndSwap(p, live) {
			return
		}
	}
}

// add counts a collection by its note: "early", "imminent", "pacer" or
// "oom".
func (c *counts) add(note string, d time.Duration, freed uint64) {
	switch note {
	case "early":
		c.early.Add(1)
		c.earlyDur.Add(int64(d))
	case "pacer":
		c.pacer.Add(1)
		c.pacerDur.Add(int64(d))
		c.pacerFreed.Add(freed)
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
	// about to (Input.Imminent); OOMCollections on the out-of-memory path;
	// PacerCollections because device bytes in use reached the pacer's
	// target (GOCUDA_GC_PERCENT, see PacerTarget).
	EarlyCollections, ImminentCollections, OOMCollections, PacerCollections int
	// EarlyTime, ImminentTime, OOMTime and PacerTime are their durations:
	// runtime.GC's, plus the wait for cleanups when an allocation waited
	// for them. The budget bounds EarlyTime, PacerBudget PacerTime.
	EarlyTime, ImminentTime, OOMTime, PacerTime time.Duration
	// Waited is how long allocations were held up by collections and the
	// ladder; background collections do not hold anyone up.
	Waited time.Duration
	// Freed is the bytes that collections gave back to the pool;
	// PacerFreed the pacer collections' part of it.
	Freed, PacerFreed uint64
	// PacerReclaimed is the bytes the pool gave back to the driver after
	// pacer collections, so that reserved bytes follow the live set.
	PacerReclaimed uint64
	// GCPercent is the pacer's setting (PacerOff when off: with
	// GOCUDA_GC_PERCENT=off or early collection off); PacerTarget the
	// device bytes in use the pacer keeps the footprint to this cycle
	// (its collection starts before, at PacerTrigger), 0 when off.
	GCPercent   int
	PacerTarget uint64
	// LiveAfterGC is the live bytes the last collection left (0 before
	// the first); PeakLiveAfterGC the most any collection left. That is
	// the live set as collections sample it: a lower bound of its true
	// peak, which may fall between two collections.
	LiveAfterGC, PeakLiveAfterGC uint64
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
	return s.EarlyCollections + s.ImminentCollections + s.OOMCollections + s.PacerCollections
}

// CollectTime is all collection time.
func (s Stats) CollectTime() time.Duration {
	return s.EarlyTime + s.ImminentTime + s.OOMTime + s.PacerTime
}

// PacerShare is pacer collection time as a share of run time: what
// PacerBudget bounds.
func (s Stats) PacerShare() float64 {
	if s.RunTime <= 0 {
		return 0
	}
	return float64(s.PacerTime) / float64(s.RunTime)
}

// PacerString says what the pacer did, for PoolStatus and String: its
// setting, target, collections and what they freed and gave back.
func (s Stats) PacerString() string {
	if s.GCPercent == PacerOff {
		return "off"
	}
	return fmt.Sprintf("GOCUDA_GC_PERCENT=%d, target %s; %d collections took %v, freed %s, gave back %s to the driver; live after the last collection %s (peak %s)",
		s.GCPercent, humanize.IBytes(s.PacerTarget), s.PacerCollections, s.PacerTime.Round(time.Microsecond),
		humanize.IBytes(s.PacerFreed), humanize.IBytes(s.PacerReclaimed), humanize.IBytes(s.LiveAfterGC), humanize.IBytes(s.PeakLiveAfterGC))
}

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
	return fmt.Sprintf("%d collections (%d pacer, %d early, %d imminent, %d out of memory) took %v, %.2f%% of %v; waited %v; freed %s; %d out-of-memory retries, %d failures; peak reserved %s of %s; pacer %s",
		s.Collections(), s.PacerCollections, s.EarlyCollections, s.ImminentCollections, s.OOMCollections, s.CollectTime().Round(time.Microsecond), 100*s.Share(),
		s.RunTime.Round(time.Millisecond), s.Waited.Round(time.Microsecond), humanize.IBytes(s.Freed),
		s.OOMRetries, s.OOMFailures, humanize.IBytes(s.PeakReserved), humanize.IBytes(s.Limit), s.PacerString())
}

// PressureStats returns the figures so far. (The wrapped pool's own
// figures are Stats, as for any pool.)
func (w *Pool) PressureStats() Stats {
	c := &w.counts
	st := Stats{
		EarlyCollections: int(c.early.Load()), ImminentCollections: int(c.imminent.Load()), OOMCollections: int(c.oom.Load()),
		PacerCollections: int(c.pacer.Load()),
		EarlyTime:        time.Duration(c.earlyDur.Load()), ImminentTime: time.Duration(c.imminentDur.Load()), OOMTime: time.Duration(c.oomDur.Load()),
		PacerTime: time.Duration(c.pacerDur.Load()),
		Waited:    time.Duration(c.waited.Load()), Freed: c.freed.Load(), PacerFreed: c.pacerFreed.Load(), PacerReclaimed: c.pacerReclaimed.Load(),
		LiveAfterGC: c.liveAfter.Load(), PeakLiveAfterGC: c.peakLiveAfter.Load(), GCPercent: w.opts.GCPercent,
		OOMRetries: c.retries.Load(), OOMFailures: c.failures.Load(),
		PeakReserved: w.Pool.Stats().ReservedPeak,
		RunTime:      time.Since(w.start),
	}
	w.mu.Lock()
	if w.limit == 0 {
		w.refreshLimit(time.Now(), w.src.Reserved())
	}
	st.Limit = w.limit
	st.PacerTarget = w.target
	w.mu.Unlock()
	return st
}
