package gcpressure

import (
	"fmt"
	"math"
	"time"
)

// Action is what the eager heuristic decides before an allocation.
type Action uint8

const (
	// Skip: no collection now.
	Skip Action = iota
	// Background: start a collection on its own goroutine and let the
	// allocation go on at once. Go's collector marks concurrently with the
	// program, and the cleanups that free arrays run on the runtime's own
	// goroutines, so only the goroutine that calls runtime.GC waits for it.
	Background
	// Now: collect on the allocating goroutine and wait for the cleanups,
	// so that the memory they free can serve this very allocation.
	Now
)

func (a Action) String() string {
	switch a {
	case Skip:
		return "skip"
	case Background:
		return "background"
	case Now:
		return "now"
	}
	return fmt.Sprintf("Action(%d)", uint8(a))
}

// The heuristic's constants. Pressure is (live + request) / limit, where
// live counts every byte the pool has handed out, arrays that are
// unreachable but not yet collected included: that garbage is what a
// collection can give back.
const (
	// DefaultBudget is the share of run time that early collections may
	// take while usage is at the bottom of the pressure zone: CUDA.jl's 5 %,
	// which its training runs showed to be a cost worth paying.
	DefaultBudget = 0.05

	// MinPressure: below half of the limit no collection runs. A
	// background collection started there has the whole other half to
	// finish in: the program can allocate as much again as it holds before
	// it reaches the limit. (CUDA.jl waits until 75 %, but its collection
	// blocks the program; ours starts earlier because it mostly does not.)
	MinPressure = 0.5

	// NowPressure: from 90 % of the limit the allocating goroutine
	// collects itself and waits for the cleanups. With under a tenth of
	// the limit left, garbage made while a background collection runs
	// could reach the limit before it ends, and the allocation would then
	// take the much dearer out-of-memory path (reclaim, collect, device
	// synchronization).
	NowPressure = 0.9

	// MaxBudgetFactor is how far the budget grows at the limit: it rises
	// smoothly from 1x at MinPressure to 4x at pressure 1 (2x at 75 %),
	// because the nearer the limit, the likelier the next allocation fails,
	// and an out-of-memory retry costs a collection anyway plus a device
	// synchronization. 4x caps collection time at a fifth of run time with
	// the default budget, where CUDA.jl's doublings allow up to 80 %.
	MaxBudgetFactor = 4

	// PaidOffShare: when the last collection freed at least a tenth of the
	// limit, collections are paying off and the budget doubles (as in
	// CUDA.jl), within MaxBudgetFactor.
	PaidOffShare = 0.10

	// FruitlessShare: when the last collection freed under 1 % of the
	// limit, the live set is real rather than garbage and another
	// collection would likely free as little; the budget halves, so that
	// a program near the limit with no garbage is not slowed for nothing.
	// CUDA.jl has no such brake.
	FruitlessShare = 0.01
)

// Input is what Decide looks at. The wrapper fills it on its slow path
// only: when the pool's reserved bytes have grown past where it last
// looked.
type Input struct {
	// Live is the bytes the pool has handed out, garbage included.
	Live uint64
	// Request is the size of the allocation about to be made.
	Request uint64
	// Limit is the effective limit: the hard limit, else the soft limit,
	// else what the device can give; the smallest of those that are set.
	Limit uint64
	// Budget is the share of run time early collections may take at
	// MinPressure (DefaultBudget when 0).
	Budget float64
	// SinceLast is the time since the previous early collection started;
	// LastDur is how long it took and LastFreed what it freed. LastDur 0
	// means there was none.
	SinceLast, LastDur time.Duration
	LastFreed          uint64
	// LiveAfterLast is Live as the previous collection left it: with
	// SinceLast it gives the rate live bytes grow at (see Imminent).
	LiveAfterLast uint64
	// InFlight: a background collection is running now; Now then means
	// waiting for it rather than starting another.
	InFlight bool
}

// Pressure is (Live + Request) / Limit; +Inf without a limit.
func (in Input) Pressure() float64 {
	if in.Limit == 0 {
		return math.Inf(1)
	}
	return (float64(in.Live) + float64(in.Request)) / float64(in.Limit)
}

// Allowed is the share of run time early collections may take at this
// input's pressure and yield: the budget scaled by pressure (see
// MaxBudgetFactor), doubled after a collection that paid off, halved
// after a fruitless one, never above MaxBudgetFactor times the budget.
func (in Input) Allowed() float64 {
	b := in.Budget
	if b <= 0 {
		b = DefaultBudget
	}
	p := in.Pressure()
	if p < MinPressure {
		return b
	}
	// 4^((p-0.5)/0.5): 1 at MinPressure, 2 at 0.75, 4 at the limit.
	f := math.Pow(MaxBudgetFactor, math.Min(1, (p-MinPressure)/(1-MinPressure)))
	if in.LastDur > 0 && in.Limit > 0 {
		switch freed := float64(in.LastFreed) / float64(in.Limit); {
		case freed >= PaidOffShare:
			f *= 2
		case freed < FruitlessShare:
			f /= 2
		}
	}
	return b * math.Min(f, MaxBudgetFactor)
}

// Decide is the eager heuristic: whether to collect before an allocation,
// and how. It collects only above MinPressure, only when the time since
// the previous early collection started is long enough that its duration
// is within the allowed share (so over any run, early collection time is
// at most MaxBudgetFactor*Budget of run time, plus one collection), and
// waits for the collection itself only from NowPressure. One exception to
// the spacing: from NowPressure, a collection the out-of-memory path would
// run before the budget allows one anyway (see Imminent) runs now.
func Decide(in Input) Action {
	p := in.Pressure()
	if p < MinPressure {
		return Skip
	}
	if in.InFlight {
		// Joining a running collection adds no collection time, so the
		// spacing rule does not apply; below NowPressure the allocation
		// need not wait for it.
		if p >= NowPressure {
			return Now
		}
		return Skip
	}
	// The spacing rule: the previous collection's real duration must be
	// within the allowed share of the time since it started. Using the
	// real duration (not a smoothed one, as CUDA.jl does) is what makes
	// the bound above hold for every run, not only on average.
	if !in.Within() {
		if p >= NowPressure && in.Imminent() {
			return Now
		}
		return Skip
	}
	if p >= NowPressure {
		return Now
	}
	return Background
}

// Within reports whether the budget allows a collection now: there was
// none before, or the previous one's duration is within the allowed share
// of the time since it started.
func (in Input) Within() bool {
	return in.LastDur <= 0 || float64(in.LastDur) <= in.Allowed()*float64(in.SinceLast)
}

// Imminent reports whether, at the rate live bytes grew since the last
// collection, the limit will be reached before the budget allows the next
// early collection. The out-of-memory path would then collect anyway, and
// dearer: it first fails an allocation and gives the whole cache back,
// and on a GPU each block it gives back waits for its stream. Collecting
// now instead replaces that collection rather than adding one, so it is
// not charged to the budget (Stats counts it apart, as Imminent). Decide
// asks only from NowPressure, where the forecast is shortest and so
// likeliest right.
func (in Input) Imminent() bool {
	if in.LastDur <= 0 || in.SinceLast <= 0 || in.Live <= in.LiveAfterLast || in.Limit == 0 {
		return false
	}
	grown := float64(in.Live - in.LiveAfterLast)
	headroom := float64(in.Limit) - float64(in.Live) - float64(in.Request)
	if headroom <= 0 {
		return true
	}
	// Not before the garbage made since the last collection is at least
	// what room is left, that is, half the room the last collection left
	// is used: so that each such collection frees at least half of what
	// the out-of-memory one would, and a program that sits just under the
	// limit does not collect at every look.
	if grown < headroom {
		return false
	}
	toLimit := headroom / (grown / in.SinceLast.Seconds())
	wait := in.LastDur.Seconds()/in.Allowed() - in.SinceLast.Seconds()
	return toLimit < wait
}
