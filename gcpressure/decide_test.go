package gcpressure

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

const gib = 1 << 30

func TestDecideTable(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name string
		in   Input
		want Action
	}{
		{"below half the limit nothing runs", Input{Live: gib, Limit: 4 * gib}, Skip},
		{"the request counts towards pressure", Input{Live: gib, Request: gib + 1, Limit: 4 * gib}, Background},
		{"first collection in the zone runs in the background", Input{Live: 2*gib + 1, Limit: 4 * gib}, Background},
		{"first collection near the limit waits", Input{Live: 37 * gib / 10, Limit: 4 * gib}, Now},
		{"past the limit (soft limit) waits", Input{Live: 5 * gib, Limit: 4 * gib}, Now},
		{"no limit known means everything is pressure", Input{Live: 1}, Now},
		// Budget 5 % at 50 %: a 10 ms collection needs 200 ms between starts.
		{"too soon at the bottom of the zone", Input{Live: 2*gib + 1, Limit: 4 * gib, SinceLast: 150 * ms, LastDur: 10 * ms, LastFreed: gib / 10}, Skip},
		{"late enough at the bottom of the zone", Input{Live: 2*gib + 1, Limit: 4 * gib, SinceLast: 210 * ms, LastDur: 10 * ms, LastFreed: gib / 10}, Background},
		// At 75 % the budget is 10 %: 100 ms suffice.
		{"pressure widens the budget", Input{Live: 3 * gib, Limit: 4 * gib, SinceLast: 110 * ms, LastDur: 10 * ms, LastFreed: gib / 10}, Background},
		// At 95 % the budget is 5 % * 4^0.9 = 17.4 %: 58 ms suffice, 50 do not.
		{"near the limit still spaced", Input{Live: 38 * gib / 10, LiveAfterLast: 38 * gib / 10, Limit: 4 * gib, SinceLast: 50 * ms, LastDur: 10 * ms, LastFreed: gib / 10}, Skip},
		{"near the limit late enough", Input{Live: 38 * gib / 10, Limit: 4 * gib, SinceLast: 60 * ms, LastDur: 10 * ms, LastFreed: gib / 10}, Now},
		// A collection that freed 12.5 % of the limit doubles the budget.
		{"a collection that paid off doubles the budget", Input{Live: 2*gib + 1, Limit: 4 * gib, SinceLast: 110 * ms, LastDur: 10 * ms, LastFreed: gib / 2}, Background},
		// One that freed nothing halves it: 400 ms needed at 50 %.
		{"a fruitless collection halves the budget", Input{Live: 2*gib + 1, Limit: 4 * gib, SinceLast: 300 * ms, LastDur: 10 * ms}, Skip},
		{"a fruitless collection still allows one later", Input{Live: 2*gib + 1, Limit: 4 * gib, SinceLast: 410 * ms, LastDur: 10 * ms}, Background},
		{"a running collection is not doubled", Input{Live: 3 * gib, Limit: 4 * gib, InFlight: true}, Skip},
		{"near the limit a running collection is joined", Input{Live: 39 * gib / 10, Limit: 4 * gib, InFlight: true, SinceLast: ms, LastDur: 10 * ms}, Now},
		// 10 ms collection at 95 %, 20 ms ago: the budget wants 57 ms.
		// Live grew 0.5 GiB in 20 ms; 0.2 GiB of headroom lasts 8 ms.
		{"the limit comes before the budget allows", Input{Live: 38 * gib / 10, LiveAfterLast: 33 * gib / 10, Limit: 4 * gib, SinceLast: 20 * ms, LastDur: 10 * ms, LastFreed: gib / 10}, Now},
		{"too little garbage yet to be worth it", Input{Live: 38 * gib / 10, LiveAfterLast: 37 * gib / 10, Limit: 4 * gib, SinceLast: ms, LastDur: 10 * ms, LastFreed: gib / 10}, Skip},
		// 0.3 GiB grown in 40 ms, 0.2 GiB left: 27 ms to the limit, and
		// the budget allows one 17 ms from now.
		{"the limit comes after the budget allows", Input{Live: 38 * gib / 10, LiveAfterLast: 35 * gib / 10, Limit: 4 * gib, SinceLast: 40 * ms, LastDur: 10 * ms, LastFreed: gib / 10}, Skip},
		{"imminence matters only near the limit", Input{Live: 3 * gib, LiveAfterLast: gib, Limit: 4 * gib, SinceLast: 20 * ms, LastDur: 10 * ms, LastFreed: gib / 10}, Skip},
		{"a larger budget allows more", Input{Live: 2*gib + 1, Limit: 4 * gib, Budget: 0.2, SinceLast: 55 * ms, LastDur: 10 * ms, LastFreed: gib / 10}, Background},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Decide(tc.in), "pressure %.3f, allowed share %.4f", tc.in.Pressure(), tc.in.Allowed())
		})
	}
}

func TestAllowedRisesWithPressureWithinItsCap(t *testing.T) {
	prev := 0.0
	for p := 0.5; p <= 1.2; p += 0.01 {
		in := Input{Live: uint64(p * 4 * gib), Limit: 4 * gib}
		a := in.Allowed()
		assert.GreaterOrEqual(t, a, prev, "at pressure %.2f", p)
		assert.LessOrEqual(t, a, MaxBudgetFactor*DefaultBudget+1e-12, "at pressure %.2f", p)
		prev = a
	}
	assert.InDelta(t, DefaultBudget, Input{Live: 2 * gib, Limit: 4 * gib}.Allowed(), 1e-9)
	assert.InDelta(t, 2*DefaultBudget, Input{Live: 3 * gib, Limit: 4 * gib}.Allowed(), 1e-9)
	assert.InDelta(t, 4*DefaultBudget, Input{Live: 4 * gib, Limit: 4 * gib}.Allowed(), 1e-9)
}

func TestActionNames(t *testing.T) {
	assert.Equal(t, "skip", Skip.String())
	assert.Equal(t, "background", Background.String())
	assert.Equal(t, "now", Now.String())
	assert.Equal(t, "Action(9)", Action(9).String())
}

// FuzzDecide checks the heuristic's invariants on any input: nothing below
// MinPressure, waiting only from NowPressure, never a second collection
// beside a running one, and a collection only when the previous one's
// duration is within the largest share ever allowed of the time since it
// started (the run-time bound rests on that).
func FuzzDecide(f *testing.F) {
	f.Add(uint64(3*gib), uint64(0), uint64(4*gib), 0.0, int64(time.Second), int64(time.Millisecond), uint64(0), false)
	f.Add(uint64(39*gib/10), uint64(1<<20), uint64(4*gib), 0.1, int64(0), int64(0), uint64(gib), true)
	f.Add(uint64(1), uint64(1), uint64(0), 0.05, int64(1), int64(1), uint64(1), false)
	f.Fuzz(func(t *testing.T, live, req, limit uint64, budget float64, since, dur int64, freed uint64, inflight bool) {
		liveAfter := live / 2 // the forecast's input: half the growth since the last collection
		if math.IsNaN(budget) || budget < 0 || budget > MaxBudget || since < 0 || dur < 0 {
			return // Wrap refuses such budgets; durations are never negative
		}
		in := Input{Live: live, Request: req, Limit: limit, Budget: budget,
			SinceLast: time.Duration(since), LastDur: time.Duration(dur), LastFreed: freed, LiveAfterLast: liveAfter, InFlight: inflight}
		act := Decide(in)
		p := in.Pressure()
		b := budget
		if b == 0 {
			b = DefaultBudget
		}
		a := in.Allowed()
		if a < b/2-1e-12 || a > MaxBudgetFactor*b+1e-12 {
			t.Fatalf("allowed share %v outside [%v, %v] for %+v", a, b/2, MaxBudgetFactor*b, in)
		}
		switch act {
		case Skip:
		case Background:
			if inflight || p < MinPressure || p >= NowPressure {
				t.Fatalf("background at pressure %v (in flight %v)", p, inflight)
			}
		case Now:
			if p < NowPressure {
				t.Fatalf("waits at pressure %v", p)
			}
		default:
			t.Fatalf("unknown action %v", act)
		}
		if act != Skip && !inflight && dur > 0 && float64(dur) > MaxBudgetFactor*b*float64(since)*(1+1e-9) && !(act == Now && in.Imminent()) {
			t.Fatalf("collects %v after the start of a %v collection: over budget %v", in.SinceLast, in.LastDur, b)
		}
		if p < MinPressure && act != Skip {
			t.Fatalf("%v below MinPressure (%v)", act, p)
		}
	})
}
