package nccl

import (
	"fmt"
	"runtime"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/kernels"
)

// The collectives on cuarray arrays. Each is one cuarray.WithPointers
// call, so an array handed to a collective gets what any cuarray
// operation gives it: the collective runs after all work already queued
// on the array on any stream, the array is kept alive until the
// collective's work has run, and later uses on other streams, reads back
// to the host and the free wait for the collective.
//
// They are functions, not methods of Comm, because Go methods cannot have
// type parameters; the Array suffix tells them from the pointer methods of
// the same NCCL call. The New forms return a new array, from the pool of
// the stream the collective runs on, as cuarray's Add with a nil dst does.

// arrayType is T's NCCL type and how many NCCL elements one T is:
// complex64 goes as two Float32s, which is exact for Sum, Avg and data
// movement and wrong for the other reductions.
func arrayType[T cuarray.Elem](c *Comm, what string, red Op) (DataType, int, error) {
	dt := kernels.DTypeOf[T]()
	if dt == kernels.Complex64 {
		if red != 0 && red != Sum && red != Avg {
			return 0, 0, fmt.Errorf("nccl: %s on rank %d: complex64 arrays reduce as pairs of float32, so only Sum and Avg are exact, not %v: %w",
				what, c.rank, red, errInvalid)
		}
		return Float32, 2, nil
	}
	d, err := DataTypeOf(dt)
	if err != nil {
		return 0, 0, fmt.Errorf("nccl: %s on rank %d: %w", what, c.rank, err)
	}
	return d, 1, nil
}

// checkArray checks that a may take part in c's collective what as role:
// not nil, not freed, on c's device.
func checkArray[T cuarray.Elem](c *Comm, what, role string, a *cuarray.Array[T]) error {
	if a == nil {
		return fmt.Errorf("nccl: %s on rank %d: %s is a nil array: %w", what, c.rank, role, errInvalid)
	}
	if a.Freed() {
		return fmt.Errorf("nccl: %s on rank %d: %s %v: %w", what, c.rank, role, a, cuarray.ErrFreed)
	}
	if d := a.Device(); d != c.dev {
		return fmt.Errorf("nccl: %s on rank %d: %s %v is on device %d, and the communicator's device is %d: a rank's arrays live on its own device: %w",
			what, c.rank, role, a, d.Ordinal(), c.dev.Ordinal(), cuarray.ErrDevice)
	}
	return nil
}

// checkComm checks c and s before any array is looked at.
func checkComm(c *Comm, what string, s *cuarray.Stream) error {
	if c == nil || c.impl == nil {
		return fmt.Errorf("nccl: %s on a nil communicator: %w", what, errInvalid)
	}
	if s != nil && s.Device() != c.dev {
		return fmt.Errorf("nccl: %s on rank %d: the stream is on device %d, and the communicator's device is %d: %w",
			what, c.rank, s.Device().Ordinal(), c.dev.Ordinal(), cuarray.ErrDevice)
	}
	return nil
}

func sameShape(x, y []int) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return true
}

// overlap reports whether [p, p+n) and [q, q+m) share a byte.
func overlap(p backend.Ptr, n uint64, q backend.Ptr, m uint64) bool {
	return n > 0 && m > 0 && p < q+backend.Ptr(m) && q < p+backend.Ptr(n)
}

// checkInPlace refuses send and recv that overlap other than as NCCL's
// in-place form (send at recv+off), where NCCL's result is undefined.
func checkInPlace(c *Comm, what string, send backend.Ptr, sendBytes uint64, recv backend.Ptr, recvBytes, off uint64) error {
	if send == recv+backend.Ptr(off) || !overlap(send, sendBytes, recv, recvBytes) {
		return nil
	}
	if off == 0 {
		return fmt.Errorf("nccl: %s on rank %d: dst and src overlap without being the same memory; pass the same array for in place: %w",
			what, c.rank, cuarray.ErrShape)
	}
	return fmt.Errorf("nccl: %s on rank %d: dst and src overlap, and in place src must be the block of rank %d (elements %d on): %w",
		what, c.rank, c.rank, off, cuarray.ErrShape)
}

// borrow runs call with the pointers of args on s, through
// cuarray.WithPointers; inside a Group it keeps the arrays alive until
// the group's end, when their work is queued. (A use of them on another
// stream before then is ordered after s's work as of the call, not after
// the collective: docs/nccl.md says not to.)
func (c *Comm) borrow(s *cuarray.Stream, call func(bs backend.Stream, p []backend.Ptr) error, keep []any, args ...cuarray.Arg) error {
	err := cuarray.WithPointers(s, call, args...)
	if c.grouping {
		c.held = append(c.held, keep...)
	}
	return err
}

// AllReduceArray queues dst = red over every rank's src, on stream s of
// the communicator's device (nil: the device's default stream). dst and
// src have the same shape on every rank; dst may be src (in place).
func AllReduceArray[T cuarray.Elem](c *Comm, s *cuarray.Stream, dst, src *cuarray.Array[T], red Op) error {
	const what = "AllReduceArray"
	dt, per, err := pairChecks(c, what, s, dst, src, red)
	if err != nil {
		return err
	}
	count := src.Len() * per
	return samePair(c, s, what, dst, src, count, dt, func(send, recv backend.Ptr, bs backend.Stream) error {
		return c.AllReduce(send, recv, count, dt, red, bs)
	})
}

// samePair queues op(send, recv) for an element-for-element collective
// (AllReduce; Broadcast and Reduce on the root) on dst and src, both
// checked, of count elements of dt each: dst has src's shape, and
// distinct arrays must not overlap. dst may be src (in place).
func samePair[T cuarray.Elem](c *Comm, s *cuarray.Stream, what string, dst, src *cuarray.Array[T], count int, dt DataType,
	op func(send, recv backend.Ptr, bs backend.Stream) error) error {
	if !sameShape(dst.Shape(), src.Shape()) {
		return fmt.Errorf("nccl: %s on rank %d: dst %v and src %v: dst has src's shape: %w", what, c.rank, dst, src, cuarray.ErrShape)
	}
	nb := uint64(count) * uint64(dt.Size())
	return pairBorrow(c, s, dst, src, func(d, sp backend.Ptr) error {
		return checkInPlace(c, what, sp, nb, d, nb, 0)
	}, op)
}

// pairBorrow queues op(send, recv) for a collective on dst and src: in
// place (dst is src) with dst read and written, else, once check(dst's
// pointer, src's) passes, with src read and dst written.
func pairBorrow[T cuarray.Elem](c *Comm, s *cuarray.Stream, dst, src *cuarray.Array[T], check func(d, sp backend.Ptr) error,
	op func(send, recv backend.Ptr, bs backend.Stream) error) error {
	if dst == src {
		return c.borrow(s, func(bs backend.Stream, p []backend.Ptr) error {
			return op(p[0], p[0], bs)
		}, []any{dst}, cuarray.InOut(dst))
	}
	return c.borrow(s, func(bs backend.Stream, p []backend.Ptr) error {
		if err := check(p[0], p[1]); err != nil {
			return err
		}
		return op(p[1], p[0], bs)
	}, []any{dst, src}, cuarray.Out(dst), cuarray.In(src))
}

// pairChecks is the checks of a collective on dst and src: the
// communicator and stream, the element type for red (0: none), and both
// arrays. It returns the NCCL type and NCCL elements per element.
func pairChecks[T cuarray.Elem](c *Comm, what string, s *cuarray.Stream, dst, src *cuarray.Array[T], red Op) (DataType, int, error) {
	if err := checkComm(c, what, s); err != nil {
		return 0, 0, err
	}
	dt, per, err := arrayType[T](c, what, red)
	if err != nil {
		return 0, 0, err
	}
	if err := checkArray(c, what, "dst", dst); err != nil {
		return 0, 0, err
	}
	if err := checkArray(c, what, "src", src); err != nil {
		return 0, 0, err
	}
	return dt, per, nil
}

// AllReduceNew is AllReduceArray into a new array of src's shape, from
// s's pool.
func AllReduceNew[T cuarray.Elem](c *Comm, s *cuarray.Stream, src *cuarray.Array[T], red Op) (*cuarray.Array[T], error) {
	if err := newChecks(c, "AllReduceNew", s, src); err != nil {
		return nil, err
	}
	dst, err := cuarray.On[T](s).New(src.Shape()...)
	if err != nil {
		return nil, fmt.Errorf("nccl: AllReduceNew on rank %d: %w", c.rank, err)
	}
	return finishNew(dst, AllReduceArray(c, s, dst, src, red))
}

// BroadcastArray queues copying root's src into every rank's dst, of
// src's shape. src is read on root only; elsewhere it may be nil. On root
// dst may be src (in place).
func BroadcastArray[T cuarray.Elem](c *Comm, s *cuarray.Stream, dst, src *cuarray.Array[T], root int) error {
	const what = "BroadcastArray"
	if err := checkComm(c, what, s); err != nil {
		return err
	}
	dt, per, err := arrayType[T](c, what, 0)
	if err != nil {
		return err
	}
	if err := checkArray(c, what, "dst", dst); err != nil {
		return err
	}
	count := dst.Len() * per
	if c.rank != root && src != dst {
		// Off the root src is not read, and dst only written; a root out
		// of range is Broadcast's error.
		return c.borrow(s, func(bs backend.Stream, p []backend.Ptr) error {
			return c.Broadcast(p[0], p[0], count, dt, root, bs)
		}, []any{dst}, cuarray.Out(dst))
	}
	if src != dst {
		if err := checkArray(c, what, "src (on the root)", src); err != nil {
			return err
		}
	}
	return samePair(c, s, what, dst, src, count, dt, func(send, recv backend.Ptr, bs backend.Stream) error {
		return c.Broadcast(send, recv, count, dt, root, bs)
	})
}

// ReduceArray queues root's dst = red over every rank's src. dst, of
// src's shape, is written on root only; elsewhere it may be nil. On root
// dst may be src (in place).
func ReduceArray[T cuarray.Elem](c *Comm, s *cuarray.Stream, dst, src *cuarray.Array[T], red Op, root int) error {
	const what = "ReduceArray"
	if err := checkComm(c, what, s); err != nil {
		return err
	}
	dt, per, err := arrayType[T](c, what, red)
	if err != nil {
		return err
	}
	if err := checkArray(c, what, "src", src); err != nil {
		return err
	}
	count := src.Len() * per
	if c.rank != root && dst != src {
		// Off the root src is only read and nothing is written.
		return c.borrow(s, func(bs backend.Stream, p []backend.Ptr) error {
			return c.Reduce(p[0], p[0], count, dt, red, root, bs)
		}, []any{src}, cuarray.In(src))
	}
	if dst != src {
		if err := checkArray(c, what, "dst (on the root)", dst); err != nil {
			return err
		}
	}
	return samePair(c, s, what, dst, src, count, dt, func(send, recv backend.Ptr, bs backend.Stream) error {
		return c.Reduce(send, recv, count, dt, red, root, bs)
	})
}

// AllGatherArray queues gathering every rank's src into every rank's dst
// in rank order: dst has Size times src's elements (rank r's at r·n).
// In place: src is the view of dst holding this rank's block.
func AllGatherArray[T cuarray.Elem](c *Comm, s *cuarray.Stream, dst, src *cuarray.Array[T]) error {
	const what = "AllGatherArray"
	dt, per, err := pairChecks(c, what, s, dst, src, 0)
	if err != nil {
		return err
	}
	if dst.Len() != c.size*src.Len() {
		return fmt.Errorf("nccl: %s on rank %d: dst %v has %d elements and src %v %d: dst holds every rank's src, %d × %d elements: %w",
			what, c.rank, dst, dst.Len(), src, src.Len(), c.size, src.Len(), cuarray.ErrShape)
	}
	// In place (one rank) there is nothing to move and nothing to check.
	count := src.Len() * per
	nb := uint64(count) * uint64(dt.Size())
	return pairBorrow(c, s, dst, src, func(d, sp backend.Ptr) error {
		return checkInPlace(c, what, sp, nb, d, nb*uint64(c.size), uint64(c.rank)*nb)
	}, func(send, recv backend.Ptr, bs backend.Stream) error {
		return c.AllGather(send, recv, count, dt, bs)
	})
}

// AllGatherNew is AllGatherArray into a new array from s's pool, the
// ranks' srcs stacked along the first dimension (as torch's
// all_gather_into_tensor): src of shape [d0, d1, ...] gives [Size·d0, d1,
// ...], a zero-dimensional src gives [Size].
func AllGatherNew[T cuarray.Elem](c *Comm, s *cuarray.Stream, src *cuarray.Array[T]) (*cuarray.Array[T], error) {
	if err := newChecks(c, "AllGatherNew", s, src); err != nil {
		return nil, err
	}
	shape := src.Shape()
	if len(shape) == 0 {
		shape = []int{1}
	}
	shape[0] *= c.size
	dst, err := cuarray.On[T](s).New(shape...)
	if err != nil {
		return nil, fmt.Errorf("nccl: AllGatherNew on rank %d: %w", c.rank, err)
	}
	return finishNew(dst, AllGatherArray(c, s, dst, src))
}

// ReduceScatterArray queues reducing every rank's src, and leaving block
// r of the result in rank r's dst: src has Size times dst's elements. In
// place: dst is the view of src holding this rank's block.
func ReduceScatterArray[T cuarray.Elem](c *Comm, s *cuarray.Stream, dst, src *cuarray.Array[T], red Op) error {
	const what = "ReduceScatterArray"
	dt, per, err := pairChecks(c, what, s, dst, src, red)
	if err != nil {
		return err
	}
	if src.Len() != c.size*dst.Len() {
		return fmt.Errorf("nccl: %s on rank %d: src %v has %d elements and dst %v %d: src holds a block for every rank, %d × %d elements: %w",
			what, c.rank, src, src.Len(), dst, dst.Len(), c.size, dst.Len(), cuarray.ErrShape)
	}
	count := dst.Len() * per
	nb := uint64(count) * uint64(dt.Size())
	return pairBorrow(c, s, dst, src, func(d, sp backend.Ptr) error {
		return checkInPlace(c, what, d, nb, sp, nb*uint64(c.size), uint64(c.rank)*nb)
	}, func(send, recv backend.Ptr, bs backend.Stream) error {
		return c.ReduceScatter(send, recv, count, dt, red, bs)
	})
}

// ReduceScatterNew is ReduceScatterArray into a new array from s's pool:
// src of shape [d0, d1, ...], d0 a multiple of Size, gives this rank's
// block, [d0/Size, d1, ...] (as torch's reduce_scatter_tensor).
func ReduceScatterNew[T cuarray.Elem](c *Comm, s *cuarray.Stream, src *cuarray.Array[T], red Op) (*cuarray.Array[T], error) {
	const what = "ReduceScatterNew"
	if err := newChecks(c, what, s, src); err != nil {
		return nil, err
	}
	shape := src.Shape()
	if len(shape) == 0 || shape[0]%c.size != 0 {
		return nil, fmt.Errorf("nccl: %s on rank %d: src %v: its first dimension is split among %d ranks, so it must be a multiple of %d: %w",
			what, c.rank, src, c.size, c.size, cuarray.ErrShape)
	}
	shape[0] /= c.size
	dst, err := cuarray.On[T](s).New(shape...)
	if err != nil {
		return nil, fmt.Errorf("nccl: %s on rank %d: %w", what, c.rank, err)
	}
	return finishNew(dst, ReduceScatterArray(c, s, dst, src, red))
}

// SendArray queues sending src to rank peer, which receives it with
// RecvArray into an array of as many elements. As with Send, two ranks
// that send to each other do so inside a Group.
func SendArray[T cuarray.Elem](c *Comm, s *cuarray.Stream, src *cuarray.Array[T], peer int) error {
	return p2pArray(c, s, "SendArray", "src", src, cuarray.In(src), c.Send, peer)
}

// RecvArray queues receiving into dst what rank peer sends with
// SendArray.
func RecvArray[T cuarray.Elem](c *Comm, s *cuarray.Stream, dst *cuarray.Array[T], peer int) error {
	return p2pArray(c, s, "RecvArray", "dst", dst, cuarray.Out(dst), c.Recv, peer)
}

// p2pArray is SendArray and RecvArray: call (Comm.Send or Comm.Recv) on
// a's memory, declared as arg.
func p2pArray[T cuarray.Elem](c *Comm, s *cuarray.Stream, what, role string, a *cuarray.Array[T], arg cuarray.Arg,
	call func(backend.Ptr, int, DataType, int, backend.Stream) error, peer int) error {
	if err := checkComm(c, what, s); err != nil {
		return err
	}
	dt, per, err := arrayType[T](c, what, 0)
	if err != nil {
		return err
	}
	if err := checkArray(c, what, role, a); err != nil {
		return err
	}
	count := a.Len() * per
	return c.borrow(s, func(bs backend.Stream, p []backend.Ptr) error {
		return call(p[0], count, dt, peer, bs)
	}, []any{a}, arg)
}

// newChecks is what the New forms check before allocating.
func newChecks[T cuarray.Elem](c *Comm, what string, s *cuarray.Stream, src *cuarray.Array[T]) error {
	if err := checkComm(c, what, s); err != nil {
		return err
	}
	if s == nil {
		return fmt.Errorf("nccl: %s on rank %d: nil stream: the new array comes from the stream's pool, so name one: %w", what, c.rank, errInvalid)
	}
	return checkArray(c, what, "src", src)
}

// finishNew returns dst, or the collective's error. A dst the collective
// failed on is left to the collector rather than freed now: the failure
// may come after work on it was queued (inside a group), and the
// collector's free is ordered after that work.
func finishNew[T cuarray.Elem](dst *cuarray.Array[T], err error) (*cuarray.Array[T], error) {
	if err != nil {
		return nil, err
	}
	return dst, nil
}

// release drops the arrays held for a group once its work is queued.
func (c *Comm) release() {
	runtime.KeepAlive(c.held)
	clear(c.held)
	c.held = c.held[:0]
	c.grouping = false
}
