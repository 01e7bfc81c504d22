package pool

import (
	"sync"
	"sync/atomic"
	"time"
)

// EventKind says what happened to a device's memory.
type EventKind uint8

// The kinds of Event. Pools emit Grow, Release and Reclaim (through their
// Source); the pressure layer (gcpressure) emits Collect, OOMRetry and OOM.
const (
	// EventGrow: memory was taken from the driver (Bytes of it).
	EventGrow EventKind = iota + 1
	// EventRelease: memory was given back to the driver.
	EventRelease
	// EventReclaim: Reclaim or the soft limit gave Bytes of cache back.
	EventReclaim
	// EventCollect: the collector was run to free unreachable arrays; Dur
	// is how long the collection (and waiting for its cleanups) took,
	// Bytes what it freed, Note why it ran ("pacer", "early",
	// "imminent", "oom").
	EventCollect
	// EventOOMRetry: an allocation of Bytes failed and is being retried
	// after reclaiming and collecting.
	EventOOMRetry
	// EventOOM: an allocation of Bytes failed for good.
	EventOOM
)

var kindNames = [...]string{EventGrow: "grow", EventRelease: "release", EventReclaim: "reclaim",
	EventCollect: "collect", EventOOMRetry: "oom-retry", EventOOM: "oom"}

func (k EventKind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "unknown"
}

// Event is one change to a device's memory, for timelines, logs and
// metrics (see Subscribe).
type Event struct {
	Kind   EventKind
	Device int
	// Memory is the kind of memory of the pool the event is about
	// (MemoryOf): a device's unified and pinned pools emit too.
	Memory Memory
	Time   time.Time
	// Bytes is the amount concerned (see the kinds).
	Bytes uint64
	// Reserved is the device's reserved bytes after the event, as its
	// Source counts them (0 when the emitter has no Source).
	Reserved uint64
	// Dur is how long the event took, for EventCollect.
	Dur  time.Duration
	Note string
}

// subscribers is copied on write: Emit reads it with one atomic load and
// no lock, so the pools' slow paths pay almost nothing when nobody listens.
var subscribers atomic.Pointer[[]*subscriber]

var subscribeMu sync.Mutex

type subscriber struct{ f func(Event) }

// Subscribe calls f for every Event from now on, on the goroutine that
// caused it, until the returned cancel is called. f must be quick and must
// not call into a pool at all, Stats included: a strategy may emit while it
// holds a lock of its own (split does, growing a stream's segment), so a
// pool call from f can deadlock. Record what f needs and read the pool
// later, from another goroutine, as observe's sampler does. Events are
// emitted on slow paths only (driver calls, reclaim, collections), never on
// a cached allocation.
func Subscribe(f func(Event)) (cancel func()) {
	sub := &subscriber{f: f}
	subscribeMu.Lock()
	defer subscribeMu.Unlock()
	var next []*subscriber
	if cur := subscribers.Load(); cur != nil {
		next = append(next, *cur...)
	}
	next = append(next, sub)
	subscribers.Store(&next)
	return func() {
		subscribeMu.Lock()
		defer subscribeMu.Unlock()
		cur := subscribers.Load()
		if cur == nil {
			return
		}
		var rest []*subscriber
		for _, s := range *cur {
			if s != sub {
				rest = append(rest, s)
			}
		}
		if len(rest) == 0 {
			subscribers.Store(nil)
			return
		}
		subscribers.Store(&rest)
	}
}

// Observed reports whether anyone subscribed, so emitters can skip
// building an Event (and reading the clock) when nobody listens.
func Observed() bool { return subscribers.Load() != nil }

// Emit hands e to every subscriber. A zero Time is set to now.
func Emit(e Event) {
	subs := subscribers.Load()
	if subs == nil {
		return
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	for _, s := range *subs {
		s.f(e)
	}
}

// emit is Source's shorthand.
func (s *Source) emit(k EventKind, n uint64) {
	if !Observed() {
		return
	}
	Emit(Event{Kind: k, Device: s.dev.Ordinal(), Memory: MemoryOfDevice(s.dev), Bytes: n, Reserved: s.reserved.Load()})
}
