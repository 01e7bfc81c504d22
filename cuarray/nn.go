package cuarray

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/kernels"
	"github.com/gocuda/gocuda/pool"
)

// The layers of a small neural network, on batches stored as 2-D row-major
// arrays (rows are examples, columns features or classes), for float32 and
// float64. With Gemm/MatMul, Relu and Axpy they are a dense network's
// forward pass, backward pass and SGD step:
//
//	z, err := f.MatMul(nil, x, w)  // z = x @ w
//	_, err = f.AddRowVector(z, z, b) // + b on every row, in place
//	err = f.SoftmaxCrossEntropy(loss, dz, z, labels, 1/float32(batch))
//	db, err := f.SumCols(nil, dz)  // the bias gradient
//
// Like every operation they are queued on the stream and return at once.
// AddRowVector, SumCols, SumRows and ReluGrad have the one form of the
// other operations: a nil dst makes the result on o's stream and returns
// it. SoftmaxCrossEntropy writes two arrays, where a nil dlogits means no
// gradient, so it takes both and returns only an error.

// AddRowVector sets dst[r, c] = x[r, c] + b[c] and returns dst: x is a 2-D
// rows × cols array, dst has its shape (dst may be x; a nil dst makes it),
// b has cols elements.
func (o Ops[T]) AddRowVector(dst, x, b *Array[T]) (*Array[T], error) {
	const op = "AddRowVector"
	rows, cols, err := matrixOf(op, "x", x)
	if err != nil {
		return nil, err
	}
	if err := sameShapeAs(op, "dst", dst, "x", x); err != nil {
		return nil, err
	}
	if err := lenIs(op, "b", b, cols, "x's columns"); err != nil {
		return nil, err
	}
	return o.layerInto(op, "x,b", dst, []*Array[T]{x, b}, x.shape(), func(dst *Array[T]) error {
		return o.do(op, "dst,x,b", true, func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr) error {
			if isHalf[T]() { // the strided Add's row mode: float32 inside the kernel
				return kernels.AddStrided[T](dev, s, p[0], p[1], p[2], []int{rows, cols}, []int{cols, 1}, []int{0, 1})
			}
			return kernels.AddRowVector[T](dev, s, p[0], p[1], p[2], rows, cols)
		}, dst, x, b)
	})
}

// layerInto runs a layer into dst and returns it, or, for a nil dst, checks
// the inputs (named by names) and runs it into a new array of shape (see
// fresh). The caller has checked dst's shape when it is not nil.
func (o Ops[T]) layerInto(op, names string, dst *Array[T], in []*Array[T], shape []int, run func(dst *Array[T]) error) (*Array[T], error) {
	if dst == nil {
		if err := o.precheck(op, names, in...); err != nil {
			return nil, err
		}
		return o.fresh(op, in[0], shape, run)
	}
	if err := run(dst); err != nil {
		return nil, err
	}
	return dst, nil
}

// SumCols sets dst[c] to the sum of column c of the 2-D array x (the
// gradient of a bias, summed over the batch) and returns dst; dst has x's
// column count of elements (a nil dst makes it, of shape [cols]). float32
// accumulates in float64.
func (o Ops[T]) SumCols(dst, x *Array[T]) (*Array[T], error) {
	const op = "SumCols"
	rows, cols, err := matrixOf(op, "x", x)
	if err != nil {
		return nil, err
	}
	if err := lenIs(op, "dst", dst, cols, "x's columns"); err != nil {
		return nil, err
	}
	return o.layerInto(op, "x", dst, []*Array[T]{x}, []int{cols}, func(dst *Array[T]) error {
		if isHalf[T]() {
			return sumRowsColsHalf(o, op, dst, x)
		}
		if err := dst.check(op, "dst"); err != nil {
			return err
		}
		st, err := o.streamFor(op, dst.origin.dev)
		if err != nil {
			return err
		}
		return o.do(op, "dst,x", true, func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr) error {
			pl := dst.origin.pool
			if c := st.life.capture.Load(); c != nil {
				// Inside a capture the scratch is the graph's: a replay
				// uses it long after this call gives it back.
				pl = c.home.pool
			}
			return sumColsScratched[T](dev, s, pl, p[0], p[1], rows, cols)
		}, dst, x)
	})
}

// sumColsScratched runs kernels.SumCols with the scratch it asks for, taken
// from pl (dst's pool, so it counts toward that pool's limits) on s and
// given back on s at once: the pool's free is ordered on s, so the memory
// is not handed out again before the kernels that use it have run.
func sumColsScratched[T Elem](dev backend.Device, s backend.Stream, pl pool.Pool, dst, x backend.Ptr, rows, cols int) error {
	var scratch kernels.Scratch
	var blk *pool.Block
	if n := kernels.SumColsScratch(dev, rows, cols); n > 0 {
		// If the pool cannot lend it, SumCols runs without: slower but as
		// right; failing the operation for want of a few hundred KiB of
		// speed-up would not be.
		if b, err := pl.Alloc(uint64(n), s); err == nil {
			blk, scratch = b, kernels.Scratch{Ptr: b.Ptr, Bytes: n}
		}
	}
	err := kernels.SumCols[T](dev, s, dst, x, rows, cols, scratch)
	if blk != nil {
		if ferr := pl.Free(blk, s); err == nil && ferr != nil {
			err = fmt.Errorf("giving back SumCols' scratch: %w", ferr)
		}
	}
	return err
}

// SumRows sets dst[r] to the sum of row r of the 2-D array x and returns
// dst; dst has x's row count of elements (a nil dst makes it, of shape
// [rows]). float32 accumulates in float64.
func (o Ops[T]) SumRows(dst, x *Array[T]) (*Array[T], error) {
	const op = "SumRows"
	rows, cols, err := matrixOf(op, "x", x)
	if err != nil {
		return nil, err
	}
	if err := lenIs(op, "dst", dst, rows, "x's rows"); err != nil {
		return nil, err
	}
	return o.layerInto(op, "x", dst, []*Array[T]{x}, []int{rows}, func(dst *Array[T]) error {
		if isHalf[T]() {
			return sumRowsColsHalf(o, op, dst, x)
		}
		return o.do(op, "dst,x", true, func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr) error {
			return kernels.SumRows[T](dev, s, p[0], p[1], rows, cols)
		}, dst, x)
	})
}

// ReluGrad sets dx = dy where x > 0 and 0 elsewhere, the gradient through
// Relu(x), and returns dx. The three must have the same number of
// elements; dx may be dy, and a nil dx makes it, of x's shape.
func (o Ops[T]) ReluGrad(dx, x, dy *Array[T]) (*Array[T], error) {
	const op = "ReluGrad"
	if dx == nil {
		if err := sameLen(op, "x,dy", x, dy); err != nil {
			return nil, err
		}
	} else if err := sameLen(op, "dx,x,dy", dx, x, dy); err != nil {
		return nil, err
	}
	var shape []int
	if x != nil {
		shape = x.shape()
	}
	return o.layerInto(op, "x,dy", dx, []*Array[T]{x, dy}, shape, func(dx *Array[T]) error {
		return o.do(op, "dx,x,dy", true, func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr) error {
			return kernels.ReluGrad[T](dev, s, p[0], p[1], p[2], dx.n)
		}, dx, x, dy)
	})
}

// SoftmaxCrossEntropy computes the softmax cross-entropy of each row of the
// 2-D rows × classes array logits against its class in labels (rows int32
// values in [0, classes)): loss[r] = logsumexp(logits[r, :]) -
// logits[r, labels[r]], into loss (rows elements). Unless dlogits is nil it
// also sets the gradient with respect to the logits, times scale:
// dlogits[r, c] = scale * (softmax(logits[r, :])[c] - (c == labels[r])), so
// that scale = 1/rows gives the gradient of the mean loss; dlogits has
// logits' shape and must not share memory with logits or loss.
//
// The softmax subtracts each row's maximum first, so large logits do not
// overflow. A label outside [0, classes) is not reported as an error (that
// would mean reading the labels back to the host): its row's loss and
// gradient are NaN instead, which the loss then shows.
func (o Ops[T]) SoftmaxCrossEntropy(loss, dlogits, logits *Array[T], labels *Array[int32], scale T) error {
	const op = "SoftmaxCrossEntropy"
	// Checked here, not only by the kernel: orderForeign's lock order needs
	// the labels' buffer (int32) to be of another type than the operation's.
	if dt := kernels.DTypeOf[T](); dt != kernels.Float32 && dt != kernels.Float64 {
		return fmt.Errorf("cuarray: %s does not take %s logits; it takes float32, float64: %w", op, dt, kernels.ErrUnsupportedDType)
	}
	rows, cols, err := matrixOf(op, "logits", logits)
	if err != nil {
		return err
	}
	if err := lenIs(op, "loss", loss, rows, "logits' rows"); err != nil {
		return err
	}
	if err := labels.check(op, "labels"); err != nil {
		return err
	}
	if labels.n != rows {
		return fmt.Errorf("cuarray: %s: labels %s has %d elements; it needs one class a row of logits %s, %d: %w",
			op, labels, labels.n, logits, rows, ErrShape)
	}
	if labels.origin.dev != logits.origin.dev {
		return fmt.Errorf("cuarray: %s: logits are on device %d, labels on device %d; copy one first: %w",
			op, logits.origin.dev.Ordinal(), labels.origin.dev.Ordinal(), ErrDevice)
	}
	arrs := []*Array[T]{loss, logits}
	names := "loss,logits"
	if dlogits != nil {
		if err := sameShapeAs(op, "dlogits", dlogits, "logits", logits); err != nil {
			return err
		}
		// The kernel reads a row of logits after other lanes have written
		// that row of the gradient: in place is a race, not a shortcut.
		for _, other := range []struct {
			name string
			a    *Array[T]
		}{{"logits", logits}, {"loss", loss}} {
			if overlaps(dlogits, other.a) {
				return fmt.Errorf("cuarray: %s: dlogits %s shares memory with %s %s; give the gradient an array of its own: %w",
					op, dlogits, other.name, other.a, ErrShape)
			}
		}
		if !dlogits.contiguous() {
			// do writes back only its first operand (loss): the gradient
			// is computed in a contiguous temporary and copied into the
			// view here.
			if err := dlogits.writable(op, "dlogits"); err != nil {
				return err
			}
			tmp, err := o.fresh(op, dlogits, dlogits.shape(), func(t *Array[T]) error {
				return o.SoftmaxCrossEntropy(loss, t, logits, labels, scale)
			})
			if err != nil {
				return err
			}
			return o.writeBack(op, dlogits, tmp)
		}
		arrs = append(arrs, dlogits)
		names += ",dlogits"
	}
	if !labels.contiguous() {
		p, release, err := On[int32](o.s).packed(op, "labels", labels)
		if err != nil {
			return err
		}
		defer release()
		labels = p
	}
	return o.do(op, names, true, func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr) error {
		st, err := o.streamFor(op, dev) // do's stream, for its life
		if err != nil {
			return err
		}
		lp, unlock, err := orderForeign(op, "labels", labels, st.life)
		if err != nil {
			return err
		}
		defer unlock()
		return kernels.SoftmaxCrossEntropy(dev, s, p[0], p[2], p[1], lp, rows, cols, scale)
	}, arrs...)
}

// AddRowVector sets dst[r, c] = x[r, c] + b[c] on the default stream; a
// nil dst makes the result (see Ops.AddRowVector).
func AddRowVector[T Elem](dst, x, b *Array[T]) (*Array[T], error) {
	return Ops[T]{}.AddRowVector(dst, x, b)
}

// SumCols sets dst[c] to the sum of column c of the 2-D array x; a nil dst
// makes the result.
func SumCols[T Elem](dst, x *Array[T]) (*Array[T], error) { return Ops[T]{}.SumCols(dst, x) }

// SumRows sets dst[r] to the sum of row r of the 2-D array x; a nil dst
// makes the result.
func SumRows[T Elem](dst, x *Array[T]) (*Array[T], error) { return Ops[T]{}.SumRows(dst, x) }

// ReluGrad sets dx = dy where x > 0 and 0 elsewhere; a nil dx makes the
// result.
func ReluGrad[T Elem](dx, x, dy *Array[T]) (*Array[T], error) { return Ops[T]{}.ReluGrad(dx, x, dy) }

// SoftmaxCrossEntropy computes each row's softmax cross-entropy loss and,
// unless dlogits is nil, its gradient times scale (see
// Ops.SoftmaxCrossEntropy).
func SoftmaxCrossEntropy[T Elem](loss, dlogits, logits *Array[T], labels *Array[int32], scale T) error {
	return Ops[T]{}.SoftmaxCrossEntropy(loss, dlogits, logits, labels, scale)
}

// orderForeign is do's work for one array of another element type than
// the operation's (int32 labels for float logits): called inside do's fn,
// with the operation's own buffers locked, it locks a's buffer, orders s
// after a's last stream, and returns a's device pointer and the unlock to
// defer until the kernel is queued.
//
// Locking it after do's buffers cannot deadlock: every operation that
// mixes element types locks its own type's buffers first and the foreign
// one last, and a buffer holds one element type (no API reinterprets
// one), so a is never among do's buffers, and no two operations ever
// wait for each other's locks in opposite orders. The caller must make
// sure U differs from the operation's element type.
func orderForeign[U Elem](op, name string, a *Array[U], s *life) (backend.Ptr, func(), error) {
	b := a.buf
	if b.size == 0 {
		return 0, func() {}, nil // empty: nothing reads it
	}
	b.mu.Lock()
	unlock := func() {
		b.mu.Unlock()
		runtime.KeepAlive(a) // until the kernel that reads it is queued
	}
	if b.block == nil { // only when UnsafeFree races with this operation
		unlock()
		return 0, nil, fmt.Errorf("%s: %s %s: its buffer was freed: %w", op, name, a, ErrFreed)
	}
	if err := b.orderOn(s); err != nil {
		unlock()
		return 0, nil, fmt.Errorf("%s: ordering stream %d after %s's stream %d: %w", op, s.bs.ID(), name, b.life.bs.ID(), err)
	}
	return a.ptr(), unlock, nil
}

// matrixOf returns a's rows and columns, or an error unless a is a live
// 2-D array.
func matrixOf[T Elem](op, name string, a *Array[T]) (rows, cols int, err error) {
	if err := a.check(op, name); err != nil {
		return 0, 0, err
	}
	if a.ndim != 2 {
		return 0, 0, fmt.Errorf("cuarray: %s: %s %s has %d dimensions; it must be a 2-D rows × columns matrix (Reshape it): %w",
			op, name, a, a.ndim, ErrShape)
	}
	return a.dims[0], a.dims[1], nil
}

// sameShapeAs checks that a has ref's shape (nil and freed arrays are left
// to do's checks).
func sameShapeAs[T Elem](op, name string, a *Array[T], refName string, ref *Array[T]) error {
	if a == nil || a.freed.Load() {
		return nil
	}
	as, rs := a.shape(), ref.shape()
	same := len(as) == len(rs)
	for i := 0; same && i < len(as); i++ {
		same = as[i] == rs[i]
	}
	if !same {
		return fmt.Errorf("cuarray: %s: %s %s must have the shape of %s %s: %w", op, name, a, refName, ref, ErrShape)
	}
	return nil
}

// lenIs checks that a has n elements (nil and freed arrays are left to
// do's checks).
func lenIs[T Elem](op, name string, a *Array[T], n int, what string) error {
	if a == nil || a.freed.Load() {
		return nil
	}
	if a.n != n {
		return fmt.Errorf("cuarray: %s: %s %s has %d elements; it needs one for each of %s, %d: %w", op, name, a, a.n, what, n, ErrShape)
	}
	return nil
}

// overlaps reports whether a and b share any element's memory (nil and
// freed arrays are left to do's checks).
func overlaps[T Elem](a, b *Array[T]) bool {
	if a == nil || b == nil || a.freed.Load() || b.freed.Load() || a.buf != b.buf || a.n == 0 || b.n == 0 {
		return false
	}
	var z T
	size := uint64(unsafe.Sizeof(z))
	return a.off < b.off+uint64(b.extent())*size && b.off < a.off+uint64(a.extent())*size
}
