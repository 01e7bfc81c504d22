// Package timelinesvg draws device memory as SVG pictures with
// gonum/plot: a Timeline of package observe, a panel per device with
// live and reserved bytes over time and a vertical line at each
// collection and out-of-memory retry, or any observe.Chart (`gocuda
// replay --plot` draws one per pool replayed).
//
// It is a package of its own so that only programs that draw pay for
// gonum/plot (fonts, LaTeX, PDF and image writers): recording a timeline
// with package observe links none of it.
//
//	tl, err := gocuda.StartTimeline(observe.TimelineOptions{})
//	if err != nil { ... }
//	train()
//	tl.Stop()
//	f, err := os.Create("memory.svg")
//	if err != nil { ... }
//	err = timelinesvg.WriteTimeline(f, tl, "training")
package timelinesvg
