package cuarray

import (
	"fmt"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/kernels"
	"github.com/gocuda/gocuda/pool"
)

// Cumsum sets dst to the cumulative sum of x along axis: dst[…, j, …] is
// the sum of x[…, 0:j+1, …]. axis counts from 0, or from the end when
// negative (-1 is the last axis). A nil dst makes the result on o's
// stream (the zero Ops: x's device's default stream) and returns it; a
// non-nil dst must have x's shape and is returned. dst may be x (in place).
// For the real types; complex64 is an error wrapping
// kernels.ErrUnsupportedDType.
//
// float32 accumulates in float64 and each element is rounded once, at
// least as accurate as a float32 loop; integers keep their type and wrap
// as a Go loop would (NumPy widens int32 and uint8 sums to int64: convert
// first if the running sum must not wrap).
func (o Ops[T]) Cumsum(dst, x *Array[T], axis int) (*Array[T], error) {
	return o.scan(kernels.CumSum, dst, x, axis)
}

// Cumprod sets dst to the cumulative product of x along axis, with
// Cumsum's rules.
func (o Ops[T]) Cumprod(dst, x *Array[T], axis int) (*Array[T], error) {
	return o.scan(kernels.CumProd, dst, x, axis)
}

// Cummax sets dst to the running maximum of x along axis, with Cumsum's
// rules; from the first NaN on, the running maximum is NaN (as NumPy's
// maximum.accumulate).
func (o Ops[T]) Cummax(dst, x *Array[T], axis int) (*Array[T], error) {
	return o.scan(kernels.CumMax, dst, x, axis)
}

// Cummin sets dst to the running minimum of x along axis, with Cummax's
// rules.
func (o Ops[T]) Cummin(dst, x *Array[T], axis int) (*Array[T], error) {
	return o.scan(kernels.CumMin, dst, x, axis)
}

// Cumsum is Ops.Cumsum on the default streams.
func Cumsum[T Elem](dst, x *Array[T], axis int) (*Array[T], error) {
	return Ops[T]{}.Cumsum(dst, x, axis)
}

// Cumprod is Ops.Cumprod on the default streams.
func Cumprod[T Elem](dst, x *Array[T], axis int) (*Array[T], error) {
	return Ops[T]{}.Cumprod(dst, x, axis)
}

// Cummax is Ops.Cummax on the default streams.
func Cummax[T Elem](dst, x *Array[T], axis int) (*Array[T], error) {
	return Ops[T]{}.Cummax(dst, x, axis)
}

// Cummin is Ops.Cummin on the default streams.
func Cummin[T Elem](dst, x *Array[T], axis int) (*Array[T], error) {
	return Ops[T]{}.Cummin(dst, x, axis)
}

func (o Ops[T]) scan(k kernels.ScanOp, dst, x *Array[T], axis int) (*Array[T], error) {
	if isHalf[T]() {
		return scanHalf(o, k, dst, x, axis)
	}
	op := k.String()
	if err := realOnly[T](op); err != nil {
		return nil, err
	}
	if err := x.check(op, "x"); err != nil {
		return nil, err
	}
	shape := x.shape()
	ax, err := normAxis(op, axis, int(x.ndim), "x "+x.String())
	if err != nil {
		return nil, err
	}
	outer, n, inner := 1, shape[ax], 1
	for _, d := range shape[:ax] {
		outer *= d
	}
	for _, d := range shape[ax+1:] {
		inner *= d
	}
	run := func(dst *Array[T]) error {
		return o.do(op, "dst,x", true, func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr) error {
			return withScratch(dev, s, dst.origin.pool, op, kernels.ScanScratch(dev, outer, n, inner), func(sc kernels.Scratch) error {
				return kernels.Scan[T](dev, s, p[0], p[1], k, outer, n, inner, sc)
			})
		}, dst, x)
	}
	if dst == nil {
		if err := o.precheck(op, "x", x); err != nil {
			return nil, err
		}
		return o.fresh(op, x, shape, run)
	}
	if err := dst.check(op, "dst"); err != nil {
		return nil, err
	}
	if err := sameShapeAs(op, "dst", dst, "x", x); err != nil {
		return nil, err
	}
	if err := run(dst); err != nil {
		return nil, err
	}
	return dst, nil
}

// realOnly rejects complex64 before anything is allocated.
func realOnly[T Elem](op string) error {
	if dt := kernels.DTypeOf[T](); dt == kernels.Complex64 {
		return fmt.Errorf("cuarray: %s does not take %s; it takes float32, float64, int32, int64, uint8, float16, bfloat16, int8, int16, uint32: %w", op, dt, kernels.ErrUnsupportedDType)
	}
	return nil
}

// withScratch runs f with bytes of device scratch taken from pl on s and
// given back on s at once (the pool's free is ordered on s, so the memory
// is not lent again before the kernels that use it have run); bytes == 0
// runs f with none.
func withScratch(_ backend.Device, s backend.Stream, pl pool.Pool, op string, bytes int, f func(kernels.Scratch) error) error {
	if bytes == 0 {
		return f(kernels.Scratch{})
	}
	blk, err := pl.Alloc(uint64(bytes), s)
	if err != nil {
		return fmt.Errorf("%s: %d bytes of scratch: %w", op, bytes, err)
	}
	err = f(kernels.Scratch{Ptr: blk.Ptr, Bytes: bytes})
	if ferr := pl.Free(blk, s); err == nil && ferr != nil {
		err = fmt.Errorf("giving back %s's scratch: %w", op, ferr)
	}
	return err
}
