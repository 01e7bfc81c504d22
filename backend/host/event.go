package host

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gocuda/gocuda/backend"
)

// ErrNotReady is returned by Elapsed when either event's recorded work has
// not finished yet (CUDA_ERROR_NOT_READY on a GPU).
var ErrNotReady = errors.New("host: event not ready")

// Event marks a point in a stream. Each Record makes a new marker; the
// event answers for the newest one, while waits already queued keep the
// marker they saw, as on CUDA.
type Event struct {
	dev    *Device
	timing bool

	mu        sync.Mutex
	cur       *marker // newest Record; nil until the first
	destroyed bool
}

var _ backend.Event = (*Event)(nil)

// marker is one Record of an event: done closes when the stream reaches it.
type marker struct {
	done chan struct{}
	at   time.Time // set before done closes, for timing events

	// owner and clock are the stream checker that saw the Record and the
	// recording stream's clock then; set before the marker is published
	// as the event's newest, nil when the checker was off.
	owner *checker
	clock vclock
}

// waited tells the stream checker that the host saw m's work finish.
func (m *marker) waited(d *Device) {
	if c := d.b.check.Load(); c != nil && c == m.owner {
		c.hostWaited(m.clock)
	}
}

func (m *marker) isDone() bool {
	select {
	case <-m.done:
		return true
	default:
		return false
	}
}

// Record queues a marker on s, which must belong to the event's device (as
// cuEventRecord requires the event's context).
func (e *Event) Record(s backend.Stream) error {
	hs, err := e.dev.stream(s)
	if err != nil {
		return err
	}
	if err := e.dev.b.fault(FaultRecord); err != nil {
		return e.dev.faulted(err, "Event.Record on stream %d", hs.id)
	}
	if err := hs.notCapturing("Event.Record (gocuda captures one stream: no events inside)"); err != nil {
		return err
	}
	m := &marker{done: make(chan struct{})}
	timing := e.timing
	// Holding mu across the enqueue makes cur the marker queued last when
	// goroutines record the same event concurrently.
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.destroyed {
		return errEventDestroyed
	}
	fn := func() {
		if timing {
			m.at = time.Now()
		}
		close(m.done)
	}
	if c := e.dev.b.check.Load(); c != nil {
		m.owner = c
		m.clock, err = hs.enqueueChecked(c, opSpec{name: "Event.Record"}, nil, fn)
	} else {
		err = hs.enqueue(fn)
	}
	if err != nil {
		return err
	}
	e.cur = m
	return nil
}

var errEventDestroyed = fmt.Errorf("host: event used after Destroy: %w", backend.ErrInvalidValue)

// last returns the newest marker, nil if the event was never recorded.
func (e *Event) last() (*marker, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.destroyed {
		return nil, errEventDestroyed
	}
	return e.cur, nil
}

// Query reports whether the newest Record's work is done; true if the event
// was never recorded.
func (e *Event) Query() (bool, error) {
	m, err := e.last()
	if err != nil || m == nil {
		return err == nil, err
	}
	done := m.isDone()
	if done {
		m.waited(e.dev) // a Query that says done is a host wait
	}
	return done, nil
}

// Synchronize blocks until the newest Record's work is done.
func (e *Event) Synchronize() error {
	if err := e.dev.b.fault(FaultSync); err != nil {
		return e.dev.faulted(err, "Event.Synchronize")
	}
	m, err := e.last()
	if err != nil || m == nil {
		return err
	}
	<-m.done
	m.waited(e.dev)
	return nil
}

// Elapsed is the time from start's completion to this event's. Both must be
// timing events whose newest Records have finished.
func (e *Event) Elapsed(start backend.Event) (time.Duration, error) {
	st, ok := start.(*Event)
	if !ok || st == nil {
		return 0, fmt.Errorf("host: Elapsed from %T, not a host event: %w", start, backend.ErrInvalidValue)
	}
	if !e.timing || !st.timing {
		return 0, fmt.Errorf("host: Elapsed needs two timing events: %w", backend.ErrInvalidValue)
	}
	from, err := st.last()
	if err != nil {
		return 0, err
	}
	to, err := e.last()
	if err != nil {
		return 0, err
	}
	if from == nil || to == nil {
		return 0, fmt.Errorf("host: Elapsed on an event never recorded: %w", backend.ErrInvalidValue)
	}
	if !from.isDone() || !to.isDone() {
		return 0, ErrNotReady
	}
	return to.at.Sub(from.at), nil
}

// Destroy makes later use of the event an error. Waits already queued on
// streams still complete.
func (e *Event) Destroy() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.destroyed {
		return errEventDestroyed
	}
	e.destroyed = true
	e.cur = nil
	return nil
}
