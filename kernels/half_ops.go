package kernels

import (
	"math"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/half"
)

// The hand-written operations on float16 and bfloat16 (cuda/half_ops.cuh
// on a GPU, these on the host): arithmetic widens each element to float32
// exactly, computes in float32 and rounds once to the type, so that both
// backends give the same bits; Take, Scatter, Concat move the 16-bit
// patterns as they are.

// halfCodec is a 16-bit float type's exact widening to float32 and its
// rounding back (to nearest, ties to even; NaN becomes 0x7fff), package
// half's conversions, which half.cuh's match bit for bit.
type halfCodec struct {
	widen    func(uint16) float32
	narrow   func(float32) uint16
	narrow64 func(float64) uint16
	one      uint16
}

var (
	f16Codec = halfCodec{
		widen:    func(h uint16) float32 { return half.Float16(h).Float32() },
		narrow:   func(f float32) uint16 { return uint16(half.Float16FromFloat32(f)) },
		narrow64: func(d float64) uint16 { return uint16(half.Float16FromFloat64(d)) },
		one:      0x3c00,
	}
	bf16Codec = halfCodec{
		widen:    func(h uint16) float32 { return half.BFloat16(h).Float32() },
		narrow:   func(f float32) uint16 { return uint16(half.BFloat16FromFloat32(f)) },
		narrow64: func(d float64) uint16 { return uint16(half.BFloat16FromFloat64(d)) },
		one:      0x3f80,
	}
)

// codecOf is dt's codec; dt is Float16 or BFloat16.
func codecOf(dt DType) *halfCodec {
	if dt == BFloat16 {
		return &bf16Codec
	}
	return &f16Codec
}

// halfChunk is how many elements the host widens into a float32 buffer at
// a time.
const halfChunk = 512

func (c *halfCodec) widenInto(dst []float32, src []uint16) {
	for i, h := range src[:len(dst)] {
		dst[i] = c.widen(h)
	}
}

func (c *halfCodec) narrowInto(dst []uint16, src []float32) {
	for i, f := range src[:len(dst)] {
		dst[i] = c.narrow(f)
	}
}

// hostHalfBinary is Add, Sub, Mul, Div (k) through float32: chunks widened,
// float32's loop, rounded back.
func hostHalfBinary(k kop, dt DType, dst, a, b backend.Ptr, n int) {
	c := codecOf(dt)
	d, x, y := hostView[uint16](dst, n), hostView[uint16](a, n), hostView[uint16](b, n)
	parallel(n, func(lo, hi int) {
		var xs, ys [halfChunk]float32
		for i := lo; i < hi; i += halfChunk {
			j := min(i+halfChunk, hi)
			xf, yf := xs[:j-i], ys[:j-i]
			c.widenInto(xf, x[i:j])
			c.widenInto(yf, y[i:j])
			binarySlices(k, xf, xf, yf)
			c.narrowInto(d[i:j], xf)
		}
	})
}

// hostHalfScalar is AddScalar ... DivScalar (k) through float32.
func hostHalfScalar(k kop, dt DType, dst, a backend.Ptr, bits uint64, n int) {
	c := codecOf(dt)
	d, x, s := hostView[uint16](dst, n), hostView[uint16](a, n), c.widen(uint16(bits))
	parallel(n, func(lo, hi int) {
		var xs [halfChunk]float32
		for i := lo; i < hi; i += halfChunk {
			j := min(i+halfChunk, hi)
			xf := xs[:j-i]
			c.widenInto(xf, x[i:j])
			scalarSlices(k, xf, xf, s)
			c.narrowInto(d[i:j], xf)
		}
	})
}

// hostHalfAxpy sets y = alpha*x + y: the product (exact in float32 for
// finite values that do not underflow) rounded to float32, the sum rounded
// to float32, then to the type, as the kernel's _rn intrinsics do.
func hostHalfAxpy(dt DType, yp, xp backend.Ptr, bits uint64, n int) {
	c := codecOf(dt)
	y, x, alpha := hostView[uint16](yp, n), hostView[uint16](xp, n), c.widen(uint16(bits))
	parallel(n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			y[i] = c.narrow(float32(alpha*c.widen(x[i])) + c.widen(y[i]))
		}
	})
}

// hostHalfReluGrad copies dy's pattern where x > 0, else +0.
func hostHalfReluGrad(dt DType, dst, xp, dyp backend.Ptr, n int) {
	c := codecOf(dt)
	d, x, dy := hostView[uint16](dst, n), hostView[uint16](xp, n), hostView[uint16](dyp, n)
	parallel(n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if c.widen(x[i]) > 0 {
				d[i] = dy[i]
			} else {
				d[i] = 0
			}
		}
	})
}

// hostHalfStrided is the strided binary operations through float32: each
// row of the simplified layout gathered widened, computed, rounded back.
func hostHalfStrided(k kop, dt DType, dstp, ap, bp backend.Ptr, l *stridedLayout) {
	c := codecOf(dt)
	nd := len(l.shape)
	cols := l.shape[nd-1]
	sa, sb := l.sa[nd-1], l.sb[nd-1]
	d, x, y := hostView[uint16](dstp, l.n), hostView[uint16](ap, l.extentA), hostView[uint16](bp, l.extentB)
	parallel(l.n, func(lo, hi int) {
		var xs, ys [halfChunk]float32
		for r := lo / cols; r < hi/cols; r++ {
			oa, ob := l.rowOffsets(r)
			row := d[r*cols : (r+1)*cols]
			for c0 := 0; c0 < cols; c0 += halfChunk {
				c1 := min(c0+halfChunk, cols)
				xf, yf := xs[:c1-c0], ys[:c1-c0]
				for j := range xf {
					xf[j] = c.widen(x[oa+(c0+j)*sa])
					yf[j] = c.widen(y[ob+(c0+j)*sb])
				}
				binarySlices(k, xf, xf, yf)
				c.narrowInto(row[c0:c1], xf)
			}
		}
	})
}

// halfArangeSteps is Arange's second element (start+step in float32,
// rounded once) and its delta, second - start in float32, as float32's
// bits: the kernels compute start + i*delta in float32 and round once.
func halfArangeSteps(dt DType, startBits, stepBits uint64) (secondBits, deltaBits uint64) {
	c := codecOf(dt)
	start := c.widen(uint16(startBits))
	second := c.narrow(start + c.widen(uint16(stepBits)))
	return uint64(second), uint64(math.Float32bits(c.widen(second) - start))
}

func hostHalfArange(dt DType, dst backend.Ptr, startBits, secondBits, deltaBits uint64, n int) {
	c := codecOf(dt)
	d := hostView[uint16](dst, n)
	start, delta := c.widen(uint16(startBits)), math.Float32frombits(uint32(deltaBits))
	parallel(n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			d[i] = c.narrow(start + float32(float32(i)*delta))
		}
		if lo <= 1 && 1 < hi {
			d[1] = uint16(secondBits)
		}
	})
}

// hostHalfLinspace rounds each float64 value once.
func hostHalfLinspace(dt DType, dst backend.Ptr, p *linspacePlan, n int, endpoint bool) {
	c := codecOf(dt)
	d := hostView[uint16](dst, n)
	parallel(n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			d[i] = c.narrow64(p.at(i, n, endpoint))
		}
	})
}

func hostHalfEye(dt DType, dst backend.Ptr, rows, cols, k int) {
	one := codecOf(dt).one
	d := hostView[uint16](dst, rows*cols)
	splitUnits(rows, cols, func(lo, hi int) {
		clear(d[lo*cols : hi*cols])
		for r := lo; r < hi; r++ {
			if c := r + k; c >= 0 && c < cols {
				d[r*cols+c] = one
			}
		}
	})
}
