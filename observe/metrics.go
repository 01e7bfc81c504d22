package observe

import (
	"slices"
	"sync"

	"github.com/gocuda/gocuda/gcpressure"
	"github.com/gocuda/gocuda/pool"
)

// Figures are one pool's figures as metrics publish them: its Stats, and
// counts of the pool events seen on its device for its kind of memory.
type Figures struct {
	Device int    `json:"device"`
	Pool   string `json:"pool"`
	// Memory is "unified" or "pinned" for a pool of that memory
	// (pool.MemoryOf), "" for device memory.
	Memory string `json:"memory,omitempty"`

	LiveBytes         uint64  `json:"live_bytes"`
	RequestedBytes    uint64  `json:"requested_bytes"`
	LivePeakBytes     uint64  `json:"live_peak_bytes"`
	ReservedBytes     uint64  `json:"reserved_bytes"`
	ReservedPeakBytes uint64  `json:"reserved_peak_bytes"`
	CachedBytes       uint64  `json:"cached_bytes"`
	Allocs            uint64  `json:"allocs"`
	Frees             uint64  `json:"frees"`
	Hits              uint64  `json:"hits"`
	Misses            uint64  `json:"misses"`
	HitRate           float64 `json:"hit_rate"`
	DriverAllocs      uint64  `json:"driver_allocs"`
	DriverFrees       uint64  `json:"driver_frees"`
	ReclaimedBytes    uint64  `json:"reclaimed_bytes"`
	SoftLimitBytes    uint64  `json:"soft_limit_bytes"`
	HardLimitBytes    uint64  `json:"hard_limit_bytes"`

	Events EventCounts `json:"events"`
	// Pressure is the pressure layer's figures, when the pool is wrapped
	// by gcpressure (the root package's pools are).
	Pressure *PressureFigures `json:"pressure,omitempty"`
}

// PressureFigures are gcpressure.Stats as metrics publish them: durations
// in seconds, sizes in bytes.
type PressureFigures struct {
	EarlyCollections    int     `json:"early_collections"`
	ImminentCollections int     `json:"imminent_collections"`
	OOMCollections      int     `json:"oom_collections"`
	EarlySeconds        float64 `json:"early_seconds"`
	ImminentSeconds     float64 `json:"imminent_seconds"`
	OOMSeconds          float64 `json:"oom_seconds"`
	// CollectShare is collection time over run time; EarlyShare the
	// early collections' part, which the budget bounds.
	CollectShare      float64 `json:"collect_share"`
	EarlyShare        float64 `json:"early_share"`
	WaitedSeconds     float64 `json:"waited_seconds"`
	FreedBytes        uint64  `json:"freed_bytes"`
	OOMRetries        uint64  `json:"oom_retries"`
	OOMFailures       uint64  `json:"oom_failures"`
	LimitBytes        uint64  `json:"limit_bytes"`
	RunSeconds        float64 `json:"run_seconds"`
	ReservedPeakBytes uint64  `json:"reserved_peak_bytes"`
	// The pacer (GOCUDA_GC_PERCENT): its setting (-1 for off), target,
	// collections, their time, what they freed and what the pool gave back
	// to the driver after them, and the live bytes collections left.
	GCPercent           int     `json:"gc_percent"`
	PacerTargetBytes    uint64  `json:"pacer_target_bytes"`
	PacerCollections    int     `json:"pacer_collections"`
	PacerSeconds        float64 `json:"pacer_seconds"`
	PacerFreedBytes     uint64  `json:"pacer_freed_bytes"`
	PacerReclaimedBytes uint64  `json:"pacer_reclaimed_bytes"`
	LiveAfterGCBytes    uint64  `json:"live_after_gc_bytes"`
	PeakLiveAfterGC     uint64  `json:"peak_live_after_gc_bytes"`
}

func pressureOf(p pool.Pool) *PressureFigures {
	w, ok := gcpressure.For(p)
	if !ok {
		return nil
	}
	st := w.PressureStats()
	return &PressureFigures{
		EarlyCollections: st.EarlyCollections, ImminentCollections: st.ImminentCollections, OOMCollections: st.OOMCollections,
		EarlySeconds: st.EarlyTime.Seconds(), ImminentSeconds: st.ImminentTime.Seconds(), OOMSeconds: st.OOMTime.Seconds(),
		CollectShare: st.Share(), EarlyShare: st.EarlyShare(), WaitedSeconds: st.Waited.Seconds(),
		FreedBytes: st.Freed, OOMRetries: st.OOMRetries, OOMFailures: st.OOMFailures,
		LimitBytes: st.Limit, RunSeconds: st.RunTime.Seconds(), ReservedPeakBytes: st.PeakReserved,
		GCPercent: st.GCPercent, PacerTargetBytes: st.PacerTarget, PacerCollections: st.PacerCollections,
		PacerSeconds: st.PacerTime.Seconds(), PacerFreedBytes: st.PacerFreed, PacerReclaimedBytes: st.PacerReclaimed,
		LiveAfterGCBytes: st.LiveAfterGC, PeakLiveAfterGC: st.PeakLiveAfterGC,
	}
}

// EventCounts count a device's pool events (see pool.EventKind): the
// pools' growth and reclaims, and the pressure layer's collections and
// out-of-memory retries, whose only record this is.
type EventCounts struct {
	Grow     uint64 `json:"grow"`
	Release  uint64 `json:"release"`
	Reclaim  uint64 `json:"reclaim"`
	Collect  uint64 `json:"collect"`
	OOMRetry uint64 `json:"oom_retry"`
	OOM      uint64 `json:"oom"`
	// CollectSeconds is the time collections took, in all;
	// CollectedBytes what they freed.
	CollectSeconds float64 `json:"collect_seconds"`
	CollectedBytes uint64  `json:"collected_bytes"`
}

func (c *EventCounts) add(e pool.Event) {
	switch e.Kind {
	case pool.EventGrow:
		c.Grow++
	case pool.EventRelease:
		c.Release++
	case pool.EventReclaim:
		c.Reclaim++
	case pool.EventCollect:
		c.Collect++
		c.CollectSeconds += e.Dur.Seconds()
		c.CollectedBytes += e.Bytes
	case pool.EventOOMRetry:
		c.OOMRetry++
	case pool.EventOOM:
		c.OOM++
	}
}

// Snapshot is what Metrics publish: every device pool's figures, in
// device order.
type Snapshot struct {
	Devices []Figures `json:"devices"`
}

// Metrics gathers the figures of a set of pools, for any exporter
// (observe/expvarmetrics publishes them in expvar). It counts pool events
// from NewMetrics on (a subscriber that costs a few nanoseconds on the
// pools' slow paths and nothing on a cached allocation) and reads the
// pools' Stats only when Snapshot is called, so between scrapes the pools
// pay nothing.
type Metrics struct {
	list        func() []pool.Pool
	unsubscribe func()

	mu     sync.Mutex
	counts map[countKey]*EventCounts
}

// countKey is whose events a count is: a device's pool of one kind of
// memory.
type countKey struct {
	device int
	memory pool.Memory
}

// NewMetrics returns Metrics over the pools list returns when read; list
// is called on every Snapshot, so pools made later are included. Close
// stops the counting.
func NewMetrics(list func() []pool.Pool) *Metrics {
	m := &Metrics{list: list, counts: map[countKey]*EventCounts{}}
	m.unsubscribe = pool.Subscribe(m.count)
	return m
}

func (m *Metrics) count(e pool.Event) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := countKey{e.Device, e.Memory}
	c := m.counts[k]
	if c == nil {
		c = &EventCounts{}
		m.counts[k] = c
	}
	c.add(e)
}

// Close stops counting events; Snapshot still reads the pools.
func (m *Metrics) Close() { m.unsubscribe() }

// Snapshot reads every pool's figures now.
func (m *Metrics) Snapshot() Snapshot {
	pools := m.list()
	s := Snapshot{Devices: make([]Figures, 0, len(pools))}
	for _, p := range pools {
		// Stats before the lock: it sums the pool's per-stream state and
		// events should not wait for it.
		f := FiguresOf(p)
		m.mu.Lock()
		if c := m.counts[countKey{f.Device, pool.MemoryOf(p)}]; c != nil {
			f.Events = *c
		}
		m.mu.Unlock()
		s.Devices = append(s.Devices, f)
	}
	slices.SortStableFunc(s.Devices, func(a, b Figures) int { return a.Device - b.Device })
	return s
}

// FiguresOf reads p's Stats, and its pressure layer's when it has one,
// into Figures (Events left zero).
func FiguresOf(p pool.Pool) Figures {
	st := p.Stats()
	var memory string
	if m := pool.MemoryOf(p); m != pool.DeviceMemory {
		memory = m.String()
	}
	return Figures{
		Device: p.Device().Ordinal(), Pool: p.Name(), Memory: memory,
		LiveBytes: st.Live, RequestedBytes: st.Requested, LivePeakBytes: st.LivePeak,
		ReservedBytes: st.Reserved, ReservedPeakBytes: st.ReservedPeak, CachedBytes: st.Cached(),
		Allocs: st.Allocs, Frees: st.Frees, Hits: st.Hits, Misses: st.Misses, HitRate: st.HitRate(),
		DriverAllocs: st.DriverAllocs, DriverFrees: st.DriverFrees, ReclaimedBytes: st.Reclaimed,
		SoftLimitBytes: st.SoftLimit, HardLimitBytes: st.HardLimit,
		Pressure: pressureOf(p),
	}
}
