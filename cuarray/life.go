package cuarray

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/pool"
)

// ErrClosed: an operation on a stream after its Close.
var ErrClosed = errors.New("stream closed")

// life is one backend stream and its end. Every cuarray Stream on the
// backend stream (the sibling kinds, each handle lent by BorrowStream)
// shares it, and so does every buffer last used on it: a buffer points to
// the life, not to a Stream, so that the Stream the program holds can be
// collected while arrays last used on it live on.
//
// After the end (Close, or the collection of the last handle) the backend
// stream takes no more work: what buffers still need of it, ordering
// after its work, they take from tail, an event recorded on it at the end.
// Once its work is done the pools give back what they cached for it and
// the backend stream is destroyed (retire), without the host waiting.
type life struct {
	bs  backend.Stream
	dev backend.Device
	// permanent lives are the default and upload streams: never closed,
	// so used without the lock.
	permanent bool
	// mu is read-held while work is queued on bs (by an operation on the
	// stream, or by a buffer ordering another stream after it) and
	// write-held by end, so that no work reaches bs after its end.
	mu     sync.RWMutex
	closed atomic.Bool
	// tail is recorded on bs at the end, nil where recording failed and
	// the host waited for bs instead; immutable once closed is set.
	tail backend.Event
	// pools are those that may cache memory for bs, which retire asks to
	// give it back (note): copied on write, so that the check that a pool
	// is listed already is one load and a short scan. Kept per life, not
	// per device, so that a pool the program closes and drops is let go
	// with the streams it served.
	pools atomic.Pointer[[]pool.Pool]
	// capture is the capture in progress on bs (graph.go), nil when none.
	capture atomic.Pointer[capture]
}

// note records that p may cache memory for l's stream: p serves
// allocations on it (the stream's own pool, and its unified and pinned
// siblings'), or a buffer of p moved to it (orderOn), to be freed there
// or to take scratch from p there (SumCols). A permanent life never
// retires, so it keeps no list.
func (l *life) note(p pool.Pool) {
	if l.permanent {
		return
	}
	for {
		cur := l.pools.Load()
		var ps []pool.Pool
		if cur != nil {
			if slices.Contains(*cur, p) {
				return
			}
			ps = *cur
		}
		next := append(slices.Clip(ps), p)
		if l.pools.CompareAndSwap(cur, &next) {
			return
		}
	}
}

// newLife makes a backend stream on dev and its life.
func newLife(dev backend.Device) (*life, error) {
	bs, err := dev.NewStream()
	if err != nil {
		return nil, err
	}
	made.Add(1)
	return &life{bs: bs, dev: dev}, nil
}

// made counts the backend streams cuarray made and has not destroyed, for
// tests that bound them.
var made atomic.Int64

// acquire read-locks l for queuing work on bs; it fails once l has ended.
// release undoes it.
func (l *life) acquire() bool {
	if l.permanent {
		return true
	}
	l.mu.RLock()
	if l.closed.Load() {
		l.mu.RUnlock()
		return false
	}
	return true
}

func (l *life) release() {
	if !l.permanent {
		l.mu.RUnlock()
	}
}

// orderAfter makes later work on waiter (a live stream the caller holds)
// wait for all the work queued on l so far, using ev (recorded on l's
// stream while it lives) or l's tail once it has ended.
func (l *life) orderAfter(waiter backend.Stream, ev backend.Event) error {
	if l.acquire() {
		err := backend.OrderAfter(waiter, l.bs, ev)
		l.release()
		return err
	}
	if l.tail == nil {
		return nil // the host waited for the stream at its end
	}
	return waiter.WaitEvent(l.tail)
}

// end ends l: no work reaches its stream afterwards, and retire runs in
// the background. It reports whether this call ended it (false if it had
// ended already).
func (l *life) end() (bool, error) {
	l.mu.Lock()
	if l.closed.Load() {
		l.mu.Unlock()
		return false, nil
	}
	var err error
	ev, rerr := backend.NewEvent(l.dev)
	if rerr == nil {
		if rerr = ev.Record(l.bs); rerr != nil {
			backend.RecycleEvent(l.dev, ev)
		}
	}
	if rerr == nil {
		l.tail = ev
		// The event outlives the stream for as long as buffers last used
		// on it may need to wait on it: until l itself is collected.
		runtime.AddCleanup(l, func(t tailEvent) { backend.RecycleEvent(t.dev, t.ev) }, tailEvent{l.dev, ev})
	} else if serr := l.bs.Synchronize(); serr != nil {
		// No event, and the stream cannot be waited for: nothing later
		// can be ordered after its work but through the device.
		err = errors.Join(rerr, serr, l.dev.Synchronize())
	}
	l.closed.Store(true)
	l.mu.Unlock()
	retiring.add(1)
	go l.retire()
	return true, err
}

// retire waits for the ended stream's work, has every pool that may cache
// memory for the stream (note) give it back (handing what live blocks pin
// to the device's default stream), and destroys the stream.
func (l *life) retire() {
	defer retiring.add(-1)
	if l.tail == nil || l.tail.Synchronize() != nil {
		if l.bs.Synchronize() != nil {
			_ = l.dev.Synchronize()
		}
	}
	if heir, err := defaultLife(l.dev); err == nil {
		if ps := l.pools.Swap(nil); ps != nil {
			for _, p := range *ps {
				_, _ = p.RetireStream(l.bs, heir.bs)
			}
		}
	}
	_ = l.bs.Destroy()
	made.Add(-1)
}

// retiring counts retirements under way, for tests that wait for them.
// Not a WaitGroup: cleanups start retirements while a test waits.
var retiring = func() *counter { c := &counter{}; c.zero.L = &c.mu; return c }()

type counter struct {
	mu   sync.Mutex
	n    int
	zero sync.Cond
}

func (c *counter) add(d int) {
	c.mu.Lock()
	c.n += d
	if c.n == 0 {
		c.zero.Broadcast()
	}
	c.mu.Unlock()
}

// wait returns once no retirement is under way.
func (c *counter) wait() {
	c.mu.Lock()
	for c.n > 0 {
		c.zero.Wait()
	}
	c.mu.Unlock()
}

// tailEvent is a tail and its device, for recycling it (the cleanup's
// argument must not reach the life).
type tailEvent struct {
	dev backend.Device
	ev  backend.Event
}

// closedError is the error of an operation on a closed stream.
func closedError(op string, s *Stream) error {
	return fmt.Errorf("cuarray: %s: stream %d of device %d was closed: %w", op, s.bs.ID(), s.dev.Ordinal(), ErrClosed)
}

// live runs fn on a stream ordered after all of l's work: l's own while
// it lives (read-held meanwhile), else the device's default stream after a
// wait for l's tail. It returns the life of the stream fn ran on.
func (l *life) live(fn func(bs backend.Stream) error) (*life, error) {
	return l.run(fn, false)
}

// freeOn is live for giving a block back: once l has ended, the host
// waits for l's tail instead of the default stream (almost always reached
// already: the stream ended earlier), so that the default stream, which
// inherits the block, stays idle and the pool may give the ended stream's
// memory back at once (split's inherited segments).
func (l *life) freeOn(fn func(bs backend.Stream) error) error {
	_, err := l.run(fn, true)
	return err
}

func (l *life) run(fn func(bs backend.Stream) error, hostWait bool) (*life, error) {
	if l.acquire() {
		defer l.release()
		return l, fn(l.bs)
	}
	heir, err := defaultLife(l.dev)
	if err != nil {
		return nil, err
	}
	if l.tail != nil {
		// A tail already reached needs no wait.
		if done, qerr := l.tail.Query(); qerr != nil || !done {
			if !hostWait || l.tail.Synchronize() != nil {
				if err := heir.bs.WaitEvent(l.tail); err != nil {
					return nil, err
				}
			}
		}
	}
	return heir, fn(heir.bs)
}
