package observe

import "github.com/gocuda/gocuda/pool"

// Chart is one panel of a memory picture: live and reserved bytes against
// X, with marks. Timeline.Charts makes one per device with X in seconds;
// `gocuda replay --plot` makes one per pool replayed with X the trace's
// event index. Package observe/timelinesvg draws charts; they live here,
// as plain figures, so that recording a timeline does not link a plotting
// library.
type Chart struct {
	// Title names the panel (a device, a trace and pool); the picture's
	// title goes before it.
	Title  string
	XLabel string
	// X, Live and Reserved are the samples, of one length, X not
	// decreasing.
	X              []float64
	Live, Reserved []uint64
	Marks          []ChartMark
}

// ChartMark is a vertical line at X for an event of Kind.
type ChartMark struct {
	X    float64
	Kind pool.EventKind
}
