package half

import "math"

// Float16 is an IEEE 754 binary16 number: 1 sign bit, 5 exponent bits, 10
// fraction bits. Its bits are the value's own: Float16(0x3c00) is 1.
type Float16 uint16

// Float16 constants a numeric program needs. The limits are as in package
// math: MaxFloat16 is 65504, SmallestNormalFloat16 2^-14 (about 6.1e-05),
// SmallestNonzeroFloat16 the smallest subnormal 2^-24 (about 6e-08) and
// EpsilonFloat16 the distance from 1 to the next value, 2^-10.
const (
	MaxFloat16             Float16 = 0x7bff
	SmallestNormalFloat16  Float16 = 0x0400
	SmallestNonzeroFloat16 Float16 = 0x0001
	EpsilonFloat16         Float16 = 0x1400
	InfFloat16             Float16 = 0x7c00
	NegInfFloat16          Float16 = 0xfc00
	// NaNFloat16 is the NaN that conversions produce (0x7fff, as CUDA's).
	// Other bit patterns are NaNs too: test with IsNaN, not ==.
	NaNFloat16 Float16 = canonicalNaN
)

// Float16FromFloat32 rounds f to the nearest Float16, ties to even. Values
// from 65520 up (halfway between 65504 and 2^16) become +Inf, and likewise
// below -65520; any NaN becomes NaNFloat16.
func Float16FromFloat32(f float32) Float16 {
	x := math.Float32bits(f)
	sign := uint16(x>>16) & 0x8000
	a := x & 0x7fffffff
	switch {
	case a >= 0x477ff000: // 65520, Inf, NaN
		if a > 0x7f800000 {
			return NaNFloat16
		}
		return Float16(sign | 0x7c00)
	case a >= 0x38800000: // a normal Float16: rebias the exponent, round off 13 bits
		a -= (127 - 15) << 23
		return Float16(sign | uint16((a+0xfff+(a>>13)&1)>>13))
	case a > 0x33000000: // a subnormal Float16: above 2^-25, half the smallest
		m := a&0x7fffff | 0x800000
		shift := 126 - a>>23 // 14 to 24: the value is m * 2^-shift units of 2^-24
		return Float16(sign | uint16((m+(1<<(shift-1)-1)+(m>>shift)&1)>>shift))
	default: // at most 2^-25, which ties to even: zero
		return Float16(sign)
	}
}

// Float16FromFloat64 rounds d to the nearest Float16, ties to even, in one
// step from d: not through float32, whose own rounding could land on a
// halfway point and round again.
func Float16FromFloat64(d float64) Float16 {
	b, _ := float16Layout.fromFloat64(d)
	return Float16(b)
}

// Float32 returns h exactly. Every Float16 has its own float32, NaNs
// included: their sign and payload are kept.
func (h Float16) Float32() float32 {
	sign := uint32(h&0x8000) << 16
	a := uint32(h & 0x7fff)
	switch {
	case a >= 0x7c00: // Inf, NaN
		return math.Float32frombits(sign | 0x7f800000 | (a&0x3ff)<<13)
	case a >= 0x0400:
		return math.Float32frombits(sign | (a<<13 + (127-15)<<23))
	default: // zero or subnormal: a units of 2^-24, exact in float32
		return math.Float32frombits(sign | math.Float32bits(float32(a)*(1.0/(1<<24))))
	}
}

// Float64 returns h exactly.
func (h Float16) Float64() float64 { return float64(h.Float32()) }

// IsNaN reports whether h is a NaN (any payload, either sign).
func (h Float16) IsNaN() bool { return h&0x7fff > 0x7c00 }

// IsInf reports whether h is an infinity, according to sign as in
// math.IsInf: +Inf for sign > 0, -Inf for sign < 0, either for 0.
func (h Float16) IsInf(sign int) bool {
	return sign >= 0 && h == InfFloat16 || sign <= 0 && h == NegInfFloat16
}
