package kernels

import (
	"math"
	"time"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/half"
	"github.com/gocuda/gocuda/internal/testsupport/testhook"
)

// Every operation takes the device, a stream of that device, device
// pointers and a length n in elements. Elementwise operations and Fill are
// queued on the stream and return at once; reductions return their result,
// and so wait until the stream has run everything queued before them. An
// operation with n == 0 queues nothing (its pointers may then be nil).
//
// dst may be the same pointer as an input (in place), but must not
// otherwise overlap one.

// Fill sets dst[0:n] to v, for every Elem type, bool included.
func Fill[T Elem](dev backend.Device, s backend.Stream, dst backend.Ptr, v T, n int) error {
	dt := DTypeOf[T]()
	t, err := prepare("Fill", everyType, dt, dev, s, n, ptrArg{"dst", dst})
	if err != nil || n == 0 {
		return err
	}
	bits := bitsOf(v)
	if t.cu != nil {
		// A bool is the byte 0 or 1: uint8's kernel fills it (moveAs).
		return t.launchIDW(kernelID(kFill, moveAs(dt), 0), elementwiseGrid(n, dt, t.sms), threads, wp(dst), bits, uint64(n))
	}
	return t.enqueue(func() { hostFill(dt, dst, bits, n) })
}

// Copy copies src[0:n] to dst[0:n] (the device's own copy, dev.CopyDtoD),
// for every Elem type, bool included.
func Copy[T Elem](dev backend.Device, s backend.Stream, dst, src backend.Ptr, n int) error {
	dt := DTypeOf[T]()
	t, err := prepare("Copy", everyType, dt, dev, s, n, ptrArg{"dst", dst}, ptrArg{"src", src})
	if err != nil || n == 0 {
		return err
	}
	if err := dev.CopyDtoD(dst, src, uint64(n*dt.Size()), s); err != nil {
		return t.errorf("%w", err)
	}
	return nil
}

// Add sets dst = a + b elementwise, for every Elem type but bool. Integers
// wrap on overflow, as in Go. float16 and bfloat16 compute in float32 and
// round once, which for +, -, * and / is the correctly rounded result.
func Add[T Elem](dev backend.Device, s backend.Stream, dst, a, b backend.Ptr, n int) error {
	return binary("Add", kAdd, DTypeOf[T](), dev, s, dst, a, b, n)
}

// Sub sets dst = a - b elementwise, with Add's types and rules.
func Sub[T Elem](dev backend.Device, s backend.Stream, dst, a, b backend.Ptr, n int) error {
	return binary("Sub", kSub, DTypeOf[T](), dev, s, dst, a, b, n)
}

// Mul sets dst = a * b elementwise, with Add's types and rules.
func Mul[T Elem](dev backend.Device, s backend.Stream, dst, a, b backend.Ptr, n int) error {
	return binary("Mul", kMul, DTypeOf[T](), dev, s, dst, a, b, n)
}

// Div sets dst = a / b elementwise, with Add's types. Integer division
// truncates toward zero as in Go, and MinInt / -1 is MinInt as in Go; an
// integer divided by zero gives 0 on every backend, where Go would panic.
// Floats follow IEEE 754 (x/0 is ±Inf or NaN); complex64 division is Go's,
// computed in complex128.
func Div[T Elem](dev backend.Device, s backend.Stream, dst, a, b backend.Ptr, n int) error {
	return binary("Div", kDiv, DTypeOf[T](), dev, s, dst, a, b, n)
}

// AddScalar sets dst = a + b elementwise for a scalar b.
func AddScalar[T Elem](dev backend.Device, s backend.Stream, dst, a backend.Ptr, b T, n int) error {
	return scalar("AddScalar", kAddScalar, kops[kAddScalar].types, DTypeOf[T](), dev, s, dst, a, bitsOf(b), n)
}

// SubScalar sets dst = a - b elementwise for a scalar b.
func SubScalar[T Elem](dev backend.Device, s backend.Stream, dst, a backend.Ptr, b T, n int) error {
	return scalar("SubScalar", kSubScalar, kops[kSubScalar].types, DTypeOf[T](), dev, s, dst, a, bitsOf(b), n)
}

// MulScalar sets dst = a * b elementwise for a scalar b.
func MulScalar[T Elem](dev backend.Device, s backend.Stream, dst, a backend.Ptr, b T, n int) error {
	return scalar("MulScalar", kMulScalar, kops[kMulScalar].types, DTypeOf[T](), dev, s, dst, a, bitsOf(b), n)
}

// DivScalar sets dst = a / b elementwise for a scalar b, with Div's rules
// (an integer divided by zero is 0).
func DivScalar[T Elem](dev backend.Device, s backend.Stream, dst, a backend.Ptr, b T, n int) error {
	return scalar("DivScalar", kDivScalar, kops[kDivScalar].types, DTypeOf[T](), dev, s, dst, a, bitsOf(b), n)
}

// Scale sets x = alpha * x, for float32, float64, complex64, float16 and
// bfloat16 (computed in float32 and rounded once).
func Scale[T Elem](dev backend.Device, s backend.Stream, alpha T, x backend.Ptr, n int) error {
	return scalar("Scale", kMulScalar, inexactTypes|halfTypes, DTypeOf[T](), dev, s, x, x, bitsOf(alpha), n)
}

// Axpy sets y = alpha*x + y, for float32, float64, complex64, float16 and
// bfloat16. On a GPU alpha*x + y is one fused multiply-add for float32 and
// float64; float16 and bfloat16 compute float32(alpha*x) (exact) + y in
// float32 and round once to the type.
func Axpy[T Elem](dev backend.Device, s backend.Stream, alpha T, x, y backend.Ptr, n int) error {
	dt := DTypeOf[T]()
	t, err := prepare("Axpy", kops[kAxpy].types, dt, dev, s, n, ptrArg{"x", x}, ptrArg{"y", y})
	if err != nil || n == 0 {
		return err
	}
	bits := bitsOf(alpha)
	if t.cu != nil {
		return t.launchW(kAxpy, 0, elementwiseGrid(n, dt, t.sms), wp(y), wp(x), bits, uint64(n))
	}
	return t.enqueue(func() { hostAxpy(dt, y, x, bits, n) })
}

// ReluGrad sets dst = dy where x > 0 and 0 elsewhere (Relu's backward
// pass), for float32, float64, float16 and bfloat16.
func ReluGrad[T Elem](dev backend.Device, s backend.Stream, dst, x, dy backend.Ptr, n int) error {
	dt := DTypeOf[T]()
	t, err := prepare("ReluGrad", kops[kReluGrad].types, dt, dev, s, n, ptrArg{"dst", dst}, ptrArg{"x", x}, ptrArg{"dy", dy})
	if err != nil || n == 0 {
		return err
	}
	if t.cu != nil {
		return t.launchW(kReluGrad, 0, elementwiseGrid(n, dt, t.sms), wp(dst), wp(x), wp(dy), uint64(n))
	}
	return t.enqueue(func() { hostReluGrad(dt, dst, x, dy, n) })
}

// Sum returns the sum of x[0:n] (0 for n == 0), for every Elem type. It
// waits until the stream reaches it.
//
// float32 sums accumulate in float64 and complex64 sums in complex128, then
// round once to T. Integer sums accumulate in int64: the result is the exact
// sum converted to T, so a sum that overflows T wraps as a Go loop adding T
// values would; SumInt64 returns the int64 itself. The result is
// deterministic: the same device, n and alignment give the same bits.
func Sum[T Elem](dev backend.Device, s backend.Stream, x backend.Ptr, n int) (T, error) {
	dt := DTypeOf[T]()
	raw, err := reduce("Sum", kSum, allTypes, dt, dev, s, x, 0, n)
	if err != nil {
		return *new(T), err
	}
	switch dt {
	case Float32, Float64:
		return fromFloat64[T](math.Float64frombits(raw[0])), nil
	case Complex64:
		c := complex64(complex(math.Float64frombits(raw[0]), math.Float64frombits(raw[1])))
		return any(c).(T), nil
	}
	return fromInt64[T](int64(raw[0])), nil
}

// SumInt64 returns the sum of the integers x[0:n] (any integer type)
// accumulated in int64: exact unless it passes the range of int64, where it
// wraps.
func SumInt64[T Elem](dev backend.Device, s backend.Stream, x backend.Ptr, n int) (int64, error) {
	raw, err := reduce("SumInt64", kSum, integerTypes, DTypeOf[T](), dev, s, x, 0, n)
	return int64(raw[0]), err
}

// Max returns the largest of x[0:n], for the real types; NaN if any element
// is NaN. An empty array is an error wrapping ErrEmpty. It waits until the
// stream reaches it.
func Max[T Elem](dev backend.Device, s backend.Stream, x backend.Ptr, n int) (T, error) {
	raw, err := reduce("Max", kMax, realTypes, DTypeOf[T](), dev, s, x, 0, n)
	if err != nil {
		return *new(T), err
	}
	return fromBits[T](raw[0]), nil
}

// Min returns the smallest of x[0:n], with Max's rules.
func Min[T Elem](dev backend.Device, s backend.Stream, x backend.Ptr, n int) (T, error) {
	raw, err := reduce("Min", kMin, realTypes, DTypeOf[T](), dev, s, x, 0, n)
	if err != nil {
		return *new(T), err
	}
	return fromBits[T](raw[0]), nil
}

// Dot returns the sum of x[i]*y[i] for float32 and float64 (0 for n == 0),
// accumulated in float64 and deterministic as Sum is. It waits until the
// stream reaches it.
func Dot[T Elem](dev backend.Device, s backend.Stream, x, y backend.Ptr, n int) (T, error) {
	raw, err := reduce("Dot", kDot, floatTypes, DTypeOf[T](), dev, s, x, y, n)
	if err != nil {
		return *new(T), err
	}
	return fromFloat64[T](math.Float64frombits(raw[0])), nil
}

// SumRows sets dst[r] to the sum of row r of the row-major rows × cols
// matrix x, for float32 and float64 (float32 accumulating in float64). It is
// queued like an elementwise operation; a row of no columns sums to 0.
func SumRows[T Elem](dev backend.Device, s backend.Stream, dst, x backend.Ptr, rows, cols int) error {
	return rowsOp("SumRows", kSumRows, DTypeOf[T](), dev, s, dst, x, rows, cols)
}

// MaxRows sets dst[r] to the largest element of row r of the row-major
// rows × cols matrix x (NaN if the row has one), for float32 and float64.
// cols must be at least 1 when rows is.
func MaxRows[T Elem](dev backend.Device, s backend.Stream, dst, x backend.Ptr, rows, cols int) error {
	return rowsOp("MaxRows", kMaxRows, DTypeOf[T](), dev, s, dst, x, rows, cols)
}

// spin queues work that keeps the stream busy for about d: on a GPU a
// one-thread kernel that busy-waits on the global nanosecond timer, on the
// host a sleep on the stream's goroutine. Tests of stream ordering, here and
// in other packages, reach it through internal/testsupport/testhook. d <= 0 queues
// nothing.
func spin(dev backend.Device, s backend.Stream, d time.Duration) error {
	t := target{op: "Spin", s: s}
	if err := t.resolve(dev, s); err != nil || d <= 0 {
		return err
	}
	if t.cu != nil {
		return t.launchIDW(spinID, 1, 1, uint64(d.Nanoseconds()))
	}
	return t.enqueue(func() { time.Sleep(d) })
}

// Setting a hook in an internal package is no side effect a program can
// see; it keeps the test kernel out of the public API.
func init() { testhook.SetSpin(spin) }

// ---------------------------------------------------------------------------
// The dynamic layer under the generic API: one function per shape of
// operation, on a DType.

func (t *target) enqueue(fn func()) error {
	if err := t.hs.Enqueue(fn); err != nil {
		return t.errorf("%w", err)
	}
	return nil
}

func binary(op string, k kop, dt DType, dev backend.Device, s backend.Stream, dst, a, b backend.Ptr, n int) error {
	if g, f := quickFn(dev, s, kops[k].types, dt, n, kernelID(k, dt, 0), dst, a, b); f != nil {
		return g.launch(op, dt, f, elementwiseGrid(n, dt, g.sms), wp(dst), wp(a), wp(b), uint64(n))
	}
	t, err := prepare(op, kops[k].types, dt, dev, s, n, ptrArg{"dst", dst}, ptrArg{"a", a}, ptrArg{"b", b})
	if err != nil || n == 0 {
		return err
	}
	if t.cu != nil {
		return t.launchW(k, 0, elementwiseGrid(n, dt, t.sms), wp(dst), wp(a), wp(b), uint64(n))
	}
	return t.enqueue(func() { hostBinary(k, dt, dst, a, b, n) })
}

func scalar(op string, k kop, types dtypeSet, dt DType, dev backend.Device, s backend.Stream, dst, a backend.Ptr, bits uint64, n int) error {
	if g, f := quickFn(dev, s, types, dt, n, kernelID(k, dt, 0), dst, a); f != nil {
		return g.launch(op, dt, f, elementwiseGrid(n, dt, g.sms), wp(dst), wp(a), bits, uint64(n))
	}
	t, err := prepare(op, types, dt, dev, s, n, ptrArg{"dst", dst}, ptrArg{"a", a})
	if err != nil || n == 0 {
		return err
	}
	if t.cu != nil {
		return t.launchW(k, 0, elementwiseGrid(n, dt, t.sms), wp(dst), wp(a), bits, uint64(n))
	}
	return t.enqueue(func() { hostScalar(k, dt, dst, a, bits, n) })
}

// reduce returns a reduction's result as the kernels write it (see
// accBytes): the float64, int64 or complex128 accumulator, or the element's
// bits for Max and Min.
func reduce(op string, k kop, types dtypeSet, dt DType, dev backend.Device, s backend.Stream, x, y backend.Ptr, n int) ([2]uint64, error) {
	ptrs := []ptrArg{{"x", x}}
	if k == kDot {
		ptrs = append(ptrs, ptrArg{"y", y})
	}
	t, err := prepare(op, types, dt, dev, s, n, ptrs...)
	if err != nil {
		return [2]uint64{}, err
	}
	if n == 0 {
		if k == kMax || k == kMin {
			return [2]uint64{}, t.errorf("no elements: %w", ErrEmpty)
		}
		return [2]uint64{}, nil // an empty sum is 0 in every accumulator
	}
	if backend.Capturing(s) {
		return [2]uint64{}, t.errorf("a reduction to a Go value reads the result on the host, which a capture cannot record; reduce into an array instead: %w", backend.ErrCapturing)
	}
	if t.cu != nil {
		return t.gpuReduce(k, x, y, n)
	}
	done := make(chan [2]uint64, 1)
	if err := t.enqueue(func() { done <- hostReduce(k, dt, x, y, n) }); err != nil {
		return [2]uint64{}, err
	}
	return <-done, nil
}

func rowsOp(op string, k kop, dt DType, dev backend.Device, s backend.Stream, dst, x backend.Ptr, rows, cols int) error {
	if rows < 0 || cols < 0 {
		return opErrorf(op, dt, "shape %d × %d is negative: %w", rows, cols, backend.ErrInvalidValue)
	}
	n := rows * cols
	if cols > 0 && n/cols != rows {
		return opErrorf(op, dt, "shape %d × %d overflows: %w", rows, cols, backend.ErrInvalidValue)
	}
	t, err := prepare(op, kops[k].types, dt, dev, s, rows, ptrArg{"dst", dst})
	if err != nil || rows == 0 {
		return err
	}
	if k == kMaxRows && cols == 0 {
		return t.errorf("rows of no columns have no maximum: %w", ErrEmpty)
	}
	if n > 0 {
		if n > maxBytes/dt.Size() {
			return t.errorf("shape %d × %d is more than any device holds: %w", rows, cols, backend.ErrInvalidValue)
		}
		if err := t.checkSpan(ptrArg{"x", x}, uint64(n)*uint64(dt.Size())); err != nil {
			return err
		}
	}
	if t.cu != nil {
		return t.launchW(k, 0, rowsGrid(rows, t.sms), wp(dst), wp(x), uint64(rows), uint64(cols))
	}
	return t.enqueue(func() { hostRows(k, dt, dst, x, rows, cols) })
}

// fromFloat64 converts a float accumulator to T (float32 or float64).
func fromFloat64[T Elem](f float64) T {
	var z T
	switch any(z).(type) {
	case float32:
		return any(float32(f)).(T)
	case float64:
		return any(f).(T)
	}
	return z
}

// fromInt64 converts an integer accumulator to T (an integer type),
// wrapping as Go's conversions do.
func fromInt64[T Elem](v int64) T {
	var z T
	switch any(z).(type) {
	case int32:
		return any(int32(v)).(T)
	case int64:
		return any(v).(T)
	case uint8:
		return any(uint8(v)).(T)
	case int8:
		return any(int8(v)).(T)
	case int16:
		return any(int16(v)).(T)
	case uint32:
		return any(uint32(v)).(T)
	}
	return z
}

// fromBits is bitsOf's inverse.
func fromBits[T Elem](b uint64) T {
	var z T
	var v any
	switch any(z).(type) {
	case float32:
		v = math.Float32frombits(uint32(b))
	case float64:
		v = math.Float64frombits(b)
	case int32:
		v = int32(uint32(b))
	case int64:
		v = int64(b)
	case uint8:
		v = uint8(b)
	case complex64:
		v = complex(math.Float32frombits(uint32(b)), math.Float32frombits(uint32(b>>32)))
	case bool:
		v = b&1 != 0
	case half.Float16:
		v = half.Float16(b)
	case half.BFloat16:
		v = half.BFloat16(b)
	case int8:
		v = int8(uint8(b))
	case int16:
		v = int16(uint16(b))
	case uint32:
		v = uint32(b)
	}
	return v.(T)
}
