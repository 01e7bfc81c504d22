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
		{"just above the floor", 17 * mib, 100, 34 * mib},
		{"odd bytes are not lost", 100*gib + 99, 100, 200*gib + 198},
		{"a target beyond any device saturates", math.MaxUint64 / 2, MaxGCPercent, math.MaxUint64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, PacerTarget(tc.liveAfter, tc.percent))
		})
	}
}

func TestPacerHardLineTable(t *testing.T) {
	for _, tc := range []struct {
		name              string
		target, liveAfter uint64
		want              uint64
	}{
		{"off has none", 0, gib, 0},
		{"halfway again past the target: 2.5x the live set at 100", 2 * gib, gib, 5 * gib / 2},
		{"at the floor, from what is live", PacerFloor, 16 * mib, PacerFloor + 8*mib},
		{"before the first collection 1.5x the target", PacerFloor, 0, 3 * PacerFloor / 2},
		{"saturates", math.MaxUint64 - 1, 0, math.MaxUint64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, PacerHardLine(tc.target, tc.liveAfter))
		})
	}
}

func TestPaceTable(t *testing.T) {
	target, hard := uint64(2*gib), uint64(5*gib/2)
	credit := 10 * time.Millisecond
	for _, tc := range []struct {
		name string
		in   PaceInput
		want Action
	}{
		{"without wait credit the hard line is passed in the background", PaceInput{Live: hard, Target: target, Hard: hard, Credit: credit, WaitCredit: -time.Millisecond}, Background},
		{"without wait credit a running collection is not waited for", PaceInput{Live: hard, Target: target, Hard: hard, InFlight: true}, Skip},
		{"off never collects", PaceInput{Live: 100 * gib, Credit: credit}, Skip},
		{"below the target nothing runs", PaceInput{Live: gib, Target: target, Hard: hard, Credit: credit}, Skip},
		{"at the target a collection runs in the background", PaceInput{Live: target, Target: target, Hard: hard, Credit: credit}, Background},
		{"the request counts towards the target", PaceInput{Live: target - mib, Request: mib, Target: target, Hard: hard, Credit: credit}, Background},
		{"from the hard line the allocation waits", PaceInput{Live: hard, Target: target, Hard: hard, Credit: credit, WaitCredit: credit}, Now},
		{"a running collection is not doubled", PaceInput{Live: target, Target: target, Hard: hard, Credit: credit, InFlight: true}, Skip},
		{"from the hard line a running collection is waited for", PaceInput{Live: hard, Target: target, Hard: hard, InFlight: true, WaitCredit: credit}, Now},
		{"without credit nothing starts", PaceInput{Live: target, Target: target, Hard: hard}, Skip},
		{"without credit nothing starts even past the hard line", PaceInput{Live: 3 * hard, Target: target, Hard: hard, Credit: -time.Millisecond}, Skip},
		{"a request that wraps is no signal", PaceInput{Live: gib, Request: math.MaxUint64, Target: target, Hard: hard, Credit: credit}, Skip},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Pace(tc.in))
		})
	}
}

func TestReclaimAfterPacingTable(t *testing.T) {
	for _, tc := range []struct {
		name           string
		reserved, hard uint64
		want           uint64
	}{
		{"pacer off gives nothing back", 10 * gib, 0, 0},
		{"below the hard line nothing", gib, 2 * gib, 0},
		{"at the hard line nothing", 2 * gib, 2 * gib, 0},
		{"within the band nothing: the next cycle reuses it", 4 * gib, 2 * gib, 0},
		{"past the band down to the hard line", 4*gib + 1, 2 * gib, 2*gib + 1},
		{"a small line has a band of at least the floor", 16*mib + PacerFloor, 16 * mib, 0},
		{"past the floor's band", 16*mib + PacerFloor + 1, 16 * mib, PacerFloor + 1},
		{"a live set that shrank gives back most", 40 * gib, 2 * gib, 38 * gib},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, ReclaimAfterPacing(tc.reserved, tc.hard))
		})
	}
}

// FuzzPace checks the pacer's invariants: nothing below the target or
// with the pacer off, never a second collection beside a running one,
// none started without credit, and waiting only from the hard line and
// with wait credit.
func FuzzPace(f *testing.F) {
	f.Add(uint64(3*gib), uint64(0), uint64(2*gib), uint64(5*gib/2), int64(time.Millisecond), false, int64(time.Millisecond))
	f.Add(uint64(1), uint64(1), uint64(0), uint64(0), int64(0), true, int64(0))
	f.Fuzz(func(t *testing.T, live, req, target, hard uint64, credit int64, inflight bool, wait int64) {
		in := PaceInput{Live: live, Request: req, Target: target, Hard: hard, Credit: time.Duration(credit), InFlight: inflight, WaitCredit: time.Duration(wait)}
		act := Pace(in)
		x := live + req
		switch {
		case act == Skip:
		case target == 0:
			t.Fatalf("%v with the pacer off: %+v", act, in)
		case x < live || x < target:
			t.Fatalf("%v below the target: %+v", act, in)
		case act == Now && (hard == 0 || x < hard):
			t.Fatalf("waits below the hard line: %+v", in)
		case act == Now && wait <= 0:
			t.Fatalf("waits without wait credit: %+v", in)
		case act == Background && inflight:
			t.Fatalf("a second collection beside a running one: %+v", in)
		case !inflight && credit <= 0:
			t.Fatalf("%v without credit: %+v", act, in)
		case act != Now && act != Background:
			t.Fatalf("unknown action %v", act)
		}
	})
}
