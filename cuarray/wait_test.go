package cuarray_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/internal/testsupport/testhook"
	"github.com/gocuda/gocuda/pool"
)

func TestSynchronizeContext(t *testing.T) {
	p := freshPool(t)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		name   string
		spin   time.Duration // work queued on the stream first
		ctx    func() (context.Context, context.CancelFunc)
		want   error
		atMost time.Duration
	}{
		{"work done first", 20 * time.Millisecond, func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), time.Minute)
		}, nil, time.Minute},
		{"deadline first", 300 * time.Millisecond, func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 20*time.Millisecond)
		}, context.DeadlineExceeded, 250 * time.Millisecond},
		{"cancelled before", 300 * time.Millisecond, func() (context.Context, context.CancelFunc) {
			return cancelled, func() {}
		}, context.Canceled, 250 * time.Millisecond},
		{"background waits as Synchronize", 20 * time.Millisecond, func() (context.Context, context.CancelFunc) {
			return context.Background(), func() {}
		}, nil, time.Minute},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newStream(t, p)
			defer s.Close()
			// Warm the stream up first: the host backend runs a stream's
			// work on a goroutine of its own, started on first use.
			require.NoError(t, testhook.Spin(p.Device(), s.Backend(), time.Millisecond))
			require.NoError(t, s.Synchronize())
			require.NoError(t, testhook.Spin(p.Device(), s.Backend(), c.spin))
			ctx, cancel := c.ctx()
			defer cancel()
			start := time.Now()
			err := s.SynchronizeContext(ctx)
			took := time.Since(start)
			if c.want == nil {
				require.NoError(t, err)
				done, qerr := s.Backend().Query()
				require.NoError(t, qerr)
				assert.True(t, done, "the stream's work is done once it returns nil")
			} else {
				require.ErrorIs(t, err, c.want)
				assert.Equal(t, ctx.Err(), err, "it returns ctx.Err()")
			}
			assert.Less(t, took, c.atMost)
			if c.want != nil {
				// Given up while the work runs: no goroutine waits for it.
				// (Counted by stack, not by runtime.NumGoroutine, which
				// other tests' streams retiring in the background move.)
				assert.Zero(t, goroutinesIn("cuarray.(*Stream).SynchronizeContext"), "a goroutine waits for the work given up on")
			}
			// The work it gave up on still runs to its end; then nothing is
			// left of the wait.
			require.NoError(t, s.Synchronize())
			assert.Zero(t, goroutinesIn("cuarray.(*Stream).SynchronizeContext"), "no goroutine left waiting")
		})
	}

	closed := newStream(t, p)
	require.NoError(t, closed.Close())
	ctx, cancelT := context.WithTimeout(context.Background(), time.Minute)
	defer cancelT()
	assert.ErrorIs(t, closed.SynchronizeContext(ctx), cuarray.ErrClosed)
}

func TestOutOfMemoryIsReexported(t *testing.T) {
	dev, err := gocuda.Device(0)
	require.NoError(t, err)
	p, err := pool.New("simple", dev, pool.Limits{Hard: 1 << 20})
	require.NoError(t, err)
	s := newStream(t, p)
	defer s.Close()
	_, err = cuarray.On[float32](s).New(1 << 20) // 4 MiB under a 1 MiB hard limit
	require.Error(t, err)
	assert.ErrorIs(t, err, cuarray.ErrOutOfMemory)
	var oom *cuarray.OutOfMemoryError
	require.True(t, errors.As(err, &oom))
	assert.Equal(t, uint64(1<<20), oom.Limit)
	assert.Contains(t, err.Error(), "float32[1048576]", "the message names the array")
}

// goroutinesIn counts the goroutines with a function whose name contains
// fn on their stacks, this one's aside.
func goroutinesIn(fn string) int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for i, g := range strings.Split(string(buf), "\n\n") {
		if i > 0 && strings.Contains(g, fn) { // the first is the caller's
			n++
		}
	}
	return n
}
