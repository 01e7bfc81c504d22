package half

import (
	"bufio"
	"compress/gzip"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// kind is one of the two types, seen through plain functions so that
// every test below runs for both.
type kind struct {
	ref       *refFormat
	from32    func(float32) uint16
	from64    func(float64) uint16
	to32      func(uint16) float32
	isNaN     func(uint16) bool
	parse     func(string) (uint16, error)
	str       func(uint16) string
	shortest  func(uint16) float64
	maxFinite uint16
}

var kinds = []kind{
	{
		ref:       refFloat16,
		from32:    func(f float32) uint16 { return uint16(Float16FromFloat32(f)) },
		from64:    func(d float64) uint16 { return uint16(Float16FromFloat64(d)) },
		to32:      func(b uint16) float32 { return Float16(b).Float32() },
		isNaN:     func(b uint16) bool { return Float16(b).IsNaN() },
		parse:     func(s string) (uint16, error) { h, err := ParseFloat16(s); return uint16(h), err },
		str:       func(b uint16) string { return Float16(b).String() },
		shortest:  func(b uint16) float64 { return float16Layout.shortest(b, Float16(b).Float64()) },
		maxFinite: uint16(MaxFloat16),
	},
	{
		ref:       refBFloat16,
		from32:    func(f float32) uint16 { return uint16(BFloat16FromFloat32(f)) },
		from64:    func(d float64) uint16 { return uint16(BFloat16FromFloat64(d)) },
		to32:      func(b uint16) float32 { return BFloat16(b).Float32() },
		isNaN:     func(b uint16) bool { return BFloat16(b).IsNaN() },
		parse:     func(s string) (uint16, error) { h, err := ParseBFloat16(s); return uint16(h), err },
		str:       func(b uint16) string { return BFloat16(b).String() },
		shortest:  func(b uint16) float64 { return bfloat16Layout.shortest(b, BFloat16(b).Float64()) },
		maxFinite: uint16(MaxBFloat16),
	},
}

func TestEveryValueWidensExactly(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.ref.name, func(t *testing.T) {
			for i := 0; i < 1<<16; i++ {
				b := uint16(i)
				got := k.to32(b)
				want := k.ref.decode(b)
				if math.IsNaN(want) {
					// NaNs keep sign and payload: the payload moves to
					// float32's top fraction bits.
					require.True(t, k.isNaN(b), "%#04x", b)
					gotBits := math.Float32bits(got)
					require.Equal(t, uint32(b>>15), gotBits>>31, "%#04x: sign", b)
					payload := uint32(b) & (1<<k.ref.frac - 1)
					require.Equal(t, payload<<(23-k.ref.frac), gotBits&0x7fffff, "%#04x: payload", b)
					require.True(t, math.IsNaN(float64(got)), "%#04x", b)
					continue
				}
				require.False(t, k.isNaN(b), "%#04x", b)
				require.Equal(t, math.Float64bits(want), math.Float64bits(float64(got)), "%#04x: %g, want %g", b, got, want)
			}
		})
	}
}

func TestEveryValueRoundTripsThroughFloat32AndFloat64(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.ref.name, func(t *testing.T) {
			for i := 0; i < 1<<16; i++ {
				b := uint16(i)
				f := k.to32(b)
				if k.isNaN(b) {
					require.Equal(t, uint16(0x7fff), k.from32(f), "%#04x", b)
					require.Equal(t, uint16(0x7fff), k.from64(float64(f)), "%#04x", b)
					continue
				}
				require.Equal(t, b, k.from32(f), "%#04x via float32", b)
				require.Equal(t, b, k.from64(float64(f)), "%#04x via float64", b)
			}
		})
	}
}

// TestRoundingAtEveryHalfwayPoint converts, for every pair of neighbouring
// values (and the largest finite value with 2^(emax+1), the overflow
// boundary), their exact midpoint and the float32 and float64 values just
// either side of it.
func TestRoundingAtEveryHalfwayPoint(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.ref.name, func(t *testing.T) {
			vals := k.ref.values
			for i := 0; i+1 < len(vals); i++ {
				lo, hi := k.ref.bits[i], k.ref.bits[i+1]
				loV, _ := vals[i].Float64()
				hiV, _ := vals[i+1].Float64()
				mid := (loV + hiV) / 2 // exact: a few more bits than the format
				even := lo
				if lo&1 == 1 {
					even = hi
				}
				for _, sign := range []uint16{0, 0x8000} {
					s := 1.0
					if sign != 0 {
						s = -1
					}
					m32 := float32(s * mid)
					require.Equal(t, s*mid, float64(m32), "midpoint %g must be a float32", mid)
					check := func(what string, got, want uint16) {
						if got != want {
							t.Fatalf("%s of %#04x..%#04x: got %#04x, want %#04x", what, lo|sign, hi|sign, got, want)
						}
					}
					check("float32 midpoint", k.from32(m32), even|sign)
					check("float64 midpoint", k.from64(s*mid), even|sign)
					toZero, away := float32(math.Inf(-1)), float32(math.Inf(1))
					if sign != 0 {
						toZero, away = away, toZero
					}
					check("float32 below midpoint", k.from32(math.Nextafter32(m32, toZero)), lo|sign)
					check("float32 above midpoint", k.from32(math.Nextafter32(m32, away)), hi|sign)
					// One float64 ulp from the midpoint: through float32 this
					// would become the midpoint and tie; directly it must not.
					check("float64 below midpoint", k.from64(math.Nextafter(s*mid, float64(toZero))), lo|sign)
					check("float64 above midpoint", k.from64(math.Nextafter(s*mid, float64(away))), hi|sign)
				}
			}
		})
	}
}

func TestFloat16BoundaryValues(t *testing.T) {
	// Spot values as numpy's float16 and torch.float16 give them (on the
	// CPU and, for these, with CUDA's __float2half_rn).
	for _, c := range []struct {
		name string
		in   float32
		want Float16
	}{
		{"one", 1, 0x3c00},
		{"0.1", 0.1, 0x2e66},
		{"one third", 1.0 / 3, 0x3555},
		{"pi", math.Pi, 0x4248},
		{"negative zero", float32(math.Copysign(0, -1)), 0x8000},
		{"largest finite", 65504, MaxFloat16},
		{"just below the overflow threshold", math.Nextafter32(65520, 0), MaxFloat16},
		{"overflow threshold 65520 ties to Inf", 65520, InfFloat16},
		{"negative overflow threshold", -65520, NegInfFloat16},
		{"float32 max", math.MaxFloat32, InfFloat16},
		{"+Inf", float32(math.Inf(1)), InfFloat16},
		{"-Inf", float32(math.Inf(-1)), NegInfFloat16},
		{"smallest normal", 0x1p-14, SmallestNormalFloat16},
		{"largest subnormal", 0x3ffp-24, 0x03ff},
		{"just below the smallest normal rounds up to it", 0x3ff.8p-24, SmallestNormalFloat16},
		{"smallest subnormal", 0x1p-24, SmallestNonzeroFloat16},
		{"halfway to zero from the smallest subnormal ties to zero", 0x1p-25, 0},
		{"just above halfway to zero", math.Nextafter32(0x1p-25, 1), SmallestNonzeroFloat16},
		{"negative halfway to zero", -0x1p-25, 0x8000},
		{"1.5 subnormal units tie to 2", 0x3p-25, 0x0002},
		{"2.5 subnormal units tie to 2", 0x5p-25, 0x0002},
		{"float32 subnormal", 0x1p-149, 0},
		{"1 + half an ulp ties to 1", 1 + 0x1p-11, 0x3c00},
		{"1 + 3 half ulps ties to even 1 + 2 ulps", 1 + 0x3p-11, 0x3c02},
		{"just above 1 + half an ulp", math.Nextafter32(1+0x1p-11, 2), 0x3c01},
		{"epsilon", 0x1p-10, EpsilonFloat16},
		{"2048 + 1 ties to 2048", 2049, 0x6800},
		{"2048 + 3 ties to 2052", 2051, 0x6802},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, Float16FromFloat32(c.in), "from float32")
			assert.Equal(t, c.want, Float16FromFloat64(float64(c.in)), "from float64")
			assert.Equal(t, uint16(c.want), refFloat16.round(float64(c.in)), "reference")
		})
	}
}

func TestBFloat16BoundaryValues(t *testing.T) {
	f32 := math.Float32frombits
	for _, c := range []struct {
		name string
		in   float32
		want BFloat16
	}{
		{"one", 1, 0x3f80},
		{"0.1", 0.1, 0x3dcd},
		{"one third", 1.0 / 3, 0x3eab},
		{"pi", math.Pi, 0x4049},
		{"negative zero", float32(math.Copysign(0, -1)), 0x8000},
		{"largest finite", f32(0x7f7f0000), MaxBFloat16},
		{"just below the overflow threshold", f32(0x7f7f7fff), MaxBFloat16},
		{"overflow threshold ties to Inf", f32(0x7f7f8000), InfBFloat16},
		{"float32 max", math.MaxFloat32, InfBFloat16},
		{"-float32 max", -math.MaxFloat32, NegInfBFloat16},
		{"+Inf", float32(math.Inf(1)), InfBFloat16},
		{"-Inf", float32(math.Inf(-1)), NegInfBFloat16},
		{"smallest normal", 0x1p-126, SmallestNormalBFloat16},
		{"float32's largest subnormal rounds to the smallest normal", f32(0x007fffff), SmallestNormalBFloat16},
		{"smallest subnormal", 0x1p-133, SmallestNonzeroBFloat16},
		{"halfway to zero from the smallest subnormal ties to zero", 0x1p-134, 0},
		{"just above halfway to zero", f32(0x00008001), SmallestNonzeroBFloat16},
		{"1.5 subnormal units tie to 2", f32(0x00018000), 0x0002},
		{"2.5 subnormal units tie to 2", f32(0x00028000), 0x0002},
		{"float32's smallest subnormal", 0x1p-149, 0},
		{"1 + half an ulp ties to 1", 1 + 0x1p-8, 0x3f80},
		{"1 + 3 half ulps ties to even 1 + 2 ulps", 1 + 0x3p-8, 0x3f82},
		{"just above 1 + half an ulp", math.Nextafter32(1+0x1p-8, 2), 0x3f81},
		{"epsilon", 0x1p-7, EpsilonBFloat16},
		{"256 + 1 ties to 256", 257, 0x4380},
		{"256 + 3 ties to 260", 259, 0x4382},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, BFloat16FromFloat32(c.in), "from float32")
			assert.Equal(t, c.want, BFloat16FromFloat64(float64(c.in)), "from float64")
			assert.Equal(t, uint16(c.want), refBFloat16.round(float64(c.in)), "reference")
		})
	}
}

func TestFloat64BeyondFloat32RoundsOnce(t *testing.T) {
	// Values only float64 holds: past float32's range, below its
	// subnormals, and one float64 ulp off a halfway point, where going
	// through float32 first would round twice.
	for _, c := range []struct {
		name string
		in   float64
		f16  Float16
		bf16 BFloat16
	}{
		{"1e300", 1e300, InfFloat16, InfBFloat16},
		{"-1e300", -1e300, NegInfFloat16, NegInfBFloat16},
		{"float64 max", math.MaxFloat64, InfFloat16, InfBFloat16},
		{"float64's smallest subnormal", 5e-324, 0, 0},
		{"-1e-300", -1e-300, 0x8000, 0x8000},
		{"just below 1 + half a float16 ulp", math.Nextafter(1+0x1p-11, 0), 0x3c00, 0x3f80},
		{"just above 1 + half a float16 ulp", math.Nextafter(1+0x1p-11, 2), 0x3c01, 0x3f80},
		{"just above 1 + half a bfloat16 ulp", math.Nextafter(1+0x1p-8, 2), 0x3c04, 0x3f81},
		{"just below 65520", math.Nextafter(65520, 0), MaxFloat16, 0x4780},
		{"just above 2^-25", math.Nextafter(0x1p-25, 1), SmallestNonzeroFloat16, 0x3300},
		{"just above 2^-134", math.Nextafter(0x1p-134, 1), 0, SmallestNonzeroBFloat16},
		{"just below bfloat16's overflow threshold", math.Nextafter(0x1.ffp127, 0), 0x7c00, MaxBFloat16},
		{"bfloat16's overflow threshold", 0x1.ffp127, 0x7c00, InfBFloat16},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.f16, Float16FromFloat64(c.in), "Float16")
			assert.Equal(t, c.bf16, BFloat16FromFloat64(c.in), "BFloat16")
			assert.Equal(t, uint16(c.f16), refFloat16.round(c.in), "Float16 reference")
			assert.Equal(t, uint16(c.bf16), refBFloat16.round(c.in), "BFloat16 reference")
		})
	}
}

func TestEveryNaNBecomesTheCanonicalNaN(t *testing.T) {
	// CUDA's __float2half_rn and __float2bfloat16_rn return 0x7fff for
	// every NaN, whatever its sign, payload or quiet bit.
	nans32 := []uint32{0x7fc00000, 0xffc00000, 0x7f800001, 0xff800001, 0x7fffffff, 0xffffffff, 0x7fa00000, 0x7f802000}
	nans64 := []uint64{0x7ff8000000000000, 0xfff8000000000000, 0x7ff0000000000001, 0xfff0000000000001, 0x7fffffffffffffff}
	for _, k := range kinds {
		for _, n := range nans32 {
			assert.Equal(t, uint16(0x7fff), k.from32(math.Float32frombits(n)), "%s from float32 %#08x", k.ref.name, n)
		}
		for _, n := range nans64 {
			assert.Equal(t, uint16(0x7fff), k.from64(math.Float64frombits(n)), "%s from float64 %#016x", k.ref.name, n)
		}
		assert.True(t, k.isNaN(0x7fff), k.ref.name)
	}
	assert.Equal(t, NaNFloat16, Float16FromFloat32(float32(math.NaN())))
	assert.Equal(t, NaNBFloat16, BFloat16FromFloat64(math.NaN()))
}

func TestRandomValuesMatchTheReference(t *testing.T) {
	n := 200000
	if testing.Short() {
		n = 20000
	}
	rng := rand.New(rand.NewPCG(27, 1))
	for _, k := range kinds {
		t.Run(k.ref.name, func(t *testing.T) {
			bias := 1<<(k.ref.expBits-1) - 1
			for i := 0; i < n; i++ {
				// Half any float32 bit pattern, half float32s in and near
				// the format's range, where the rounding does its work.
				x := rng.Uint32()
				if i%2 == 1 {
					e := uint32(127 - bias - k.ref.frac - 3 + rng.IntN(2*bias+k.ref.frac+6))
					x = x&0x807fffff | e<<23
				}
				f := math.Float32frombits(x)
				if got, want := k.from32(f), k.ref.round(float64(f)); got != want {
					t.Fatalf("from float32 %#08x (%g): got %#04x, want %#04x", x, f, got, want)
				}
				d := math.Float64frombits(rng.Uint64())
				if i%2 == 1 {
					// a float64 with bits below float32's, near the range
					d = float64(f) * (1 + float64(rng.Uint32()>>8)*0x1p-52)
				}
				if got, want := k.from64(d), k.ref.round(d); got != want {
					t.Fatalf("from float64 %#016x (%g): got %#04x, want %#04x", math.Float64bits(d), d, got, want)
				}
			}
		})
	}
}

// readGolden reads a gzipped table of half/testdata/gen_numpy.py's: lines
// of two fields.
func readGolden(t *testing.T, name string) [][2]string {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	require.NoError(t, err)
	defer f.Close()
	z, err := gzip.NewReader(f)
	require.NoError(t, err)
	var rows [][2]string
	sc := bufio.NewScanner(z)
	for sc.Scan() {
		a, b, ok := strings.Cut(sc.Text(), " ")
		require.True(t, ok, "line %q", sc.Text())
		rows = append(rows, [2]string{a, b})
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, rows)
	return rows
}

func hexBits(t *testing.T, s string, size int) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(s, 16, size)
	require.NoError(t, err)
	return v
}

func TestFloat16MatchesNumpy(t *testing.T) {
	for _, row := range readGolden(t, "f32_to_f16.txt.gz") {
		in := math.Float32frombits(uint32(hexBits(t, row[0], 32)))
		want := Float16(hexBits(t, row[1], 16))
		require.Equal(t, want, Float16FromFloat32(in), "numpy float32(%s) to float16", row[0])
	}
	for _, row := range readGolden(t, "f64_to_f16.txt.gz") {
		in := math.Float64frombits(hexBits(t, row[0], 64))
		want := Float16(hexBits(t, row[1], 16))
		require.Equal(t, want, Float16FromFloat64(in), "numpy float64(%s) to float16", row[0])
	}
}

func TestConstants(t *testing.T) {
	for _, c := range []struct {
		name string
		got  float64
		want float64
	}{
		{"MaxFloat16", MaxFloat16.Float64(), 65504},
		{"SmallestNormalFloat16", SmallestNormalFloat16.Float64(), 0x1p-14},
		{"SmallestNonzeroFloat16", SmallestNonzeroFloat16.Float64(), 0x1p-24},
		{"EpsilonFloat16", EpsilonFloat16.Float64(), 0x1p-10},
		{"InfFloat16", InfFloat16.Float64(), math.Inf(1)},
		{"NegInfFloat16", NegInfFloat16.Float64(), math.Inf(-1)},
		{"MaxBFloat16", MaxBFloat16.Float64(), 0x1.fep127},
		{"SmallestNormalBFloat16", SmallestNormalBFloat16.Float64(), 0x1p-126},
		{"SmallestNonzeroBFloat16", SmallestNonzeroBFloat16.Float64(), 0x1p-133},
		{"EpsilonBFloat16", EpsilonBFloat16.Float64(), 0x1p-7},
		{"InfBFloat16", InfBFloat16.Float64(), math.Inf(1)},
		{"NegInfBFloat16", NegInfBFloat16.Float64(), math.Inf(-1)},
	} {
		assert.Equal(t, c.want, c.got, c.name)
	}
	assert.True(t, NaNFloat16.IsNaN())
	assert.True(t, NaNBFloat16.IsNaN())
	assert.Equal(t, 1+EpsilonFloat16.Float64(), (Float16(0x3c00) + 1).Float64(), "epsilon is one ulp at 1")
	assert.Equal(t, 1+EpsilonBFloat16.Float64(), (BFloat16(0x3f80) + 1).Float64(), "epsilon is one ulp at 1")
}

func TestIsInfAndIsNaN(t *testing.T) {
	for _, c := range []struct {
		name               string
		h                  Float16
		b                  BFloat16
		nan, inf, pos, neg bool
	}{
		{"+Inf", InfFloat16, InfBFloat16, false, true, true, false},
		{"-Inf", NegInfFloat16, NegInfBFloat16, false, true, false, true},
		{"canonical NaN", NaNFloat16, NaNBFloat16, true, false, false, false},
		{"negative signalling NaN", 0xfc01, 0xff81, true, false, false, false},
		{"largest finite", MaxFloat16, MaxBFloat16, false, false, false, false},
		{"zero", 0, 0, false, false, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.nan, c.h.IsNaN(), "Float16.IsNaN")
			assert.Equal(t, c.nan, c.b.IsNaN(), "BFloat16.IsNaN")
			assert.Equal(t, c.inf, c.h.IsInf(0), "Float16.IsInf(0)")
			assert.Equal(t, c.inf, c.b.IsInf(0), "BFloat16.IsInf(0)")
			assert.Equal(t, c.pos, c.h.IsInf(1), "Float16.IsInf(1)")
			assert.Equal(t, c.pos, c.b.IsInf(1), "BFloat16.IsInf(1)")
			assert.Equal(t, c.neg, c.h.IsInf(-1), "Float16.IsInf(-1)")
			assert.Equal(t, c.neg, c.b.IsInf(-1), "BFloat16.IsInf(-1)")
		})
	}
}
