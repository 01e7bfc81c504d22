// Package observe shows what device memory does over time: a Timeline of
// live and reserved bytes per device with collections and out-of-memory
// retries marked; Metrics, the pools' figures for an exporter; and
// structured log/slog debug lines for pool growth, reclaims, collections
// and out-of-memory retries.
//
// Presentation is in packages of their own, imported only by programs that
// want it: observe/timelinesvg draws a Timeline as an SVG picture (with
// gonum/plot), and observe/expvarmetrics publishes Metrics in expvar.
// Importing observe starts nothing and publishes nothing.
//
// Everything here is fed by pool events (pool.Subscribe), which pools and
// the pressure layer emit only on slow paths (driver calls, reclaims,
// collections), and by reading pools' Stats when a sampler ticks or a
// metrics endpoint is scraped; a cached allocation pays for none of it.
//
// The root package wires this up for the process's own pools:
// gocuda.StartTimeline records every device pool, gocuda.Metrics reads
// their figures (expvarmetrics.Publish serves them at /debug/vars), and
// GOCUDA_DEBUG=log turns the debug lines on (or call EnableLog with a
// logger of your own):
//
//	tl, err := gocuda.StartTimeline(observe.TimelineOptions{})
//	if err != nil { ... }
//	train()
//	tl.Stop()
//	f, err := os.Create("memory.svg")
//	if err != nil { ... }
//	err = timelinesvg.WriteTimeline(f, tl, "training")
//
// Memory is bounded: a Timeline keeps at most TimelineOptions.Capacity
// points per device (4096 by default), downsampling by merging neighbours
// and keeping their maxima when full, so a whole run stays visible and no
// peak is lost; marks beyond MarkCapacity drop the oldest.
package observe
