package nccl_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/host"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/internal/testsupport/testhook"
	"github.com/gocuda/gocuda/nccl"
	"github.com/gocuda/gocuda/pool"
)

// arrayRig is n ranks of cuarray arrays: a device, a pool and a stream
// each, one communicator each made by NewComm, each rank driven by its own
// goroutine (each). On the host backend the stream checker is strict: a
// use of memory that nothing ordered after another stream's work fails
// the operation, and is listed by StreamRaces.
type arrayRig struct {
	hb      *host.Backend // nil on GPUs
	devs    []backend.Device
	pools   []pool.Pool
	streams []*cuarray.Stream
	comms   []*nccl.Comm
}

func newArrayRig(t testing.TB, n int) *arrayRig {
	t.Helper()
	r := &arrayRig{}
	if onGPU() {
		_, r.devs = devices(t, n)
	} else {
		var log bytes.Buffer
		r.hb = host.New(host.Options{Devices: n, TotalMemory: 1 << 30, StreamCheck: host.StreamCheckStrict, StreamCheckLog: &log}).(*host.Backend)
		for i := range n {
			d, err := r.hb.Device(i)
			require.NoError(t, err)
			r.devs = append(r.devs, d)
		}
		t.Cleanup(func() {
			assert.Empty(t, r.hb.StreamRaces(), "the stream checker found races:\n%s", log.String())
		})
	}
	c, err := gocuda.Config()
	require.NoError(t, err)
	for _, d := range r.devs {
		p, err := pool.New(c.Pool, d, gocuda.LimitsFor(c, d))
		require.NoError(t, err)
		s, err := cuarray.NewStreamPool(p)
		require.NoError(t, err)
		r.pools = append(r.pools, p)
		r.streams = append(r.streams, s)
		t.Cleanup(func() { assert.NoError(t, s.Close()) })
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	comms, err := nccl.NewComms(ctx, r.devs)
	require.NoError(t, err)
	r.comms = comms
	t.Cleanup(func() {
		for _, c := range comms {
			assert.NoError(t, c.Destroy())
		}
	})
	return r
}

// each runs fn for every rank, on a goroutine per rank, and returns
// their errors joined.
func (r *arrayRig) each(fn func(rank int) error) error {
	errs := make([]error, len(r.comms))
	var wg sync.WaitGroup
	for i := range r.comms {
		wg.Go(func() {
			if err := fn(i); err != nil {
				errs[i] = fmt.Errorf("rank %d: %w", i, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (r *arrayRig) f32(rank int) cuarray.Ops[float32] { return cuarray.On[float32](r.streams[rank]) }

// rankValues is rank's input: n float32s, different on every rank, exact
// in sums.
func rankValues(rank, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32((rank+1)*100 + i)
	}
	return out
}

func sumValues(ranks, n int) []float32 {
	out := make([]float32, n)
	for r := range ranks {
		for i, v := range rankValues(r, n) {
			out[i] += v
		}
	}
	return out
}

// A collective case: run queues it on one rank and returns the array to
// check and what it must hold (nil: nothing to check on that rank).
type arrayCase struct {
	name string
	run  func(r *arrayRig, rank int) (*cuarray.Array[float32], []float32, error)
}

const arrayN = 6

func arrayCases(n int) []arrayCase {
	root := n - 1
	in := func(r *arrayRig, rank, count int, shape ...int) (*cuarray.Array[float32], error) {
		return r.f32(rank).FromSlice(rankValues(rank, count), shape...)
	}
	var gathered []float32
	for rk := range n {
		gathered = append(gathered, rankValues(rk, arrayN)...)
	}
	return []arrayCase{
		{"AllReduceArray", func(r *arrayRig, rank int) (*cuarray.Array[float32], []float32, error) {
			src, err := in(r, rank, arrayN, 2, 3)
			if err != nil {
				return nil, nil, err
			}
			dst, err := r.f32(rank).Zeros(2, 3)
			if err != nil {
				return nil, nil, err
			}
			return dst, sumValues(n, arrayN), nccl.AllReduceArray(r.comms[rank], r.streams[rank], dst, src, nccl.Sum)
		}},
		{"AllReduceArray in place", func(r *arrayRig, rank int) (*cuarray.Array[float32], []float32, error) {
			x, err := in(r, rank, arrayN)
			if err != nil {
				return nil, nil, err
			}
			return x, sumValues(n, arrayN), nccl.AllReduceArray(r.comms[rank], r.streams[rank], x, x, nccl.Sum)
		}},
		{"AllReduceNew avg", func(r *arrayRig, rank int) (*cuarray.Array[float32], []float32, error) {
			src, err := r.f32(rank).Full(float32(2*(rank+1)), arrayN)
			if err != nil {
				return nil, nil, err
			}
			dst, err := nccl.AllReduceNew(r.comms[rank], r.streams[rank], src, nccl.Avg)
			want := make([]float32, arrayN)
			for i := range want {
				want[i] = float32(n + 1)
			}
			return dst, want, err
		}},
		{"BroadcastArray, src nil off the root", func(r *arrayRig, rank int) (*cuarray.Array[float32], []float32, error) {
			var src *cuarray.Array[float32]
			if rank == root {
				var err error
				if src, err = in(r, rank, arrayN); err != nil {
					return nil, nil, err
				}
			}
			dst, err := r.f32(rank).Zeros(arrayN)
			if err != nil {
				return nil, nil, err
			}
			return dst, rankValues(root, arrayN), nccl.BroadcastArray(r.comms[rank], r.streams[rank], dst, src, root)
		}},
		{"ReduceArray, dst nil off the root", func(r *arrayRig, rank int) (*cuarray.Array[float32], []float32, error) {
			src, err := in(r, rank, arrayN)
			if err != nil {
				return nil, nil, err
			}
			if rank != root {
				return src, rankValues(rank, arrayN), nccl.ReduceArray(r.comms[rank], r.streams[rank], nil, src, nccl.Sum, root)
			}
			dst, err := r.f32(rank).Zeros(arrayN)
			if err != nil {
				return nil, nil, err
			}
			return dst, sumValues(n, arrayN), nccl.ReduceArray(r.comms[rank], r.streams[rank], dst, src, nccl.Sum, root)
		}},
		{"AllGatherArray", func(r *arrayRig, rank int) (*cuarray.Array[float32], []float32, error) {
			src, err := in(r, rank, arrayN)
			if err != nil {
				return nil, nil, err
			}
			dst, err := r.f32(rank).Zeros(n * arrayN)
			if err != nil {
				return nil, nil, err
			}
			return dst, gathered, nccl.AllGatherArray(r.comms[rank], r.streams[rank], dst, src)
		}},
		{"AllGatherArray in place", func(r *arrayRig, rank int) (*cuarray.Array[float32], []float32, error) {
			dst, err := r.f32(rank).Zeros(n * arrayN)
			if err != nil {
				return nil, nil, err
			}
			mine, err := dst.View(rank*arrayN, arrayN)
			if err != nil {
				return nil, nil, err
			}
			src, err := in(r, rank, arrayN)
			if err != nil {
				return nil, nil, err
			}
			if err := r.f32(rank).Copy(mine, src); err != nil {
				return nil, nil, err
			}
			return dst, gathered, nccl.AllGatherArray(r.comms[rank], r.streams[rank], dst, mine)
		}},
		{"AllGatherNew stacks the first dimension", func(r *arrayRig, rank int) (*cuarray.Array[float32], []float32, error) {
			src, err := in(r, rank, arrayN, 3, 2)
			if err != nil {
				return nil, nil, err
			}
			dst, err := nccl.AllGatherNew(r.comms[rank], r.streams[rank], src)
			if err == nil && !assert.ObjectsAreEqual([]int{3 * n, 2}, dst.Shape()) {
				err = fmt.Errorf("AllGatherNew's shape is %v, want [%d 2]", dst.Shape(), 3*n)
			}
			return dst, gathered, err
		}},
		{"ReduceScatterArray", func(r *arrayRig, rank int) (*cuarray.Array[float32], []float32, error) {
			src, err := in(r, rank, n*arrayN)
			if err != nil {
				return nil, nil, err
			}
			dst, err := r.f32(rank).Zeros(arrayN)
			if err != nil {
				return nil, nil, err
			}
			return dst, sumValues(n, n*arrayN)[rank*arrayN : (rank+1)*arrayN], nccl.ReduceScatterArray(r.comms[rank], r.streams[rank], dst, src, nccl.Sum)
		}},
		{"ReduceScatterArray in place", func(r *arrayRig, rank int) (*cuarray.Array[float32], []float32, error) {
			src, err := in(r, rank, n*arrayN)
			if err != nil {
				return nil, nil, err
			}
			mine, err := src.View(rank*arrayN, arrayN)
			if err != nil {
				return nil, nil, err
			}
			return mine, sumValues(n, n*arrayN)[rank*arrayN : (rank+1)*arrayN], nccl.ReduceScatterArray(r.comms[rank], r.streams[rank], mine, src, nccl.Sum)
		}},
		{"ReduceScatterNew splits the first dimension", func(r *arrayRig, rank int) (*cuarray.Array[float32], []float32, error) {
			src, err := in(r, rank, n*arrayN, 2*n, arrayN/2)
			if err != nil {
				return nil, nil, err
			}
			dst, err := nccl.ReduceScatterNew(r.comms[rank], r.streams[rank], src, nccl.Sum)
			if err == nil && !assert.ObjectsAreEqual([]int{2, arrayN / 2}, dst.Shape()) {
				err = fmt.Errorf("ReduceScatterNew's shape is %v, want [2 %d]", dst.Shape(), arrayN/2)
			}
			return dst, sumValues(n, n*arrayN)[rank*arrayN : (rank+1)*arrayN], err
		}},
		{"SendArray and RecvArray around a ring, in a group", func(r *arrayRig, rank int) (*cuarray.Array[float32], []float32, error) {
			c, s := r.comms[rank], r.streams[rank]
			src, err := in(r, rank, arrayN)
			if err != nil {
				return nil, nil, err
			}
			dst, err := r.f32(rank).Zeros(arrayN)
			if err != nil {
				return nil, nil, err
			}
			from := (rank + n - 1) % n
			err = c.Group(func() error {
				if err := nccl.SendArray(c, s, src, (rank+1)%n); err != nil {
					return err
				}
				return nccl.RecvArray(c, s, dst, from)
			})
			return dst, rankValues(from, arrayN), err
		}},
	}
}

func TestArrayCollectivesOn1To4Ranks(t *testing.T) {
	for _, n := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("%d ranks", n), func(t *testing.T) {
			r := newArrayRig(t, n)
			for _, tc := range arrayCases(n) {
				t.Run(tc.name, func(t *testing.T) {
					got := make([][]float32, n)
					want := make([][]float32, n)
					require.NoError(t, r.each(func(rank int) error {
						out, w, err := tc.run(r, rank)
						if err != nil {
							return err
						}
						want[rank] = w
						// ToSlice waits for the collective: the array's last
						// use is on the rank's stream.
						got[rank], err = out.ToSlice()
						return err
					}))
					for rank := range n {
						assert.Equal(t, want[rank], got[rank], "rank %d", rank)
						assert.NoError(t, r.comms[rank].Err())
					}
				})
			}
		})
	}
}

// Other element types: complex64 goes as float32 pairs, int32 reduces as
// int32.
func TestArrayCollectivesTakeEveryElementType(t *testing.T) {
	for _, n := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d ranks", n), func(t *testing.T) {
			r := newArrayRig(t, n)
			got := make([][]complex64, n)
			gotMax := make([][]int32, n)
			require.NoError(t, r.each(func(rank int) error {
				c, s := r.comms[rank], r.streams[rank]
				z, err := cuarray.On[complex64](s).FromSlice([]complex64{complex(float32(rank+1), 1), complex(2, float32(-rank))})
				if err != nil {
					return err
				}
				if err := nccl.AllReduceArray(c, s, z, z, nccl.Sum); err != nil {
					return err
				}
				if got[rank], err = z.ToSlice(); err != nil {
					return err
				}
				v, err := cuarray.On[int32](s).FromSlice([]int32{int32(rank), int32(-rank)})
				if err != nil {
					return err
				}
				m, err := nccl.AllReduceNew(c, s, v, nccl.Max)
				if err != nil {
					return err
				}
				gotMax[rank], err = m.ToSlice()
				return err
			}))
			fn := float32(n)
			for rank := range n {
				assert.Equal(t, []complex64{complex(fn*(fn+1)/2, fn), complex(2*fn, -fn*(fn-1)/2)}, got[rank])
				assert.Equal(t, []int32{int32(n - 1), 0}, gotMax[rank])
			}
		})
	}
}

// The arrays' automatic ordering holds across streams: the input is
// written on another stream after a slow kernel, the collective runs on
// the rank's stream behind a slow kernel of rank 0 (so that with several
// ranks every rank's collective waits for rank 0), and the output is used
// at once on a third stream. Each hand-over is ordered by cuarray alone;
// on the host the strict stream checker fails any that is not.
func TestArrayCollectivesOrderWithOtherStreams(t *testing.T) {
	const slow = 150 * time.Millisecond
	for _, n := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d ranks", n), func(t *testing.T) {
			r := newArrayRig(t, n)
			got := make([][]float32, n)
			require.NoError(t, r.each(func(rank int) error {
				c, s, dev := r.comms[rank], r.streams[rank], r.devs[rank]
				producer, err := cuarray.NewStreamPool(r.pools[rank])
				if err != nil {
					return err
				}
				defer producer.Close()
				consumer, err := cuarray.NewStreamPool(r.pools[rank])
				if err != nil {
					return err
				}
				defer consumer.Close()
				src, err := cuarray.On[float32](producer).Zeros(arrayN)
				if err != nil {
					return err
				}
				// The producer is slow: the fill lands long after the
				// collective is queued.
				if err := testhook.Spin(dev, producer.Backend(), slow); err != nil {
					return err
				}
				if err := cuarray.On[float32](producer).Fill(src, float32(rank+1)); err != nil {
					return err
				}
				if rank == 0 {
					if err := testhook.Spin(dev, s.Backend(), slow); err != nil {
						return err
					}
				}
				dst, err := nccl.AllReduceNew(c, s, src, nccl.Sum)
				if err != nil {
					return err
				}
				// Used at once on the consumer stream: it must wait for
				// the collective on s.
				if _, err := cuarray.On[float32](consumer).Scale(dst, 2, dst); err != nil {
					return err
				}
				got[rank], err = dst.ToSlice()
				return err
			}))
			want := make([]float32, arrayN)
			for i := range want {
				want[i] = 2 * float32(n*(n+1)/2)
			}
			for rank := range n {
				assert.Equal(t, want, got[rank], "rank %d", rank)
			}
		})
	}
}

func TestArrayNewFormsTakeTheirOutputFromTheStreamsPool(t *testing.T) {
	for _, n := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d ranks", n), func(t *testing.T) {
			r := newArrayRig(t, n)
			require.NoError(t, r.each(func(rank int) error {
				c, s := r.comms[rank], r.streams[rank]
				src, err := r.f32(rank).Zeros(3, arrayN)
				if err != nil {
					return err
				}
				before := r.pools[rank].Stats()
				dst, err := nccl.AllGatherNew(c, s, src)
				if err != nil {
					return err
				}
				after := r.pools[rank].Stats()
				if after.Allocs != before.Allocs+1 || after.Requested-before.Requested != uint64(4*dst.Len()) {
					return fmt.Errorf("the rank's pool served %d allocations of %d bytes for a result of %d bytes",
						after.Allocs-before.Allocs, after.Requested-before.Requested, 4*dst.Len())
				}
				_, err = dst.ToSlice()
				return err
			}))
		})
	}
}

// Inside a Group the work is queued at the group's end: an array handed
// to a collective there and dropped at once must live until then, or its
// memory could be reused (and written) on the same stream first.
func TestArraysInAGroupLiveUntilItsEnd(t *testing.T) {
	for _, n := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d ranks", n), func(t *testing.T) {
			r := newArrayRig(t, n)
			got := make([][]float32, n)
			require.NoError(t, r.each(func(rank int) error {
				c, s := r.comms[rank], r.streams[rank]
				f := r.f32(rank)
				var dst *cuarray.Array[float32]
				err := c.Group(func() error {
					if err := sendDropped(c, s, f, (rank+1)%n); err != nil {
						return err
					}
					// The source is unreachable now; were it freed before
					// the group's end, this fill on the same stream could
					// take its memory, and be queued before the Send reads
					// it.
					for range 3 {
						runtime.GC()
					}
					time.Sleep(10 * time.Millisecond) // cleanups run on their own goroutine
					if _, err := f.Full(9, arrayN); err != nil {
						return err
					}
					var err error
					if dst, err = f.Zeros(arrayN); err != nil {
						return err
					}
					return nccl.RecvArray(c, s, dst, (rank+n-1)%n)
				})
				if err != nil {
					return err
				}
				got[rank], err = dst.ToSlice()
				return err
			}))
			for rank := range n {
				assert.Equal(t, filled(arrayN, 7), got[rank], "rank %d", rank)
			}
		})
	}
}

func filled(n int, v float32) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// sendDropped sends an array of sevens to peer and drops it.
//
//go:noinline
func sendDropped(c *nccl.Comm, s *cuarray.Stream, f cuarray.Ops[float32], peer int) error {
	src, err := f.Full(7, arrayN)
	if err != nil {
		return err
	}
	return nccl.SendArray(c, s, src, peer)
}

func TestArrayCollectivesRefuseBadArguments(t *testing.T) {
	r := newArrayRig(t, 2) // two GPUs, or it skips saying so
	c, s := r.comms[0], r.streams[0]
	f := r.f32(0)
	a6 := cuarray.Must(f.Zeros(arrayN))
	b6 := cuarray.Must(f.Zeros(2, 3))
	a12 := cuarray.Must(f.Zeros(2 * arrayN))
	a5 := cuarray.Must(f.Zeros(5))
	other := cuarray.Must(r.f32(1).Zeros(arrayN)) // on rank 1's device
	freed := cuarray.Must(f.Zeros(arrayN))
	freed.UnsafeFree()
	z := cuarray.Must(cuarray.On[complex64](s).Zeros(2))
	ov1 := cuarray.Must(a12.View(0, arrayN))
	ov2 := cuarray.Must(a12.View(2, arrayN))
	cases := []struct {
		name string
		call func() error
		is   error
		msg  string
	}{
		{"shapes differ", func() error { return nccl.AllReduceArray(c, s, a6, b6, nccl.Sum) }, cuarray.ErrShape, "dst has src's shape"},
		{"gather into too small", func() error { return nccl.AllGatherArray(c, s, a6, a6) }, cuarray.ErrShape, "2 × 6 elements"},
		{"scatter from too small", func() error { return nccl.ReduceScatterArray(c, s, a6, a6, nccl.Sum) }, cuarray.ErrShape, "2 × 6 elements"},
		{"scatter a first dimension that does not divide", func() error { _, err := nccl.ReduceScatterNew(c, s, a5, nccl.Sum); return err },
			cuarray.ErrShape, "multiple of 2"},
		{"array of another device", func() error { return nccl.AllReduceArray(c, s, a6, other, nccl.Sum) }, cuarray.ErrDevice, "on device 1"},
		{"stream of another device", func() error { return nccl.AllReduceArray(c, r.streams[1], a6, a6, nccl.Sum) }, cuarray.ErrDevice, "stream is on device 1"},
		{"nil array", func() error { return nccl.SendArray[float32](c, s, nil, 1) }, backend.ErrInvalidValue, "src is a nil array"},
		{"freed array", func() error { return nccl.RecvArray(c, s, freed, 1) }, cuarray.ErrFreed, "dst"},
		{"complex max", func() error { return nccl.AllReduceArray(c, s, z, z, nccl.Max) }, backend.ErrInvalidValue, "only Sum and Avg"},
		{"partial overlap", func() error { return nccl.AllReduceArray(c, s, ov1, ov2, nccl.Sum) }, cuarray.ErrShape, "overlap"},
		{"nil communicator", func() error { return nccl.AllReduceArray(nil, s, a6, a6, nccl.Sum) }, backend.ErrInvalidValue, "nil communicator"},
		{"new form without a stream", func() error { _, err := nccl.AllGatherNew(c, nil, a6); return err }, backend.ErrInvalidValue, "stream's pool"},
		{"root out of range", func() error { return nccl.BroadcastArray(c, s, a6, a6, 2) }, backend.ErrInvalidValue, "root 2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.is)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
	// Nothing was queued: the communicator still works.
	require.NoError(t, r.each(func(rank int) error {
		x := cuarray.Must(r.f32(rank).Ones(arrayN))
		if err := nccl.AllReduceArray(r.comms[rank], r.streams[rank], x, x, nccl.Sum); err != nil {
			return err
		}
		_, err := x.ToSlice()
		return err
	}))
}

func TestRegistration(t *testing.T) {
	r := newArrayRig(t, 1)
	c, s := r.comms[0], r.streams[0]
	a := cuarray.Must(r.f32(0).Zeros(1 << 10))
	reg, err := nccl.RegisterArray(c, s, a)
	require.NoError(t, err)
	assert.Equal(t, uint64(4<<10), reg.Bytes())
	assert.NotZero(t, reg.Ptr())
	// A collective on registered memory works as on any.
	require.NoError(t, nccl.AllReduceArray(c, s, a, a, nccl.Sum))
	_, err = a.ToSlice()
	require.NoError(t, err)
	require.NoError(t, reg.Release())
	require.NoError(t, reg.Release(), "releasing twice does nothing")

	bad := []struct {
		name  string
		p     backend.Ptr
		bytes uint64
	}{{"nil pointer", 0, 8}, {"no bytes", reg.Ptr(), 0}}
	for _, tc := range bad {
		_, err := c.Register(tc.p, tc.bytes)
		assert.ErrorIs(t, err, backend.ErrInvalidValue, tc.name)
		assert.ErrorContains(t, err, "at least one byte", tc.name)
	}
	err = c.Group(func() error {
		_, err := c.Register(reg.Ptr(), 8)
		return err
	})
	assert.ErrorContains(t, err, "inside Group")
	_, err = nccl.RegisterArray[float32](c, s, nil)
	assert.ErrorIs(t, err, backend.ErrInvalidValue)
}

func TestRegistrationEndsWithItsCommunicator(t *testing.T) {
	hostOnly(t, "a second communicator on the rig's device")
	r := newArrayRig(t, 1)
	id, err := nccl.NewUniqueID(r.hb)
	require.NoError(t, err)
	c, err := nccl.NewComm(context.Background(), r.devs[0], id, 0, 1)
	require.NoError(t, err)
	a := cuarray.Must(r.f32(0).Zeros(16))
	reg, err := nccl.RegisterArray(c, r.streams[0], a)
	require.NoError(t, err)
	require.NoError(t, c.Destroy())
	assert.NoError(t, reg.Release(), "the communicator's Destroy ended the registration")
	_, err = nccl.RegisterArray(c, r.streams[0], a)
	assert.ErrorContains(t, err, "destroyed")
}
