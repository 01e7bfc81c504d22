package host

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/gocuda/gocuda/backend"
)

// Stream is an ordered queue of work run by its own goroutine. Work is
// queued without bound, so callers never block on a full queue, and runs
// later, so code that forgets to synchronize reads stale bytes here as it
// would on a GPU. The goroutine lives until Destroy.
type Stream struct {
	dev *Device
	id  uint32

	mu       sync.Mutex
	wake     sync.Cond // the worker waits here for work or Destroy
	idle     sync.Cond // Synchronize waits here for finished work
	queue    []func()
	queued   uint64 // work ever queued; Synchronize waits until finished reaches it
	finished uint64
	closing  bool
	exited   chan struct{}

	// capture is what a capture has recorded so far (BeginCapture), nil
	// when the stream is not capturing; guarded by mu. capturing mirrors
	// capture != nil, so that queuing checks it with one load.
	capture   *Graph
	capturing atomic.Bool

	// ck is the stream's clock in the stream checker, guarded by the
	// checker's mu; nil until the checker first sees the stream.
	ck *streamClock
}

var (
	_ backend.Stream  = (*Stream)(nil)
	_ backend.Pending = (*Stream)(nil)
)

func newStream(d *Device) *Stream {
	s := &Stream{dev: d, id: backend.NewStreamID(), exited: make(chan struct{})}
	s.wake.L = &s.mu
	s.idle.L = &s.mu
	go s.run()
	return s
}

// ID is the stream's process-wide ID, free for reuse once it is destroyed.
func (s *Stream) ID() uint32 { return s.id }

// Device is the device the stream belongs to.
func (s *Stream) Device() backend.Device { return s.dev }

// Enqueue queues fn to run on the stream after the work queued before it.
// It is how host kernels run: fn gets the stream's goroutine to itself, and
// must not wait on later work of the same stream. A panic in fn crashes the
// program, as a panic in any goroutine does.
func (s *Stream) Enqueue(fn func()) error {
	if fn == nil {
		return fmt.Errorf("host: stream %d: Enqueue of nil func: %w", s.id, backend.ErrInvalidValue)
	}
	if err := s.dev.b.fault(FaultLaunch); err != nil {
		return fmt.Errorf("host: stream %d: Enqueue: %w", s.id, err)
	}
	return s.enqueueOp("Enqueue", fn)
}

// enqueueOp queues fn, an operation touching acc. It is the one place the
// stream checker costs anything when it is off: a load and a branch that
// is always taken the same way.
func (s *Stream) enqueueOp(name string, fn func(), acc ...Access) error {
	if s.capturing.Load() {
		if ok, err := s.record(name, acc, fn); ok {
			return err
		}
	}
	if c := s.dev.b.check.Load(); c != nil {
		_, err := s.enqueueChecked(c, opSpec{name: name}, acc, fn)
		return err
	}
	return s.enqueue(fn)
}

// enqueue queues fn unseen by the stream checker.
func (s *Stream) enqueue(fn func()) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return s.destroyed()
	}
	s.queue = append(s.queue, fn)
	s.queued++
	s.wake.Signal()
	return nil
}

func (s *Stream) destroyed() error {
	return fmt.Errorf("host: stream %d: used after Destroy: %w", s.id, backend.ErrInvalidValue)
}

// run is the stream's worker. It takes the whole queue at once so that the
// lock is held once per batch, not once per item.
func (s *Stream) run() {
	defer close(s.exited)
	s.mu.Lock()
	for {
		for len(s.queue) == 0 && !s.closing {
			s.wake.Wait()
		}
		if len(s.queue) == 0 {
			s.mu.Unlock()
			return
		}
		batch := s.queue
		s.queue = nil
		s.mu.Unlock()
		for i, fn := range batch {
			fn()
			batch[i] = nil // let the closure's captures go now, not after the batch
			s.mu.Lock()
			s.finished++
			s.idle.Broadcast()
			s.mu.Unlock()
		}
		s.mu.Lock()
	}
}

// Synchronize waits for the work queued so far; work queued meanwhile by
// other goroutines is not waited for.
func (s *Stream) Synchronize() error {
	if err := s.dev.b.fault(FaultSync); err != nil {
		return fmt.Errorf("host: stream %d: Synchronize: %w", s.id, err)
	}
	if err := s.notCapturing("Synchronize"); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return s.destroyed()
	}
	s.waitLocked()
	return nil
}

// wait is Synchronize without the destroyed check, for Device.Synchronize,
// which may race with Destroy.
func (s *Stream) wait() {
	s.mu.Lock()
	s.waitLocked()
	s.mu.Unlock()
}

func (s *Stream) waitLocked() {
	// The checker learns that the host saw everything queued so far
	// finish: the clock is taken with the target, under s.mu.
	c := s.dev.b.check.Load()
	var clock vclock
	if c != nil {
		clock = c.snapshot(s)
	}
	for target := s.queued; s.finished < target; {
		s.idle.Wait()
	}
	if c != nil {
		c.hostWaited(clock)
	}
}

// Query reports whether all queued work has finished.
func (s *Stream) Query() (bool, error) {
	if err := s.notCapturing("Query"); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false, s.destroyed()
	}
	done := s.finished == s.queued
	if c := s.dev.b.check.Load(); c != nil && done {
		c.hostWaited(c.snapshot(s)) // a Query that says done is a host wait
	}
	return done, nil
}

// Pending reports whether queued work has not finished yet. Unlike
// Query, it tells the stream checker nothing: the host has not waited.
func (s *Stream) Pending() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.closing && s.finished != s.queued
}

// WaitEvent queues a wait for the event's most recent Record as of this
// call; the caller does not block. The event may come from another device
// of the same backend, as cuStreamWaitEvent allows.
func (s *Stream) WaitEvent(e backend.Event) error {
	ev, ok := e.(*Event)
	if !ok || ev == nil {
		return fmt.Errorf("host: stream %d: WaitEvent on %T, not a host event: %w", s.id, e, backend.ErrInvalidValue)
	}
	if ev.dev.b != s.dev.b {
		return fmt.Errorf("host: stream %d: WaitEvent on an event of another host backend: %w", s.id, backend.ErrInvalidValue)
	}
	if err := s.dev.b.fault(FaultWait); err != nil {
		return fmt.Errorf("host: stream %d: WaitEvent: %w", s.id, err)
	}
	if err := s.notCapturing("WaitEvent (a dependency on work outside the capture)"); err != nil {
		return err
	}
	m, err := ev.last()
	if err != nil {
		return err
	}
	c := s.dev.b.check.Load()
	if c != nil && (m == nil || m.owner != c) {
		c = nil // recorded before the checker was on: it orders nothing it knows
	}
	if m == nil || m.isDone() {
		// Nothing to wait for, but a destroyed stream is still an error.
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.closing {
			return s.destroyed()
		}
		if c != nil {
			c.ordered(s, m.clock) // done: later work is ordered after it all the same
		}
		return nil
	}
	if c != nil {
		_, err := s.enqueueChecked(c, opSpec{name: "WaitEvent", after: m.clock}, nil, func() { <-m.done })
		return err
	}
	return s.enqueue(func() { <-m.done })
}

// Destroy waits for the queued work, stops the worker and frees the ID.
func (s *Stream) Destroy() error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return s.destroyed()
	}
	s.closing = true
	if s.capture != nil { // a capture still open is dropped
		s.capture = nil
		s.capturing.Store(false)
		s.dev.captures.Add(-1)
	}
	s.wake.Signal()
	s.mu.Unlock()
	var clock vclock
	c := s.dev.b.check.Load()
	if c != nil {
		clock = c.snapshot(s)
	}
	<-s.exited
	if c != nil {
		c.hostWaited(clock) // Destroy waited for the stream's work
	}
	s.dev.forgetStream(s)
	backend.ReleaseStreamID(s.id)
	return nil
}
