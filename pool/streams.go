package pool

import (
	"fmt"
	"sync"

	"go.uber.org/atomic"

	"github.com/gocuda/gocuda/backend"
)

// Counters are one stream's share of a pool's figures. Each stream's
// counters are written by the goroutines using that stream only, so the
// atomics stay uncontended; Stats sums them.
type Counters struct {
	Live, Requested     atomic.Uint64
	Frees, Hits, Misses atomic.Uint64
}

// OnAlloc counts an allocation of a block of size bytes for req bytes.
func (c *Counters) OnAlloc(size, req uint64, hit bool) {
	c.Live.Add(size)
	c.Requested.Add(req)
	// Allocs is Hits+Misses: one atomic fewer on the hot path.
	if hit {
		c.Hits.Inc()
	} else {
		c.Misses.Inc()
	}
}

// OnFree counts a free of a block of size bytes that was asked for req.
func (c *Counters) OnFree(size, req uint64) {
	c.Live.Sub(size)
	c.Requested.Sub(req)
	c.Frees.Inc()
}

// AddTo adds these counters to st. Live bytes may be counted on one stream
// and freed on another, so per-stream Live can wrap below zero; the sum is
// right because unsigned addition wraps back.
func (c *Counters) AddTo(st *Stats) {
	st.Live += c.Live.Load()
	st.Requested += c.Requested.Load()
	// Load each once, so that Allocs == Hits+Misses holds in the sum even
	// while other goroutines keep counting.
	hits, misses := c.Hits.Load(), c.Misses.Load()
	st.Allocs += hits + misses
	st.Frees += c.Frees.Load()
	st.Hits += hits
	st.Misses += misses
}

// StreamTable maps stream IDs to per-stream state of type T without a
// global lock on lookup: the table is a slice indexed by ID, read through
// an atomic pointer, and copied only when a new stream ID appears.
type StreamTable[T any] struct {
	mu    sync.Mutex
	slots atomic.Pointer[[]*T]
	make  func() *T
}

// NewStreamTable makes a table whose entries are created by mk on first
// use of a stream ID.
func NewStreamTable[T any](mk func() *T) *StreamTable[T] {
	t := &StreamTable[T]{make: mk}
	empty := make([]*T, 0)
	t.slots.Store(&empty)
	return t
}

// Get returns the state for stream s (nil stream: ID 0), creating it if
// needed. The fast path is one atomic load and an index.
func (t *StreamTable[T]) Get(s backend.Stream) *T {
	var id uint32
	if s != nil {
		id = s.ID()
	}
	if sl := *t.slots.Load(); int(id) < len(sl) && sl[id] != nil {
		return sl[id]
	}
	return t.grow(id)
}

// Lookup returns the state for stream s if one was made, else nil; it
// never makes one.
func (t *StreamTable[T]) Lookup(s backend.Stream) *T {
	var id uint32
	if s != nil {
		id = s.ID()
	}
	if sl := *t.slots.Load(); int(id) < len(sl) {
		return sl[id]
	}
	return nil
}

func (t *StreamTable[T]) grow(id uint32) *T {
	t.mu.Lock()
	defer t.mu.Unlock()
	old := *t.slots.Load()
	if int(id) < len(old) && old[id] != nil {
		return old[id]
	}
	n := len(old)
	if int(id) >= n {
		n = int(id) + 1 + n/2
	}
	sl := make([]*T, n)
	copy(sl, old)
	sl[id] = t.make()
	t.slots.Store(&sl)
	return sl[id]
}

// Each calls f for every stream state made so far.
func (t *StreamTable[T]) Each(f func(*T)) {
	for _, e := range *t.slots.Load() {
		if e != nil {
			f(e)
		}
	}
}

// Order makes later work on to wait for the work queued on from so far,
// without blocking the host. With either stream nil there is nothing to
// order on the device and Order does nothing: a caller handing a block to
// "no stream" must synchronize from itself. It is how a block freed on one stream is
// handed safely to another. Events are recycled per device because creating
// one is a driver call.
func Order(from, to backend.Stream) error {
	if from == nil || to == nil || from == to || from.ID() == to.ID() {
		return nil
	}
	if backend.Capturing(from) || backend.Capturing(to) {
		// An event across a capture's boundary would break the capture
		// (or pull to into it): the caller takes memory elsewhere.
		return fmt.Errorf("pool: ordering stream %d after stream %d: %w", to.ID(), from.ID(), backend.ErrCapturing)
	}
	ev, err := backend.NewEvent(from.Device())
	if err != nil {
		return err
	}
	if err := backend.OrderAfter(to, from, ev); err != nil {
		return err
	}
	backend.RecycleEvent(from.Device(), ev)
	return nil
}
