package nccl_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/nccl"
)

var (
	allTypes = []nccl.DataType{nccl.Int8, nccl.Uint8, nccl.Int32, nccl.Uint32, nccl.Int64, nccl.Uint64,
		nccl.Float16, nccl.Float32, nccl.Float64, nccl.BFloat16}
	allOps = []nccl.Op{nccl.Sum, nccl.Prod, nccl.Max, nccl.Min, nccl.Avg}
)

type collCase struct {
	kind    string
	dt      nccl.DataType
	red     nccl.Op
	inPlace bool
	count   int
}

func (c collCase) String() string {
	s := fmt.Sprintf("%s/%v", c.kind, c.dt)
	if c.red != 0 {
		s += "/" + c.red.String()
	}
	if c.inPlace {
		s += "/in place"
	}
	return s + fmt.Sprintf("/count %d", c.count)
}

// collCases is every reduction with every type and reduction, in and out
// of place; the data movers with every type; and empty buffers.
func collCases() []collCase {
	var cs []collCase
	for _, dt := range allTypes {
		for _, inPlace := range []bool{false, true} {
			for _, kind := range []string{"AllReduce", "Reduce", "ReduceScatter"} {
				for _, red := range allOps {
					cs = append(cs, collCase{kind: kind, dt: dt, red: red, inPlace: inPlace, count: 7})
				}
			}
			for _, kind := range []string{"Broadcast", "AllGather"} {
				cs = append(cs, collCase{kind: kind, dt: dt, inPlace: inPlace, count: 7})
			}
		}
	}
	for _, kind := range []string{"AllReduce", "Reduce", "ReduceScatter", "Broadcast", "AllGather"} {
		cs = append(cs, collCase{kind: kind, dt: nccl.Float32, red: nccl.Sum, count: 0})
	}
	return cs
}

func TestCollectivesMatchNCCLSemantics(t *testing.T) {
	for _, n := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("%d ranks", n), func(t *testing.T) {
			r := newRig(t, n)
			for _, tc := range collCases() {
				t.Run(tc.String(), func(t *testing.T) { r.run(t, tc) })
			}
		})
	}
}

const sentinel = 0x5a

func sentinelBytes(n int) []byte { return bytes.Repeat([]byte{sentinel}, n) }

// run does tc on every rank, the ranks driven from this goroutine in one
// group, and checks every rank's output.
func (r *rig) run(t *testing.T, tc collCase) {
	n := len(r.comms)
	root := n - 1 // not rank 0 where there are several
	esz := tc.dt.Size()
	nb := tc.count * esz
	inputs := make([][]float64, n)
	type bufs struct {
		send, recv backend.Ptr
		out        backend.Ptr // where to read the result
		outBytes   int
	}
	b := make([]bufs, n)
	for i := range n {
		d, s := r.devs[i], r.streams[i]
		var in []float64
		if tc.kind == "ReduceScatter" {
			in = values(tc.dt, i, tc.count*n)
		} else {
			in = values(tc.dt, i, tc.count)
		}
		inputs[i] = in
		switch tc.kind {
		case "AllGather":
			if tc.inPlace {
				all := sentinelBytes(nb * n)
				copy(all[i*nb:], encode(tc.dt, in))
				recv := buf(t, d, s, all)
				b[i] = bufs{send: recv + backend.Ptr(i*nb), recv: recv}
			} else {
				b[i] = bufs{send: buf(t, d, s, encode(tc.dt, in)), recv: buf(t, d, s, sentinelBytes(nb*n))}
			}
			b[i].out, b[i].outBytes = b[i].recv, nb*n
		case "ReduceScatter":
			send := buf(t, d, s, encode(tc.dt, in))
			if tc.inPlace {
				b[i] = bufs{send: send, recv: send + backend.Ptr(i*nb)}
			} else {
				b[i] = bufs{send: send, recv: buf(t, d, s, sentinelBytes(nb))}
			}
			b[i].out, b[i].outBytes = b[i].recv, nb
		case "Broadcast":
			switch {
			case tc.inPlace && i == root:
				p := buf(t, d, s, encode(tc.dt, in))
				b[i] = bufs{send: p, recv: p}
			case i == root:
				b[i] = bufs{send: buf(t, d, s, encode(tc.dt, in)), recv: buf(t, d, s, sentinelBytes(nb))}
			default: // send is read on the root only: none here
				b[i] = bufs{recv: buf(t, d, s, sentinelBytes(nb))}
			}
			b[i].out, b[i].outBytes = b[i].recv, nb
		default: // AllReduce, Reduce
			send := buf(t, d, s, encode(tc.dt, in))
			if tc.inPlace {
				b[i] = bufs{send: send, recv: send}
			} else {
				b[i] = bufs{send: send, recv: buf(t, d, s, sentinelBytes(nb))}
			}
			b[i].out, b[i].outBytes = b[i].recv, nb
		}
	}
	err := nccl.Group(r.comms, func() error {
		for i, c := range r.comms {
			s, bb := r.streams[i], b[i]
			var err error
			switch tc.kind {
			case "AllReduce":
				err = c.AllReduce(bb.send, bb.recv, tc.count, tc.dt, tc.red, s)
			case "Reduce":
				err = c.Reduce(bb.send, bb.recv, tc.count, tc.dt, tc.red, root, s)
			case "ReduceScatter":
				err = c.ReduceScatter(bb.send, bb.recv, tc.count, tc.dt, tc.red, s)
			case "Broadcast":
				err = c.Broadcast(bb.send, bb.recv, tc.count, tc.dt, root, s)
			case "AllGather":
				err = c.AllGather(bb.send, bb.recv, tc.count, tc.dt, s)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	require.NoError(t, err)
	r.sync(t)
	for i := range n {
		var want []byte
		switch tc.kind {
		case "AllReduce":
			want = encode(tc.dt, reference(tc.dt, tc.red, inputs))
		case "Reduce":
			switch {
			case i == root:
				want = encode(tc.dt, reference(tc.dt, tc.red, inputs))
			case tc.inPlace: // recv is send, which is only read
				want = encode(tc.dt, inputs[i])
			default: // recv is written on the root only
				want = sentinelBytes(nb)
			}
		case "ReduceScatter":
			block := make([][]float64, n)
			for q := range n {
				block[q] = inputs[q][i*tc.count : (i+1)*tc.count]
			}
			want = encode(tc.dt, reference(tc.dt, tc.red, block))
		case "Broadcast":
			want = encode(tc.dt, inputs[root])
		case "AllGather":
			want = encode(tc.dt, concat(inputs...))
		}
		got := read(t, r.devs[i], r.streams[i], b[i].out, b[i].outBytes)
		if !assert.Equal(t, want, got, "rank %d of %d", i, n) {
			return
		}
	}
}

// TestRanksAsGoroutines is the usual shape of a program: every rank its
// own goroutine, joined through a unique id, with one collective after
// another on its own stream.
func TestRanksAsGoroutines(t *testing.T) {
	for _, n := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("%d ranks", n), func(t *testing.T) {
			b, devs := devices(t, n)
			id, err := nccl.NewUniqueID(b)
			require.NoError(t, err)
			errs := make(chan error, n)
			got := make([][]byte, n)
			for rank := range n {
				d := devs[rank]
				s := stream(t, d)
				p := buf(t, d, s, encode(nccl.Float32, []float64{float64(rank + 1), 10}))
				go func() {
					errs <- func() error {
						c, err := nccl.NewComm(t.Context(), d, id, rank, n)
						if err != nil {
							return err
						}
						defer c.Destroy()
						for range 3 { // x ← Σ x, three times: x·n³
							if err := c.AllReduce(p, p, 2, nccl.Float32, nccl.Sum, s); err != nil {
								return err
							}
						}
						if err := c.Broadcast(p, p, 1, nccl.Float32, 0, s); err != nil {
							return err
						}
						if err := s.Synchronize(); err != nil {
							return err
						}
						got[rank] = read(t, d, s, p, 8)
						return c.Err()
					}()
				}()
			}
			for range n {
				require.NoError(t, <-errs)
			}
			sum := float64(n * (n + 1) / 2)
			want := encode(nccl.Float32, []float64{sum * float64(n*n), 10 * float64(n*n*n)})
			for rank := range n {
				assert.Equal(t, want, got[rank], "rank %d", rank)
			}
		})
	}
}

// TestSendRecvRing sends each rank's buffer to the next rank, every Send
// and Recv of a rank in one group: without the group, every rank would
// wait in its Send for a Recv queued behind it.
func TestSendRecvRing(t *testing.T) {
	for _, n := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("%d ranks", n), func(t *testing.T) {
			b, devs := devices(t, n)
			id, err := nccl.NewUniqueID(b)
			require.NoError(t, err)
			errs := make(chan error, n)
			recvs := make([]backend.Ptr, n)
			streams := make([]backend.Stream, n)
			for rank := range n {
				d := devs[rank]
				s := stream(t, d)
				streams[rank] = s
				send := buf(t, d, s, encode(nccl.Int64, []float64{float64(rank), float64(100 + rank), 7}))
				recvs[rank] = buf(t, d, s, sentinelBytes(24))
				go func() {
					errs <- func() error {
						c, err := nccl.NewComm(t.Context(), d, id, rank, n)
						if err != nil {
							return err
						}
						defer c.Destroy()
						err = c.Group(func() error {
							if err := c.Send(send, 3, nccl.Int64, (rank+1)%n, s); err != nil {
								return err
							}
							return c.Recv(recvs[rank], 3, nccl.Int64, (rank+n-1)%n, s)
						})
						if err != nil {
							return err
						}
						if err := s.Synchronize(); err != nil {
							return err
						}
						return c.Err()
					}()
				}()
			}
			for range n {
				require.NoError(t, <-errs)
			}
			for rank := range n {
				from := (rank + n - 1) % n
				want := encode(nccl.Int64, []float64{float64(from), float64(100 + from), 7})
				assert.Equal(t, want, read(t, devs[rank], streams[rank], recvs[rank], 24), "rank %d", rank)
			}
		})
	}
}

// TestSendsMatchRecvsInOrder: the k-th Send to a peer lands in the peer's
// k-th Recv from this rank, outside any group.
func TestSendsMatchRecvsInOrder(t *testing.T) {
	hostOnly(t, "one goroutine drives two ranks outside a group, which NCCL does not allow (its first Send sets up a connection that waits for the peer)")
	r := newRig(t, 2)
	var srcs, dsts []backend.Ptr
	for k := range 3 {
		srcs = append(srcs, buf(t, r.devs[0], r.streams[0], encode(nccl.Int32, []float64{float64(k + 1)})))
		dsts = append(dsts, buf(t, r.devs[1], r.streams[1], sentinelBytes(4)))
	}
	for k := range 3 {
		require.NoError(t, r.comms[0].Send(srcs[k], 1, nccl.Int32, 1, r.streams[0]))
	}
	for k := range 3 {
		require.NoError(t, r.comms[1].Recv(dsts[k], 1, nccl.Int32, 0, r.streams[1]))
	}
	r.sync(t)
	for k := range 3 {
		assert.Equal(t, encode(nccl.Int32, []float64{float64(k + 1)}), read(t, r.devs[1], r.streams[1], dsts[k], 4), "message %d", k)
	}
}
