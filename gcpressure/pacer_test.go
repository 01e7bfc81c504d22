package gcpressure

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

const mib = 1 << 20

func TestPacerTargetTable(t *testing.T) {
	for _, tc := range []struct {
		name      string
		liveAfter uint64
		percent   int
		want      uint64
	}{
		{"off has no target", 10 * gib, PacerOff, 0},
		{"0 is the default, twice the live set", 10 * gib, 0, 20 * gib},
		{"100 is twice the live set", 10 * gib, 100, 20 * gib},
		{"50 is one and a half times", 10 * gib, 50, 15 * gib},
		{"300 is four times", gib, 300, 4 * gib},
		{"before the first collection the floor", 0, 100, PacerFloor},
		{"a small live set gets the floor", 10 * mib, 100, PacerFloor},
		{"the floor scales with the setting", 10 * mib, 50, PacerFloor / 2},
		{"just above the floor", 33 * mib, 100, 66 * mib},
		{"odd bytes are not lost", 100*gib + 99, 100, 200*gib + 198},
		{"a target beyond any device saturates", math.MaxUint64 / 2, MaxGCPercent, math.MaxUint64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, PacerTarget(tc.liveAfter, tc.percent))
		})
	}
}

func TestPaceTable(t *testing.T) {
	ms := time.Millisecond
	target := uint64(2 * gib)
	for _, tc := range []struct {
		name string
		in   PaceInput
		want Action
	}{
		{"off never collects", PaceInput{Live: 100 * gib}, Skip},
		{"below the target nothing runs", PaceInput{Live: gib, Target: target}, Skip},
		{"at the target the first collection runs in the background", PaceInput{Live: target, Target: target}, Background},
		{"the request counts towards the target", PaceInput{Live: target - mib, Request: mib, Target: target}, Background},
		{"a running collection is not doubled", PaceInput{Live: 3 * gib, Target: target, InFlight: true}, Skip},
		// Budget 50 %: a 10 ms collection needs 20 ms between starts.
		{"too soon for the budget", PaceInput{Live: 3 * gib, Target: target, SinceLast: 19 * ms, LastDur: 10 * ms}, Skip},
		{"late enough for the budget", PaceInput{Live: 3 * gib, Target: target, SinceLast: 20 * ms, LastDur: 10 * ms}, Background},
		{"a dear collection spaces the next", PaceInput{Live: 30 * gib, Target: target, SinceLast: 70 * ms, LastDur: 41 * ms}, Skip},
		{"a smaller budget spaces more", PaceInput{Live: 3 * gib, Target: target, SinceLast: 100 * ms, LastDur: 10 * ms, Budget: 0.05}, Skip},
		{"a smaller budget still allows one later", PaceInput{Live: 3 * gib, Target: target, SinceLast: 200 * ms, LastDur: 10 * ms, Budget: 0.05}, Background},
		{"a request that wraps is no signal", PaceInput{Live: gib, Request: math.MaxUint64, Target: target}, Skip},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Pace(tc.in))
		})
	}
}

func TestReclaimAfterPacingTable(t *testing.T) {
	for _, tc := range []struct {
		name             string
		reserved, target uint64
		want             uint64
	}{
		{"pacer off gives nothing back", 10 * gib, 0, 0},
		{"below the target nothing", gib, 2 * gib, 0},
		{"at the target nothing", 2 * gib, 2 * gib, 0},
		{"within the band nothing: the next cycle reuses it", 2*gib + gib/2, 2 * gib, 0},
		{"past the band down to the target", 2*gib + gib/2 + 1, 2 * gib, gib/2 + 1},
		{"a live set that shrank gives back most", 40 * gib, 2 * gib, 38 * gib},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, ReclaimAfterPacing(tc.reserved, tc.target))
		})
	}
}

// FuzzPace checks the pacer's invariants: it never waits (Now), never
// collects below the target or beside a running collection, and collects
// only when the previous collection's duration is within the budget of the
// time since it started.
func FuzzPace(f *testing.F) {
	f.Add(uint64(3*gib), uint64(0), uint64(2*gib), int64(time.Second), int64(time.Millisecond), 0.0, false)
	f.Add(uint64(1), uint64(1), uint64(0), int64(0), int64(0), 0.5, true)
	f.Fuzz(func(t *testing.T, live, req, target uint64, since, dur int64, budget float64, inflight bool) {
		if math.IsNaN(budget) || budget < 0 || budget > 1 || since < 0 || dur < 0 {
			return
		}
		in := PaceInput{Live: live, Request: req, Target: target, SinceLast: time.Duration(since), LastDur: time.Duration(dur), Budget: budget, InFlight: inflight}
		act := Pace(in)
		if act == Skip {
			return
		}
		if act != Background {
			t.Fatalf("%v for %+v", act, in)
		}
		b := budget
		if b == 0 {
			b = PacerBudget
		}
		switch {
		case inflight:
			t.Fatalf("collects beside a running collection: %+v", in)
		case target == 0:
			t.Fatalf("collects with the pacer off: %+v", in)
		case live+req < target || live+req < live:
			t.Fatalf("collects below the target: %+v", in)
		case dur > 0 && float64(dur) > b*float64(since):
			t.Fatalf("over budget: %+v", in)
		}
	})
}
