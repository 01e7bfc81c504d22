package cuarray

import (
	"fmt"
	"iter"
	"sync"

	"github.com/gocuda/gocuda/backend"
)

// HostBatch is one batch of host data for Batches: its elements, row-major,
// and its shape (none: one dimension of len(Data)).
type HostBatch[T Elem] struct {
	Data  []T
	Shape []int
}

// Batches uploads each batch of src to o's device and yields it as an
// array, in the manner of CUDA.jl's CuIterator:
//
//	for x, err := range cuarray.On[float32](s).Batches(batches) {
//		if err != nil { ... }
//		loss, _ := train(x)  // x is freed when the loop moves on
//	}
//
// While the loop body works on batch i, batch i+1 is already being read
// from src and uploaded, on a goroutine of its own and the device's upload
// stream, so that the copy overlaps the work; the body's operations wait
// for the upload on the GPU, not the host. Each batch is UnsafeFree'd as
// soon as the loop moves on (or ends), so a training loop keeps at most two
// batches of device memory, not one per step until a collection: Copy or
// Clone a batch to keep it. src is consumed on that goroutine, one batch
// ahead of the loop; a batch's Data may be reused by src once the next
// batch is requested. An upload error is yielded once and ends the loop.
func (o Ops[T]) Batches(src iter.Seq[HostBatch[T]]) iter.Seq2[*Array[T], error] {
	return func(yield func(*Array[T], error) bool) {
		s, err := o.newStream()
		if err == nil {
			s, err = uploadStream(s)
		}
		if err != nil {
			yield(nil, fmt.Errorf("cuarray: Batches: %w", err))
			return
		}
		type result struct {
			a   *Array[T]
			err error
		}
		// Unbuffered: the goroutine uploads the next batch, then waits in
		// the send until the loop takes it, so one batch is ahead of the
		// one in use and never more.
		ahead := make(chan result)
		stop := make(chan struct{})
		go func() {
			defer close(ahead)
			up := On[T](s)
			for hb := range src {
				a, err := up.FromSlice(hb.Data, hb.Shape...)
				select {
				case ahead <- result{a, err}:
				case <-stop:
					if a != nil {
						a.UnsafeFree()
					}
					return
				}
				if err != nil {
					return
				}
			}
		}()
		defer func() {
			close(stop)
			for r := range ahead { // one may have been sent before stop
				if r.a != nil {
					r.a.UnsafeFree()
				}
			}
		}()
		var prev *Array[T]
		defer func() {
			if prev != nil {
				prev.UnsafeFree()
			}
		}()
		for r := range ahead {
			if prev != nil {
				// Ordered after the body's work on it: the free is queued
				// on the stream the body last used it on.
				prev.UnsafeFree()
			}
			prev = r.a
			if r.err != nil {
				yield(nil, fmt.Errorf("cuarray: Batches: %w", r.err))
				return
			}
			if !yield(r.a, nil) {
				return
			}
		}
	}
}

// Batches is Ops.Batches on device 0's default stream.
func Batches[T Elem](src iter.Seq[HostBatch[T]]) iter.Seq2[*Array[T], error] {
	return Ops[T]{}.Batches(src)
}

// uploads holds each device's upload stream for Batches (one per device
// and pool, shared by every iterator: uploads need only be ordered among
// themselves, and streams live as long as the process).
var uploads sync.Map // uploadKey -> *Stream

type uploadKey struct {
	dev  backend.Device
	pool any
	kind Kind
}

func uploadStream(s *Stream) (*Stream, error) {
	k := uploadKey{s.dev, s.pool, s.kind}
	if v, ok := uploads.Load(k); ok {
		return v.(*Stream), nil
	}
	l, err := newLife(s.dev)
	if err != nil {
		return nil, fmt.Errorf("upload stream of device %d: %w", s.dev.Ordinal(), err)
	}
	l.permanent = true
	v, loaded := uploads.LoadOrStore(k, &Stream{home: s.home, bs: l.bs, life: l})
	if loaded {
		_ = l.bs.Destroy()
	}
	return v.(*Stream), nil
}
