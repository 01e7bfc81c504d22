package kernels

import (
	"math"
	"slices"
	"unsafe"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/host"
	"github.com/gocuda/gocuda/half"
	"github.com/gocuda/gocuda/internal/devstream"
	"github.com/gocuda/gocuda/internal/hostpar"
)

// The host backend's kernels: the same operations in Go over views of the
// host device's memory (which is real process memory at the backend.Ptr
// address), run by the stream's goroutine through Enqueue, so that they are
// ordered exactly as GPU kernels are. Large arrays are split across
// goroutines inside the queued function; reductions split at fixed chunk
// boundaries and combine the chunks in order, so their results do not
// depend on the number of CPUs.

// hostStream is a host stream and, when the stream checker is on, the
// memory the operation being prepared touches: the one path every host
// launch takes (prepare, then t.enqueue), so that every kernel tells the
// checker what it reads and writes.
type hostStream struct {
	devstream.HostStream
	checking bool   // the stream checker was on at resolve
	name     string // "Add float32", for reports
	n        uint64 // bytes of prepare's n elements
	acc      []host.Access
}

func (h *hostStream) declare(a host.Access) {
	if a.Bytes > 0 && a.Ptr != 0 {
		h.acc = append(h.acc, a)
	}
}

// Enqueue queues a host kernel. An operation that writes none of its
// arguments hands its result to the host (a reduction), whose caller
// waits for it: the checker orders later work after it.
func (h *hostStream) Enqueue(fn func()) error {
	if !h.checking {
		return h.HostStream.Enqueue(fn)
	}
	writes := slices.ContainsFunc(h.acc, func(a host.Access) bool { return a.Write })
	return h.HostStream.EnqueueAccess(h.name, h.acc, len(h.acc) > 0 && !writes, fn)
}

// grain is the elements per goroutine a loop is split for
// (hostpar.Split), and the chunk of a host reduction.
const grain = 1 << 16

// parallel runs f over [0, n) split across goroutines a grain at most
// (hostpar.Split).
func parallel(n int, f func(lo, hi int)) { hostpar.Split(n, grain, f) }

// chunked reduces [0, n) chunk by chunk (chunks of grain elements, in
// parallel) and combines the chunks' results in order.
func chunked[A any](n int, part func(lo, hi int) A, combine func(A, A) A) A {
	chunks := (n + grain - 1) / grain
	if chunks <= 1 {
		return part(0, n)
	}
	parts := make([]A, chunks)
	parallel(chunks*grain, func(lo, hi int) {
		for c := lo / grain; c < hi/grain; c++ {
			parts[c] = part(c*grain, min((c+1)*grain, n))
		}
	})
	acc := parts[0]
	for _, p := range parts[1:] {
		acc = combine(acc, p)
	}
	return acc
}

// hostView is view for a backend.Ptr.
func hostView[T any](p backend.Ptr, n int) []T { return view[T](uintptr(p), n) }

// fromBitsHost reads a scalar's bits as T: the low bytes of b, which is
// how bitsOf laid them out on a little-endian machine (every platform with
// a CUDA driver is one).
func fromBitsHost[T Elem](b uint64) T { return *(*T)(unsafe.Pointer(&b)) }

func isIntegerType[T Elem]() bool { return integerTypes.has(DTypeOf[T]()) }

// ---------------------------------------------------------------------------
// Elementwise.

func hostFill(dt DType, dst backend.Ptr, bits uint64, n int) {
	switch dt {
	case Float32:
		fillOf[float32](dst, bits, n)
	case Float64:
		fillOf[float64](dst, bits, n)
	case Int32:
		fillOf[int32](dst, bits, n)
	case Int64:
		fillOf[int64](dst, bits, n)
	case Uint8:
		fillOf[uint8](dst, bits, n)
	case Int8:
		fillOf[int8](dst, bits, n)
	case Int16:
		fillOf[int16](dst, bits, n)
	case Uint32:
		fillOf[uint32](dst, bits, n)
	case Complex64:
		fillOf[complex64](dst, bits, n)
	case Bool:
		fillOf[bool](dst, bits, n)
	case Float16, BFloat16:
		fillOf[half.Float16](dst, bits, n) // the same 2 bytes for both
	}
}

func fillOf[T Elem](p backend.Ptr, bits uint64, n int) {
	d, v := hostView[T](p, n), fromBitsHost[T](bits)
	parallel(n, func(lo, hi int) {
		for i := range d[lo:hi] {
			d[lo+i] = v
		}
	})
}

func hostBinary(k kop, dt DType, dst, a, b backend.Ptr, n int) {
	switch dt {
	case Float32:
		binaryOf[float32](k, dst, a, b, n)
	case Float64:
		binaryOf[float64](k, dst, a, b, n)
	case Int32:
		binaryOf[int32](k, dst, a, b, n)
	case Int64:
		binaryOf[int64](k, dst, a, b, n)
	case Uint8:
		binaryOf[uint8](k, dst, a, b, n)
	case Int8:
		binaryOf[int8](k, dst, a, b, n)
	case Int16:
		binaryOf[int16](k, dst, a, b, n)
	case Uint32:
		binaryOf[uint32](k, dst, a, b, n)
	case Complex64:
		binaryOf[complex64](k, dst, a, b, n)
	case Float16, BFloat16:
		hostHalfBinary(k, dt, dst, a, b, n)
	}
}

func binaryOf[T number](k kop, dst, a, b backend.Ptr, n int) {
	d, x, y := hostView[T](dst, n), hostView[T](a, n), hostView[T](b, n)
	parallel(n, func(lo, hi int) { binarySlices(k, d[lo:hi], x[lo:hi], y[lo:hi]) })
}

func binarySlices[T number](k kop, d, x, y []T) {
	x, y = x[:len(d)], y[:len(d)]
	switch k {
	case kAdd:
		for i := range d {
			d[i] = x[i] + y[i]
		}
	case kSub:
		for i := range d {
			d[i] = x[i] - y[i]
		}
	case kMul:
		for i := range d {
			d[i] = x[i] * y[i]
		}
	case kDiv:
		if isIntegerType[T]() {
			for i := range d {
				if y[i] == 0 {
					d[i] = 0
				} else {
					d[i] = x[i] / y[i]
				}
			}
			return
		}
		for i := range d {
			d[i] = x[i] / y[i]
		}
	}
}

func hostScalar(k kop, dt DType, dst, a backend.Ptr, bits uint64, n int) {
	switch dt {
	case Float32:
		scalarOf[float32](k, dst, a, bits, n)
	case Float64:
		scalarOf[float64](k, dst, a, bits, n)
	case Int32:
		scalarOf[int32](k, dst, a, bits, n)
	case Int64:
		scalarOf[int64](k, dst, a, bits, n)
	case Uint8:
		scalarOf[uint8](k, dst, a, bits, n)
	case Int8:
		scalarOf[int8](k, dst, a, bits, n)
	case Int16:
		scalarOf[int16](k, dst, a, bits, n)
	case Uint32:
		scalarOf[uint32](k, dst, a, bits, n)
	case Complex64:
		scalarOf[complex64](k, dst, a, bits, n)
	case Float16, BFloat16:
		hostHalfScalar(k, dt, dst, a, bits, n)
	}
}

func scalarOf[T number](k kop, dst, a backend.Ptr, bits uint64, n int) {
	d, x, s := hostView[T](dst, n), hostView[T](a, n), fromBitsHost[T](bits)
	parallel(n, func(lo, hi int) { scalarSlices(k, d[lo:hi], x[lo:hi], s) })
}

func scalarSlices[T number](k kop, d, x []T, s T) {
	x = x[:len(d)]
	switch k {
	case kAddScalar:
		for i := range d {
			d[i] = x[i] + s
		}
	case kSubScalar:
		for i := range d {
			d[i] = x[i] - s
		}
	case kMulScalar:
		for i := range d {
			d[i] = x[i] * s
		}
	case kDivScalar:
		if s == 0 && isIntegerType[T]() {
			clear(d)
			return
		}
		for i := range d {
			d[i] = x[i] / s
		}
	}
}

func hostAxpy(dt DType, y, x backend.Ptr, bits uint64, n int) {
	switch dt {
	case Float32:
		axpyOf[float32](y, x, bits, n)
	case Float64:
		axpyOf[float64](y, x, bits, n)
	case Complex64:
		axpyOf[complex64](y, x, bits, n)
	case Float16, BFloat16:
		hostHalfAxpy(dt, y, x, bits, n)
	}
}

func axpyOf[T number](yp, xp backend.Ptr, bits uint64, n int) {
	y, x, alpha := hostView[T](yp, n), hostView[T](xp, n), fromBitsHost[T](bits)
	parallel(n, func(lo, hi int) {
		y, x := y[lo:hi], x[lo:hi]
		for i := range y {
			y[i] = alpha*x[i] + y[i]
		}
	})
}

type float interface{ float32 | float64 }

func hostReluGrad(dt DType, dst, x, dy backend.Ptr, n int) {
	switch dt {
	case Float32:
		reluGradOf[float32](dst, x, dy, n)
	case Float64:
		reluGradOf[float64](dst, x, dy, n)
	case Float16, BFloat16:
		hostHalfReluGrad(dt, dst, x, dy, n)
	}
}

func reluGradOf[T float](dst, xp, dyp backend.Ptr, n int) {
	d, x, dy := hostView[T](dst, n), hostView[T](xp, n), hostView[T](dyp, n)
	parallel(n, func(lo, hi int) {
		d, x, dy := d[lo:hi], x[lo:hi], dy[lo:hi]
		for i := range d {
			if x[i] > 0 {
				d[i] = dy[i]
			} else {
				d[i] = 0
			}
		}
	})
}

// ---------------------------------------------------------------------------
// Reductions, returning the bytes the GPU kernels would (see accBytes).

func hostReduce(k kop, dt DType, x, y backend.Ptr, n int) [2]uint64 {
	switch k {
	case kSum:
		switch dt {
		case Float32:
			return [2]uint64{math.Float64bits(sumFloat(hostView[float32](x, n)))}
		case Float64:
			return [2]uint64{math.Float64bits(sumFloat(hostView[float64](x, n)))}
		case Int32:
			return [2]uint64{uint64(sumInt(hostView[int32](x, n)))}
		case Int64:
			return [2]uint64{uint64(sumInt(hostView[int64](x, n)))}
		case Uint8:
			return [2]uint64{uint64(sumInt(hostView[uint8](x, n)))}
		case Int8:
			return [2]uint64{uint64(sumInt(hostView[int8](x, n)))}
		case Int16:
			return [2]uint64{uint64(sumInt(hostView[int16](x, n)))}
		case Uint32:
			return [2]uint64{uint64(sumInt(hostView[uint32](x, n)))}
		case Complex64:
			c := sumComplex(hostView[complex64](x, n))
			return [2]uint64{math.Float64bits(real(c)), math.Float64bits(imag(c))}
		}
	case kMax, kMin:
		isMax := k == kMax
		switch dt {
		case Float32:
			return [2]uint64{bitsOf(extremum(isMax, hostView[float32](x, n)))}
		case Float64:
			return [2]uint64{bitsOf(extremum(isMax, hostView[float64](x, n)))}
		case Int32:
			return [2]uint64{bitsOf(extremum(isMax, hostView[int32](x, n)))}
		case Int64:
			return [2]uint64{bitsOf(extremum(isMax, hostView[int64](x, n)))}
		case Uint8:
			return [2]uint64{bitsOf(extremum(isMax, hostView[uint8](x, n)))}
		case Int8:
			return [2]uint64{bitsOf(extremum(isMax, hostView[int8](x, n)))}
		case Int16:
			return [2]uint64{bitsOf(extremum(isMax, hostView[int16](x, n)))}
		case Uint32:
			return [2]uint64{bitsOf(extremum(isMax, hostView[uint32](x, n)))}
		}
	case kDot:
		switch dt {
		case Float32:
			return [2]uint64{math.Float64bits(dotFloat(hostView[float32](x, n), hostView[float32](y, n)))}
		case Float64:
			return [2]uint64{math.Float64bits(dotFloat(hostView[float64](x, n), hostView[float64](y, n)))}
		}
	}
	return [2]uint64{}
}

func addFloat64(a, b float64) float64 { return a + b }

func sumFloat[T float](x []T) float64 {
	return chunked(len(x), func(lo, hi int) float64 {
		var s float64
		for _, v := range x[lo:hi] {
			s += float64(v)
		}
		return s
	}, addFloat64)
}

// sumInt adds in int64, wrapping past its range as the GPU's does.
func sumInt[T int8 | int16 | int32 | int64 | uint8 | uint32](x []T) int64 {
	return chunked(len(x), func(lo, hi int) int64 {
		var s int64
		for _, v := range x[lo:hi] {
			s += int64(v)
		}
		return s
	}, func(a, b int64) int64 { return a + b })
}

func sumComplex(x []complex64) complex128 {
	return chunked(len(x), func(lo, hi int) complex128 {
		var s complex128
		for _, v := range x[lo:hi] {
			s += complex128(v)
		}
		return s
	}, func(a, b complex128) complex128 { return a + b })
}

func dotFloat[T float](x, y []T) float64 {
	y = y[:len(x)]
	return chunked(len(x), func(lo, hi int) float64 {
		var s float64
		for i := lo; i < hi; i++ {
			s += float64(x[i]) * float64(y[i])
		}
		return s
	}, addFloat64)
}

type realNumber interface {
	float32 | float64 | int32 | int64 | uint8 | int8 | int16 | uint32
}

// replaces reports whether v replaces m as the running maximum (or minimum):
// a NaN always does, and nothing replaces a NaN, so NaN wins whatever the
// order, as in the GPU kernels.
func replaces[T realNumber](isMax bool, m, v T) bool {
	if v != v {
		return true
	}
	if isMax {
		return v > m
	}
	return v < m
}

// extremum is the maximum (or minimum) of a non-empty x.
func extremum[T realNumber](isMax bool, x []T) T {
	return chunked(len(x), func(lo, hi int) T {
		m := x[lo]
		for _, v := range x[lo+1 : hi] {
			if replaces(isMax, m, v) {
				m = v
			}
		}
		return m
	}, func(a, b T) T {
		if replaces(isMax, a, b) {
			return b
		}
		return a
	})
}

// ---------------------------------------------------------------------------
// Row reductions.

func hostRows(k kop, dt DType, dst, x backend.Ptr, rows, cols int) {
	switch dt {
	case Float32:
		rowsOf[float32](k, dst, x, rows, cols)
	case Float64:
		rowsOf[float64](k, dst, x, rows, cols)
	}
}

func rowsOf[T float](k kop, dstp, xp backend.Ptr, rows, cols int) {
	d, x := hostView[T](dstp, rows), hostView[T](xp, rows*cols)
	perRow := max(cols, 1)
	parallel(rows*perRow, func(lo, hi int) {
		for r := lo / perRow; r < hi/perRow; r++ {
			row := x[r*cols : (r+1)*cols]
			if k == kSumRows {
				var s float64
				for _, v := range row {
					s += float64(v)
				}
				d[r] = T(s)
			} else {
				d[r] = extremum(true, row)
			}
		}
	})
}
