package observe

import (
	"context"
	"io"
	"log/slog"

	"github.com/gocuda/gocuda/pool"
)

// eventMessages are the log lines' messages: fixed per kind, so a log
// search for one finds them all, with the figures in attributes.
var eventMessages = [...]string{
	pool.EventGrow:     "gocuda: pool grew",
	pool.EventRelease:  "gocuda: pool released memory",
	pool.EventReclaim:  "gocuda: pool reclaimed cache",
	pool.EventCollect:  "gocuda: collected",
	pool.EventOOMRetry: "gocuda: out of memory, retrying",
	pool.EventOOM:      "gocuda: out of memory",
}

// EnableLog writes a debug line to l for every pool event from now on:
// pool growth, releases and reclaims, collections, out-of-memory retries
// and failures. The returned function stops it. Events come only on slow
// paths (driver calls, reclaims, collections), so logging never touches a
// cached allocation; the line is written on the goroutine that caused the
// event, which is why the handler should be quick.
//
// Every line has the attributes event (the kind, as pool.EventKind
// spells it), device and bytes (what the event concerns); grow, release
// and reclaim add reserved (the device's reserved bytes after it);
// collections add dur; an event with a note (why a collection ran) adds
// reason.
func EnableLog(l *slog.Logger) (stop func()) {
	// Checked once per event rather than once here: the handler's level
	// may change while the program runs (slog.LevelVar).
	return pool.Subscribe(func(e pool.Event) {
		ctx := context.Background()
		if !l.Enabled(ctx, slog.LevelDebug) {
			return
		}
		LogEvent(ctx, l, e)
	})
}

// LogEvent writes e to l as EnableLog does.
func LogEvent(ctx context.Context, l *slog.Logger, e pool.Event) {
	msg := "gocuda: memory event"
	if int(e.Kind) < len(eventMessages) && eventMessages[e.Kind] != "" {
		msg = eventMessages[e.Kind]
	}
	attrs := make([]slog.Attr, 0, 7)
	attrs = append(attrs,
		slog.String("event", e.Kind.String()),
		slog.Int("device", e.Device))
	if e.Memory != pool.DeviceMemory {
		// A device's unified or pinned pool; device memory's lines
		// read as they always have.
		attrs = append(attrs, slog.String("memory", e.Memory.String()))
	}
	attrs = append(attrs, slog.Uint64("bytes", e.Bytes))
	if !fromAbove(e.Kind) {
		attrs = append(attrs, slog.Uint64("reserved", e.Reserved))
	}
	if e.Kind == pool.EventCollect {
		attrs = append(attrs, slog.Duration("dur", e.Dur))
	}
	if e.Note != "" {
		attrs = append(attrs, slog.String("reason", e.Note))
	}
	l.LogAttrs(ctx, slog.LevelDebug, msg, attrs...)
}

// DebugLogger is the logger GOCUDA_DEBUG=log writes to: slog's default
// logger when it lets debug lines through (a program that set one up
// keeps its handler), else a text handler on w at debug level, because
// the default handler drops debug lines and the knob would otherwise do
// nothing.
func DebugLogger(w io.Writer) *slog.Logger {
	if l := slog.Default(); l.Enabled(context.Background(), slog.LevelDebug) {
		return l
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
