package half

import (
	"math"
	"math/big"
	"sort"
	"testing"
)

// The tests' reference: each format's values decoded from the definition
// with math.Ldexp, and rounding done by finding the two neighbours of x
// among every finite value and comparing x with their exact midpoint in
// big.Float. It shares no code and no bit trick with the package.

type refFormat struct {
	name    string
	expBits int // 5 for float16, 8 for bfloat16
	frac    int // 10, 7
	// positive finite values in increasing order, bits 0 up, then
	// 2^(emax+1): IEEE rounds as if the exponent went on, so a value
	// rounding there overflows to Inf.
	values []*big.Float
	bits   []uint16
}

func newRefFormat(name string, expBits, frac int) *refFormat {
	f := &refFormat{name: name, expBits: expBits, frac: frac}
	inf := uint16((1<<expBits - 1) << frac)
	for b := uint16(0); b < inf; b++ {
		f.values = append(f.values, new(big.Float).SetFloat64(f.decode(b)))
		f.bits = append(f.bits, b)
	}
	emax := 1<<(expBits-1) - 1
	f.values = append(f.values, new(big.Float).SetFloat64(math.Ldexp(1, emax+1)))
	f.bits = append(f.bits, inf)
	return f
}

var (
	refFloat16  = newRefFormat("Float16", 5, 10)
	refBFloat16 = newRefFormat("BFloat16", 8, 7)
)

func (f *refFormat) infBits() uint16 { return uint16((1<<f.expBits - 1) << f.frac) }

// decode returns the value of bits b; NaN for any NaN.
func (f *refFormat) decode(b uint16) float64 {
	bias := 1<<(f.expBits-1) - 1
	sign := 1.0
	if b>>15 == 1 {
		sign = -1
	}
	exp := int(b>>f.frac) & (1<<f.expBits - 1)
	mant := float64(int(b) & (1<<f.frac - 1))
	switch exp {
	case 1<<f.expBits - 1:
		if mant != 0 {
			return math.NaN()
		}
		return math.Inf(int(sign))
	case 0:
		return sign * math.Ldexp(mant, 1-bias-f.frac)
	default:
		return sign * math.Ldexp(mant+math.Ldexp(1, f.frac), exp-bias-f.frac)
	}
}

// round returns the bits nearest x, ties to the even bits; NaN gives the
// canonical 0x7fff.
func (f *refFormat) round(x float64) uint16 {
	if math.IsNaN(x) {
		return 0x7fff
	}
	var sign uint16
	if math.Signbit(x) {
		sign = 0x8000
	}
	ax := new(big.Float).SetFloat64(math.Abs(x))
	top := f.values[len(f.values)-1]
	if ax.Cmp(top) >= 0 {
		return sign | f.infBits()
	}
	// the first value above ax; the one before it is at most ax
	i := sort.Search(len(f.values), func(i int) bool { return f.values[i].Cmp(ax) > 0 })
	lo, hi := i-1, i
	if f.values[lo].Cmp(ax) == 0 {
		return sign | f.bits[lo]
	}
	mid := new(big.Float).SetPrec(200).Add(f.values[lo], f.values[hi])
	mid.Quo(mid, big.NewFloat(2))
	switch ax.Cmp(mid) {
	case -1:
		return sign | f.bits[lo]
	case 1:
		return sign | f.bits[hi]
	}
	if f.bits[lo]&1 == 0 {
		return sign | f.bits[lo]
	}
	return sign | f.bits[hi]
}

func TestReferenceDecodesKnownValues(t *testing.T) {
	// The reference itself, against values everyone agrees on.
	for _, c := range []struct {
		f    *refFormat
		bits uint16
		want float64
	}{
		{refFloat16, 0x3c00, 1},
		{refFloat16, 0x7bff, 65504},
		{refFloat16, 0x0001, math.Ldexp(1, -24)},
		{refFloat16, 0x0400, math.Ldexp(1, -14)},
		{refFloat16, 0xc000, -2},
		{refFloat16, 0x7c00, math.Inf(1)},
		{refBFloat16, 0x3f80, 1},
		{refBFloat16, 0x7f7f, 3.3895313892515355e38},
		{refBFloat16, 0x0001, math.Ldexp(1, -133)},
		{refBFloat16, 0xff80, math.Inf(-1)},
	} {
		if got := c.f.decode(c.bits); got != c.want {
			t.Errorf("%s reference decode(%#04x) = %g, want %g", c.f.name, c.bits, got, c.want)
		}
	}
}
