package observe

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/pool"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

func newTimeline(t *testing.T, opt TimelineOptions) *Timeline {
	t.Helper()
	tl, err := NewTimeline(opt)
	require.NoError(t, err)
	return tl
}

func TestTimelineMarksCollectionsAndOOMRetriesFromEvents(t *testing.T) {
	tl := newTimeline(t, TimelineOptions{})
	for _, e := range []pool.Event{
		{Kind: pool.EventGrow, Device: 0, Time: at(0), Bytes: 2 << 20, Reserved: 2 << 20},
		{Kind: pool.EventGrow, Device: 0, Time: at(10), Bytes: 4 << 20, Reserved: 6 << 20},
		{Kind: pool.EventCollect, Device: 0, Time: at(20), Bytes: 1 << 20, Dur: 3 * time.Millisecond, Note: "early"},
		{Kind: pool.EventOOMRetry, Device: 0, Time: at(30), Bytes: 8 << 20},
		{Kind: pool.EventReclaim, Device: 0, Time: at(40), Bytes: 2 << 20, Reserved: 4 << 20},
		{Kind: pool.EventOOM, Device: 0, Time: at(50), Bytes: 8 << 20},
		{Kind: pool.EventRelease, Device: 0, Time: at(60), Bytes: 4 << 20, Reserved: 0},
	} {
		tl.Observe(e)
	}
	assert.Equal(t, []Mark{
		{Time: at(20), Kind: pool.EventCollect, Bytes: 1 << 20, Dur: 3 * time.Millisecond, Note: "early"},
		{Time: at(30), Kind: pool.EventOOMRetry, Bytes: 8 << 20},
		{Time: at(50), Kind: pool.EventOOM, Bytes: 8 << 20},
	}, tl.Marks(), "grow, reclaim and release are points, not marks")

	var reserved []uint64
	for _, p := range tl.Points() {
		reserved = append(reserved, p.Reserved)
	}
	// Marks come from above the pool without a reserved count: they
	// carry the last one forward. A release to zero is a real zero.
	assert.Equal(t, []uint64{2 << 20, 6 << 20, 6 << 20, 6 << 20, 4 << 20, 4 << 20, 0}, reserved)
	assert.Equal(t, t0, tl.StartTime(), "x = 0 is the first point when nothing was started")
}

func TestTimelineKeepsTheNewestMarksWhenFull(t *testing.T) {
	tl := newTimeline(t, TimelineOptions{MarkCapacity: 3})
	for i := range 5 {
		tl.Observe(pool.Event{Kind: pool.EventCollect, Time: at(i), Bytes: uint64(i)})
	}
	var got []uint64
	for _, m := range tl.Marks() {
		got = append(got, m.Bytes)
	}
	assert.Equal(t, []uint64{2, 3, 4}, got, "oldest first, the two oldest dropped")
	assert.Equal(t, uint64(2), tl.MarksDropped())
}

func TestTimelinePointsAreInTimeOrderAcrossDevices(t *testing.T) {
	tl := newTimeline(t, TimelineOptions{})
	tl.Record(Point{Time: at(0), Device: 1, Live: 1})
	tl.Record(Point{Time: at(5), Device: 0, Live: 2})
	tl.Record(Point{Time: at(10), Device: 1, Live: 3})
	tl.Record(Point{Time: at(10), Device: 0, Live: 4})
	tl.Record(Point{Time: at(20), Device: 0, Live: 5})
	var got [][2]uint64
	for _, p := range tl.Points() {
		got = append(got, [2]uint64{uint64(p.Device), p.Live})
	}
	assert.Equal(t, [][2]uint64{{1, 1}, {0, 2}, {0, 4}, {1, 3}, {0, 5}}, got,
		"by time, and by device between points of one time")
	charts := tl.Charts()
	require.Len(t, charts, 2, "a chart per device")
	assert.Equal(t, "device 0", charts[0].Title)
	assert.Equal(t, []float64{0.005, 0.010, 0.020}, charts[0].X, "seconds since the start")
	assert.Equal(t, []uint64{2, 4, 5}, charts[0].Live)
}

func TestTimelineNeverGoesBackInTime(t *testing.T) {
	// A sample read before an event may be recorded after it.
	tl := newTimeline(t, TimelineOptions{})
	tl.Record(Point{Time: at(10), Live: 1})
	tl.Record(Point{Time: at(5), Live: 2})
	pts := tl.Points()
	require.Len(t, pts, 2)
	assert.Equal(t, at(10), pts[1].Time)
	assert.Equal(t, uint64(2), pts[1].Live)
}

func TestTimelineDownsamplesPerDeviceWithinCapacity(t *testing.T) {
	tl := newTimeline(t, TimelineOptions{Capacity: 8})
	for i := range 100 {
		tl.Record(Point{Time: at(i), Device: 0, Live: uint64(i % 37)})
	}
	tl.Record(Point{Time: at(0), Device: 1, Live: 1})
	var dev0 []Point
	for _, p := range tl.Points() {
		if p.Device == 0 {
			dev0 = append(dev0, p)
		}
	}
	assert.LessOrEqual(t, len(dev0), 9, "capacity, plus the bucket being filled")
	var peak uint64
	for _, p := range dev0 {
		peak = max(peak, p.Live)
	}
	assert.Equal(t, uint64(36), peak)
	assert.Equal(t, at(0), dev0[0].Time)
	assert.Contains(t, tl.Charts()[0].Title, "each point the maximum of 16 samples")
}

func TestNewTimelineRejectsBadOptions(t *testing.T) {
	for _, tc := range []struct {
		opt TimelineOptions
		err string
	}{
		{TimelineOptions{Capacity: 1}, "Capacity 1: need at least 2 points a device, or 0 for the default 4096"},
		{TimelineOptions{Capacity: -1}, "Capacity -1"},
		{TimelineOptions{MarkCapacity: -2}, "MarkCapacity -2: need a positive number of marks, or 0 for the default 1024"},
	} {
		_, err := NewTimeline(tc.opt)
		assert.ErrorContains(t, err, tc.err)
	}
}

func TestTimelineStartsOnce(t *testing.T) {
	tl := newTimeline(t, TimelineOptions{Interval: -1})
	require.NoError(t, tl.Start())
	assert.ErrorContains(t, tl.Start(), "already started")
	tl.Stop()
	tl.Stop()
	assert.ErrorContains(t, tl.Start(), "stopped; make a new one")

	never := newTimeline(t, TimelineOptions{})
	never.Stop()
	assert.ErrorContains(t, never.Start(), "stopped")
}

func TestTimelineTakesEmittedEventsOnlyWhileStarted(t *testing.T) {
	tl := newTimeline(t, TimelineOptions{Interval: -1})
	// A device number no other test uses, so their pools' events do not
	// land in this timeline's record of it.
	const dev = 9001
	pool.Emit(pool.Event{Kind: pool.EventCollect, Device: dev})
	require.NoError(t, tl.Start())
	pool.Emit(pool.Event{Kind: pool.EventOOMRetry, Device: dev, Bytes: 7})
	tl.Stop()
	pool.Emit(pool.Event{Kind: pool.EventOOM, Device: dev})
	var kinds []pool.EventKind
	for _, m := range tl.Marks() {
		if m.Device == dev {
			kinds = append(kinds, m.Kind)
		}
	}
	assert.Equal(t, []pool.EventKind{pool.EventOOMRetry}, kinds)
}
