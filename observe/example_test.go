package observe_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/gocuda/gocuda/observe"
	"github.com/gocuda/gocuda/pool"
)

// A timeline fed by hand: the sampler and pool events feed it the same
// way once it is started.
func ExampleTimeline() {
	tl, err := observe.NewTimeline(observe.TimelineOptions{})
	if err != nil {
		panic(err)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tl.Record(observe.Point{Time: start, Live: 1 << 30, Reserved: 2 << 30})
	tl.Observe(pool.Event{Kind: pool.EventCollect, Time: start.Add(time.Second), Dur: 40 * time.Millisecond, Note: "early"})
	tl.Record(observe.Point{Time: start.Add(2 * time.Second), Live: 512 << 20, Reserved: 2 << 30})

	for _, m := range tl.Marks() {
		fmt.Printf("%s at %v (%s, took %v)\n", m.Kind, m.Time.Sub(tl.StartTime()), m.Note, m.Dur)
	}
	for _, c := range tl.Charts() {
		fmt.Println(c.Title, c.X, c.Live)
	}
	// timelinesvg.WriteTimeline(f, tl, "run") draws it.

	// Output:
	// collect at 1s (early, took 40ms)
	// device 0 [0 1 2] [1073741824 1073741824 536870912]
}

// The debug lines GOCUDA_DEBUG=log writes, here to stdout without the
// time so the output is fixed.
func ExampleLogEvent() {
	h := slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{Level: slog.LevelDebug,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}})
	l := slog.New(h)
	ctx := context.Background()
	observe.LogEvent(ctx, l, pool.Event{Kind: pool.EventGrow, Device: 0, Bytes: 2 << 20, Reserved: 66 << 20})
	observe.LogEvent(ctx, l, pool.Event{Kind: pool.EventCollect, Device: 0, Bytes: 1 << 30, Dur: 35 * time.Millisecond, Note: "early"})
	observe.LogEvent(ctx, l, pool.Event{Kind: pool.EventOOMRetry, Device: 0, Bytes: 4 << 30})

	// Output:
	// level=DEBUG msg="gocuda: pool grew" event=grow device=0 bytes=2097152 reserved=69206016
	// level=DEBUG msg="gocuda: collected" event=collect device=0 bytes=1073741824 dur=35ms reason=early
	// level=DEBUG msg="gocuda: out of memory, retrying" event=oom-retry device=0 bytes=4294967296
}
