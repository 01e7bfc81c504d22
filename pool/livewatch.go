package pool

import (
	"math"
	"sync/atomic"
)

// LiveWatcher is implemented by pools that cache (split, binned). Their
// reserved bytes stay put while the bytes they hand out grow, served from
// the cache, so a layer that watches only reserved bytes (gcpressure's
// pacer, which must see device bytes in use reach its trigger) learns of
// growth only once the cache has run dry. WatchLive tells it sooner, at the
// cost of one compare on the allocation path, inside the lock the pool
// holds anyway.
type LiveWatcher interface {
	// WatchLive calls fn, once, from the first allocation that brings
	// the live bytes of one of the pool's streams more than its share of
	// room above what they are now: room divided among the streams that
	// hold live bytes, so that their sum grows by about room before fn
	// runs. fn runs on the allocating goroutine after the pool's locks
	// are released; it must be quick, and may call WatchLive. A stream
	// made after the call (or one whose mark fn already passed) fires at
	// its first allocation while the watch is armed. A later call
	// replaces the marks; room 0 disarms them.
	WatchLive(room uint64, fn func())
}

// NoMark is a stream mark never passed.
const NoMark = math.MaxInt64

// LiveMarks is a pool's side of LiveWatcher: whether a watch is armed and
// whom to call. Each stream keeps its own mark (an int64 next to its live
// bytes, guarded by the stream's lock, as its counts are), and passes it
// with Passed; the pool calls Fire once its locks are released.
type LiveMarks struct {
	armed atomic.Bool
	fn    atomic.Pointer[func()]
}

// Passed reports whether live, a stream's live bytes just counted, is past
// its mark, and if so disarms the mark (NoMark) until the next watch. It
// is the hot path's only addition: one compare. Live bytes are compared as
// signed, because a stream's own count may wrap below zero when its blocks
// are freed on other streams (the sum over streams is right).
func Passed(live uint64, mark *int64) bool {
	if int64(live) <= *mark {
		return false
	}
	*mark = NoMark
	return true
}

// Fire calls the watcher's fn if a watch is armed, disarming it: of the
// streams that pass their marks, the first one calls.
func (m *LiveMarks) Fire() {
	if m.armed.CompareAndSwap(true, false) {
		if f := m.fn.Load(); f != nil {
			(*f)()
		}
	}
}

// Watch implements LiveWatcher.WatchLive for a pool whose streams are in
// t: each stream's state is passed to with, which must call f with
// pointers to the stream's live bytes and mark while holding its lock.
// It arms first and sets the marks after, so that no growth between the
// two is missed (a stream passing an old mark meanwhile fires early, which
// costs the watcher one look).
func Watch[T any](m *LiveMarks, t *StreamTable[T], room uint64, fn func(), with func(e *T, f func(live uint64, mark *int64))) {
	if room == 0 || fn == nil {
		m.armed.Store(false)
		return
	}
	var holding uint64
	t.Each(func(e *T) {
		with(e, func(live uint64, _ *int64) {
			if int64(live) > 0 {
				holding++
			}
		})
	})
	share := max(room/max(holding, 1), 1)
	m.fn.Store(&fn)
	m.armed.Store(true)
	t.Each(func(e *T) {
		with(e, func(live uint64, mark *int64) {
			*mark = NoMark
			if at := int64(live) + int64(min(share, math.MaxInt64/2)); at > int64(live) {
				*mark = at
			}
		})
	})
}
