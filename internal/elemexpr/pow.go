package elemexpr

import "math"

// pow is C's pow. Go's math.Pow squares its way to x^y and loses up to
// 140 ulp as |y log x| grows; this one computes log x in double-double
// and exp of the product with a first-order correction, within 2 ulp of
// glibc's (correctly rounded) pow for |x|, |y| up to 100, and within 10
// near the ends of the range (|y ln x| about 500). CUDA's pow is within 2.
func pow(x, y float64) float64 {
	switch {
	case y == 0 || x == 1:
		return 1
	case y == 1:
		return x
	case x == 0 || math.IsInf(x, 0) || math.IsNaN(x) || math.IsInf(y, 0) || math.IsNaN(y):
		return math.Pow(x, y) // C's special cases, which math.Pow shares
	case x < 0:
		if y != math.Trunc(y) {
			return math.NaN()
		}
		r := accuratePow(-x, y)
		if math.Mod(y, 2) != 0 {
			return -r
		}
		return r
	}
	return accuratePow(x, y)
}

// fdlibm's split of ln 2: e*ln2Hi is exact for any binary exponent e.
const (
	ln2Hi = 6.93147180369123816490e-01
	ln2Lo = 1.90821492927058770002e-10
)

// twoSum is a+b as a rounded sum and its exact error.
func twoSum(a, b float64) (float64, float64) {
	s := a + b
	bb := s - a
	return s, (a - (s - bb)) + (b - bb)
}

// accuratePow is x^y for finite x > 0 and finite y.
func accuratePow(x, y float64) float64 {
	m, e := math.Frexp(x)
	if m < math.Sqrt2/2 {
		m, e = m*2, e-1
	}
	// ln m = 2 atanh(s), s = (m-1)/(m+1), |s| < 0.172, s in double-double.
	num := m - 1 // exact
	den, denLo := twoSum(m, 1)
	s := num / den
	sLo := -(math.FMA(s, den, -num) + s*denLo) / den
	s2 := s * s
	p := s2 * (1.0/3 + s2*(1.0/5+s2*(1.0/7+s2*(1.0/9+s2*(1.0/11+s2*(1.0/13+s2*(1.0/15+s2*(1.0/17+s2*(1.0/19+s2/21)))))))))
	fe := float64(e)
	h, l := twoSum(fe*ln2Hi, 2*s)
	l += fe*ln2Lo + 2*sLo + 2*s*p
	h, l = twoSum(h, l)
	// y ln x = th + tl; exp(th + tl) = exp(th) (1 + tl).
	th := y * h
	tl := math.FMA(y, h, -th) + y*l
	r := math.Exp(th)
	if r == 0 || math.IsInf(r, 0) {
		return r
	}
	return r + r*tl
}
