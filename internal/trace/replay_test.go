package trace_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/host"
	"github.com/gocuda/gocuda/internal/trace"
	"github.com/gocuda/gocuda/internal/trace/tracetest"
	"github.com/gocuda/gocuda/pool"
)

// tracesDir holds the real traces, copied from the shared folder so the
// repository stands alone.
const tracesDir = "../../testdata/traces"

// replayMemory is the host device size for replays: far more than any
// trace's peak, and free because the host backend maps memory without
// backing and Replay never touches it.
const replayMemory = 1 << 40

func writeFile(path string, data []byte) error { return os.WriteFile(path, data, 0o644) }

// hostDevice returns a fresh host device of total bytes.
func hostDevice(t testing.TB, total uint64) backend.Device {
	t.Helper()
	dev, err := host.New(host.Options{TotalMemory: total}).Device(0)
	require.NoError(t, err)
	return dev
}

// newStreams makes n streams on dev, destroyed when the test ends.
func newStreams(t testing.TB, dev backend.Device, n int) []backend.Stream {
	t.Helper()
	streams := make([]backend.Stream, n)
	for i := range streams {
		s, err := dev.NewStream()
		require.NoError(t, err)
		streams[i] = s
		t.Cleanup(func() { _ = s.Destroy() })
	}
	return streams
}

func newExact(t testing.TB, dev backend.Device, cache bool, limits pool.Limits) *tracetest.ExactPool {
	t.Helper()
	src, err := pool.NewSource(dev, limits)
	require.NoError(t, err)
	return tracetest.NewExact(dev, src, cache)
}

func TestReplayMeasuresSyntheticTraceThroughUncachedPool(t *testing.T) {
	tr := parse(t, synthetic)
	dev := hostDevice(t, replayMemory)
	p := newExact(t, dev, false, pool.Limits{})

	res, err := trace.Replay(tr, p, newStreams(t, dev, tr.Streams()))
	require.NoError(t, err)

	assert.Equal(t, "test-nocache", res.Pool)
	assert.Equal(t, 9, res.Events)
	assert.Equal(t, 5, res.Allocs)
	assert.Equal(t, 4, res.Frees)
	assert.Equal(t, uint64(4500), res.PeakLive)
	// Peak of rounded live blocks: 1024 + 3072 + 512 after a4.
	assert.Equal(t, uint64(4608), res.PeakReserved)
	assert.InDelta(t, 4608.0/4500, res.ReservedPerLive, 1e-12)
	assert.Zero(t, res.HitRate)
	assert.Equal(t, uint64(5), res.DriverAllocs)
	assert.Equal(t, uint64(4), res.DriverFrees)
	assert.Zero(t, res.OOMs)
	assert.Equal(t, 1, res.Leftover, "a4 is never freed by the trace")
	assert.Positive(t, res.EventsPerSec)
	assert.Positive(t, res.Elapsed)

	st := p.Stats()
	assert.Zero(t, st.Live, "Replay frees what the trace left live")
	require.NoError(t, p.Close())
}

func TestReplayMeasuresSyntheticTraceThroughCachingPool(t *testing.T) {
	tr := parse(t, synthetic)
	dev := hostDevice(t, replayMemory)
	p := newExact(t, dev, true, pool.Limits{})

	res, err := trace.Replay(tr, p, newStreams(t, dev, tr.Streams()))
	require.NoError(t, err)

	// a3 reuses a1's block on stream 0 and a5 reuses a2's on stream 5:
	// three driver allocations, two hits of five.
	assert.Equal(t, uint64(3), res.DriverAllocs)
	assert.Zero(t, res.DriverFrees)
	assert.InDelta(t, 0.4, res.HitRate, 1e-12)
	assert.Equal(t, uint64(4608), res.PeakReserved)
	assert.Equal(t, uint64(4500), res.PeakLive)
	require.NoError(t, p.Close())
}

func TestReplayGivesEachTraceStreamItsOwnStream(t *testing.T) {
	tr := parse(t, synthetic)
	dev := hostDevice(t, replayMemory)
	streams := newStreams(t, dev, 2)
	rec := &recordingPool{Pool: newExact(t, dev, false, pool.Limits{})}

	_, err := trace.Replay(tr, rec, streams)
	require.NoError(t, err)
	// Trace streams 0 and 5 map to streams[0] and streams[1]; frees go to
	// the stream of the allocation.
	want := []uint32{0, 1, 0, 0, 1, 1, 0, 1, 1}
	got := make([]uint32, len(rec.streams))
	for i, s := range rec.streams {
		for k := range streams {
			if s == streams[k] {
				got[i] = uint32(k)
			}
		}
	}
	assert.Equal(t, want, got[:len(want)])
}

// recordingPool notes the stream of every Alloc and Free.
type recordingPool struct {
	pool.Pool
	streams []backend.Stream
}

func (r *recordingPool) Alloc(size uint64, s backend.Stream) (*pool.Block, error) {
	r.streams = append(r.streams, s)
	return r.Pool.Alloc(size, s)
}

func (r *recordingPool) Free(b *pool.Block, s backend.Stream) error {
	r.streams = append(r.streams, s)
	return r.Pool.Free(b, s)
}

func TestReplayRejectsTooFewStreams(t *testing.T) {
	tr := parse(t, synthetic)
	dev := hostDevice(t, replayMemory)
	_, err := trace.Replay(tr, newExact(t, dev, false, pool.Limits{}), newStreams(t, dev, 1))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "needs 2 streams, got 1")
}

func TestReplayStopsAtOutOfMemoryByDefault(t *testing.T) {
	tr := parse(t, synthetic)
	dev := hostDevice(t, replayMemory)
	// Room for a1 and a2 (1024 + 3072) but not a4.
	p := newExact(t, dev, false, pool.Limits{Hard: 4096})

	res, err := trace.Replay(tr, p, newStreams(t, dev, tr.Streams()))
	require.Error(t, err)
	require.ErrorIs(t, err, backend.ErrOutOfMemory)
	assert.Contains(t, err.Error(), "event 4 (line 7)")
	assert.Equal(t, 1, res.OOMs)
	assert.Equal(t, 4, res.Events, "events before the failure")
	assert.Zero(t, p.Stats().Live, "blocks held at the failure are freed")
	require.NoError(t, p.Close())
}

func TestReplayCountsOutOfMemoryAndContinuesWhenAsked(t *testing.T) {
	tr := parse(t, synthetic)
	dev := hostDevice(t, replayMemory)
	p := newExact(t, dev, false, pool.Limits{Hard: 4096})

	res, err := trace.ReplayWithOptions(tr, p, newStreams(t, dev, tr.Streams()), trace.Options{ContinueOnOOM: true})
	require.NoError(t, err)
	assert.Equal(t, 1, res.OOMs)
	assert.Equal(t, 8, res.Events, "every event but the failed allocation")
	assert.Zero(t, res.Leftover, "the only leftover was the failed one")
	require.NoError(t, p.Close())
}

// The host device's own memory running out is an out-of-memory too.
func TestReplayTreatsDeviceExhaustionAsOutOfMemory(t *testing.T) {
	tr := parse(t, "a 1 4096 0\na 2 4096 0\n")
	dev := hostDevice(t, 4096)
	p := newExact(t, dev, false, pool.Limits{})
	res, err := trace.ReplayWithOptions(tr, p, newStreams(t, dev, 1), trace.Options{ContinueOnOOM: true})
	require.NoError(t, err)
	assert.Equal(t, 1, res.OOMs)
	require.NoError(t, p.Close())
}

func TestReplayReportsOtherPoolErrors(t *testing.T) {
	tr := parse(t, "a 1 8 0\nf 1\n")
	dev := hostDevice(t, replayMemory)
	p := &failingFree{Pool: newExact(t, dev, false, pool.Limits{})}
	_, err := trace.Replay(tr, p, newStreams(t, dev, 1))
	require.ErrorIs(t, err, backend.ErrInvalidValue)
	assert.Contains(t, err.Error(), "event 1 (line 2): free")
}

type failingFree struct{ pool.Pool }

func (failingFree) Free(*pool.Block, backend.Stream) error { return backend.ErrInvalidValue }

func TestReplayRealTraceThroughTestPoolKeepsReservedAboveLive(t *testing.T) {
	tr, err := trace.ParseFile(tracesDir + "/resnet50_train.trace.gz")
	require.NoError(t, err)
	dev := hostDevice(t, replayMemory)
	p := newExact(t, dev, true, pool.Limits{})
	res, err := trace.Replay(tr, p, newStreams(t, dev, tr.Streams()))
	require.NoError(t, err)
	assert.Equal(t, len(tr.Events), res.Events)
	assert.GreaterOrEqual(t, res.PeakReserved, res.PeakLive)
	require.NoError(t, p.Close())
}
