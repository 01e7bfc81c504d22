package trace_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/internal/trace"
	"github.com/gocuda/gocuda/internal/trace/tracetest"
	"github.com/gocuda/gocuda/pool"

	// Every real strategy, so that the tests and benchmarks below cover
	// each one.
	// The root package imports every strategy, which registers itself.
	_ "github.com/gocuda/gocuda"
)

// realTraces are the recorded traces every pool is replayed on.
var realTraces = []string{"gpt2_train.trace.gz", "resnet50_train.trace.gz"}

// minEventsPerSec is a floor, not a target: it catches a pool (or a replay
// loop) gone quadratic, with room for a slow CI machine and for pools that
// call the driver on every event (pool/none: an mmap and a munmap each on
// the host, about 120 k events/s on this 2-core machine). The race
// detector slows everything several times over.
//
// The split pool moves physical memory between addresses; where the host
// backend copies it to do so (the portable path, vmmCopies), a real trace
// replays at about 10 k events/s instead of millions, so the floor there
// only catches a pool gone quadratic.
func minEventsPerSec(pool string) float64 {
	switch {
	case vmmCopies && pool == "split":
		return 1_000
	case raceEnabled:
		return 5_000
	}
	return 25_000
}

func init() { tracetest.Register() }

// replayPools lists the registered pools that can run on dev: the
// driver's stream-ordered pool needs the CUDA backend.
func replayPools(dev backend.Device) []string {
	var names []string
	for _, name := range pool.Registered() {
		if _, ok := dev.(backend.StreamOrderedMemory); name == "cuda" && !ok {
			continue
		}
		names = append(names, name)
	}
	return names
}

func loadTrace(t testing.TB, file string) *trace.Trace {
	t.Helper()
	tr, err := trace.ParseFile(filepath.Join(tracesDir, file))
	require.NoError(t, err)
	return tr
}

// replayFresh replays tr through a fresh pool called name on a fresh 1 TiB
// host device and closes the pool.
func replayFresh(t testing.TB, tr *trace.Trace, name string) trace.Result {
	t.Helper()
	dev := hostDevice(t, replayMemory)
	p, err := pool.New(name, dev, pool.Limits{})
	require.NoError(t, err)
	res, err := trace.Replay(tr, p, newStreams(t, dev, tr.Streams()))
	require.NoError(t, err)
	require.NoError(t, p.Close(), "every block was freed, so nothing is live at Close")
	return res
}

func TestReplayRealTracesThroughEveryPool(t *testing.T) {
	if testing.Short() {
		t.Skip("replays about 50 k events through every pool; skipped under -short")
	}
	dev := hostDevice(t, replayMemory)
	names := replayPools(dev)
	require.NotEmpty(t, names)
	for _, file := range realTraces {
		tr := loadTrace(t, file)
		for _, name := range names {
			t.Run(fmt.Sprintf("%s/%s", tr.Name, name), func(t *testing.T) {
				res := replayFresh(t, tr, name)
				t.Logf("%s on %s: %d events, peak live %s, peak reserved %s, reserved/live %.3f (torch %.3f), %.2f M events/s, hit rate %.1f%%, %d driver allocs",
					tr.Name, name, res.Events, humanize.IBytes(res.PeakLive), humanize.IBytes(res.PeakReserved),
					res.ReservedPerLive, tr.TorchReservedPerLive(), res.EventsPerSec/1e6, 100*res.HitRate, res.DriverAllocs)
				assert.Equal(t, len(tr.Events), res.Events)
				assert.Zero(t, res.OOMs)
				assert.GreaterOrEqual(t, res.PeakReserved, res.PeakLive, "a pool cannot hold live bytes it did not reserve")
				assert.GreaterOrEqual(t, res.ReservedPerLive, 1.0)
				assert.GreaterOrEqual(t, res.EventsPerSec, minEventsPerSec(name))
				assert.Equal(t, tr.Allocs-tr.Frees, res.Leftover)
			})
		}
	}
}

// BenchmarkReplay replays each real trace through each pool, a fresh pool
// every iteration (as gocuda replay does, so the cold start is in the
// figure), and reports the event loop's events/s. The target for the best
// pool is 5 M events/s on the host.
func BenchmarkReplay(b *testing.B) {
	dev := hostDevice(b, replayMemory)
	for _, file := range realTraces {
		tr := loadTrace(b, file)
		for _, name := range replayPools(dev) {
			b.Run(fmt.Sprintf("%s/%s", name, tr.Name), func(b *testing.B) {
				streams := newStreams(b, dev, tr.Streams())
				var loop time.Duration
				events := 0
				for b.Loop() {
					b.StopTimer()
					p, err := pool.New(name, dev, pool.Limits{})
					require.NoError(b, err)
					b.StartTimer()
					res, err := trace.Replay(tr, p, streams)
					b.StopTimer()
					require.NoError(b, err)
					require.NoError(b, p.Close())
					b.StartTimer()
					loop += res.Elapsed
					events += res.Events
				}
				b.ReportMetric(float64(events)/loop.Seconds(), "events/s")
				b.ReportMetric(float64(loop.Nanoseconds())/float64(events), "ns/event")
			})
		}
	}
}

// nullPool hands out blocks from a free list and never calls the driver:
// replaying through it measures the replay loop itself.
type nullPool struct {
	pool.Pool // unused methods panic: Replay must not call them
	free      []*pool.Block
	st        pool.Stats
}

func (p *nullPool) Name() string { return "null" }

func (p *nullPool) Alloc(size uint64, s backend.Stream) (*pool.Block, error) {
	var b *pool.Block
	if n := len(p.free); n > 0 {
		b, p.free = p.free[n-1], p.free[:n-1]
	} else {
		b = &pool.Block{Owner: p}
	}
	b.Size, b.Requested, b.Stream, b.Free = size, size, s, false
	p.st.Allocs++
	return b, nil
}

func (p *nullPool) Free(b *pool.Block, _ backend.Stream) error {
	b.Free = true
	p.free = append(p.free, b)
	return nil
}

func (p *nullPool) Stats() pool.Stats { return p.st }

// BenchmarkReplayLoop is the replay loop's own cost per event, through a
// pool that does nothing: what every pool's events/s figure includes.
func BenchmarkReplayLoop(b *testing.B) {
	tr := loadTrace(b, realTraces[0])
	streams := make([]backend.Stream, tr.Streams())
	p := &nullPool{}
	var loop time.Duration
	events := 0
	for b.Loop() {
		res, err := trace.Replay(tr, p, streams)
		require.NoError(b, err)
		loop += res.Elapsed
		events += res.Events
	}
	b.ReportMetric(float64(events)/loop.Seconds(), "events/s")
	b.ReportMetric(float64(loop.Nanoseconds())/float64(events), "ns/event")
}
