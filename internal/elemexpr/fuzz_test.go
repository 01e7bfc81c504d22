package elemexpr

import (
	"errors"
	"math"
	"testing"
)

// FuzzParse: any body either fails with an *Error or compiles, prints and
// evaluates (on a few elements, with scalar and array inputs) without a
// panic.
func FuzzParse(f *testing.F) {
	for _, c := range diffCases {
		f.Add(c.body)
	}
	for _, s := range []string{
		"z = x", "w = k / 0 + k % 0", "float t = x; t *= 2; z = t", "z = (double)(x) ? u : d", "w = ~u << 40 >> k",
		"z = fma(x, x, d) + min(u, k) + abs(l)", "z = i + n", "z = 0x1p-3f + 1e+5 + .5", "auto a = !x; z = a",
		"z = isnan(d) && isinf(x) || signbit(k)", "z = (unsigned char)(x) + static_cast<long long>(d)",
	} {
		f.Add(s)
	}
	in := []Param{{"x", Float32}, {"d", Float64}, {"k", Int32}, {"l", Int64}, {"u", Uint8}}
	out := []Param{{"z", Float32}, {"w", Int32}}
	f.Fuzz(func(t *testing.T, body string) {
		if len(body) > 2000 {
			return // keep each input cheap
		}
		e, err := Compile(in, out, body, TypeParam("T", Float64))
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not an *Error", err)
			}
			return
		}
		_ = e.Function("__device__", "f")
		const n = 3
		z, w := make([]float32, n), make([]int32, n)
		xs := []float32{float32(math.NaN()), float32(math.Copysign(0, -1)), 3e38}
		ds := []float64{math.Inf(-1), 1e-310, -7.5}
		ks := []int32{math.MinInt32, -1, 0}
		ls := []int64{math.MaxInt64, 0, -1}
		us := []uint8{255, 0, 7}
		if err := e.Eval(n, xs, ds, ks, ls, us, z, w); err != nil {
			t.Fatal(err)
		}
		if err := e.Eval(n, xs[0], ds[1], ks[0], ls[0], us[0], z, w); err != nil {
			t.Fatal(err)
		}
	})
}
