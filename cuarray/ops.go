package cuarray

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/kernels"
)

// Ops runs operations on arrays of T on one stream. On(s) gives the Ops of
// stream s; the zero Ops (what the package-level functions use) runs each
// operation on the default stream of its arrays' device, and makes new
// arrays on device 0's default stream.
//
// Ops is a small value: make one per goroutine and element type,
//
//	f := cuarray.On[float32](s)
//	x, err := f.Zeros(1024)
//	_, err = f.Add(x, x, y)
//
// Go methods cannot have type parameters of their own, which is why the
// element type is named once here rather than on each call.
type Ops[T Elem] struct{ s *Stream }

// On returns the operations on arrays of T queued on s. A nil s means the
// default streams, as the package-level functions use.
func On[T Elem](s *Stream) Ops[T] { return Ops[T]{s: s} }

// Stream is the stream o queues on (nil for the default streams).
func (o Ops[T]) Stream() *Stream { return o.s }

// newStream is where o makes new arrays.
func (o Ops[T]) newStream() (*Stream, error) {
	if o.s != nil {
		return o.s, nil
	}
	return DefaultStream(0)
}

// ---------------------------------------------------------------------------
// Constructors.

// New makes an uninitialised array of shape on o's stream, from the
// stream's pool. No dimensions make a zero-dimensional array of one
// element.
func (o Ops[T]) New(shape ...int) (*Array[T], error) {
	s, err := o.newStream()
	if err != nil {
		return nil, fmt.Errorf("cuarray: New %s%s: %w", kernels.DTypeOf[T](), fmtShape(shape), err)
	}
	return newArray[T]("New", s, shape)
}

// Full makes an array of shape with every element v.
func (o Ops[T]) Full(v T, shape ...int) (*Array[T], error) {
	return o.newFilled("Full", v, shape)
}

// Zeros makes an array of shape with every element 0.
func (o Ops[T]) Zeros(shape ...int) (*Array[T], error) {
	return o.newFilled("Zeros", zero[T](), shape)
}

// Ones makes an array of shape with every element 1.
func (o Ops[T]) Ones(shape ...int) (*Array[T], error) {
	return o.newFilled("Ones", one[T](), shape)
}

func (o Ops[T]) newFilled(op string, v T, shape []int) (*Array[T], error) {
	return o.newThen(op, shape, func(f Ops[T], a *Array[T]) error { return f.Fill(a, v) })
}

// newThen makes an array of shape on o's stream and has fill write it,
// with the Ops of that stream; the array goes back if fill fails.
func (o Ops[T]) newThen(op string, shape []int, fill func(Ops[T], *Array[T]) error) (*Array[T], error) {
	s, err := o.newStream()
	if err != nil {
		return nil, fmt.Errorf("cuarray: %s %s%s: %w", op, kernels.DTypeOf[T](), fmtShape(shape), err)
	}
	a, err := newArray[T](op, s, shape)
	if err != nil {
		return nil, err
	}
	if err := fill(On[T](s), a); err != nil {
		a.UnsafeFree()
		return nil, err
	}
	return a, nil
}

// FromSlice uploads data into a new array of shape; with no shape, a
// one-dimensional array of len(data). The product of shape must be
// len(data). data may be reused as soon as FromSlice returns.
func (o Ops[T]) FromSlice(data []T, shape ...int) (*Array[T], error) {
	dt := kernels.DTypeOf[T]()
	if len(shape) == 0 {
		shape = []int{len(data)}
	}
	n, err := checkShape(shape)
	if err != nil {
		return nil, shapeError("FromSlice", dt, shape, err)
	}
	if n != len(data) {
		return nil, shapeError("FromSlice", dt, shape, fmt.Errorf("%d elements do not fit the %d of data; the product of the dimensions must be len(data): %w", n, len(data), ErrShape))
	}
	s, err := o.newStream()
	if err != nil {
		return nil, fmt.Errorf("cuarray: FromSlice %s%s: %w", dt, fmtShape(shape), err)
	}
	a, err := newArray[T]("FromSlice", s, shape)
	if err != nil {
		return nil, err
	}
	if n > 0 {
		b := a.buf
		if !b.life.acquire() { // s was closed since newArray
			a.UnsafeFree()
			return nil, closedError("FromSlice", s)
		}
		b.mu.Lock()
		// CopyHtoD returns once data may be reused; the copy is queued on
		// the buffer's stream, s.
		err = b.dev().CopyHtoD(b.ptr, unsafe.Pointer(&data[0]), b.size, b.life.bs)
		b.mu.Unlock()
		b.life.release()
		runtime.KeepAlive(data)
		if err != nil {
			a.UnsafeFree()
			return nil, fmt.Errorf("cuarray: FromSlice %s: %w", a, err)
		}
	}
	return a, nil
}

// ---------------------------------------------------------------------------
// Operations. Each is queued on o's stream after the work already queued
// on the streams its arrays were last used on (a wait on the device, not
// the host), and returns without waiting, except the reductions, which
// return a Go value and so wait for the work before them on the stream.

// Fill sets every element of dst to v.
func (o Ops[T]) Fill(dst *Array[T], v T) error {
	return o.do("Fill", "dst", true, func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr) error {
		return kernels.Fill(dev, s, p[0], v, dst.n)
	}, dst)
}

// Copy copies src into dst; they must have the same shape. Copying an
// array onto a partly overlapping view of itself is an error, except
// between strided views (views.go), which go through a temporary copy.
// Either may be a strided view: a transposed or permuted src gives a
// transposed copy, in one kernel; dst must not be a broadcast view. dst and src
// may be on different devices: the copy then runs on dst's device (o's
// stream must be of that device), peer to peer or staged through pinned
// host memory, ordered after both arrays' queued work.
func (o Ops[T]) Copy(dst, src *Array[T]) error {
	if err := sameShape("Copy", dst, src); err != nil {
		return err
	}
	if dst != nil && src != nil && !dst.freed.Load() && !src.freed.Load() {
		if dst.origin.dev != src.origin.dev {
			if !dst.contiguous() || !src.contiguous() {
				return o.copyAcrossViews(dst, src)
			}
			return o.copyAcross(dst, src)
		}
		if !dst.contiguous() || !src.contiguous() {
			return o.copyViews(dst, src)
		}
	}
	return o.do("Copy", "dst,src", true, func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr) error {
		return kernels.Copy[T](dev, s, p[0], p[1], dst.n)
	}, dst, src)
}

// Add sets dst = a + b elementwise and returns dst. a and b must have the
// same shape or shapes that broadcast (BroadcastShapes: [n m] + [m] adds a
// row to every row, [n m] + [n 1] a column to every column), and dst
// exactly the shape of the result; a nil dst makes the result, of that
// shape, on o's stream (for the zero Ops, from a's device, pool and memory
// kind, on that device's default stream). Shapes that do neither are an
// error wrapping ErrShape, even when the lengths are equal: Reshape an
// operand to combine arrays element by element regardless of shape. dst
// may be an input of the result's shape (in place), but must not otherwise
// overlap an input.
func (o Ops[T]) Add(dst, a, b *Array[T]) (*Array[T], error) {
	return o.binaryInto("Add", addKernels[T](), dst, a, b)
}

// Sub sets dst = a - b elementwise, with Add's rules.
func (o Ops[T]) Sub(dst, a, b *Array[T]) (*Array[T], error) {
	return o.binaryInto("Sub", subKernels[T](), dst, a, b)
}

// Mul sets dst = a * b elementwise, with Add's rules.
func (o Ops[T]) Mul(dst, a, b *Array[T]) (*Array[T], error) {
	return o.binaryInto("Mul", mulKernels[T](), dst, a, b)
}

// Div sets dst = a / b elementwise, with Add's rules and the kernels'
// division (an integer divided by zero is 0).
func (o Ops[T]) Div(dst, a, b *Array[T]) (*Array[T], error) {
	return o.binaryInto("Div", divKernels[T](), dst, a, b)
}

// AddScalar sets dst = a + v elementwise and returns dst; dst and a must
// have the same number of elements (dst may be a). A nil dst makes the
// result, of a's shape, as Add does.
func (o Ops[T]) AddScalar(dst, a *Array[T], v T) (*Array[T], error) {
	return o.scalarInto("AddScalar", kernels.AddScalar[T], dst, a, v)
}

// SubScalar sets dst = a - v elementwise, with AddScalar's rules.
func (o Ops[T]) SubScalar(dst, a *Array[T], v T) (*Array[T], error) {
	return o.scalarInto("SubScalar", kernels.SubScalar[T], dst, a, v)
}

// MulScalar sets dst = a * v elementwise, with AddScalar's rules.
func (o Ops[T]) MulScalar(dst, a *Array[T], v T) (*Array[T], error) {
	return o.scalarInto("MulScalar", kernels.MulScalar[T], dst, a, v)
}

// DivScalar sets dst = a / v elementwise, with AddScalar's rules.
func (o Ops[T]) DivScalar(dst, a *Array[T], v T) (*Array[T], error) {
	return o.scalarInto("DivScalar", kernels.DivScalar[T], dst, a, v)
}

// Axpy sets dst = alpha*x + y and returns dst, for float32, float64 and
// complex64; x and y must have the same number of elements. dst may be y:
// BLAS's axpy, y updated in place with no copy. A nil dst makes the
// result, of y's shape, as Add does, leaving y as it was; any other dst
// must have y's shape and not overlap x or y, and costs a copy of y into
// it first.
func (o Ops[T]) Axpy(dst *Array[T], alpha T, x, y *Array[T]) (*Array[T], error) {
	const op = "Axpy"
	if dst == y {
		if err := o.axpy(alpha, x, y); err != nil {
			return nil, err
		}
		return y, nil
	}
	if err := o.precheck(op, "x,y", x, y); err != nil {
		return nil, err
	}
	if err := sameLen(op, "y,x", y, x); err != nil {
		return nil, err
	}
	axpy := func(dst *Array[T]) error {
		if err := o.Copy(dst, y); err != nil {
			return err
		}
		return o.axpy(alpha, x, dst)
	}
	if dst == nil {
		return o.fresh(op, y, y.shape(), axpy)
	}
	if overlaps(dst, x) || overlaps(dst, y) {
		return nil, fmt.Errorf("cuarray: %s: dst %s shares memory with x %s or y %s; dst must be y itself or apart from both: %w", op, dst, x, y, ErrShape)
	}
	if err := axpy(dst); err != nil {
		return nil, err
	}
	return dst, nil
}

// axpy is y = alpha*x + y, in place.
func (o Ops[T]) axpy(alpha T, x, y *Array[T]) error {
	if err := sameLen("Axpy", "y,x", y, x); err != nil {
		return err
	}
	return o.do("Axpy", "y,x", true, func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr) error {
		return kernels.Axpy(dev, s, alpha, p[1], p[0], y.n)
	}, y, x)
}

// Scale sets dst = alpha*x and returns dst, for float32, float64 and
// complex64. dst may be x: BLAS's scal, in place with no copy. A nil dst
// makes the result, of x's shape, as Add does; any other dst must have x's
// shape and costs a copy of x into it first.
func (o Ops[T]) Scale(dst *Array[T], alpha T, x *Array[T]) (*Array[T], error) {
	const op = "Scale"
	if dst == x {
		if err := o.scale(alpha, x); err != nil {
			return nil, err
		}
		return x, nil
	}
	if err := o.precheck(op, "x", x); err != nil {
		return nil, err
	}
	scale := func(dst *Array[T]) error {
		if err := o.Copy(dst, x); err != nil {
			return err
		}
		return o.scale(alpha, dst)
	}
	if dst == nil {
		return o.fresh(op, x, x.shape(), scale)
	}
	if err := scale(dst); err != nil {
		return nil, err
	}
	return dst, nil
}

// scale is x = alpha*x, in place.
func (o Ops[T]) scale(alpha T, x *Array[T]) error {
	return o.do("Scale", "x", true, func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr) error {
		return kernels.Scale(dev, s, alpha, p[0], x.n)
	}, x)
}

// Sum returns the sum of x's elements (see kernels.Sum for accumulation),
// waiting for the work queued before it on the stream. An integer array's
// sum is computed in int64; one that does not fit T is an error wrapping
// ErrOverflow (SumInt64 returns it), never a wrapped value.
func (o Ops[T]) Sum(x *Array[T]) (T, error) {
	switch kernels.DTypeOf[T]() {
	case kernels.Int32, kernels.Int64, kernels.Uint8, kernels.Int8, kernels.Int16, kernels.Uint32:
		return o.sumExact(x)
	case kernels.Float16, kernels.BFloat16:
		return sumHalf(o, x)
	}
	return o.reduce("Sum", kernels.Sum[T], x)
}

// Max returns the largest element of x, for the real types; NaN if any is
// NaN; an error wrapping kernels.ErrEmpty for an empty array.
func (o Ops[T]) Max(x *Array[T]) (T, error) {
	if isHalf[T]() {
		return extremumHalf(o, "Max", x)
	}
	return o.reduce("Max", kernels.Max[T], x)
}

// Min returns the smallest element of x, with Max's rules.
func (o Ops[T]) Min(x *Array[T]) (T, error) {
	if isHalf[T]() {
		return extremumHalf(o, "Min", x)
	}
	return o.reduce("Min", kernels.Min[T], x)
}

// Dot returns the sum of x[i]*y[i], for float32 and float64; x and y must
// have the same number of elements.
func (o Ops[T]) Dot(x, y *Array[T]) (T, error) {
	var r T
	if err := sameLen("Dot", "x,y", x, y); err != nil {
		return r, err
	}
	if isHalf[T]() {
		return dotHalf(o, x, y)
	}
	err := o.do("Dot", "x,y", false, func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr) error {
		var err error
		r, err = kernels.Dot[T](dev, s, p[0], p[1], x.n)
		return err
	}, x, y)
	return r, err
}

type scalarKernel[T Elem] func(dev backend.Device, s backend.Stream, dst, a backend.Ptr, v T, n int) error

// scalarInto is the scalar operations' one form: into dst, or into a new
// array of a's shape when dst is nil.
func (o Ops[T]) scalarInto(op string, k scalarKernel[T], dst, a *Array[T], v T) (*Array[T], error) {
	if dst == nil {
		if err := o.precheck(op, "a", a); err != nil {
			return nil, err
		}
		return o.fresh(op, a, a.shape(), func(dst *Array[T]) error { return o.scalar(op, k, dst, a, v) })
	}
	if err := o.scalar(op, k, dst, a, v); err != nil {
		return nil, err
	}
	return dst, nil
}

func (o Ops[T]) scalar(op string, k scalarKernel[T], dst, a *Array[T], v T) error {
	if err := sameLen(op, "dst,a", dst, a); err != nil {
		return err
	}
	return o.do(op, "dst,a", true, func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr) error {
		return k(dev, s, p[0], p[1], v, dst.n)
	}, dst, a)
}

type reduceKernel[T Elem] func(dev backend.Device, s backend.Stream, x backend.Ptr, n int) (T, error)

func (o Ops[T]) reduce(op string, k reduceKernel[T], x *Array[T]) (T, error) {
	var r T
	err := o.do(op, "x", false, func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr) error {
		var err error
		r, err = k(dev, s, p[0], x.n)
		return err
	}, x)
	return r, err
}

// sameLen checks that the arrays have equal lengths (nil and freed arrays
// are left to do's checks).
func sameLen[T Elem](op, names string, arrs ...*Array[T]) error {
	for i, a := range arrs[1:] {
		if a == nil || arrs[0] == nil {
			return nil
		}
		if a.n != arrs[0].n {
			return fmt.Errorf("cuarray: %s: %s %s has %d elements, %s %s has %d; elementwise operations need equal lengths (or the scalar form): %w",
				op, role(names, 0), arrs[0], arrs[0].n, role(names, i+1), a, a.n, ErrShape)
		}
	}
	return nil
}

func sameShape[T Elem](op string, dst, src *Array[T]) error {
	if dst == nil || src == nil {
		return nil
	}
	ds, ss := dst.shape(), src.shape()
	if len(ds) != len(ss) {
		return shapeMismatch(op, dst, src)
	}
	for i := range ds {
		if ds[i] != ss[i] {
			return shapeMismatch(op, dst, src)
		}
	}
	return nil
}

func shapeMismatch[T Elem](op string, dst, src *Array[T]) error {
	return fmt.Errorf("cuarray: %s: dst %s and src %s differ in shape; they must be equal (Reshape one first): %w", op, dst, src, ErrShape)
}
