package half

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStringOfEveryValueParsesBack(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.ref.name, func(t *testing.T) {
			for i := 0; i < 1<<16; i++ {
				b := uint16(i)
				s := k.str(b)
				got, err := k.parse(s)
				if k.isNaN(b) {
					require.Equal(t, "NaN", s)
					require.NoError(t, err)
					require.True(t, k.isNaN(got))
					continue
				}
				require.NoError(t, err, "%#04x printed %q", b, s)
				require.Equal(t, b, got, "%#04x printed %q", b, s)
				// and as fmt prints a float32: no "e" below 1e+06 or
				// above 1e-04, at least two exponent digits
				assert.Equal(t, s, strconv.FormatFloat(k.shortest(b), 'g', -1, 32), "%#04x", b)
			}
		})
	}
}

// TestStringIsShortest checks, with exact rationals, that no decimal with
// fewer significant digits lies where the value's neighbours' midpoints
// bound it (ends included only when ties round to this value).
func TestStringIsShortest(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.ref.name, func(t *testing.T) {
			for i := 1; i < len(k.ref.values)-1; i++ { // positive finite, not zero
				b := k.ref.bits[i]
				s := k.str(b)
				n := significantDigits(s)
				if n == 1 {
					continue
				}
				lo, hi := midRat(k.ref, i-1), midRat(k.ref, i)
				inclusive := b&1 == 0
				if d, ok := decimalWithin(lo, hi, inclusive, n-1); ok {
					t.Fatalf("%#04x printed %q (%d digits), but %s has %d and rounds to it too", b, s, n, d, n-1)
				}
			}
		})
	}
}

// midRat is the midpoint of the reference's values i and i+1.
func midRat(f *refFormat, i int) *big.Rat {
	a, _ := f.values[i].Rat(nil)
	b, _ := f.values[i+1].Rat(nil)
	m := new(big.Rat).Add(a, b)
	return m.Quo(m, big.NewRat(2, 1))
}

func significantDigits(s string) int {
	mant, _, _ := strings.Cut(s, "e")
	digits := strings.TrimLeft(strings.ReplaceAll(mant, ".", ""), "0")
	if !strings.Contains(s, "e") && !strings.Contains(s, ".") {
		digits = strings.TrimRight(digits, "0") // 65500: trailing zeros are not significant
	}
	return len(digits)
}

// decimalWithin looks for a decimal with n significant digits in (lo, hi),
// or [lo, hi] when inclusive: at each scale 10^k where n digits fit, the
// multiple of 10^k just above lo.
func decimalWithin(lo, hi *big.Rat, inclusive bool, n int) (string, bool) {
	lf, _ := lo.Float64()
	top := int(math.Floor(math.Log10(lf)))
	for k := top - n - 1; k <= top+2; k++ {
		unit := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(k))), nil))
		if k < 0 {
			unit.Inv(unit)
		}
		// the least multiple of unit not below lo
		q := new(big.Rat).Quo(lo, unit)
		c := new(big.Int).Quo(q.Num(), q.Denom())
		if new(big.Rat).SetInt(c).Cmp(q) < 0 || !inclusive && new(big.Rat).SetInt(c).Cmp(q) == 0 {
			c.Add(c, big.NewInt(1))
		}
		if len(strings.TrimRight(c.String(), "0")) > n {
			continue
		}
		d := new(big.Rat).Mul(new(big.Rat).SetInt(c), unit)
		if cmp := d.Cmp(hi); cmp < 0 || inclusive && cmp == 0 {
			return fmt.Sprintf("%se%d", c, k), true
		}
	}
	return "", false
}

func abs(k int) int {
	if k < 0 {
		return -k
	}
	return k
}

func TestFloat16StringMatchesNumpysShortestDigits(t *testing.T) {
	// numpy's format_float_scientific(unique=True), Dragon4, for every
	// non-negative finite float16: the same digits and exponent.
	for _, row := range readGolden(t, "f16_shortest.txt.gz") {
		h := Float16(hexBits(t, row[0], 16))
		mant, exp, ok := strings.Cut(row[1], "e")
		require.True(t, ok, row[1])
		e, err := strconv.Atoi(exp)
		require.NoError(t, err)
		want := strings.TrimSuffix(mant, ".") + "e" + fmt.Sprintf("%+03d", e)
		got := strconv.FormatFloat(float16Layout.shortest(uint16(h), h.Float64()), 'e', -1, 64)
		require.Equal(t, want, got, "%#04x", uint16(h))
	}
}

func TestString(t *testing.T) {
	for _, c := range []struct {
		name string
		got  fmt.Stringer
		want string
	}{
		{"Float16 one", Float16(0x3c00), "1"},
		{"Float16 0.1", Float16FromFloat32(0.1), "0.1"},
		{"Float16 one third", Float16FromFloat32(1.0 / 3), "0.3333"},
		{"Float16 largest finite", MaxFloat16, "65500"},
		{"Float16 smallest subnormal", SmallestNonzeroFloat16, "6e-08"},
		{"Float16 smallest normal", SmallestNormalFloat16, "6.104e-05"},
		{"Float16 negative zero", Float16(0x8000), "-0"},
		{"Float16 -2.5", Float16FromFloat32(-2.5), "-2.5"},
		{"Float16 +Inf", InfFloat16, "+Inf"},
		{"Float16 -Inf", NegInfFloat16, "-Inf"},
		{"Float16 NaN", NaNFloat16, "NaN"},
		{"Float16 negative NaN", Float16(0xfe00), "NaN"},
		{"BFloat16 one", BFloat16(0x3f80), "1"},
		{"BFloat16 0.1", BFloat16FromFloat32(0.1), "0.1"},
		{"BFloat16 one third", BFloat16FromFloat32(1.0 / 3), "0.334"},
		{"BFloat16 largest finite", MaxBFloat16, "3.39e+38"},
		{"BFloat16 smallest subnormal", SmallestNonzeroBFloat16, "9e-41"},
		{"BFloat16 1e6", BFloat16FromFloat32(1e6), "1e+06"},
		{"BFloat16 pi", BFloat16FromFloat32(math.Pi), "3.14"},
		{"BFloat16 +Inf", InfBFloat16, "+Inf"},
		{"BFloat16 NaN", NaNBFloat16, "NaN"},
	} {
		assert.Equal(t, c.want, c.got.String(), c.name)
	}
}

func TestFormatVerbs(t *testing.T) {
	third := Float16FromFloat32(1.0 / 3) // exactly 0.333251953125
	for _, c := range []struct {
		format string
		arg    any
		want   string
	}{
		{"%v", third, "0.3333"},
		{"%g", third, "0.3333"},
		{"%G", Float16FromFloat32(1e-5), "1E-05"},
		{"%8v|", third, "  0.3333|"},
		{"%-8v|", third, "0.3333  |"},
		{"%+v", third, "0.3333"}, // as for a float32: %+v asks for field names, not a sign
		{"%+g", third, "+0.3333"},
		{"%08v", Float16FromFloat32(-2.5), "-00002.5"},
		{"%.3g", third, "0.333"},
		{"%.10g", third, "0.3332519531"},
		{"%#g", third, "0.333300"}, // as for a float32: shortest digits, padded to 6
		{"%e", third, "3.332520e-01"},
		{"%.2f", third, "0.33"},
		{"%f", Float16FromFloat32(0.1), "0.099976"},
		{"%x", Float16(0x3c00), "0x1p+00"},
		{"%v", []Float16{0x3c00, 0x4000, NaNFloat16}, "[1 2 NaN]"},
		{"%v", BFloat16FromFloat32(0.1), "0.1"},
		{"%.4f", BFloat16FromFloat32(0.1), "0.1001"},
		{"%6.1f|", InfBFloat16, "  +Inf|"},
		{"%s", third, "%!s(half.Float16=0.3333)"},
		{"%d", BFloat16(0x3f80), "%!d(half.BFloat16=1)"},
	} {
		assert.Equal(t, c.want, fmt.Sprintf(c.format, c.arg), "%s of %v", c.format, c.arg)
	}
}

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in        string
		f16       Float16
		bf16      BFloat16
		f16Range  bool // Float16 overflows
		bf16Range bool
	}{
		{in: "1", f16: 0x3c00, bf16: 0x3f80},
		{in: "-0", f16: 0x8000, bf16: 0x8000},
		{in: "0.1", f16: 0x2e66, bf16: 0x3dcd},
		{in: "0x1p-24", f16: 0x0001, bf16: 0x3380},
		{in: "65504", f16: MaxFloat16, bf16: 0x4780},
		{in: "65519.99", f16: MaxFloat16, bf16: 0x4780},
		{in: "65520", f16: InfFloat16, bf16: 0x4780, f16Range: true},
		{in: "-1e5", f16: NegInfFloat16, bf16: 0xc7c3, f16Range: true},
		{in: "1e39", f16: InfFloat16, bf16: InfBFloat16, f16Range: true, bf16Range: true},
		{in: "1e400", f16: InfFloat16, bf16: InfBFloat16, f16Range: true, bf16Range: true},
		{in: "-1e400", f16: NegInfFloat16, bf16: NegInfBFloat16, f16Range: true, bf16Range: true},
		{in: "1e-400", f16: 0, bf16: 0},
		{in: "+Inf", f16: InfFloat16, bf16: InfBFloat16},
		{in: "-inf", f16: NegInfFloat16, bf16: NegInfBFloat16},
		// float64 rounds these long decimals onto a halfway point; the
		// number itself is just off it, so it must not tie.
		{in: "65519.999999999999999999", f16: MaxFloat16, bf16: 0x4780},
		{in: "1.000488281250000000000001", f16: 0x3c01, bf16: 0x3f80},
		{in: "1.000488281249999999999999", f16: 0x3c00, bf16: 0x3f80},
		{in: "1.00048828125", f16: 0x3c00, bf16: 0x3f80}, // exactly halfway: to even
		{in: "1.003906250000000000000001", f16: 0x3c04, bf16: 0x3f81},
	} {
		t.Run(c.in, func(t *testing.T) {
			h, err := ParseFloat16(c.in)
			assert.Equal(t, c.f16, h, "ParseFloat16")
			if c.f16Range {
				assert.ErrorIs(t, err, strconv.ErrRange)
				assert.EqualError(t, err, fmt.Sprintf("half.ParseFloat16: parsing %q: value out of range (beyond the largest finite Float16; the result is Inf)", c.in))
			} else {
				assert.NoError(t, err)
			}
			b, err := ParseBFloat16(c.in)
			assert.Equal(t, c.bf16, b, "ParseBFloat16")
			if c.bf16Range {
				assert.ErrorIs(t, err, strconv.ErrRange)
			} else {
				assert.NoError(t, err)
			}
		})
	}
}

func TestParseNaN(t *testing.T) {
	h, err := ParseFloat16("NaN")
	require.NoError(t, err)
	assert.Equal(t, NaNFloat16, h)
	b, err := ParseBFloat16("nan")
	require.NoError(t, err)
	assert.Equal(t, NaNBFloat16, b)
}

func TestParseRejectsMalformedInput(t *testing.T) {
	for _, in := range []string{"", "abc", "1.2.3", "1e", "0x", "1/3", " 1"} {
		h, err := ParseFloat16(in)
		assert.Equal(t, Float16(0), h)
		assert.ErrorIs(t, err, strconv.ErrSyntax, "%q", in)
		assert.EqualError(t, err, fmt.Sprintf("half.ParseFloat16: parsing %q: invalid syntax (want a decimal or hexadecimal number, Inf or NaN, as strconv.ParseFloat accepts)", in))
		_, err = ParseBFloat16(in)
		assert.True(t, errors.Is(err, strconv.ErrSyntax), "%q", in)
		assert.ErrorContains(t, err, "half.ParseBFloat16: parsing")
	}
}
