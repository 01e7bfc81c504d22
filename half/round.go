package half

import "math"

// layout describes one of the two 16-bit formats, for the conversions that
// are written once for both: from float64, parsing and printing.
type layout struct {
	name string // "Float16" or "BFloat16", for errors and bad verbs
	frac uint   // fraction bits: 10 for float16, 7 for bfloat16
	bias int    // exponent bias: 15, 127
	inf  uint16 // the bits of +Inf: 0x7c00, 0x7f80
}

var (
	float16Layout  = layout{name: "Float16", frac: 10, bias: 15, inf: 0x7c00}
	bfloat16Layout = layout{name: "BFloat16", frac: 7, bias: 127, inf: 0x7f80}
)

// canonicalNaN is the NaN every conversion into either type produces, as
// CUDA's __float2half_rn and __float2bfloat16_rn do: sign and payload are
// dropped.
const canonicalNaN = 0x7fff

// fromFloat64 rounds x to the nearest value of l, ties to even, from x's own
// bits: one rounding, never through float32. tie reports that x lay exactly
// halfway between two neighbours of l (ParseFloat16 needs to know).
func (l layout) fromFloat64(x float64) (bits uint16, tie bool) {
	b := math.Float64bits(x)
	sign := uint16(b>>48) & 0x8000
	a := b &^ (1 << 63)
	if a > 0x7ff0000000000000 {
		return canonicalNaN, false
	}
	// x = m * 2^(e-52), with the implicit bit in m for normal x.
	e := int(a>>52) - 1023
	m := a & (1<<52 - 1)
	if a>>52 == 0 {
		e = -1022
	} else {
		m |= 1 << 52
	}
	if e > l.bias {
		// At least 2^(emax+1), Inf included: beyond even the rounding
		// boundary above the largest finite value.
		return sign | l.inf, false
	}
	// The result's last bit is worth 2^(q-frac), where q is x's exponent,
	// or the smallest normal exponent for what becomes subnormal.
	emin := 1 - l.bias
	q := max(e, emin)
	shift := 52 - int(l.frac) + q - e
	if shift > 63 {
		// m < 2^53 is then below a quarter of the smallest subnormal.
		return sign, false
	}
	r := m >> shift
	rem := m & (1<<shift - 1)
	half := uint64(1) << (shift - 1)
	tie = rem == half
	if rem > half || tie && r&1 == 1 {
		r++
	}
	// r counts units of the last place, the implicit bit included for a
	// normal result; a carry out of the fraction moves into the exponent.
	v := r
	if e >= emin {
		v += uint64(e+l.bias-1) << l.frac
	}
	if v >= uint64(l.inf) {
		return sign | l.inf, tie
	}
	return sign | uint16(v), tie
}
