package elemexpr

import (
	"math/bits"
	"unsafe"
)

// The evaluator's loops, one per operation and operand shape: vv (two
// vectors), vs (a vector and a scalar), sv (a scalar and a vector). Each
// is a plain loop over typed slices that the compiler keeps tight; scalar
// (uniform) operations run the vv form on slices of one element.

type arith interface {
	int32 | uint32 | int64 | uint64 | float32 | float64
}

type integer interface {
	int32 | uint32 | int64 | uint64
}

type float interface {
	float32 | float64
}

type number interface {
	uint8 | int32 | uint32 | int64 | uint64 | float32 | float64
}

func addVV[T arith](o []T, a, b []T) {
	a, b = a[:len(o)], b[:len(o)]
	for k := range o {
		x, y := a[k], b[k]
		o[k] = x + y
	}
}

func addVS[T arith](o []T, a []T, y T) {
	a = a[:len(o)]
	for k := range o {
		x := a[k]
		o[k] = x + y
	}
}

func subVV[T arith](o []T, a, b []T) {
	a, b = a[:len(o)], b[:len(o)]
	for k := range o {
		x, y := a[k], b[k]
		o[k] = x - y
	}
}

func subVS[T arith](o []T, a []T, y T) {
	a = a[:len(o)]
	for k := range o {
		x := a[k]
		o[k] = x - y
	}
}

func subSV[T arith](o []T, x T, b []T) {
	b = b[:len(o)]
	for k := range o {
		y := b[k]
		o[k] = x - y
	}
}

func mulVV[T arith](o []T, a, b []T) {
	a, b = a[:len(o)], b[:len(o)]
	for k := range o {
		x, y := a[k], b[k]
		o[k] = x * y
	}
}

func mulVS[T arith](o []T, a []T, y T) {
	a = a[:len(o)]
	for k := range o {
		x := a[k]
		o[k] = x * y
	}
}

func fdivVV[T float](o []T, a, b []T) {
	a, b = a[:len(o)], b[:len(o)]
	for k := range o {
		x, y := a[k], b[k]
		o[k] = x / y
	}
}

func fdivVS[T float](o []T, a []T, y T) {
	a = a[:len(o)]
	for k := range o {
		x := a[k]
		o[k] = x / y
	}
}

func fdivSV[T float](o []T, x T, b []T) {
	b = b[:len(o)]
	for k := range o {
		y := b[k]
		o[k] = x / y
	}
}

func eqVV[T arith](o []bool, a, b []T) {
	a, b = a[:len(o)], b[:len(o)]
	for k := range o {
		x, y := a[k], b[k]
		o[k] = x == y
	}
}

func eqVS[T arith](o []bool, a []T, y T) {
	a = a[:len(o)]
	for k := range o {
		x := a[k]
		o[k] = x == y
	}
}

func neVV[T arith](o []bool, a, b []T) {
	a, b = a[:len(o)], b[:len(o)]
	for k := range o {
		x, y := a[k], b[k]
		o[k] = x != y
	}
}

func neVS[T arith](o []bool, a []T, y T) {
	a = a[:len(o)]
	for k := range o {
		x := a[k]
		o[k] = x != y
	}
}

func ltVV[T arith](o []bool, a, b []T) {
	a, b = a[:len(o)], b[:len(o)]
	for k := range o {
		x, y := a[k], b[k]
		o[k] = x < y
	}
}

func ltVS[T arith](o []bool, a []T, y T) {
	a = a[:len(o)]
	for k := range o {
		x := a[k]
		o[k] = x < y
	}
}

func leVV[T arith](o []bool, a, b []T) {
	a, b = a[:len(o)], b[:len(o)]
	for k := range o {
		x, y := a[k], b[k]
		o[k] = x <= y
	}
}

func leVS[T arith](o []bool, a []T, y T) {
	a = a[:len(o)]
	for k := range o {
		x := a[k]
		o[k] = x <= y
	}
}

func gtVV[T arith](o []bool, a, b []T) {
	a, b = a[:len(o)], b[:len(o)]
	for k := range o {
		x, y := a[k], b[k]
		o[k] = x > y
	}
}

func gtVS[T arith](o []bool, a []T, y T) {
	a = a[:len(o)]
	for k := range o {
		x := a[k]
		o[k] = x > y
	}
}

func geVV[T arith](o []bool, a, b []T) {
	a, b = a[:len(o)], b[:len(o)]
	for k := range o {
		x, y := a[k], b[k]
		o[k] = x >= y
	}
}

func geVS[T arith](o []bool, a []T, y T) {
	a = a[:len(o)]
	for k := range o {
		x := a[k]
		o[k] = x >= y
	}
}

func landVV[T ~bool](o []T, a, b []T) {
	a, b = a[:len(o)], b[:len(o)]
	for k := range o {
		x, y := a[k], b[k]
		o[k] = x && y
	}
}

func landVS[T ~bool](o []T, a []T, y T) {
	a = a[:len(o)]
	for k := range o {
		x := a[k]
		o[k] = x && y
	}
}

func lorVV[T ~bool](o []T, a, b []T) {
	a, b = a[:len(o)], b[:len(o)]
	for k := range o {
		x, y := a[k], b[k]
		o[k] = x || y
	}
}

func lorVS[T ~bool](o []T, a []T, y T) {
	a = a[:len(o)]
	for k := range o {
		x := a[k]
		o[k] = x || y
	}
}

// idiv is C's integer division, truncating toward zero, with x/0 = 0
// (gocuda's choice: the GPU's value there is unspecified) and
// MinInt / -1 = MinInt (wrapping, as the GPU does).
func idivVV[T integer](o, a, b []T) {
	a, b = a[:len(o)], b[:len(o)]
	for k := range o {
		if b[k] == 0 {
			o[k] = 0
		} else {
			o[k] = a[k] / b[k]
		}
	}
}

func idivVS[T integer](o, a []T, y T) {
	a = a[:len(o)]
	if y == 0 {
		clear(o)
		return
	}
	if y > 0 && y&(y-1) == 0 {
		// A power of two: a shift, biased toward zero for negative x, as
		// compilers divide by such constants (a hardware division costs
		// tens of cycles).
		var zero T
		top := uint(unsafe.Sizeof(zero))*8 - 1
		// Masking with top (a constant in each instantiation) tells the
		// compiler the shift is below the width: no check per element.
		sh := uint(bits.TrailingZeros64(uint64(y))) & top
		if ^zero > 0 { // unsigned
			for k := range o {
				o[k] = a[k] >> (sh & top)
			}
			return
		}
		for k := range o {
			x := a[k]
			o[k] = (x + (x>>top)&(y-1)) >> (sh & top)
		}
		return
	}
	for k := range o {
		o[k] = a[k] / y
	}
}

func idivSV[T integer](o []T, x T, b []T) {
	b = b[:len(o)]
	for k := range o {
		if b[k] == 0 {
			o[k] = 0
		} else {
			o[k] = x / b[k]
		}
	}
}

// imod is C's %: the sign of the dividend, x%0 = 0.
func imodVV[T integer](o, a, b []T) {
	a, b = a[:len(o)], b[:len(o)]
	for k := range o {
		if b[k] == 0 {
			o[k] = 0
		} else {
			o[k] = a[k] % b[k]
		}
	}
}

func andVV[T integer](o, a, b []T) {
	a, b = a[:len(o)], b[:len(o)]
	for k := range o {
		o[k] = a[k] & b[k]
	}
}

func orVV[T integer](o, a, b []T) {
	a, b = a[:len(o)], b[:len(o)]
	for k := range o {
		o[k] = a[k] | b[k]
	}
}

func xorVV[T integer](o, a, b []T) {
	a, b = a[:len(o)], b[:len(o)]
	for k := range o {
		o[k] = a[k] ^ b[k]
	}
}

// Shifts take the count as unsigned: a count of at least the width (or a
// negative one) gives 0 for << and the sign for >>, as the GPU's shl and
// shr, which clamp the count (C leaves it undefined).
func shlVV[T integer, S integer](o, a []T, b []S) {
	a, b = a[:len(o)], b[:len(o)]
	for k := range o {
		o[k] = a[k] << uint64(b[k])
	}
}

func shrVV[T integer, S integer](o, a []T, b []S) {
	a, b = a[:len(o)], b[:len(o)]
	for k := range o {
		o[k] = a[k] >> uint64(b[k])
	}
}

func negV[T arith](o, a []T) {
	a = a[:len(o)]
	for k := range o {
		o[k] = -a[k]
	}
}

func notV[T integer](o, a []T) {
	a = a[:len(o)]
	for k := range o {
		o[k] = ^a[k]
	}
}

func lnotV(o, a []bool) {
	a = a[:len(o)]
	for k := range o {
		o[k] = !a[k]
	}
}

func iabsV[T int32 | int64](o, a []T) {
	a = a[:len(o)]
	for k := range o {
		x := a[k]
		if x < 0 {
			x = -x // abs(MinInt) is MinInt, as on the GPU
		}
		o[k] = x
	}
}

func iminVV[T integer](o, a, b []T) {
	a, b = a[:len(o)], b[:len(o)]
	for k := range o {
		o[k] = min(a[k], b[k])
	}
}

func imaxVV[T integer](o, a, b []T) {
	a, b = a[:len(o)], b[:len(o)]
	for k := range o {
		o[k] = max(a[k], b[k])
	}
}

// selectVV and friends are c ? a : b.
func selectVV[T any](o []T, c []bool, a, b []T) {
	c, a, b = c[:len(o)], a[:len(o)], b[:len(o)]
	for k := range o {
		if c[k] {
			o[k] = a[k]
		} else {
			o[k] = b[k]
		}
	}
}

func selectVS[T any](o []T, c []bool, a []T, y T) {
	c, a = c[:len(o)], a[:len(o)]
	for k := range o {
		if c[k] {
			o[k] = a[k]
		} else {
			o[k] = y
		}
	}
}

func selectSV[T any](o []T, c []bool, x T, b []T) {
	c, b = c[:len(o)], b[:len(o)]
	for k := range o {
		if c[k] {
			o[k] = x
		} else {
			o[k] = b[k]
		}
	}
}

func selectSS[T any](o []T, c []bool, x, y T) {
	c = c[:len(o)]
	for k := range o {
		if c[k] {
			o[k] = x
		} else {
			o[k] = y
		}
	}
}

func fill[T any](o []T, x T) {
	for k := range o {
		o[k] = x
	}
}

// conv is C's conversion where Go's is the same: integer to integer
// (wrapping), integer to float and float to float (rounding to nearest).
func conv[S, D number](o []D, a []S) {
	a = a[:len(o)]
	for k := range o {
		o[k] = D(a[k])
	}
}

// convSat is float to integer: truncation toward zero, saturating at the
// type's bounds, NaN to 0, as the GPU's cvt.rzi (C leaves values out of
// range undefined).
func convSat[S float, D uint8 | integer](o []D, a []S, lo, hiEx float64, minD, maxD D) {
	a = a[:len(o)]
	for k := range o {
		x := float64(a[k])
		switch {
		case x != x:
			o[k] = 0
		case x >= hiEx:
			o[k] = maxD
		case x <= lo-1:
			o[k] = minD
		default:
			o[k] = D(a[k])
		}
	}
}

func toBool[S number](o []bool, a []S) {
	a = a[:len(o)]
	for k := range o {
		o[k] = a[k] != 0
	}
}

func fromBool[D number](o []D, a []bool) {
	a = a[:len(o)]
	for k := range o {
		if a[k] {
			o[k] = 1
		} else {
			o[k] = 0
		}
	}
}

// call1 applies a double function; for float it rounds the double result.
func call1[T float](o, a []T, f func(float64) float64) {
	a = a[:len(o)]
	for k := range o {
		o[k] = T(f(float64(a[k])))
	}
}

func class1[T float](o []bool, a []T, f func(float64) float64) {
	a = a[:len(o)]
	for k := range o {
		o[k] = f(float64(a[k])) != 0
	}
}

func call2[T float](o, a, b []T, f func(float64, float64) float64) {
	a, b = a[:len(o)], b[:len(o)]
	for k := range o {
		o[k] = T(f(float64(a[k]), float64(b[k])))
	}
}

func call3[T float](o, a, b, c []T, f func(float64, float64, float64) float64) {
	a, b, c = a[:len(o)], b[:len(o)], c[:len(o)]
	for k := range o {
		o[k] = T(f(float64(a[k]), float64(b[k]), float64(c[k])))
	}
}

// sqrtV is sqrt inline: math.Sqrt is one instruction, a call through a
// function value is not.
func sqrtV[T float](o, a []T) {
	a = a[:len(o)]
	for k := range o {
		o[k] = T(sqrt(float64(a[k])))
	}
}

func fabsV[T float](o, a []T) {
	a = a[:len(o)]
	for k := range o {
		o[k] = T(abs(float64(a[k])))
	}
}

// madd is a*b + c fused into one pass (a a vector; b and c either). The
// product is converted to T before the sum: an explicit conversion rounds
// it, so no Go compiler contracts the two into a fused multiply-add (as
// arm64's would), and the result is C's unfused one.

func maddVVV[T arith](o, a, b, c []T) {
	a, b, c = a[:len(o)], b[:len(o)], c[:len(o)]
	for k := range o {
		o[k] = T(a[k]*b[k]) + c[k]
	}
}

func maddVSV[T arith](o, a []T, s T, c []T) {
	a, c = a[:len(o)], c[:len(o)]
	for k := range o {
		o[k] = T(a[k]*s) + c[k]
	}
}

func maddVVS[T arith](o, a, b []T, c T) {
	a, b = a[:len(o)], b[:len(o)]
	for k := range o {
		o[k] = T(a[k]*b[k]) + c
	}
}

func maddVSS[T arith](o, a []T, s, c T) {
	a = a[:len(o)]
	for k := range o {
		o[k] = T(a[k]*s) + c
	}
}
