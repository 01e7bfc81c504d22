package gcpressure

import (
	"fmt"
	"time"
)

// The pacer (GOCUDA_GC_PERCENT, Options.GCPercent) is to device memory
// what GOGC is to Go's heap: the target is device bytes in use (live arrays
// and garbage not yet collected) set above the live bytes the last
// collection left, and a collection starts early enough that the footprint
// stays near the target, instead of piling up until pressure against the
// device or a limit makes the eager heuristic act. Both work side by side;
// whichever comes first collects.
//
// As with GOGC, the target is where bytes in use should peak, not where the
// collection starts: it starts at the trigger (PacerTrigger), part of the
// way there, and allocations that reach the target while it runs wait for
// it (Go's mark assists), within a wait budget.

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
	// notice: 32 MiB is 0.04 % of an H100, 0.2 % of a 16 GiB card, and
	// a program making garbage at the floor collects at most once per
	// 16 MiB of it. Not more: a training loop on the host backend with a
	// live set of 30 MiB (examples/train -width 1024 -batch 512) must
	// keep its footprint within three times that. It is also one of the split
	// pool's largest chunks, the unit in which it gives memory back.
	PacerFloor = 32 << 20

	// PacerBudget is the share of run time pacer collections may take,
	// with PacerBurst: over any stretch of time W they take at most
	// PacerBudget*W + PacerBurst, plus one collection. Most run in the
	// background (the allocating goroutine goes on at once), and their
	// wall time is not the program's: Go marks concurrently with a quarter
	// of GOMAXPROCS, so collections running half the time take about an
	// eighth of the CPU. Half is the cap of Go's own GC CPU limiter. Under
	// the 4 GiB limit of examples/train with a 256 MiB Go heap, background
	// collections ran 60 % of the time and a step stayed at PyTorch's time
	// (docs/gc.md). When collections are dearer than that, the footprint
	// grows past the target instead of the run slowing down, up to where
	// the eager heuristic's pressure rules take over.
	PacerBudget = 0.5

	// PacerBurst is how much unspent budget the pacer may save up (a token
	// bucket, as Go's GC CPU limiter has): a program issues work in bursts
	// (a training loop queues a whole epoch of steps on the GPU within
	// milliseconds, then waits for it), and within a burst collections
	// must follow each other more closely than the budget's share allows
	// on average, or the burst's garbage piles up.
	PacerBurst = 250 * time.Millisecond

	// PacerWaitBudget bounds the time allocations wait at the target for
	// a pacer collection while the device stands still: their stream has
	// nothing queued (or cannot tell: no backend.Pending, or no stream).
	// It is a share of run time, with PacerWaitBurst saved up at most.
	// While the stream has work queued a wait is free, for the device
	// still has that work to do: a program that queues work far ahead of
	// the device (a training loop) waits at the target for every
	// collection at no cost. Once the stream drains, a wait holds the
	// device still. Where collections are cheap (about a millisecond with
	// a small Go heap) the budget is seldom reached and the target holds
	// the footprint.
	//
	// A collection longer than PacerWaitBurst is dear: it is never
	// waited for with the device idle, and once a wait for one has run
	// its stream dry (the work queued ahead did not last the collection),
	// not at all, until a collection is cheap again. Such a wait is not
	// free even while it lasts: it ends with the device idle and the
	// program starting it again while the collection still marks. On the
	// H100 with a 256 MiB Go heap (collections of 33 ms), waiting while
	// the device was busy made a step 1.05 to 1.08 times PyTorch's, not
	// waiting 1.009 times, with the footprint at 20 GiB instead of 15 to
	// 19; on the host backend, where a step outlasts a collection, every
	// wait ends with the collection and the target holds.
	//
	// 2 % and 25 ms: on the H100 with a 256 MiB Go heap, 5 % and 250 ms
	// made a step 1.13 times PyTorch's; with cheap collections the waits
	// take under 2 % of the run (0.017 to 0.023 s of the default model's
	// 1.09 s).
	PacerWaitBudget = 0.02

	// PacerWaitBurst is the idle wait budget a program may save up: one
	// or two waits for a cheap collection in a row. It is also the line
	// between cheap and dear collections: one longer than a wait may
	// idle the device for is dear.
	PacerWaitBurst = 25 * time.Millisecond
	// reclaimBand is the hysteresis of reserved bytes: after a pacer
	// collection the pool gives back what it reserves above what the next
	// cycles need (see ReclaimAfterPacing) only once reserved is more than
	// twice that (the band is the need itself, at least PacerFloor), and
	// then down to the need. Giving memory back sooner costs more than it
	// saves: a pool takes what it gives back out of its cache first and
	// waits for the stream's queued work before unmapping it, and
	// meanwhile the next cycle grows the pool anew. On the H100 (the
	// line then at 2.5 times the live set) a band of a quarter of the
	// line gave back 13 to 27 GB over a 40-step run and peaked at 7.5 to
	// 8.9 GiB; the whole line, 0 to 3 GB and 3.8 to 5.4 GiB; never giving
	// back, 3.9 GiB.
	reclaimBand = 1 // the band is the need/reclaimBand, at least PacerFloor

	// reclaimWindow is how many collections back the pool's need reaches:
	// the most bytes in use at the peak of any of the last four cycles.
	// A training step's live set swings (activations are made in the
	// forward pass and dropped in the backward), so what one collection
	// leaves live, and the target set from it, depends on where in the step
	// it ran: on the H100 the default model's collections left 544 to
	// 1120 MiB. Given back after a low reading, memory the next step needs
	// was unmapped while its queued work finished, and the pool mapped
	// anew meanwhile: 4 of 14 runs peaked at 4.3 to 8.9 GiB reserved
	// instead of 2.2. Four cycles span more than a step of a loop that
	// collects once or twice a step; when the live set really shrinks,
	// reserved bytes follow four collections later.
	reclaimWindow = 4
)

// PacerTarget is the device bytes in use the pacer keeps the footprint to,
// as GOGC's heap goal: given what the last collection left live and the
// setting, liveAfter*(1+percent/100), at least PacerFloor*percent/100.
// The collection starts before it (PacerTrigger); allocations that reach
// it wait for the collection. It is 0 when the pacer is off (percent < 0).
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

// PacerTriggerShare is how far from the live set toward the target the
// pacer starts its collection. Go's pacer starts between 0.7 and 0.95 of
// that way, from the last cycle's rates, so that marking ends at the goal;
// here a collection also waits for the cleanups that free the arrays it
// found, and a program that queues device work far ahead of the device
// allocates faster than any rate a cycle measured, so the pacer starts at
// Go's earliest point. What the program allocates past the target while
// the collection runs waits for it (see Pace).
const PacerTriggerShare = 0.7

// PacerTrigger is the device bytes in use at which the pacer starts a
// collection in the background: PacerTriggerShare of the way from what the
// last collection left live to the target (1.7 times the live set at
// GCPercent 100). It is 0 when the pacer is off (target 0).
func PacerTrigger(target, liveAfter uint64) uint64 {
	if target == 0 || target <= liveAfter {
		return target
	}
	return liveAfter + uint64(PacerTriggerShare*float64(target-liveAfter))
}

// PaceInput is what the pacer decides on. The wrapper fills it on its slow
// path, when device bytes in use have grown past where it last looked.
type PaceInput struct {
	// Live is the bytes the pool has handed out, garbage included;
	// Request the allocation about to be made.
	Live, Request uint64
	// Trigger is PacerTrigger and Target PacerTarget of the last
	// collection's live bytes; both 0 when the pacer is off.
	Trigger, Target uint64
	// Credit is the pacer's unspent budget: PacerBudget of the time
	// since the pacer started, less what its collections took, at most
	// PacerBurst. A collection starts only while it is positive.
	Credit time.Duration
	// InFlight: a collection is running now.
	InFlight bool
	// WaitCredit is the unspent wait budget (PacerWaitBudget); Busy says
	// the allocation's stream still has work queued (see
	// backend.Pending). The target makes an allocation wait while the
	// device is busy or the wait budget is positive. In the pressure zone
	// of a limit (Input.Limit's MinPressure) the wrapper leaves both
	// unset: the eager heuristic's rules say when allocations wait there.
	WaitCredit time.Duration
	Busy       bool
	// Margin is the largest request of the last few cycles. The live
	// watcher reports an allocation only once it is made, so allocations
	// wait from the target less Margin (no lower than the trigger): the
	// one that passed that line unseen stays within the target.
	Margin uint64
	// LastDur is how long the last collection took; Dry says a wait for
	// a dear one (longer than PacerWaitBurst) ran its stream dry. See
	// PacerWaitBudget.
	LastDur time.Duration
	Dry     bool
}

// waitLine is the bytes in use from which allocations wait: the target
// less the margin, no lower than the trigger.
func waitLine(trigger, target, margin uint64) uint64 {
	return target - min(margin, target-min(trigger, target))
}

// Pace is the pacer's decision. Below the trigger: Skip. From the trigger,
// with credit: Background, a collection the allocation does not wait for;
// from the wait line (the target less Margin), Now, the allocation waits
// for it: while the device is busy, or with the device idle while wait
// credit is left; for a dear collection (LastDur past PacerWaitBurst) only
// while the device is busy, and not once a wait has run dry.
// While a collection runs, an allocation from the wait line waits for that
// one (Now); none starts beside it. Without credit: Skip, so the budget
// bounds the time pacer collections take and the time allocations wait for
// them, and the footprint grows past the target instead; when no wait is
// allowed the target is passed (Background, or Skip while one runs).
func Pace(in PaceInput) Action {
	x := in.Live + in.Request
	if in.Target == 0 || x < in.Live || x < min(in.Trigger, in.Target) {
		return Skip
	}
	dear := isDear(in.LastDur)
	allowed := in.Busy && !(dear && in.Dry) || !dear && in.WaitCredit > 0
	wait := x >= waitLine(in.Trigger, in.Target, in.Margin) && allowed
	switch {
	case in.InFlight && wait:
		return Now
	case in.InFlight, in.Credit <= 0:
		return Skip
	case wait:
		return Now
	}
	return Background
}

// PacerAside says the pacer stands aside for the eager heuristic, given
// its target, where the pressure zone of the limit starts (MinPressure of
// it), whether a hard or soft limit is set, and how long the last
// collection took. There the eager heuristic already collects in the
// background and spaces its collections by pressure and budget, and two
// schedulers take turns badly:
//
//   - when the target reaches the pressure zone, the pacer would collect
//     where the eager heuristic does;
//   - under a limit, when collections are dear (longer than
//     PacerWaitBurst), the pacer's collections, started earlier and on
//     less garbage, used up the time the eager heuristic's spacing
//     allows, and the limit's last tenth was reached by blocking
//     collections instead. On the H100 under a 4 GiB limit with a 256 MiB
//     Go heap (collections of about 50 ms) a step took 1.24 to 1.38 times
//     PyTorch's with the pacer collecting there, 1.06 to 1.08 with it
//     standing aside (the build before the pacer: 1.02 to 1.16).
//
// Without a limit the pressure zone starts at half the device, and the
// pacer is what keeps the footprint near the live set. Each collection
// sets a new target and duration, and the pacer comes back when they
// allow.
func PacerAside(target, zoneStart uint64, limited bool, lastDur time.Duration) bool {
	return target >= zoneStart || limited && isDear(lastDur)
}

// ReclaimAfterPacing is how many bytes the pool should give back to the
// driver after a pacer collection, given its reserved bytes and what the
// next cycles need: the highest of the target the collection set and the
// bytes in use at the peaks of the last few cycles (reclaimWindow). None
// while reserved is within the band above the need (the need itself, at
// least PacerFloor: see reclaimBand), else everything above the need. A
// cycle waits for a collection before it uses more than the target (while
// the wait budget lasts), and one that could not hold the target shows in
// its peak: what is above both would only be cached until the next
// reclaim.
func ReclaimAfterPacing(reserved, need uint64) uint64 {
	if need == 0 || reserved <= need+max(need/reclaimBand, PacerFloor) {
		return 0
	}
	return reserved - need
}

// isDear says a collection that took d is dear: longer than an idle wait
// may last (PacerWaitBurst). The pacer does not wait for dear collections
// with the device idle, and stands aside for them under a limit.
func isDear(d time.Duration) bool { return d > PacerWaitBurst }

// pacerStep is how far bytes in use grow past a look that found the
// pacer past its next line but not acting (no credit left, or waiting not
// allowed) before the next look: a sixteenth of the target, at least
// 1 MiB. Looks cost a lock and the pool's Stats; this keeps them to a few
// a cycle, and lets the footprint pass the target by at most a sixteenth
// before the pacer looks again whether the budget has refilled.
func pacerStep(target uint64) uint64 { return max(target/16, 1<<20) }

// checkGCPercent validates Options.GCPercent.
func checkGCPercent(p int) error {
	if p < PacerOff || p > MaxGCPercent {
		return &OptionError{Field: "GCPercent", Value: p,
			Accepted: fmt.Sprintf("0 (the default, %d), 1 to %d, or PacerOff (-1)", DefaultGCPercent, MaxGCPercent)}
	}
	return nil
}
