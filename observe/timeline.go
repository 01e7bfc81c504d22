package observe

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/gocuda/gocuda/pool"
)

// Point is one device's live and reserved bytes at a time.
type Point struct {
	Time     time.Time
	Device   int
	Live     uint64
	Reserved uint64
}

// Mark is an event drawn as a vertical line on a timeline: a collection,
// an out-of-memory retry or an out-of-memory failure.
type Mark struct {
	Time   time.Time
	Device int
	Kind   pool.EventKind
	// Bytes, Dur and Note are the event's (see pool.Event).
	Bytes uint64
	Dur   time.Duration
	Note  string
}

// DefaultInterval is the sampler's period when TimelineOptions.Interval is
// 0: often enough to see a training step's rise and fall, rarely enough
// that reading every pool's Stats costs nothing measurable.
const DefaultInterval = 10 * time.Millisecond

// DefaultMarkCapacity is the marks a Timeline keeps when asked for 0.
const DefaultMarkCapacity = 1024

// TimelineOptions configure a Timeline. The zero value is ready to use.
type TimelineOptions struct {
	// Capacity is the most points kept per device (see Series for what
	// happens when they are all used); 0 means DefaultCapacity.
	Capacity int
	// MarkCapacity is the most marks kept, over all devices; 0 means
	// DefaultMarkCapacity. When full, the oldest mark is dropped (and
	// counted in MarksDropped): unlike bytes, marks cannot be merged
	// without losing what they say, and the eager collector's time budget
	// keeps them rare, so 1024 of them span a long run.
	MarkCapacity int
	// Interval is the sampler's period. Pools' live bytes change on every
	// allocation, but events come only on slow paths and carry reserved
	// bytes only, so the sampler is what reads live bytes (each tick, and
	// just after each event). 0 means DefaultInterval; a negative Interval
	// turns the sampler off, leaving reserved bytes and marks from events
	// and whatever Record is given.
	Interval time.Duration
}

// Timeline is a bounded record of live and reserved bytes over time, per
// device, with collections, out-of-memory retries and failures marked. It
// is fed by pool events (pool.Subscribe) and by a sampler that reads the
// pools' Stats every Interval; Record and Observe feed it by hand.
//
// Memory is fixed: Capacity points per device (downsampled when full, see
// Series) and MarkCapacity marks. All methods are safe for concurrent use.
type Timeline struct {
	opt TimelineOptions

	mu           sync.Mutex
	start        time.Time // x = 0; the first Start or record
	devices      map[int]*Series
	last         map[int]Point     // for events from devices no pool was given for
	byDevice     map[int]pool.Pool // the pools given so far, for the event filter
	marks        []Mark            // ring: marks[markHead] is the oldest when full
	markHead     int
	marksDropped uint64
	state        int // idle, running, stopped

	unsubscribe func()
	wake        chan struct{} // events ask the sampler for a read
	stopSampler chan struct{}
	samplerDone chan struct{}
}

const (
	idle = iota
	running
	stopped
)

// NewTimeline returns a Timeline that records nothing until Start (or
// Record, Observe).
func NewTimeline(opt TimelineOptions) (*Timeline, error) {
	if opt.Capacity == 0 {
		opt.Capacity = DefaultCapacity
	}
	if _, err := NewSeries(opt.Capacity); err != nil {
		return nil, fmt.Errorf("observe: TimelineOptions.Capacity %d: need at least %d points a device, or 0 for the default %d", opt.Capacity, minCapacity, DefaultCapacity)
	}
	if opt.MarkCapacity == 0 {
		opt.MarkCapacity = DefaultMarkCapacity
	}
	if opt.MarkCapacity < 0 {
		return nil, fmt.Errorf("observe: TimelineOptions.MarkCapacity %d: need a positive number of marks, or 0 for the default %d", opt.MarkCapacity, DefaultMarkCapacity)
	}
	if opt.Interval == 0 {
		opt.Interval = DefaultInterval
	}
	return &Timeline{
		opt:      opt,
		devices:  map[int]*Series{},
		last:     map[int]Point{},
		byDevice: map[int]pool.Pool{},
		marks:    make([]Mark, 0, opt.MarkCapacity),
	}, nil
}

// Start records the given pools: every pool event from now on (only those
// of the pools' devices, when pools are given; every device's otherwise),
// and, unless the sampler is off, each pool's live and reserved bytes every
// Interval. Stop ends it. A Timeline starts once.
func (t *Timeline) Start(pools ...pool.Pool) error {
	fixed := slices.Clone(pools)
	return t.StartFunc(func() []pool.Pool { return fixed }, len(pools) > 0)
}

// StartFunc is Start for a set of pools that changes: list is called at
// start and on every sampler tick (never from an event), so pools made
// later, such as a device's pool made on first use, are sampled from the
// next tick on. onlyListed keeps events of devices list has not returned
// a pool for out of the record.
func (t *Timeline) StartFunc(list func() []pool.Pool, onlyListed bool) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch t.state {
	case running:
		return errors.New("observe: the timeline is already started")
	case stopped:
		return errors.New("observe: the timeline was stopped; make a new one with NewTimeline")
	}
	t.state = running
	if t.start.IsZero() {
		t.start = time.Now()
	}
	t.setPoolsLocked(list())
	t.unsubscribe = pool.Subscribe(func(e pool.Event) {
		// A timeline draws device memory, a line a device; a device's
		// unified and pinned pools are not on it.
		if e.Memory != pool.DeviceMemory || onlyListed && !t.knows(e.Device) {
			return
		}
		t.Observe(e)
	})
	if t.opt.Interval > 0 {
		t.wake = make(chan struct{}, 1)
		t.stopSampler = make(chan struct{})
		t.samplerDone = make(chan struct{})
		go t.sample(list, t.opt.Interval, t.wake, t.stopSampler, t.samplerDone)
	}
	return nil
}

func (t *Timeline) knows(device int) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.byDevice[device] != nil
}

func (t *Timeline) setPoolsLocked(pools []pool.Pool) {
	for _, p := range pools {
		t.byDevice[p.Device().Ordinal()] = p
	}
}

// sample reads every pool's figures each tick and after events. Stats is
// read outside the Timeline's lock: it sums the pool's per-stream state,
// and events arriving meanwhile should not wait for it.
func (t *Timeline) sample(list func() []pool.Pool, every time.Duration, wake <-chan struct{}, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		final := false
		select {
		case <-stop:
			// One last reading, so the record ends with the state at
			// Stop, even if an event's wake-up was still pending.
			final = true
		case <-tick.C:
		case <-wake:
		}
		pools := list()
		t.mu.Lock()
		t.setPoolsLocked(pools)
		t.mu.Unlock()
		for _, p := range pools {
			st := p.Stats()
			t.Record(Point{Time: time.Now(), Device: p.Device().Ordinal(), Live: st.Live, Reserved: st.Reserved})
		}
		if final {
			return
		}
	}
}

// Stop ends recording: no more events are taken, and the sampler has
// taken a last reading and returned when Stop does. What was recorded stays readable. Stop on a
// Timeline never started, or already stopped, does nothing.
func (t *Timeline) Stop() {
	t.mu.Lock()
	if t.state != running {
		t.state = stopped
		t.mu.Unlock()
		return
	}
	t.state = stopped
	unsubscribe, stop, done := t.unsubscribe, t.stopSampler, t.samplerDone
	t.mu.Unlock()
	// Outside the lock: the sampler may be waiting for it.
	unsubscribe()
	if stop != nil {
		close(stop)
		<-done
	}
}

// Record adds a point. Points should come in time order for each device;
// the sampler and events do.
func (t *Timeline) Record(p Point) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.recordLocked(p)
}

func (t *Timeline) recordLocked(p Point) {
	if t.start.IsZero() {
		t.start = p.Time
	}
	s := t.devices[p.Device]
	if s == nil {
		// The capacity was checked by NewTimeline.
		s, _ = NewSeries(t.opt.Capacity)
		t.devices[p.Device] = s
	}
	// An event's time is read when it is emitted and a sample's before
	// its Stats: either may arrive after a later one. Keeping x from going
	// back keeps the lines drawable as steps.
	if last, ok := t.last[p.Device]; ok && p.Time.Before(last.Time) {
		p.Time = last.Time
	}
	s.Add(int64(p.Time.Sub(t.start)), p.Live, p.Reserved)
	t.last[p.Device] = p
}

// Observe records a pool event: a point (reserved bytes from the event,
// live bytes as last sampled) and, for collections, out-of-memory retries
// and failures, a mark. Start calls it for every event; when the sampler
// runs, an event also wakes it, so that the live bytes after the event are
// read at once rather than at the next tick.
//
// Observe never reads a pool's Stats: events come from inside the pools'
// slow paths, some of which hold the very lock that Stats takes.
func (t *Timeline) Observe(e pool.Event) {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	t.mu.Lock()
	last := t.last[e.Device]
	reserved := e.Reserved
	if fromAbove(e.Kind) && reserved == 0 {
		// Collect and OOM events come from the pressure layer, above the
		// pool, without its Source's count of reserved bytes.
		reserved = last.Reserved
	}
	t.recordLocked(Point{Time: e.Time, Device: e.Device, Live: last.Live, Reserved: reserved})
	if fromAbove(e.Kind) {
		t.addMarkLocked(Mark{Time: e.Time, Device: e.Device, Kind: e.Kind, Bytes: e.Bytes, Dur: e.Dur, Note: e.Note})
	}
	wake := t.wake
	t.mu.Unlock()
	if wake != nil {
		select {
		case wake <- struct{}{}:
		default: // a wake-up is already pending; one read covers both
		}
	}
}

func (t *Timeline) addMarkLocked(m Mark) {
	if len(t.marks) < cap(t.marks) {
		t.marks = append(t.marks, m)
		return
	}
	t.marks[t.markHead] = m
	t.markHead = (t.markHead + 1) % len(t.marks)
	t.marksDropped++
}

// Points returns every device's points in time order (device order
// between points of the same time). After downsampling a point stands for
// several (see Series) and carries the first one's time.
func (t *Timeline) Points() []Point {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []Point
	for _, d := range t.deviceOrderLocked() {
		for _, s := range t.devices[d].Samples() {
			out = append(out, Point{Time: t.start.Add(time.Duration(s.X)), Device: d, Live: s.Live, Reserved: s.Reserved})
		}
	}
	slices.SortStableFunc(out, func(a, b Point) int { return a.Time.Compare(b.Time) })
	return out
}

// Marks returns the marks kept, oldest first.
func (t *Timeline) Marks() []Mark {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Mark, 0, len(t.marks))
	out = append(out, t.marks[t.markHead:]...)
	return append(out, t.marks[:t.markHead]...)
}

// MarksDropped counts the marks dropped to stay within MarkCapacity.
func (t *Timeline) MarksDropped() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.marksDropped
}

// StartTime returns the time x = 0 of the plot: when Start was called, or the
// first point's time if points were recorded by hand first.
func (t *Timeline) StartTime() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.start
}

func (t *Timeline) deviceOrderLocked() []int {
	ds := make([]int, 0, len(t.devices))
	for d := range t.devices {
		ds = append(ds, d)
	}
	slices.Sort(ds)
	return ds
}

// Charts returns the timeline as one Chart per device, x in seconds since
// StartTime, for observe/timelinesvg to draw.
func (t *Timeline) Charts() []Chart {
	marks := t.Marks()
	t.mu.Lock()
	defer t.mu.Unlock()
	devs := t.deviceOrderLocked()
	charts := make([]Chart, 0, len(devs))
	for _, d := range devs {
		s := t.devices[d]
		c := Chart{Title: fmt.Sprintf("device %d", d), XLabel: "time (s)"}
		if s.Stride() > 1 {
			c.Title += fmt.Sprintf(" (each point the maximum of %d samples)", s.Stride())
		}
		for _, p := range s.Samples() {
			c.X = append(c.X, float64(p.X)/1e9)
			c.Live = append(c.Live, p.Live)
			c.Reserved = append(c.Reserved, p.Reserved)
		}
		for _, m := range marks {
			if m.Device == d {
				c.Marks = append(c.Marks, ChartMark{X: m.Time.Sub(t.start).Seconds(), Kind: m.Kind})
			}
		}
		charts = append(charts, c)
	}
	return charts
}

// fromAbove reports whether events of kind k come from the pressure layer
// (and are marked on a timeline) rather than from a pool's Source.
func fromAbove(k pool.EventKind) bool {
	return k == pool.EventCollect || k == pool.EventOOMRetry || k == pool.EventOOM
}
