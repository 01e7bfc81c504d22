package observe_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/gcpressure"
	"github.com/gocuda/gocuda/observe"
	"github.com/gocuda/gocuda/pool"
)

// strategies are the pools that take memory through their Source and so
// emit growth and release events; the driver's pool (cuda) is left out
// because it exists on the GPU only.
var strategies = []string{"split", "binned", "simple", "none"}

// newPool makes a fresh pool of the strategy on the backend
// GOCUDA_BACKEND selects, closed with its stream at the end of the test.
func newPool(t *testing.T, name string) (pool.Pool, backend.Stream) {
	t.Helper()
	dev, err := gocuda.Device(0)
	require.NoError(t, err)
	p, err := pool.New(name, dev, pool.Limits{})
	require.NoError(t, err)
	s, err := dev.NewStream()
	require.NoError(t, err)
	t.Cleanup(func() {
		assert.NoError(t, p.Close())
		assert.NoError(t, s.Destroy())
	})
	return p, s
}

func alloc(t *testing.T, p pool.Pool, s backend.Stream, sizes ...uint64) []*pool.Block {
	t.Helper()
	var bs []*pool.Block
	for _, n := range sizes {
		b, err := p.Alloc(n, s)
		require.NoError(t, err)
		bs = append(bs, b)
	}
	return bs
}

func free(t *testing.T, p pool.Pool, s backend.Stream, bs []*pool.Block) {
	t.Helper()
	for _, b := range bs {
		require.NoError(t, p.Free(b, s))
	}
}

func TestTimelineRecordsARealPoolsGrowthSamplesAndRelease(t *testing.T) {
	for _, name := range strategies {
		t.Run(name, func(t *testing.T) {
			p, s := newPool(t, name)
			dev := p.Device().Ordinal()
			tl, err := observe.NewTimeline(observe.TimelineOptions{Interval: time.Millisecond})
			require.NoError(t, err)
			require.NoError(t, tl.Start(p))
			defer tl.Stop()

			bs := alloc(t, p, s, 1<<20, 3<<20, 2<<20)
			// Live bytes change without events: only the sampler sees
			// them between slow paths.
			require.Eventually(t, func() bool {
				for _, pt := range tl.Points() {
					if pt.Device == dev && pt.Live >= 6<<20 && pt.Reserved >= 6<<20 {
						return true
					}
				}
				return false
			}, 5*time.Second, time.Millisecond, "a sample with all three blocks live")

			free(t, p, s, bs)
			require.NoError(t, s.Synchronize())
			p.Reclaim(pool.All)
			tl.Stop()

			pts := tl.Points()
			last := pts[len(pts)-1]
			st := p.Stats()
			assert.Equal(t, st.Reserved, last.Reserved, "the last point is after the reclaim")
			assert.Zero(t, last.Live)
			for i := 1; i < len(pts); i++ {
				assert.False(t, pts[i].Time.Before(pts[i-1].Time), "points in time order")
			}

			// Stop stopped the sampler and the subscription.
			n := len(tl.Points())
			bs = alloc(t, p, s, 8<<20)
			time.Sleep(5 * time.Millisecond)
			assert.Len(t, tl.Points(), n)
			free(t, p, s, bs)
		})
	}
}

func TestTimelineMarksEmittedCollectionsOnTheirDevice(t *testing.T) {
	p, _ := newPool(t, "split")
	dev := p.Device().Ordinal()
	tl, err := observe.NewTimeline(observe.TimelineOptions{Interval: -1})
	require.NoError(t, err)
	require.NoError(t, tl.Start(p))
	pool.Emit(pool.Event{Kind: pool.EventCollect, Device: dev, Bytes: 5, Dur: time.Millisecond, Note: "early"})
	pool.Emit(pool.Event{Kind: pool.EventCollect, Device: dev + 4242, Bytes: 6})
	tl.Stop()
	marks := tl.Marks()
	require.Len(t, marks, 1, "only the given pools' devices, when pools are given")
	assert.Equal(t, pool.EventCollect, marks[0].Kind)
	assert.Equal(t, "early", marks[0].Note)
}

func TestMetricsSnapshotIsEveryPoolsFiguresAsJSON(t *testing.T) {
	p, s := newPool(t, "split")
	dev := p.Device().Ordinal()
	m := observe.NewMetrics(func() []pool.Pool { return []pool.Pool{p} })
	defer m.Close()

	bs := alloc(t, p, s, 3<<20)
	defer free(t, p, s, bs)
	pool.Emit(pool.Event{Kind: pool.EventCollect, Device: dev, Bytes: 1 << 20, Dur: 250 * time.Millisecond})
	pool.Emit(pool.Event{Kind: pool.EventOOMRetry, Device: dev, Bytes: 1 << 30})

	var got struct {
		Devices []map[string]any `json:"devices"`
	}
	js, err := json.Marshal(m.Snapshot())
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(js, &got))
	require.Len(t, got.Devices, 1)
	d := got.Devices[0]
	for _, k := range []string{"device", "pool", "live_bytes", "requested_bytes", "live_peak_bytes", "reserved_bytes",
		"reserved_peak_bytes", "cached_bytes", "allocs", "frees", "hits", "misses", "hit_rate", "driver_allocs",
		"driver_frees", "reclaimed_bytes", "soft_limit_bytes", "hard_limit_bytes", "events"} {
		assert.Contains(t, d, k)
	}
	assert.Equal(t, "split", d["pool"])
	assert.Equal(t, float64(dev), d["device"])
	assert.GreaterOrEqual(t, d["live_bytes"], float64(3<<20))
	assert.Equal(t, float64(3<<20), d["requested_bytes"])
	assert.Equal(t, float64(1), d["allocs"])

	ev := d["events"].(map[string]any)
	for _, k := range []string{"grow", "release", "reclaim", "collect", "oom_retry", "oom", "collect_seconds", "collected_bytes"} {
		assert.Contains(t, ev, k)
	}
	assert.GreaterOrEqual(t, ev["grow"], float64(1), "the allocation took memory from the driver")
	assert.Equal(t, float64(1), ev["collect"])
	assert.Equal(t, 0.25, ev["collect_seconds"])
	assert.Equal(t, float64(1<<20), ev["collected_bytes"])
	assert.Equal(t, float64(1), ev["oom_retry"])
}

func TestMetricsReadPoolsOnlyWhenScraped(t *testing.T) {
	calls := 0
	m := observe.NewMetrics(func() []pool.Pool { calls++; return nil })
	defer m.Close()
	pool.Emit(pool.Event{Kind: pool.EventGrow, Device: 0})
	assert.Zero(t, calls, "events count without reading pools")
	js, err := json.Marshal(m.Snapshot())
	require.NoError(t, err)
	assert.Equal(t, 1, calls)
	assert.JSONEq(t, `{"devices":[]}`, string(js))
}

func TestStartTimelineRecordsTheProcessPools(t *testing.T) {
	p, err := gocuda.Pool(0)
	require.NoError(t, err)
	dev, err := gocuda.Device(0)
	require.NoError(t, err)
	s, err := dev.NewStream()
	require.NoError(t, err)
	defer func() { assert.NoError(t, s.Destroy()) }()

	tl, err := gocuda.StartTimeline(observe.TimelineOptions{Interval: time.Millisecond})
	require.NoError(t, err)
	defer tl.Stop()
	bs := alloc(t, p, s, 5<<20)
	require.Eventually(t, func() bool {
		for _, pt := range tl.Points() {
			if pt.Live >= 5<<20 {
				return true
			}
		}
		return false
	}, 5*time.Second, time.Millisecond)
	free(t, p, s, bs)
	tl.Stop()
	charts := tl.Charts()
	require.NotEmpty(t, charts)
	assert.Equal(t, "device 0", charts[0].Title)
	assert.GreaterOrEqual(t, slices.Max(charts[0].Live), uint64(5<<20), "the chart has the allocation's peak")

	_, err = gocuda.StartTimeline(observe.TimelineOptions{Capacity: 1})
	assert.ErrorContains(t, err, "Capacity 1")
}

func TestTimelineAndMetricsSeeThePressureLayersOutOfMemoryLadder(t *testing.T) {
	dev, err := gocuda.Device(0)
	require.NoError(t, err)
	inner, err := pool.New("split", dev, pool.Limits{Hard: 64 << 20})
	require.NoError(t, err)
	p, err := gcpressure.Wrap(inner, gcpressure.Options{})
	require.NoError(t, err)
	s, err := dev.NewStream()
	require.NoError(t, err)
	defer func() {
		assert.NoError(t, p.Close())
		assert.NoError(t, s.Destroy())
	}()

	tl, err := observe.NewTimeline(observe.TimelineOptions{Interval: -1})
	require.NoError(t, err)
	require.NoError(t, tl.Start(p))
	defer tl.Stop()
	m := observe.NewMetrics(func() []pool.Pool { return []pool.Pool{p} })
	defer m.Close()

	// 32 MiB fits the 64 MiB limit alone but not beside 40 MiB live, so
	// the ladder runs (a request beyond the limit is refused without it).
	bs := alloc(t, p, s, 40<<20)
	_, err = p.Alloc(32<<20, s)
	require.ErrorIs(t, err, backend.ErrOutOfMemory, "32 MiB cannot fit beside 40 MiB under a 64 MiB limit")
	free(t, p, s, bs)
	tl.Stop()

	kinds := map[pool.EventKind]int{}
	for _, mk := range tl.Marks() {
		kinds[mk.Kind]++
	}
	assert.Positive(t, kinds[pool.EventOOMRetry], "the ladder's retry is marked: %v", tl.Marks())
	assert.Equal(t, 1, kinds[pool.EventOOM], "and its failure")

	snap := m.Snapshot()
	require.Len(t, snap.Devices, 1)
	f := snap.Devices[0]
	assert.Equal(t, uint64(kinds[pool.EventOOMRetry]), f.Events.OOMRetry)
	assert.Equal(t, uint64(1), f.Events.OOM)
	require.NotNil(t, f.Pressure, "a gcpressure pool has pressure figures")
	assert.Equal(t, uint64(1), f.Pressure.OOMFailures)
	assert.Positive(t, f.Pressure.OOMRetries)
	assert.Equal(t, uint64(64<<20), f.Pressure.LimitBytes)
	assert.Equal(t, gcpressure.PacerOff, f.Pressure.GCPercent, "early collection off: no pacer")
	assert.Zero(t, f.Pressure.PacerTargetBytes)
	assert.Equal(t, uint64(64<<20), f.HardLimitBytes)

	b, err := json.Marshal(snap)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"pressure":{"early_collections":`)
	plain, err := json.Marshal(observe.FiguresOf(inner))
	require.NoError(t, err)
	assert.NotContains(t, string(plain), `"pressure"`, "no pressure layer, no pressure figures")
}

// A device's pinned pool has its own figures and event counts in Metrics,
// apart from the device pool's, and stays off the device's timeline: its
// growth is not the device's reserved memory.
func TestPinnedPoolEventsAreItsOwnNotTheDevices(t *testing.T) {
	p, s := newPool(t, "split")
	md, err := pool.MemoryDevice(p.Device(), pool.PinnedMemory)
	require.NoError(t, err)
	pinned, err := pool.New("simple", md, pool.Limits{})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, pinned.Close()) })
	m := observe.NewMetrics(func() []pool.Pool { return []pool.Pool{p, pinned} })
	defer m.Close()
	tl, err := observe.NewTimeline(observe.TimelineOptions{Interval: -1})
	require.NoError(t, err)
	require.NoError(t, tl.Start(p))

	bs := alloc(t, pinned, s, 1<<20)
	tl.Stop()
	free(t, pinned, s, bs)
	assert.Empty(t, tl.Points(), "the pinned pool's growth is not on the device's timeline")

	snap := m.Snapshot()
	require.Len(t, snap.Devices, 2)
	dev, pin := snap.Devices[0], snap.Devices[1]
	assert.Equal(t, "", dev.Memory)
	assert.Equal(t, "pinned", pin.Memory)
	assert.Equal(t, "simple", pin.Pool)
	assert.Equal(t, uint64(1), pin.Events.Grow, "the pinned pool's growth is its own")
	assert.Zero(t, dev.Events.Grow, "and not the device pool's")
	js, err := json.Marshal(dev)
	require.NoError(t, err)
	assert.NotContains(t, string(js), `"memory"`, "device memory's figures read as before")
}
