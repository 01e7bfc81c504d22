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

func TestPacerTriggerTable(t *testing.T) {
	for _, tc := range []struct {
		name              string
		target, liveAfter uint64
		want              uint64
	}{
		{"off has none", 0, gib, 0},
		{"seven tenths of the way: 1.7x the live set at 100", 2 * gib, gib, gib + 7*gib/10},
		{"at the floor, from what is live", PacerFloor, 16 * mib, 16*mib + 7*16*mib/10},
		{"before the first collection 0.7 of the floor", PacerFloor, 0, 7 * PacerFloor / 10},
		{"a target at the live set is its own trigger", gib, gib, gib},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, PacerTrigger(tc.target, tc.liveAfter))
		})
	}
}

func TestPaceTable(t *testing.T) {
	trigger, target := uint64(17*gib/10), uint64(2*gib)
	credit := 10 * time.Millisecond
	for _, tc := range []struct {
		name string
		in   PaceInput
		want Action
	}{
		{"off never collects", PaceInput{Live: 100 * gib, Credit: credit}, Skip},
		{"below the trigger nothing runs", PaceInput{Live: gib, Trigger: trigger, Target: target, Credit: credit}, Skip},
		{"at the trigger a collection runs in the background", PaceInput{Live: trigger, Trigger: trigger, Target: target, Credit: credit, WaitCredit: credit}, Background},
		{"the request counts towards the trigger", PaceInput{Live: trigger - mib, Request: mib, Trigger: trigger, Target: target, Credit: credit}, Background},
		{"from the target the allocation waits", PaceInput{Live: target, Trigger: trigger, Target: target, Credit: credit, WaitCredit: credit}, Now},
		{"a running collection is not doubled", PaceInput{Live: trigger, Trigger: trigger, Target: target, Credit: credit, InFlight: true, WaitCredit: credit}, Skip},
		{"from the target a running collection is waited for", PaceInput{Live: target, Trigger: trigger, Target: target, InFlight: true, WaitCredit: credit}, Now},
		{"without wait credit the target is passed in the background", PaceInput{Live: target, Trigger: trigger, Target: target, Credit: credit, WaitCredit: -time.Millisecond}, Background},
		{"without wait credit a running collection is not waited for", PaceInput{Live: target, Trigger: trigger, Target: target, InFlight: true}, Skip},
		{"with the device busy the target waits without wait credit", PaceInput{Live: target, Trigger: trigger, Target: target, Credit: credit, WaitCredit: -time.Millisecond, Busy: true}, Now},
		{"with the device busy a running collection is waited for", PaceInput{Live: target, Trigger: trigger, Target: target, InFlight: true, Busy: true}, Now},
		{"a busy device below the target changes nothing", PaceInput{Live: trigger, Trigger: trigger, Target: target, Credit: credit, Busy: true}, Background},
		{"without credit nothing starts", PaceInput{Live: trigger, Trigger: trigger, Target: target, WaitCredit: credit}, Skip},
		{"without credit nothing starts even past the target", PaceInput{Live: 3 * target, Trigger: trigger, Target: target, Credit: -time.Millisecond}, Skip},
		{"a request that wraps is no signal", PaceInput{Live: gib, Request: math.MaxUint64, Trigger: trigger, Target: target, Credit: credit}, Skip},
		{"from the target less the margin the allocation waits", PaceInput{Live: target - 64*mib, Trigger: trigger, Target: target, Credit: credit, WaitCredit: credit, Margin: 64 * mib}, Now},
		{"below the target less the margin it does not", PaceInput{Live: target - 65*mib, Trigger: trigger, Target: target, Credit: credit, WaitCredit: credit, Margin: 64 * mib}, Background},
		{"the margin never takes the wait below the trigger", PaceInput{Live: trigger - mib, Trigger: trigger, Target: target, Credit: credit, WaitCredit: credit, Margin: 10 * gib}, Skip},
		{"a margin past the trigger waits from the trigger", PaceInput{Live: trigger, Trigger: trigger, Target: target, Credit: credit, WaitCredit: credit, Margin: 10 * gib}, Now},
		{"a dear collection is not waited for with the device idle", PaceInput{Live: target, Trigger: trigger, Target: target, Credit: credit, WaitCredit: credit, LastDur: 2 * PacerWaitBurst}, Background},
		{"a dear collection is waited for while the device is busy", PaceInput{Live: target, Trigger: trigger, Target: target, InFlight: true, Busy: true, LastDur: 2 * PacerWaitBurst}, Now},
		{"once a wait ran dry a dear collection is not waited for", PaceInput{Live: target, Trigger: trigger, Target: target, InFlight: true, Busy: true, LastDur: 2 * PacerWaitBurst, Dry: true}, Skip},
		{"a cheap collection is waited for though a wait ran dry", PaceInput{Live: target, Trigger: trigger, Target: target, InFlight: true, Busy: true, LastDur: PacerWaitBurst, Dry: true}, Now},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Pace(tc.in))
		})
	}
}

func TestPacerAsideTable(t *testing.T) {
	for _, tc := range []struct {
		name              string
		target, zoneStart uint64
		limited           bool
		lastDur           time.Duration
		want              bool
	}{
		{"far below the zone, cheap collections: the pacer", gib, 40 * gib, false, time.Millisecond, false},
		{"the target in the zone: aside", 2 * gib, 2 * gib, true, time.Millisecond, true},
		{"the target in the zone without a limit (half the device): aside", 41 * gib, 40 * gib, false, time.Millisecond, true},
		{"dear collections under a limit: aside", gib, 2 * gib, true, 50 * time.Millisecond, true},
		{"dear collections without a limit: the pacer", gib, 40 * gib, false, 50 * time.Millisecond, false},
		{"cheap collections under a limit below the zone: the pacer", gib, 2 * gib, true, PacerWaitBurst, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, PacerAside(tc.target, tc.zoneStart, tc.limited, tc.lastDur))
		})
	}
}

func TestReclaimAfterPacingTable(t *testing.T) {
	for _, tc := range []struct {
		name           string
		reserved, need uint64
		want           uint64
	}{
		{"pacer off gives nothing back", 10 * gib, 0, 0},
		{"below the need nothing", gib, 2 * gib, 0},
		{"at the need nothing", 2 * gib, 2 * gib, 0},
		{"within the band nothing: the next cycle reuses it", 4 * gib, 2 * gib, 0},
		{"past the band down to the need", 4*gib + 1, 2 * gib, 2*gib + 1},
		{"a small line has a band of at least the floor", 16*mib + PacerFloor, 16 * mib, 0},
		{"past the floor's band", 16*mib + PacerFloor + 1, 16 * mib, PacerFloor + 1},
		{"a live set that shrank gives back most", 40 * gib, 2 * gib, 38 * gib},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, ReclaimAfterPacing(tc.reserved, tc.need))
		})
	}
}

// FuzzPace checks the pacer's invariants: nothing below the trigger or
// with the pacer off, never a second collection beside a running one,
// none started without credit, and waiting only from the target, and
// with the device busy or wait credit.
func FuzzPace(f *testing.F) {
	f.Add(uint64(3*gib), uint64(0), uint64(17*gib/10), uint64(2*gib), int64(time.Millisecond), false, int64(time.Millisecond), false, uint64(0), int64(0), false)
	f.Add(uint64(1), uint64(1), uint64(0), uint64(0), int64(0), true, int64(0), true, uint64(1), int64(time.Second), true)
	f.Add(uint64(2*gib-mib), uint64(mib), uint64(17*gib/10), uint64(2*gib), int64(time.Millisecond), true, int64(0), true, uint64(64*mib), int64(30*time.Millisecond), false)
	f.Fuzz(func(t *testing.T, live, req, trigger, target uint64, credit int64, inflight bool, wait int64, busy bool, margin uint64, lastDur int64, dry bool) {
		in := PaceInput{Live: live, Request: req, Trigger: trigger, Target: target, Credit: time.Duration(credit), InFlight: inflight,
			WaitCredit: time.Duration(wait), Busy: busy, Margin: margin, LastDur: time.Duration(lastDur), Dry: dry}
		act := Pace(in)
		x := live + req
		dear := time.Duration(lastDur) > PacerWaitBurst
		line := waitLine(trigger, target, margin)
		switch {
		case act == Skip:
		case target == 0:
			t.Fatalf("%v with the pacer off: %+v", act, in)
		case x < live || x < min(trigger, target):
			t.Fatalf("%v below the trigger: %+v", act, in)
		case line > target || line < min(trigger, target):
			t.Fatalf("wait line %d outside [trigger, target]: %+v", line, in)
		case act == Now && x < line:
			t.Fatalf("waits below the wait line %d: %+v", line, in)
		case act == Now && wait <= 0 && !busy:
			t.Fatalf("waits without wait credit, the device idle: %+v", in)
		case act == Now && dear && (!busy || dry):
			t.Fatalf("waits for a dear collection with the device idle or after a dry wait: %+v", in)
		case act == Background && inflight:
			t.Fatalf("a second collection beside a running one: %+v", in)
		case !inflight && credit <= 0:
			t.Fatalf("%v without credit: %+v", act, in)
		case act != Now && act != Background:
			t.Fatalf("unknown action %v", act)
		}
	})
}
