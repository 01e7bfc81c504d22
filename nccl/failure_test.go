package nccl_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/host"
	"github.com/gocuda/gocuda/nccl"
)

// abortedSoon is c.Err once it reports the abort: on GPUs a rank hears of
// another's abort in this process on a goroutine (kin.go), a moment later.
func abortedSoon(t *testing.T, c *nccl.Comm) error {
	t.Helper()
	var err error
	require.Eventually(t, func() bool { err = c.Err(); return err != nil }, 10*time.Second, time.Millisecond,
		"rank %d never heard of the abort", c.Rank())
	return err
}

// within fails the test if fn takes longer than d: what these tests
// guard against is a hang.
func within(t *testing.T, d time.Duration, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not return within %v", what, d)
	}
}

// TestNewCommGivesUpWhenThePeerNeverArrives: rank 0 of 2 joins, rank 1
// never does; NewComm returns when its context is done.
func TestNewCommGivesUpWhenThePeerNeverArrives(t *testing.T) {
	// One device is enough on a GPU, where rank 1 of 2 is never started;
	// the host backend gives the two ranks' devices.
	n := 2
	if onGPU() {
		n = 1
	}
	b, devs := devices(t, n)
	id, err := nccl.NewUniqueID(b)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	within(t, 30*time.Second, "NewComm with a peer that never arrives", func() {
		_, err = nccl.NewComm(ctx, devs[0], id, 0, 2)
	})
	require.ErrorIs(t, err, nccl.ErrAborted)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "NewComm")
}

// TestContextAbortsAnOperationWaitingForAPeer: both ranks formed, rank 1
// never joins the collective; cancelling rank 0's context releases its
// stream, and both ranks then report the abort.
func TestContextAbortsAnOperationWaitingForAPeer(t *testing.T) {
	b, devs := devices(t, 2)
	id, err := nccl.NewUniqueID(b)
	require.NoError(t, err)
	ctx0, cancel0 := context.WithCancel(t.Context())
	defer cancel0()
	comms := make([]*nccl.Comm, 2)
	var wg sync.WaitGroup
	for rank, ctx := range []context.Context{ctx0, t.Context()} {
		wg.Go(func() {
			c, err := nccl.NewComm(ctx, devs[rank], id, rank, 2)
			assert.NoError(t, err)
			comms[rank] = c
		})
	}
	wg.Wait()
	require.NotNil(t, comms[0])
	require.NotNil(t, comms[1])
	s := stream(t, devs[0])
	p := buf(t, devs[0], s, make([]byte, 16))
	time.AfterFunc(50*time.Millisecond, cancel0)
	within(t, 10*time.Second, "an all-reduce waiting for a peer, after the context was cancelled", func() {
		// The host queues it and its stream waits; NCCL (2.22 and
		// later) connects to the peer at a collective's first call,
		// so on GPUs the call itself waits, and returns the abort.
		if err := comms[0].AllReduce(p, p, 4, nccl.Float32, nccl.Sum, s); err != nil {
			assert.ErrorIs(t, err, nccl.ErrAborted)
		}
		assert.NoError(t, s.Synchronize())
	})
	for rank, c := range comms {
		err := abortedSoon(t, c)
		require.ErrorIs(t, err, nccl.ErrAborted, "rank %d", rank)
		assert.ErrorIs(t, err, context.Canceled, "rank %d", rank)
		assert.Contains(t, err.Error(), "rank 0's context is done", "rank %d", rank)
	}
	s1 := stream(t, devs[1])
	err = comms[1].AllReduce(0, 0, 0, nccl.Float32, nccl.Sum, s1)
	require.ErrorIs(t, err, nccl.ErrAborted, "later operations are refused")
	assert.NoError(t, comms[0].Destroy(), "Destroy after an abort does nothing")
	assert.NoError(t, comms[1].Abort())
}

// TestRankThatFailsFailsTheOthers: three ranks of four wait in a
// collective; the fourth hits an error and aborts. The others' streams go
// on, and every rank's Err names the rank that failed.
func TestRankThatFailsFailsTheOthers(t *testing.T) {
	n := 4 // on GPUs, the two of the two-GPU machines
	if onGPU() {
		n = 2
	}
	failing := n / 2
	b, devs := devices(t, n)
	id, err := nccl.NewUniqueID(b)
	require.NoError(t, err)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for rank := range n {
		d := devs[rank]
		s := stream(t, d)
		p := buf(t, d, s, make([]byte, 64))
		wg.Go(func() {
			errs[rank] = func() error {
				c, err := nccl.NewComm(t.Context(), d, id, rank, n)
				if err != nil {
					return err
				}
				if rank == failing {
					time.Sleep(20 * time.Millisecond) // the others are waiting by now
					if err := c.Abort(); err != nil {
						return err
					}
					return errTest
				}
				if err := c.AllReduce(p, p, 16, nccl.Int32, nccl.Max, s); err != nil {
					return err
				}
				if err := s.Synchronize(); err != nil {
					return err
				}
				err = c.Err()
				if again := c.AllReduce(p, p, 16, nccl.Int32, nccl.Max, s); again == nil {
					return errors.New("an operation after the failure was accepted")
				}
				return err
			}()
		})
	}
	within(t, 10*time.Second, "ranks waiting for a rank that aborted", wg.Wait)
	for rank, err := range errs {
		if rank == failing {
			assert.ErrorIs(t, err, errTest)
			continue
		}
		require.ErrorIs(t, err, nccl.ErrAborted, "rank %d", rank)
		assert.Contains(t, err.Error(), fmt.Sprintf("rank %d called Abort", failing), "rank %d", rank)
	}
}

// TestDestroyWhileOthersWaitFailsThem: a rank that leaves cannot leave the
// others waiting for it.
func TestDestroyWhileOthersWaitFailsThem(t *testing.T) {
	hostOnly(t, "NCCL's ranks destroy their communicators independently: a collective that a destroyed rank never joined waits until its own communicator's context aborts it")
	r := newRigNoCleanup(t, 2)
	require.NoError(t, r.comms[1].Destroy())
	p := buf(t, r.devs[0], r.streams[0], make([]byte, 8))
	err := r.comms[0].AllReduce(p, p, 2, nccl.Float32, nccl.Sum, r.streams[0])
	if err == nil { // queued before the failure was known: it fails on the stream
		within(t, 10*time.Second, "Synchronize", func() { require.NoError(t, r.streams[0].Synchronize()) })
		err = r.comms[0].Err()
	}
	require.ErrorIs(t, err, nccl.ErrAborted)
	assert.Contains(t, err.Error(), "rank 1 has destroyed its communicator")

	r = newRigNoCleanup(t, 2)
	p = buf(t, r.devs[0], r.streams[0], make([]byte, 8))
	require.NoError(t, r.comms[0].AllReduce(p, p, 2, nccl.Float32, nccl.Sum, r.streams[0]))
	time.Sleep(10 * time.Millisecond) // rank 0 is waiting in the round
	require.NoError(t, r.comms[1].Destroy())
	within(t, 10*time.Second, "Synchronize", func() { require.NoError(t, r.streams[0].Synchronize()) })
	err = r.comms[0].Err()
	require.ErrorIs(t, err, nccl.ErrAborted)
	assert.Contains(t, err.Error(), "rank 1 ")
	assert.Contains(t, err.Error(), "destroyed its communicator")
}

// newRigNoCleanup is newRig for tests that end the communicators
// themselves.
func newRigNoCleanup(t *testing.T, n int) *rig {
	b, devs := devices(t, n)
	comms, err := nccl.NewComms(t.Context(), devs)
	require.NoError(t, err)
	r := &rig{b: b, devs: devs, comms: comms}
	for _, d := range devs {
		r.streams = append(r.streams, stream(t, d))
	}
	return r
}

// TestRanksThatDisagreeFail: a count, type, reduction or root that differs
// between ranks fails the communicator with an error naming both calls,
// rather than moving garbage.
func TestRanksThatDisagreeFail(t *testing.T) {
	hostOnly(t, "NCCL leaves disagreeing ranks undefined")
	for _, tc := range []struct {
		name string
		call func(c *nccl.Comm, rank int, p backend.Ptr, s backend.Stream) error
		want string
	}{
		{"count", func(c *nccl.Comm, rank int, p backend.Ptr, s backend.Stream) error {
			return c.AllReduce(p, p, 4+rank, nccl.Float32, nccl.Sum, s)
		}, "rank 0 called AllReduce of 4 float32 (sum), rank 1 AllReduce of 5 float32 (sum)"},
		{"reduction", func(c *nccl.Comm, rank int, p backend.Ptr, s backend.Stream) error {
			return c.AllReduce(p, p, 4, nccl.Float32, []nccl.Op{nccl.Sum, nccl.Max}[rank], s)
		}, "(max)"},
		{"root", func(c *nccl.Comm, rank int, p backend.Ptr, s backend.Stream) error {
			return c.Broadcast(p, p, 4, nccl.Int32, rank, s)
		}, "to root 1"},
		{"operation", func(c *nccl.Comm, rank int, p backend.Ptr, s backend.Stream) error {
			if rank == 0 {
				return c.AllGather(p, p, 1, nccl.Int32, s)
			}
			return c.AllReduce(p, p, 4, nccl.Int32, nccl.Sum, s)
		}, "rank 0 called AllGather"},
		{"send and recv counts", func(c *nccl.Comm, rank int, p backend.Ptr, s backend.Stream) error {
			if rank == 0 {
				return c.Send(p, 3, nccl.Int32, 1, s)
			}
			return c.Recv(p, 2, nccl.Int32, 0, s)
		}, "Send #0 from rank 0 to rank 1 is 3 int32, and its Recv expects 2 int32"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, 2)
			for rank, c := range r.comms {
				p := buf(t, r.devs[rank], r.streams[rank], make([]byte, 64))
				require.NoError(t, tc.call(c, rank, p, r.streams[rank]))
			}
			for rank, c := range r.comms {
				require.NoError(t, r.streams[rank].Synchronize())
				err := c.Err()
				require.ErrorIs(t, err, backend.ErrInvalidValue, "rank %d", rank)
				assert.Contains(t, err.Error(), tc.want, "rank %d", rank)
			}
		})
	}
}

func TestBadArgumentsAreClearErrors(t *testing.T) {
	r := newRig(t, 1)
	c, d, s := r.comms[0], r.devs[0], r.streams[0]
	p := buf(t, d, s, make([]byte, 64))
	other := host.New(host.Options{Devices: 2})
	d1, _ := other.Device(1)
	s1 := stream(t, d1)
	for _, tc := range []struct {
		name string
		call func() error
		want string
	}{
		{"negative count", func() error { return c.AllReduce(p, p, -1, nccl.Float32, nccl.Sum, s) }, "count -1"},
		{"nil send", func() error { return c.AllReduce(0, p, 4, nccl.Float32, nccl.Sum, s) }, "send buffer is nil, and this rank's AllReduce uses 16 bytes"},
		{"nil recv", func() error { return c.AllGather(p, 0, 4, nccl.Float32, s) }, "recv buffer is nil"},
		{"nil recv on the root", func() error { return c.Reduce(p, 0, 4, nccl.Float32, nccl.Sum, 0, s) }, "recv buffer is nil"},
		{"nil send on the root", func() error { return c.Broadcast(0, p, 4, nccl.Float32, 0, s) }, "send buffer is nil"},
		{"misaligned", func() error { return c.AllReduce(p+2, p, 4, nccl.Float64, nccl.Sum, s) }, "not 8-byte aligned"},
		{"zero data type", func() error { return c.AllReduce(p, p, 4, 0, nccl.Sum, s) }, "data type DataType(0): the types are int8, uint8"},
		{"zero reduction", func() error { return c.AllReduce(p, p, 4, nccl.Int32, 0, s) }, "reduction Op(0)"},
		{"root out of range", func() error { return c.Broadcast(p, p, 4, nccl.Int32, 1, s) }, "root 1: roots are ranks, 0 to 0"},
		{"peer out of range", func() error { return c.Send(p, 4, nccl.Int32, -1, s) }, "peer -1"},
		{"nil stream", func() error { return c.AllReduce(p, p, 4, nccl.Int32, nccl.Sum, nil) }, "nil stream"},
		{"stream of another device", func() error { return c.AllReduce(p, p, 4, nccl.Int32, nccl.Sum, s1) }, ""},
		{"nil communicator", func() error { var z *nccl.Comm; return z.AllReduce(p, p, 4, nccl.Int32, nccl.Sum, s) }, "nil communicator"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			require.ErrorIs(t, err, backend.ErrInvalidValue)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	err := c.AllReduce(p, p, 4, nccl.Int32, nccl.Sum, s1)
	if onGPU() {
		assert.Contains(t, err.Error(), "is not a CUDA stream")
	} else {
		assert.Contains(t, err.Error(), "the stream is a stream of device 1, and the communicator's device is 0")
	}
	r.sync(t) // none of them reached the communicator
}

func TestNewCommArgumentErrors(t *testing.T) {
	hostOnly(t, "the host's table of communicators being formed")
	b, devs := devices(t, 2)
	id, err := nccl.NewUniqueID(b)
	require.NoError(t, err)
	ctx := t.Context()
	for _, tc := range []struct {
		name string
		call func() error
		want string
	}{
		{"rank out of range", func() error { _, err := nccl.NewComm(ctx, devs[0], id, 2, 2); return err }, "rank 2 of 2 ranks"},
		{"no ranks", func() error { _, err := nccl.NewComm(ctx, devs[0], id, 0, 0); return err }, "at least one rank"},
		{"nil device", func() error { _, err := nccl.NewComm(ctx, nil, id, 0, 2); return err }, "nil device"},
		{"nil context", func() error {
			var nilCtx context.Context
			_, err := nccl.NewComm(nilCtx, devs[0], id, 0, 2)
			return err
		}, "nil context"},
		{"not a host id", func() error { _, err := nccl.NewComm(ctx, devs[0], nccl.UniqueID{1, 2, 3}, 0, 1); return err }, "not made by NewUniqueID for the host backend"},
		{"no devices", func() error { _, err := nccl.NewComms(ctx, nil); return err }, "no devices"},
		{"a device twice", func() error { _, err := nccl.NewComms(ctx, []backend.Device{devs[0], devs[1], devs[0]}); return err }, "devs[0] and devs[2]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			require.ErrorIs(t, err, backend.ErrInvalidValue)
			assert.Contains(t, err.Error(), tc.want)
		})
	}

	// Ranks that disagree while they gather: the first rank waits, the
	// others are refused at once.
	ctx1, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	first := make(chan error, 1)
	go func() { _, err := nccl.NewComm(ctx1, devs[0], id, 0, 2); first <- err }()
	time.Sleep(100 * time.Millisecond) // rank 0 has joined and waits
	_, err = nccl.NewComm(ctx, devs[1], id, 1, 3)
	require.ErrorIs(t, err, backend.ErrInvalidValue)
	assert.Contains(t, err.Error(), "3 ranks, and the ranks that joined before said 2")
	_, err = nccl.NewComm(ctx, devs[0], id, 1, 2)
	require.ErrorIs(t, err, backend.ErrInvalidValue)
	assert.Contains(t, err.Error(), "device 0 is rank 0's already")
	_, err = nccl.NewComm(ctx, devs[1], id, 0, 2)
	require.ErrorIs(t, err, backend.ErrInvalidValue)
	assert.Contains(t, err.Error(), "rank 0 joined twice")
	require.ErrorIs(t, <-first, context.DeadlineExceeded)
	_, err = nccl.NewComm(ctx, devs[1], id, 1, 2)
	require.ErrorIs(t, err, backend.ErrInvalidValue, "an id serves once, also after its communicator failed")
	assert.Contains(t, err.Error(), "each communicator needs a new id")
}

func TestGroupErrors(t *testing.T) {
	r := newRig(t, 1)
	c, d, s := r.comms[0], r.devs[0], r.streams[0]
	for _, tc := range []struct {
		name string
		call func() error
		want string
	}{
		{"nil func", func() error { return c.Group(nil) }, "nil func"},
		{"no communicators", func() error { return nccl.Group(nil, func() error { return nil }) }, "no communicators"},
		{"a communicator twice", func() error { return nccl.Group([]*nccl.Comm{c, c}, func() error { return nil }) }, "appears twice"},
		{"nested", func() error { return c.Group(func() error { return c.Group(func() error { return nil }) }) }, "groups do not nest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			require.ErrorIs(t, err, backend.ErrInvalidValue)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	// fn's error comes back, and the work it queued is started.
	p := buf(t, d, s, encode(nccl.Int32, []float64{3}))
	err := c.Group(func() error {
		if err := c.AllReduce(p, p, 1, nccl.Int32, nccl.Sum, s); err != nil {
			return err
		}
		return errTest
	})
	require.ErrorIs(t, err, errTest)
	r.sync(t)
	assert.Equal(t, encode(nccl.Int32, []float64{3}), read(t, d, s, p, 4))

	if !onGPU() {
		s2 := stream(t, d)
		err = c.Group(func() error {
			if err := c.AllReduce(p, p, 1, nccl.Int32, nccl.Sum, s); err != nil {
				return err
			}
			return c.AllReduce(p, p, 1, nccl.Int32, nccl.Sum, s2)
		})
		require.ErrorIs(t, err, backend.ErrNotSupported)
		assert.Contains(t, err.Error(), "one stream per communicator in a group")
		r.sync(t)
	}
}

// TestStreamCheckerSeesCollectives: with the host stream checker strict, a
// collective reading memory another stream is still writing is refused
// like a kernel; the refused call is not counted, so the ranks stay in
// step and the ordered retry runs.
func TestStreamCheckerSeesCollectives(t *testing.T) {
	hostOnly(t, "the host backend's stream checker")
	var log strings.Builder
	b := host.New(host.Options{Devices: 2, StreamCheck: host.StreamCheckStrict, StreamCheckLog: &log})
	devs := make([]backend.Device, 2)
	for i := range devs {
		devs[i], _ = b.Device(i)
	}
	comms, err := nccl.NewComms(t.Context(), devs)
	require.NoError(t, err)
	writer, s0, s1 := stream(t, devs[0]), stream(t, devs[0]), stream(t, devs[1])
	p0 := buf(t, devs[0], writer, make([]byte, 16))
	p1 := buf(t, devs[1], s1, encode(nccl.Float32, []float64{1, 2, 3, 4}))
	require.NoError(t, devs[0].Memset32(p0, 0x3f800000, 4, writer)) // 1.0f on another stream

	err = comms[0].AllReduce(p0, p0, 4, nccl.Float32, nccl.Sum, s0)
	require.ErrorIs(t, err, host.ErrStreamRace)
	assert.Contains(t, err.Error(), "nccl AllReduce float32")

	ev, err := devs[0].NewEvent(false)
	require.NoError(t, err)
	defer ev.Destroy()
	require.NoError(t, ev.Record(writer))
	require.NoError(t, s0.WaitEvent(ev))
	require.NoError(t, comms[0].AllReduce(p0, p0, 4, nccl.Float32, nccl.Sum, s0))
	require.NoError(t, comms[1].AllReduce(p1, p1, 4, nccl.Float32, nccl.Sum, s1))
	require.NoError(t, s0.Synchronize())
	require.NoError(t, s1.Synchronize())
	require.NoError(t, comms[0].Err())
	want := encode(nccl.Float32, []float64{2, 3, 4, 5})
	assert.Equal(t, want, read(t, devs[0], s0, p0, 16))
	assert.Equal(t, want, read(t, devs[1], s1, p1, 16))
	for _, c := range comms {
		require.NoError(t, c.Destroy())
	}
	err = comms[0].Destroy()
	require.ErrorIs(t, err, backend.ErrInvalidValue)
	assert.Contains(t, err.Error(), "destroyed already")
	err = comms[0].AllReduce(p0, p0, 4, nccl.Float32, nccl.Sum, s0)
	assert.Contains(t, err.Error(), "communicator destroyed")
	assert.NoError(t, comms[0].Err(), "a destroyed communicator has no asynchronous error")
}

func TestUniqueIDRoundTripsThroughText(t *testing.T) {
	b, _ := devices(t, 1)
	id, err := nccl.NewUniqueID(b)
	require.NoError(t, err)
	s := id.String()
	assert.Len(t, s, 256)
	back, err := nccl.ParseUniqueID(" " + s + "\n")
	require.NoError(t, err)
	assert.Equal(t, id, back)
	for _, bad := range []string{"", s[:255], s + "00", "zz" + s[2:]} {
		_, err := nccl.ParseUniqueID(bad)
		require.ErrorIs(t, err, backend.ErrInvalidValue, "%q", bad)
		assert.Contains(t, err.Error(), "256 hexadecimal digits")
	}
	_, err = nccl.NewUniqueID(nil)
	require.ErrorIs(t, err, backend.ErrNotSupported)
}
