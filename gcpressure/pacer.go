package gcpressure

import (
	"fmt"
	"time"
)

// The pacer (GOCUDA_GC_PERCENT, Options.GCPercent) is to device memory
// what GOGC is to Go's heap: a collection starts when the device bytes in
// use (live arrays and garbage not yet collected) reach a target set above
// the live bytes the last collection left, so that the footprint follows
// the live set instead of piling up until pressure against the device or a
// limit makes the eager heuristic act. Both work side by side; whichever
// comes first collects.

const (
	// DefaultGCPercent is GOGC's default: the target is twice what the
	// last collection left live.
	DefaultGCPercent = 100

	// PacerOff as Options.GCPercent (GOCUDA_GC_PERCENT=off) turns the
	// pacer off: only pressure starts collections, as before it existed.
	PacerOff = -1

	// MaxGCPercent is the largest setting accepted: a target a hundred
	// and one times the live set is no pacing; off says so more plainly.
	MaxGCPercent = 10000

	// PacerFloor is the smallest target at GCPercent 100 (it scales with
	// GCPercent, as Go's 4 MiB heap minimum scales with GOGC). A program
	// with a live set of a few MiB (tests, the -quick model, a notebook's
	// first arrays) would otherwise collect after every few MiB of fresh
	// arrays, and each collection costs at least a runtime.GC (0.1 to 1 ms
	// with a small Go heap) to save memory that no other process would
	// notice: 64 MiB is under 0.1 % of an H100, 0.4 % of a 16 GiB card.
	// It is also two of the split pool's 32 MiB chunks, the unit in which
	// the pool gives memory back, so a target at the floor can be followed.
	PacerFloor = 64 << 20

	// PacerBudget is the share of run time pacer collections may take:
	// one runs only when the previous collection's duration is at most
	// half the time since it started. Pacer collections always run in the
	// background (the allocating goroutine goes on at once), one at a
	// time, and their wall time is not the program's: Go marks
	// concurrently with a quarter of GOMAXPROCS, so collections running
	// half the time take about an eighth of the CPU, the share Go's own
	// collector takes under GOGC in a program that allocates fast. Half is
	// also the cap of Go's GC CPU limiter. Under the 4 GiB limit of
	// examples/train with a 256 MiB Go heap, background collections ran
	// 60 % of the time and a step stayed at PyTorch's time (docs/gc.md).
	// When collections are dearer than that, the footprint grows past the
	// target instead of the run slowing down, up to where the eager
	// heuristic's pressure rules take over.
	PacerBudget = 0.5

	// reclaimBand is the hysteresis of reserved bytes: after a pacer
	// collection the pool gives back what it reserves above the target
	// only once that is more than a quarter of the target, and then down
	// to the target. A steady loop reserves up to the target plus what it
	// allocates while a collection runs; within the band that memory stays
	// mapped from one cycle to the next instead of being unmapped and
	// mapped again every step.
	reclaimBand = 4 // the band is target/reclaimBand
)

// PacerTarget is the device bytes in use at which the pacer starts the
// next collection, given what the last collection left live and the
// setting: liveAfter*(1+percent/100), at least PacerFloor*percent/100.
// It is 0 when the pacer is off (percent < 0).
func PacerTarget(liveAfter uint64, percent int) uint64 {
	if percent < 0 {
		return 0
	}
	if percent == 0 {
		percent = DefaultGCPercent
	}
	p := uint64(percent)
	floor := PacerFloor * p / 100 // p <= MaxGCPercent: no overflow
	// liveAfter*p/100 without overflow for any live set a device holds.
	t := liveAfter + liveAfter/100*p + liveAfter%100*p/100
	if t < liveAfter { // wrapped: no target is reachable
		return ^uint64(0)
	}
	return max(t, floor)
}

// PaceInput is what the pacer decides on. The wrapper fills it on its slow
// path, when the pool's reserved bytes have grown past the target (live
// bytes are at most reserved bytes, so below it nothing can be due).
type PaceInput struct {
	// Live is the bytes the pool has handed out, garbage included;
	// Request the allocation about to be made.
	Live, Request uint64
	// Target is PacerTarget of the last collection's live bytes; 0 means
	// the pacer is off.
	Target uint64
	// SinceLast is the time since the previous collection (of any kind)
	// started, LastDur how long it took; LastDur 0 means there was none.
	SinceLast, LastDur time.Duration
	// Budget is the share of run time pacer collections may take;
	// 0 means PacerBudget.
	Budget float64
	// InFlight: a collection is running now.
	InFlight bool
}

// Pace is the pacer's decision: Background when the bytes in use with
// the request reach the target, no collection is running, and the
// previous collection's duration is within Budget of the time since it
// started (so pacer collections take at most Budget of run time, plus one
// collection); otherwise Skip. It never returns Now: a pacer collection
// is far from any limit, and nothing needs to wait for it.
func Pace(in PaceInput) Action {
	if in.Target == 0 || in.InFlight || in.Live+in.Request < in.Target || in.Live+in.Request < in.Live {
		return Skip
	}
	b := in.Budget
	if b <= 0 {
		b = PacerBudget
	}
	if in.LastDur > 0 && float64(in.LastDur) > b*float64(in.SinceLast) {
		return Skip
	}
	return Background
}

// ReclaimAfterPacing is how many bytes the pool should give back to the
// driver after a pacer collection, holding reserved bytes with the target
// the collection set: none while reserved is within a quarter of the
// target above it (see reclaimBand), else everything above the target.
// The next cycle uses up to the target before it collects again, so what
// is above it would only be cached until the next reclaim.
func ReclaimAfterPacing(reserved, target uint64) uint64 {
	if target == 0 || reserved <= target+target/reclaimBand {
		return 0
	}
	return reserved - target
}

// pacerStep is how far reserved bytes grow past a look that found the
// pacer not due (live bytes below the target, or too soon for its budget)
// before the next look: a sixteenth of the target, at least 1 MiB. Looks
// cost a lock and the pool's Stats; this keeps them to a few a cycle when
// reserved bytes move with every allocation (the driver's pool), and
// lets the footprint pass the target by at most a sixteenth when the
// budget made the pacer wait.
func pacerStep(target uint64) uint64 { return max(target/16, 1<<20) }

// checkGCPercent validates Options.GCPercent.
func checkGCPercent(p int) error {
	if p < PacerOff || p > MaxGCPercent {
		return &OptionError{Field: "GCPercent", Value: p,
			Accepted: fmt.Sprintf("0 (the default, %d), 1 to %d, or PacerOff (-1)", DefaultGCPercent, MaxGCPercent)}
	}
	return nil
}
