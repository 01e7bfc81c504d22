package recorder_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/host"
	"github.com/gocuda/gocuda/internal/recorder"
	"github.com/gocuda/gocuda/internal/trace"
	"github.com/gocuda/gocuda/pool"
)

// nullPool hands out fresh blocks and frees nothing: the recorder's cost
// alone, so that long runs stay fast under the race detector.
type nullPool struct {
	pool.Pool // nil: only the methods below are called
	dev       backend.Device
}

func (p nullPool) Name() string           { return "null" }
func (p nullPool) Device() backend.Device { return p.dev }
func (p nullPool) Close() error           { return nil }
func (p nullPool) Alloc(size uint64, s backend.Stream) (*pool.Block, error) {
	return &pool.Block{Size: size, Requested: size, Stream: s}, nil
}
func (p nullPool) Free(*pool.Block, backend.Stream) error { return nil }

func newNull(t testing.TB) (nullPool, backend.Stream) {
	t.Helper()
	dev, err := host.New(host.Options{TotalMemory: 1 << 30}).Device(0)
	require.NoError(t, err)
	s, err := dev.NewStream()
	require.NoError(t, err)
	return nullPool{dev: dev}, s
}

// waitForEvents parses path until it holds at least n events, and
// returns the trace and how long that took.
func waitForEvents(t *testing.T, path string, n int) (*trace.Trace, time.Duration) {
	t.Helper()
	start := time.Now()
	for {
		tr, err := trace.ParseFile(path)
		require.NoError(t, err, "a trace being written reads at any moment")
		if len(tr.Events) >= n {
			return tr, time.Since(start)
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("after %v the file holds %d of %d events", time.Since(start), len(tr.Events), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestEventsReachTheFileWithoutFlushOrClose(t *testing.T) {
	for _, name := range []string{"run.trace", "run.trace.gz"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), name)
			r, err := recorder.Create(path)
			require.NoError(t, err)
			p, s := newNull(t)
			w := r.Wrap(p)
			for i := range 50 {
				b, err := w.Alloc(uint64(256*(i+1)), s)
				require.NoError(t, err)
				if i%2 == 0 {
					require.NoError(t, w.Free(b, s))
				}
			}
			tr, took := waitForEvents(t, path, 75)
			t.Logf("%d events in the file after %v (flush period %v)", len(tr.Events), took, recorder.FlushPeriod)
			assert.Equal(t, 50, tr.Allocs)
			assert.Equal(t, 25, tr.Frees)
			assert.False(t, tr.Ended, "not stopped")
			assert.Equal(t, "null", tr.Meta["pool"], "the header came first")
			require.NoError(t, r.Close())
		})
	}
}

// A recorded gzip trace, flushed now and then as the writer does, read
// cut at every byte: never an error, always the first events, the cut
// always said.
func TestARecordedTraceCutAtEveryByteReads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.trace.gz")
	r, err := recorder.Create(path)
	require.NoError(t, err)
	p, s := newNull(t)
	w := r.Wrap(p)
	var live []*pool.Block
	for i := range 60 {
		b, err := w.Alloc(uint64(1000+i), s)
		require.NoError(t, err)
		live = append(live, b)
		if i%3 == 2 {
			require.NoError(t, w.Free(live[0], s))
			live = live[1:]
		}
		if i%10 == 9 {
			require.NoError(t, r.Flush())
		}
	}
	require.NoError(t, r.Close())
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	whole, err := trace.ParseFile(path)
	require.NoError(t, err)
	require.True(t, whole.Ended)
	require.Equal(t, 80, len(whole.Events))

	prev := 0
	for k := 1; k < len(data); k++ {
		tr, err := trace.Parse(bytes.NewReader(data[:k]))
		require.NoError(t, err, "cut at byte %d of %d", k, len(data))
		require.NotNil(t, tr.Cut, "cut at byte %d", k)
		require.Equal(t, len(tr.Events), tr.Cut.Events)
		require.GreaterOrEqual(t, len(tr.Events), prev)
		prev = len(tr.Events)
		require.Equal(t, whole.Events[:len(tr.Events)], append([]trace.Event{}, tr.Events...), "cut at byte %d", k)
	}
	assert.Equal(t, 80, prev, "all events are in the stream before its trailer")
}

// A long run holds a bounded amount of trace text in memory: the writer
// takes it as it comes.
func TestMemoryStaysBoundedOverALongRun(t *testing.T) {
	// The text written must be several times the bound (at 18 bytes an
	// event, 300 000 events are 5.4 MiB against 1.1 MiB) for the peak to
	// prove anything, under -short too.
	events := 400_000
	if testing.Short() {
		events = 300_000
	}
	path := filepath.Join(t.TempDir(), "long.trace")
	r, err := recorder.Create(path)
	require.NoError(t, err)
	p, s := newNull(t)
	w := r.Wrap(p)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range events / 2 {
		// Twenty-digit sizes: long lines, so the text is many times the
		// bound.
		b, err := w.Alloc(1<<63+uint64(i), s)
		require.NoError(t, err)
		require.NoError(t, w.Free(b, s))
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	require.NoError(t, r.Flush())
	st, err := os.Stat(path)
	require.NoError(t, err)
	bound := (recorder.MaxQueued + 2) * recorder.ChunkSize
	t.Logf("%d events, %.1f MiB of trace; at most %d KiB held (bound %d KiB); heap %+.1f MiB",
		events, float64(st.Size())/(1<<20), r.PeakHeld()>>10, bound>>10, (float64(after.HeapAlloc)-float64(before.HeapAlloc))/(1<<20))
	assert.Greater(t, int(st.Size()), 4*bound, "the run wrote many times the bound")
	assert.LessOrEqual(t, r.PeakHeld(), bound)
	assert.Less(t, int64(after.HeapAlloc)-int64(before.HeapAlloc), int64(2*bound), "the heap grows by no more than the recorder's chunks")
	require.NoError(t, r.Close())
	tr, err := trace.ParseFile(path)
	require.NoError(t, err)
	assert.Equal(t, events, len(tr.Events), "no event lost")
}

// Goroutines on their own streams record at once, flushes and the writer
// going on meanwhile: every event is in the file, each stream's in order.
func TestConcurrentRecordingKeepsEveryEvent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.trace.gz")
	r, err := recorder.Create(path)
	require.NoError(t, err)
	p, _ := newNull(t)
	w := r.Wrap(p)
	const goroutines, pairs = 4, 5000
	var wg sync.WaitGroup
	for g := range goroutines {
		s, err := p.dev.NewStream()
		require.NoError(t, err)
		wg.Go(func() {
			for i := range pairs {
				b, err := w.Alloc(uint64(g*pairs+i+1), s)
				if err == nil {
					err = w.Free(b, s)
				}
				if err != nil {
					panic(err)
				}
				if i%1000 == 0 {
					_ = r.Flush()
				}
			}
		})
	}
	wg.Wait()
	require.NoError(t, w.Close(), "the only pool: closes the trace")
	tr, err := trace.ParseFile(path)
	require.NoError(t, err)
	assert.True(t, tr.Ended)
	assert.Equal(t, goroutines*pairs, tr.Allocs)
	assert.Equal(t, goroutines*pairs, tr.Frees)
	assert.Len(t, tr.StreamNumbers, goroutines)
	next := map[uint16]uint64{}
	for i, e := range tr.Events {
		if e.Op != trace.Alloc {
			continue
		}
		// Each goroutine's sizes rise by one: its events are in order.
		if n, ok := next[e.Stream]; ok {
			require.Equal(t, n, e.Size, fmt.Sprintf("event %d", i))
		}
		next[e.Stream] = e.Size + 1
	}
}

// BenchmarkRecordedPair is what recording adds to an allocation and its
// free (the pool itself does nothing here), with the writer keeping up.
func BenchmarkRecordedPair(b *testing.B) {
	for _, name := range []string{"t.trace", "t.trace.gz"} {
		b.Run(name, func(b *testing.B) {
			r, err := recorder.Create(filepath.Join(b.TempDir(), name))
			require.NoError(b, err)
			p, s := newNull(b)
			w := r.Wrap(p)
			for b.Loop() {
				blk, _ := w.Alloc(1<<20, s)
				_ = w.Free(blk, s)
			}
			require.NoError(b, r.Close())
		})
	}
}
