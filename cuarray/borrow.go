package cuarray

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/pool"
)

// MaxIdleStreams bounds the streams each device's set keeps for
// BorrowStream while nobody borrows them (PyTorch's stream pool has 32
// per device too). A stream given back to a full set is closed.
const MaxIdleStreams = 32

// BorrowStream lends a stream of device ordinal, whose arrays come from
// the device's pool (gocuda.Pool), for a short-lived goroutine such as a
// request handler: Close gives it back to the device's set for the next
// goroutine, with the memory its pool caches for it, instead of
// destroying it. A borrowed stream is the borrower's alone until Close.
// A stream the program drops without Close goes back when the collector
// finds it.
//
//	s, err := cuarray.BorrowStream(0)
//	if err != nil { ... }
//	defer s.Close()
//	f := cuarray.On[float32](s)
//
// Streams are made as needed (as many as goroutines borrow at once) and
// at most MaxIdleStreams per device are kept between borrowings. A
// long-lived worker should make its own stream with NewStream instead.
func BorrowStream(device int) (*Stream, error) {
	p, err := gocuda.Pool(device)
	if err != nil {
		return nil, fmt.Errorf("cuarray: BorrowStream(%d): %w", device, err)
	}
	return BorrowStreamPool(p)
}

// BorrowStreamPool is BorrowStream for streams whose arrays come from p.
// The set of p's idle streams, and p with it, is kept for the rest of the
// process (pools tell nobody when they close): for a pool the program
// closes, make its streams with NewStreamPool and Close them instead.
func BorrowStreamPool(p pool.Pool) (*Stream, error) {
	if p == nil {
		return nil, fmt.Errorf("cuarray: BorrowStreamPool: nil pool: %w", backend.ErrInvalidValue)
	}
	v, ok := sets.Load(p)
	if !ok {
		v, _ = sets.LoadOrStore(p, &streamSet{home: &home{dev: p.Device(), pool: p}})
	}
	return v.(*streamSet).get()
}

// sets holds each pool's set of idle streams.
var sets sync.Map // pool.Pool → *streamSet

// streamSet is the idle streams of one pool, for BorrowStream.
type streamSet struct {
	home *home
	mu   sync.Mutex
	idle []*life
}

// lease is one borrowing of a stream; it is given back once, by Close or
// by the cleanup of a handle dropped without Close.
type lease struct {
	set  *streamSet
	l    *life
	back atomic.Bool
}

func (le *lease) giveBack() {
	if le.back.CompareAndSwap(false, true) {
		le.set.put(le.l)
	}
}

// get lends an idle stream, or a new one.
func (t *streamSet) get() (*Stream, error) {
	t.mu.Lock()
	var l *life
	if n := len(t.idle); n > 0 {
		l = t.idle[n-1]
		t.idle[n-1] = nil
		t.idle = t.idle[:n-1]
	}
	t.mu.Unlock()
	if l == nil {
		var err error
		if l, err = newLife(t.home.dev); err != nil {
			return nil, fmt.Errorf("cuarray: BorrowStream: device %d: %w", t.home.dev.Ordinal(), err)
		}
		l.note(t.home.pool)
	}
	le := &lease{set: t, l: l}
	s := &Stream{home: t.home, bs: l.bs, life: l, lent: le}
	runtime.AddCleanup(s, (*lease).giveBack, le)
	return s, nil
}

// put takes back a lent stream; beyond MaxIdleStreams it is closed.
func (t *streamSet) put(l *life) {
	t.mu.Lock()
	if len(t.idle) < MaxIdleStreams {
		t.idle = append(t.idle, l)
		t.mu.Unlock()
		return
	}
	t.mu.Unlock()
	_, _ = l.end()
}
