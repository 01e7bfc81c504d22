package gcpressure

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/pool"
	"github.com/gocuda/gocuda/pool/pooltest"
)

// wrapSplit is a split pool under the pressure layer, closed when the test
// ends, and the split pool itself.
func wrapSplit(t *testing.T) (*Pool, pool.Pool) {
	inner, err := pool.New("split", pooltest.Device(t), pool.Limits{})
	require.NoError(t, err)
	w, err := Wrap(inner, Options{Early: true})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, w.Close()) })
	return w, inner
}

// drainingStream is a stream whose queued work lasts until a given time:
// Pending says so, as cuStreamQuery would.
type drainingStream struct {
	backend.Stream
	until time.Time
}

func (s *drainingStream) Pending() bool { return time.Now().Before(s.until) }

// A wait for a dear collection that outlasts the stream's queued work
// marks the pacer dry (no more waits for dear collections); one that the
// collection ends first does not; a cheap collection clears it.
func TestWaitForADearCollectionThatRunsTheStreamDry(t *testing.T) {
	w, _ := wrapSplit(t)
	base := pooltest.NewStream(t, w.Device())

	for _, tc := range []struct {
		name    string
		lastDur time.Duration
		queued  time.Duration // how long the stream stays busy
		ends    time.Duration // when the collection ends
		dry     bool
	}{
		{"dear, the collection outlasts the queue", 2 * PacerWaitBurst, 2 * time.Millisecond, time.Hour, true},
		{"dear, the queue outlasts the collection", 2 * PacerWaitBurst, time.Hour, 2 * time.Millisecond, false},
		{"cheap, the collection outlasts the queue", time.Millisecond, 2 * time.Millisecond, 20 * time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w.mu.Lock()
			w.lastDur, w.dry, w.waitCredit = tc.lastDur, false, PacerWaitBurst
			w.mu.Unlock()
			c := &collection{done: make(chan struct{})}
			timer := time.AfterFunc(tc.ends, func() { close(c.done) })
			defer timer.Stop()
			start := time.Now()
			w.waitPacer(c, &drainingStream{Stream: base, until: start.Add(tc.queued)})
			waited := time.Since(start)
			w.mu.Lock()
			dry := w.dry
			w.mu.Unlock()
			assert.Equal(t, tc.dry, dry)
			// The wait never outlasts both the queue and the collection
			// by more than the idle allowance (none for a dear one).
			assert.Less(t, waited, min(tc.queued, tc.ends)+PacerWaitBurst+time.Second)
		})
	}

	// A cheap collection ending clears the mark (a dear one, on a loaded
	// machine, leaves it).
	w.mu.Lock()
	w.dry = true
	w.mu.Unlock()
	CollectForTest(w)
	w.mu.Lock()
	defer w.mu.Unlock()
	assert.Equal(t, w.lastDur > PacerWaitBurst, w.dry, "a collection of %v: only a dear one leaves the pacer dry", w.lastDur)
}

// A cycle that starts past its trigger (the program allocated more while
// the last collection ran than the new target leaves room for) looks at
// the next allocation, not a pacerStep later; one that starts below it
// waits for the trigger.
func TestCycleStartingPastItsTriggerLooksAtOnce(t *testing.T) {
	w, inner := wrapSplit(t)
	s := pooltest.NewStream(t, w.Device())
	b, err := inner.Alloc(64*mib, s) // in use, past the pacer's sight
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, inner.Free(b, s)) })
	for _, tc := range []struct {
		name      string
		liveAfter uint64
		due       bool
	}{
		{"in use past the new trigger", 16 * mib, true},   // target 32 MiB (the floor)
		{"in use below the new trigger", 64 * mib, false}, // target 128 MiB
	} {
		t.Run(tc.name, func(t *testing.T) {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.due.Store(false)
			w.setTarget(tc.liveAfter)
			w.rearmPacer()
			assert.Equal(t, tc.due, w.due.Load())
			assert.Equal(t, tc.due, w.watch.Load() == 0, "the next Alloc looks")
		})
	}
}
