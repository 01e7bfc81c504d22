package half

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// String returns the shortest decimal that ParseFloat16 turns back into h,
// in the form fmt's %v gives a float32 ("1", "0.1", "65500", "6e-08",
// "+Inf", "NaN"). Digits that would only pin down the float32 value are
// left out: Float16FromFloat32(0.1).String() is "0.1", where the exact
// value is 0.0999755859375.
func (h Float16) String() string { return float16Layout.format(uint16(h), h.Float64()) }

// String returns the shortest decimal that ParseBFloat16 turns back into b,
// in the form fmt's %v gives a float32 ("1", "0.1", "3.39e+38").
func (b BFloat16) String() string { return bfloat16Layout.format(uint16(b), b.Float64()) }

// Format implements fmt.Formatter. %v, %g and %G without a precision print
// the shortest digits, as String; with a precision, and for %e, %E, %f,
// %F, %b, %x and %X, h prints as its exact value would as a float64.
// Width and flags work as for float32.
func (h Float16) Format(s fmt.State, verb rune) {
	float16Layout.fmt(s, verb, uint16(h), h.Float64())
}

// Format implements fmt.Formatter, as Float16's Format.
func (b BFloat16) Format(s fmt.State, verb rune) {
	bfloat16Layout.fmt(s, verb, uint16(b), b.Float64())
}

// ParseFloat16 converts s to the nearest Float16, ties to even. s is what
// strconv.ParseFloat accepts: a decimal or hexadecimal floating-point
// number, "Inf" or "NaN" (any case, optionally signed). The rounding is
// exact, from the number s names, not from a float64 rounding of it. A
// finite s that rounds to ±Inf (from ±65520) returns ±Inf and an error
// wrapping strconv.ErrRange; a malformed s returns an error wrapping
// strconv.ErrSyntax.
func ParseFloat16(s string) (Float16, error) {
	b, err := float16Layout.parse(s)
	return Float16(b), err
}

// ParseBFloat16 converts s to the nearest BFloat16, ties to even, as
// ParseFloat16 does for Float16.
func ParseBFloat16(s string) (BFloat16, error) {
	b, err := bfloat16Layout.parse(s)
	return BFloat16(b), err
}

func (l layout) parse(s string) (uint16, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) { // beyond float64's range, so beyond ours
			b, _ := l.fromFloat64(f)
			return b, l.rangeError(s)
		}
		return 0, fmt.Errorf("half.Parse%s: parsing %q: %w (want a decimal or hexadecimal number, Inf or NaN, as strconv.ParseFloat accepts)",
			l.name, s, strconv.ErrSyntax)
	}
	b, tie := l.fromFloat64(f)
	if tie {
		// f is halfway between two of our values; the number s names may
		// not be f itself but just above or below it, where float64's
		// rounding took it. Then it rounds away from the halfway point.
		if r, ok := new(big.Rat).SetString(s); ok {
			switch r.Cmp(new(big.Rat).SetFloat64(f)) {
			case -1:
				b, _ = l.fromFloat64(math.Nextafter(f, math.Inf(-1)))
			case 1:
				b, _ = l.fromFloat64(math.Nextafter(f, math.Inf(1)))
			}
		}
	}
	if b&0x7fff == l.inf && !math.IsInf(f, 0) {
		return b, l.rangeError(s)
	}
	return b, nil
}

func (l layout) rangeError(s string) error {
	return fmt.Errorf("half.Parse%s: parsing %q: %w (beyond the largest finite %s; the result is Inf)",
		l.name, s, strconv.ErrRange, l.name)
}

// format writes the shortest decimal of the value x with bits b.
func (l layout) format(b uint16, x float64) string {
	return strconv.FormatFloat(l.shortest(b, x), 'g', -1, 64)
}

// fmt formats for fmt.Formatter: the shortest digits stand in for the
// exact value where float32 would print shortest digits too.
func (l layout) fmt(s fmt.State, verb rune, b uint16, x float64) {
	switch verb {
	case 'v', 'g', 'G':
		if _, ok := s.Precision(); !ok {
			x = l.shortest(b, x)
		}
	case 'b', 'e', 'E', 'f', 'F', 'x', 'X':
	default:
		fmt.Fprintf(s, "%%!%c(half.%s=%s)", verb, l.name, l.format(b, x))
		return
	}
	fmt.Fprintf(s, fmt.FormatString(s, verb), x)
}

// shortest returns the float64 whose own shortest decimal is the shortest
// one that parses back to b (x is b's value): for each length, the decimal
// of that length nearest x, else the one on x's other side, since the
// interval rounding to b need not be centred on x (it is not at powers of
// two). Inf and NaN come back as they are.
func (l layout) shortest(b uint16, x float64) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	for n := 1; n < 17; n++ {
		s := strconv.FormatFloat(x, 'e', n-1, 64)
		if d, ok := l.parsesTo(s, b); ok {
			return d
		}
		// s is "-d.ddde±xx": its digits as one integer, and their scale.
		mant, exp, _ := strings.Cut(s, "e")
		neg := strings.HasPrefix(mant, "-")
		digits, err := strconv.ParseUint(strings.Replace(strings.TrimPrefix(mant, "-"), ".", "", 1), 10, 64)
		e, err2 := strconv.Atoi(exp)
		if err != nil || err2 != nil {
			break
		}
		d, _ := strconv.ParseFloat(s, 64)
		if math.Abs(d) > math.Abs(x) {
			digits--
		} else {
			digits++
		}
		other := strconv.FormatUint(digits, 10) + "e" + strconv.Itoa(e-(n-1))
		if neg {
			other = "-" + other
		}
		if d, ok := l.parsesTo(other, b); ok {
			return d
		}
	}
	return x // not reached: 17 digits name x itself
}

// parsesTo reports whether s parses to b, and s as a float64.
func (l layout) parsesTo(s string, b uint16) (float64, bool) {
	got, err := l.parse(s)
	if err != nil || got != b {
		return 0, false
	}
	d, err := strconv.ParseFloat(s, 64)
	return d, err == nil
}
