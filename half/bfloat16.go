package half

import "math"

// BFloat16 is a bfloat16 number: the top 16 bits of a float32, with its 8
// exponent bits (so its range) and 7 fraction bits. BFloat16(0x3f80) is 1.
type BFloat16 uint16

// BFloat16 constants a numeric program needs: MaxBFloat16 is about
// 3.39e+38, SmallestNormalBFloat16 2^-126 (float32's), SmallestNonzeroBFloat16
// the smallest subnormal 2^-133 (about 9.2e-41) and EpsilonBFloat16 the
// distance from 1 to the next value, 2^-7.
const (
	MaxBFloat16             BFloat16 = 0x7f7f
	SmallestNormalBFloat16  BFloat16 = 0x0080
	SmallestNonzeroBFloat16 BFloat16 = 0x0001
	EpsilonBFloat16         BFloat16 = 0x3c00
	InfBFloat16             BFloat16 = 0x7f80
	NegInfBFloat16          BFloat16 = 0xff80
	// NaNBFloat16 is the NaN that conversions produce (0x7fff, as CUDA's).
	// Other bit patterns are NaNs too: test with IsNaN, not ==.
	NaNBFloat16 BFloat16 = canonicalNaN
)

// BFloat16FromFloat32 rounds f to the nearest BFloat16, ties to even:
// float32's top 16 bits, rounded by the 16 below. float32 values at or above
// halfway between MaxBFloat16 and 2^128 become +Inf (and likewise negative);
// float32 subnormals round to bfloat16 subnormals; any NaN becomes
// NaNBFloat16.
func BFloat16FromFloat32(f float32) BFloat16 {
	x := math.Float32bits(f)
	if x&0x7fffffff > 0x7f800000 {
		return NaNBFloat16
	}
	// Adding 0x7fff plus the bit that stays last rounds ties to even; the
	// carry runs into the exponent and, past the largest value, to Inf.
	return BFloat16((x + 0x7fff + (x>>16)&1) >> 16)
}

// BFloat16FromFloat64 rounds d to the nearest BFloat16, ties to even, in one
// step from d, not through float32.
func BFloat16FromFloat64(d float64) BFloat16 {
	b, _ := bfloat16Layout.fromFloat64(d)
	return BFloat16(b)
}

// Float32 returns b exactly: its bits are float32's top 16. NaNs keep
// their sign and payload.
func (b BFloat16) Float32() float32 { return math.Float32frombits(uint32(b) << 16) }

// Float64 returns b exactly.
func (b BFloat16) Float64() float64 { return float64(b.Float32()) }

// IsNaN reports whether b is a NaN (any payload, either sign).
func (b BFloat16) IsNaN() bool { return b&0x7fff > 0x7f80 }

// IsInf reports whether b is an infinity, according to sign as in
// math.IsInf: +Inf for sign > 0, -Inf for sign < 0, either for 0.
func (b BFloat16) IsInf(sign int) bool {
	return sign >= 0 && b == InfBFloat16 || sign <= 0 && b == NegInfBFloat16
}
