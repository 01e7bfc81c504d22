package observe

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/pool"
)

// jsonLines decodes each line a slog JSON handler wrote.
func jsonLines(t *testing.T, b *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), "line %q", line)
		out = append(out, m)
	}
	return out
}

// logDevice is a device number no pool in these tests uses, so that
// events from pools of other tests in the process are told apart.
const logDevice = 7001

func TestEnableLogWritesADebugLinePerEventWithItsFigures(t *testing.T) {
	var buf bytes.Buffer
	l := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	stop := EnableLog(l)
	pool.Emit(pool.Event{Kind: pool.EventGrow, Device: logDevice, Bytes: 2 << 20, Reserved: 6 << 20})
	pool.Emit(pool.Event{Kind: pool.EventReclaim, Device: logDevice, Bytes: 4 << 20, Reserved: 2 << 20})
	pool.Emit(pool.Event{Kind: pool.EventCollect, Device: logDevice, Bytes: 1 << 20, Dur: 1500 * time.Microsecond, Note: "early"})
	pool.Emit(pool.Event{Kind: pool.EventOOMRetry, Device: logDevice, Bytes: 8 << 20})
	stop()
	pool.Emit(pool.Event{Kind: pool.EventOOM, Device: logDevice, Bytes: 8 << 20})

	var lines []map[string]any
	for _, m := range jsonLines(t, &buf) {
		if m["device"] == float64(logDevice) {
			lines = append(lines, m)
		}
	}
	require.Len(t, lines, 4, "one line per event while enabled, none after stop")
	for _, m := range lines {
		assert.Equal(t, "DEBUG", m["level"])
		assert.Contains(t, m, "time")
	}
	assert.Equal(t, "gocuda: pool grew", lines[0]["msg"])
	assert.Equal(t, "grow", lines[0]["event"])
	assert.Equal(t, float64(2<<20), lines[0]["bytes"])
	assert.Equal(t, float64(6<<20), lines[0]["reserved"])

	assert.Equal(t, "gocuda: pool reclaimed cache", lines[1]["msg"])
	assert.Equal(t, float64(2<<20), lines[1]["reserved"])

	assert.Equal(t, "gocuda: collected", lines[2]["msg"])
	assert.Equal(t, float64(1500*time.Microsecond), lines[2]["dur"], "slog's JSON writes durations in nanoseconds")
	assert.Equal(t, "early", lines[2]["reason"])
	assert.NotContains(t, lines[2], "reserved", "the pressure layer's events have no reserved count")

	assert.Equal(t, "gocuda: out of memory, retrying", lines[3]["msg"])
	assert.Equal(t, "oom-retry", lines[3]["event"])
	assert.Equal(t, float64(8<<20), lines[3]["bytes"])
}

func TestEnableLogWritesNothingAboveDebugLevel(t *testing.T) {
	var buf bytes.Buffer
	stop := EnableLog(slog.New(slog.NewTextHandler(&buf, nil))) // Info
	defer stop()
	pool.Emit(pool.Event{Kind: pool.EventGrow, Device: logDevice, Bytes: 1})
	assert.Empty(t, buf.String())
}

func TestLogEventTextLine(t *testing.T) {
	var buf bytes.Buffer
	h := slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // for a fixed line
			}
			return a
		}})
	LogEvent(context.Background(), slog.New(h), pool.Event{Kind: pool.EventRelease, Device: 1, Bytes: 2 << 20, Reserved: 0})
	assert.Equal(t, `level=DEBUG msg="gocuda: pool released memory" event=release device=1 bytes=2097152 reserved=0`+"\n", buf.String())
	buf.Reset()
	LogEvent(context.Background(), slog.New(h), pool.Event{Kind: pool.EventGrow, Device: 0, Memory: pool.PinnedMemory, Bytes: 4096, Reserved: 4096})
	assert.Equal(t, `level=DEBUG msg="gocuda: pool grew" event=grow device=0 memory=pinned bytes=4096 reserved=4096`+"\n", buf.String(),
		"a pinned pool's line says so")
}

func TestDebugLoggerFallsBackToStderrLikeWriterAtDebugLevel(t *testing.T) {
	old := slog.Default()
	defer slog.SetDefault(old)

	slog.SetDefault(slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))) // Info: drops debug lines
	var buf bytes.Buffer
	l := DebugLogger(&buf)
	l.Debug("seen")
	assert.Contains(t, buf.String(), "msg=seen", "the knob must not be a no-op under the default handler")

	var own bytes.Buffer
	mine := slog.New(slog.NewJSONHandler(&own, &slog.HandlerOptions{Level: slog.LevelDebug}))
	slog.SetDefault(mine)
	assert.Same(t, mine, DebugLogger(&buf), "a program's debug-level default logger is kept")
}
