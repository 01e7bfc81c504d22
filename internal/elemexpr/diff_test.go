package elemexpr

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The differential test: each body is compiled as C++ by the machine's
// C++ compiler, twice (as written, and as Body prints it), run on the same
// inputs as Eval, and compared element by element. It is what shows that
// the host evaluation means what NVRTC compiling the same body does: same
// types, conversions, overloads and integer semantics.

// diffCase is a body with its parameters and how to make its inputs.
type diffCase struct {
	in, out string
	body    string
	// gen names each input's values: f (any float, NaN, ±Inf, ±0,
	// denormals), fs (finite, small: converts to any integer type), fp
	// (positive small), i (any integer, the type's extremes), is (small
	// integer), sh (a shift count, 0 to 63).
	gen  []string
	ulps uint64 // 0: exact; else the float results' distance allowed
	tp   map[string]Type
}

var diffCases = []diffCase{
	// Float arithmetic and its conversions: exact.
	{in: "float32 a, float32 x, float32 y", out: "float32 z", body: "z = a * x + y", gen: []string{"f", "f", "f"}},
	{in: "float32 x, float32 y", out: "float32 z", body: "z = x / y - x", gen: []string{"f", "f"}},
	{in: "float32 x, float32 y", out: "float32 z", body: "z = -x + (x > y ? x : y)", gen: []string{"f", "f"}},
	{in: "float32 x", out: "float32 z", body: "z = x * 1.5", gen: []string{"f"}},
	{in: "float32 x", out: "float32 z", body: "z = x * 1.1f + 0.1", gen: []string{"f"}},
	{in: "float32 x", out: "float32 z", body: "z = x * 2.f + .5f + 1e-3f + 0x1p-2 + 1.e2", gen: []string{"f"}},
	{in: "float32 x, float32 y", out: "float32 z", body: "z = (float)((double)x * y) + static_cast<float>(y / 3) + float(x) / 7", gen: []string{"f", "f"}},
	{in: "float32 x, float32 y", out: "float32 z", body: "z = sqrt(x) + sqrtf(y)", gen: []string{"f", "f"}},
	{in: "float32 x, float32 y", out: "float32 z", body: "z = fabs(x) + floor(y) - ceil(x) * round(y) + trunc(x)", gen: []string{"f", "f"}},
	{in: "float32 x, float32 y", out: "float32 z, float32 w", body: "z = fmin(x, y) + fmaxf(y, 1); w = copysign(x, y) + abs(y) - fmod(x, y)", gen: []string{"f", "f"}},
	{in: "float32 x, float32 y, float32 a", out: "float32 z", body: "z = fma(x, y, a)", gen: []string{"f", "f", "f"}},
	{in: "float32 x, float32 y", out: "float32 z", body: "z = min(x, y) - max(x, 2)", gen: []string{"f", "f"}},
	{in: "float32 x, float32 y", out: "float32 z", body: "z = (x == y) + 2 * (x != y) + 4 * isnan(x) + 8 * isinf(y) + 16 * !x + 32 * (x < y && y <= 1 || x >= y)", gen: []string{"f", "f"}},
	{in: "float32 x", out: "float32 z", body: "z = i * 0.5f + n - x", gen: []string{"f"}},
	{in: "float64 x, float64 y, float64 a", out: "float64 z", body: "z = x * y + a / x - (x > a ? y : 3)", gen: []string{"f", "f", "f"}},
	{in: "float64 x, float32 y", out: "float32 z, float64 w", body: "z = x; w = y + x; w *= y", gen: []string{"f", "f"}},
	{in: "float32 x, float32 y", out: "float32 z", body: "float t = x * x; double u = t + y; z = u * 0.5; z += 1; z -= y; z *= 3; z /= 7", gen: []string{"f", "f"}},
	{in: "float32 x", out: "float32 z", body: "auto t = x + 1; const double u = t * 3; T v = u; z = v - t", gen: []string{"f"}, tp: map[string]Type{"T": Float32}},
	{in: "float32 x", out: "float64 z", body: "z = x + 1e10 + 3000000000 + 010 + 0x10 + 7u", gen: []string{"f"}},
	// Integers to and from floats, in range (out of range is undefined in C).
	{in: "float32 x, float64 y", out: "int32 z, int64 w", body: "z = x; w = y * 2.5; z += (int)(x * 2.5) + (long long)y", gen: []string{"fs", "fs"}},
	{in: "float32 x", out: "uint8 z", body: "z = (unsigned char)(fabs(x) / 4)", gen: []string{"fs"}},
	{in: "uint8 u, uint8 v", out: "float32 z", body: "z = u + v * 0.5f - sqrt(u) + pow(v, 2)", gen: []string{"i", "i"}, ulps: 2},
	{in: "int32 x, int64 y", out: "float32 z, float64 w", body: "z = x + y; w = (double)y / x + x", gen: []string{"i", "i"}},
	// Integer arithmetic: wrapping, C's division, shifts, promotions and
	// the usual arithmetic conversions.
	{in: "int32 x, int32 y", out: "int32 z", body: "z = x + y * 3 - (x ^ y) + (x & y) - (x | y)", gen: []string{"i", "i"}},
	{in: "int32 x, int32 y", out: "int32 z, int32 w", body: "z = (y == 0 || (x == -2147483647 - 1 && y == -1)) ? 0 : x / y; w = (y == 0 || y == -1) ? 0 : x % y", gen: []string{"i", "is"}},
	{in: "int32 x, int32 y", out: "int32 z, int32 w", body: "z = x << (y & 31); w = x >> (y & 31)", gen: []string{"i", "i"}},
	{in: "int32 x, int32 y", out: "int32 z", body: "z = ~x + !y - -x", gen: []string{"i", "i"}},
	{in: "int32 x, int32 y", out: "int32 z", body: "z = (x < y ? x : y) + min(x, y) * 2 + max(x, y) + (x == -2147483647-1 ? 0 : abs(x))", gen: []string{"i", "i"}},
	{in: "int32 x, int64 y", out: "int32 z", body: "z = x + y * 2; z += (long long)x * x", gen: []string{"i", "i"}},
	{in: "int32 x", out: "int32 z, uint8 w", body: "z = (unsigned)x / 3u + (x < 0u) + (x > 0xFFFFFFF0) * 4 + (x * 2u > 5) * 8; w = x", gen: []string{"i"}},
	{in: "int32 x", out: "int32 z", body: "z = x / 2 + x % 7 - (x >> 1) + (x & 0xFF00 | 0x7) + 0b101", gen: []string{"i"}},
	{in: "int32 x, int32 y", out: "int32 z", body: "z = x; z += y; z <<= 2; z %= 5; z ^= 3; z |= 8; z &= 0xF0F0; z >>= 1; z -= 1; z *= y; z /= 7", gen: []string{"i", "i"}},
	{in: "int64 a, int64 b", out: "int64 z", body: "z = a * b + i - n + a / 3 % 5 + (a >> 60) ^ (b << 3)", gen: []string{"i", "i"}},
	{in: "int64 a, int32 x", out: "int64 z, int32 w", body: "z = a + x + 4000000000; w = a; w -= 1u", gen: []string{"i", "i"}},
	{in: "int64 a, int32 s", out: "int64 z, int64 w", body: "z = a << (s & 63); w = a >> (s & 63) ^ (unsigned long long)a >> (s & 63)", gen: []string{"i", "i"}},
	{in: "uint8 u, uint8 v", out: "uint8 z, int32 w", body: "z = u + v; w = u * v / 3 - v", gen: []string{"i", "i"}},
	{in: "uint8 u, uint8 v", out: "uint8 z, uint8 w", body: "z = u - v; w = (u > v ? u : v) + ~u", gen: []string{"i", "i"}},
	{in: "uint8 u, int32 x", out: "int32 z", body: "bool b = u > 3; unsigned char c = x; z = b ? c : u; z += true + false", gen: []string{"i", "i"}},
	{in: "int32 x, float32 y", out: "float32 z", body: "z = x > 0 ? 1 : 2.5; z += y > 0 ? x : y", gen: []string{"i", "f"}},
	// if: both branches computed, one chosen; C takes only one, which
	// guards divisions that would trap.
	{in: "float32 x, float32 y", out: "float32 z", body: "if (x - 2 > y) { z = x * y; } else { z = x + y; }", gen: []string{"f", "f"}},
	{in: "int32 x, int32 y", out: "int32 z, int32 w", body: "if (y != 0 && !(x == -2147483647 - 1 && y == -1)) z = x / y; if (x < 0) { int t = -x; w = t % 1000; } else w = x % 7;", gen: []string{"i", "is"}},
	{in: "float32 x, float32 y", out: "float32 z", body: "float t = 0; if (x > 0) { if (y > 0) t = 1; else t = 2; } else if (y > 0) t = 3; else { t = 4; z = -1; } z += t", gen: []string{"f", "f"}},
	{in: "uint8 u, int64 a", out: "int64 z", body: "long long t = a; if (u > 100) t = (t >> 3) * u; else if (u) t /= u; z = t", gen: []string{"i", "i"}},
	// Math functions, within the ulps allowed.
	{in: "float32 x", out: "float32 z", body: "z = tanh(x) * 0.5f", gen: []string{"f"}, ulps: 2},
	{in: "float32 x", out: "float32 z, float32 w", body: "z = exp(x); w = expf(x)", gen: []string{"f"}, ulps: 2},
	{in: "float32 x", out: "float32 z, float32 w", body: "z = log(x); w = logf(x)", gen: []string{"f"}, ulps: 2},
	{in: "float32 x", out: "float32 z, float32 w", body: "z = log1p(x); w = expm1(x)", gen: []string{"f"}, ulps: 2},
	{in: "float32 x", out: "float32 z, float32 w", body: "z = sin(x); w = cos(x)", gen: []string{"fs"}, ulps: 2},
	{in: "float32 x", out: "float32 z, float32 w", body: "z = tan(x); w = atan(x)", gen: []string{"fs"}, ulps: 2},
	{in: "float32 x", out: "float32 z, float32 w", body: "z = asin(x); w = acos(x)", gen: []string{"f"}, ulps: 2},
	{in: "float32 x", out: "float32 z, float32 w", body: "z = sinh(x); w = cosh(x)", gen: []string{"f"}, ulps: 2},
	{in: "float32 x", out: "float32 z, float32 w", body: "z = erf(x); w = erfc(x)", gen: []string{"f"}, ulps: 2},
	{in: "float32 x, float32 y", out: "float32 z, float32 w", body: "z = pow(x, y); w = powf(fabs(x), 0.5f)", gen: []string{"fs", "fs"}, ulps: 2},
	{in: "float32 x, float32 y", out: "float32 z", body: "z = atan2(x, y)", gen: []string{"f", "f"}, ulps: 2},
	{in: "float32 x", out: "float32 z, float32 w", body: "z = rsqrtf(x); w = rsqrt(x)", gen: []string{"fp"}, ulps: 2},
	// exp of a float is expf: the difference is 0 exactly, on both sides.
	{in: "float32 x", out: "float64 z", body: "z = (double)exp(x) - (double)expf(x) + (double)tanh(x) - (double)tanhf(x)", gen: []string{"f"}},
	{in: "int32 x", out: "float64 z, float32 w", body: "z = sqrt(x); w = pow(2.0f, 3)", gen: []string{"i"}, ulps: 2},
	{in: "float64 x", out: "float64 z, float64 w", body: "z = exp(x); w = log(x)", gen: []string{"f"}, ulps: 2},
	{in: "float64 x", out: "float64 z, float64 w", body: "z = tanh(x); w = erf(x)", gen: []string{"f"}, ulps: 2},
	{in: "float64 x, float64 y", out: "float64 z", body: "z = atan2(x, y)", gen: []string{"f", "f"}, ulps: 2},
	// pow.go's pow, not Go's math.Pow (25 ulp off at 99.9^99.9).
	{in: "float64 x, float64 y", out: "float64 z", body: "z = pow(x, y)", gen: []string{"fs", "fs"}, ulps: 2},
	{in: "float64 x", out: "float64 z, float64 w", body: "z = sin(x); w = cos(x)", gen: []string{"fs"}, ulps: 2},
}

func parseParams(t *testing.T, list string) []Param {
	var ps []Param
	for _, item := range strings.Split(list, ",") {
		f := strings.Fields(item)
		require.Len(t, f, 2, "parameter %q", item)
		ty, ok := ParseType(f[0])
		require.True(t, ok, "type %q", f[0])
		ps = append(ps, Param{f[1], ty})
	}
	return ps
}

// column is one parameter's values, as a typed slice.
func genColumn(r *rand.Rand, t Type, gen string, n int) any {
	f := make([]float64, n)
	edgesF := []float64{0, math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1), math.MaxFloat32, -math.MaxFloat32,
		math.SmallestNonzeroFloat32, -1e-40, 1, -1, 0.5, -0.5, 2.5, -2.5, 3, 1e30, 1e-30, 88.7, -103, 1e-10}
	switch gen {
	case "f":
		for k := range f {
			switch {
			case k < len(edgesF):
				f[k] = edgesF[k]
			case k%4 == 0:
				f[k] = float64(math.Float32frombits(r.Uint32())) // any bits: NaNs, denormals
			case k%4 == 1:
				f[k] = (r.Float64()*2 - 1) * math.Exp(r.Float64()*40-20)
			default:
				f[k] = r.Float64()*20 - 10
			}
			if t == Float64 && k%4 == 0 && k >= len(edgesF) {
				f[k] = math.Float64frombits(r.Uint64())
			}
		}
	case "fs", "fp":
		for k := range f {
			f[k] = r.Float64()*200 - 100
			if k < 6 {
				f[k] = []float64{0, math.Copysign(0, -1), 0.5, -0.5, 99.9, -99.9}[k]
			}
			if gen == "fp" {
				f[k] = math.Abs(f[k]) + 1e-3
			}
		}
	}
	switch t {
	case Float32:
		s := make([]float32, n)
		for k := range s {
			s[k] = float32(f[k])
		}
		return s
	case Float64:
		return f
	}
	ints := make([]int64, n)
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	switch t {
	case Int32:
		lo, hi = math.MinInt32, math.MaxInt32
	case Uint8:
		lo, hi = 0, 255
	}
	for k := range ints {
		switch {
		case gen == "is":
			ints[k] = r.Int64N(41) - 20
		case k < 8:
			ints[k] = []int64{0, 1, -1, lo, hi, lo + 1, hi - 1, 2}[k]
		case k%3 == 0:
			ints[k] = r.Int64N(64) - 32
		default:
			ints[k] = int64(r.Uint64())
		}
		if ints[k] < lo || ints[k] > hi {
			ints[k] = lo + int64(uint64(ints[k])%uint64(hi-lo+1))
		}
	}
	switch t {
	case Int32:
		s := make([]int32, n)
		for k := range s {
			s[k] = int32(ints[k])
		}
		return s
	case Uint8:
		s := make([]uint8, n)
		for k := range s {
			s[k] = uint8(ints[k])
		}
		return s
	}
	return ints
}

func newColumn(t Type, n int) any {
	switch t {
	case Float32:
		return make([]float32, n)
	case Float64:
		return make([]float64, n)
	case Int32:
		return make([]int32, n)
	case Int64:
		return make([]int64, n)
	case Uint8:
		return make([]uint8, n)
	}
	panic("no column of " + t.String())
}

// constantColumn is column c with every element its first.
func constantColumn(c any) (any, any) {
	switch s := c.(type) {
	case []float32:
		out := make([]float32, len(s))
		fill(out, s[0])
		return out, s[0]
	case []float64:
		out := make([]float64, len(s))
		fill(out, s[0])
		return out, s[0]
	case []int32:
		out := make([]int32, len(s))
		fill(out, s[0])
		return out, s[0]
	case []int64:
		out := make([]int64, len(s))
		fill(out, s[0])
		return out, s[0]
	case []uint8:
		out := make([]uint8, len(s))
		fill(out, s[0])
		return out, s[0]
	}
	panic("no constant column")
}

func cppSource(t *testing.T) string {
	var b strings.Builder
	b.WriteString(`#include <math.h>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
// CUDA's device functions that a host C++ library lacks.
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
static inline float cu_min(float a, float b) { return fminf(a, b); }
static inline double cu_min(double a, double b) { return fmin(a, b); }
static inline float cu_max(float a, float b) { return fmaxf(a, b); }
static inline double cu_max(double a, double b) { return fmax(a, b); }
template <class T> static inline T cu_min(T a, T b) { return a < b ? a : b; }
template <class T> static inline T cu_max(T a, T b) { return a > b ? a : b; }
// CUDA's min and max: the arguments' common type, fmin and fmax for floats.
template <class A, class B> static inline auto min(A a, B b) -> decltype(a + b) { typedef decltype(a + b) T; return cu_min((T)a, (T)b); }
template <class A, class B> static inline auto max(A a, B b) -> decltype(a + b) { typedef decltype(a + b) T; return cu_max((T)a, (T)b); }
template <class T> static void rd(std::vector<T>& v) { if (fread(v.data(), sizeof(T), v.size(), stdin) != v.size()) exit(2); }
template <class T> static void wr(const std::vector<T>& v) { fwrite(v.data(), sizeof(T), v.size(), stdout); }
`)
	for k, c := range diffCases {
		in, out := parseParams(t, c.in), parseParams(t, c.out)
		var opts []Option
		for name, ty := range c.tp {
			opts = append(opts, TypeParam(name, ty))
		}
		e, err := Compile(in, out, c.body, opts...)
		require.NoError(t, err, "case %d %q", k, c.body)
		var ps []string
		ps = append(ps, "const long long i", "const long long n")
		for _, p := range in {
			ps = append(ps, "const "+p.Type.CName()+" "+p.Name)
		}
		for _, p := range out {
			ps = append(ps, p.Type.CName()+"& "+p.Name)
		}
		fmt.Fprintf(&b, "\nstatic void k%d_raw(%s) {\n  (void)i; (void)n;\n", k, strings.Join(ps, ", "))
		for name, ty := range c.tp {
			fmt.Fprintf(&b, "  typedef %s %s;\n", ty.CName(), name)
		}
		for _, p := range out {
			fmt.Fprintf(&b, "  %s = 0;\n", p.Name)
		}
		fmt.Fprintf(&b, "  %s\n;\n}\n", c.body)
		b.WriteString(e.Function("static", fmt.Sprintf("k%d_printed", k)))
	}
	b.WriteString("\nint main() {\n  unsigned k;\n  while (fread(&k, 4, 1, stdin) == 1) {\n    long long n;\n    if (fread(&n, 8, 1, stdin) != 1) return 2;\n    switch (k) {\n")
	for k, c := range diffCases {
		in, out := parseParams(t, c.in), parseParams(t, c.out)
		fmt.Fprintf(&b, "    case %d: {\n", k)
		var args1, args2 []string
		for _, p := range in {
			fmt.Fprintf(&b, "      std::vector<%s> %s(n); rd(%s);\n", p.Type.CName(), p.Name, p.Name)
			args1 = append(args1, p.Name+"[e]")
		}
		args2 = append(args2, args1...)
		for _, p := range out {
			fmt.Fprintf(&b, "      std::vector<%s> %s_1(n), %s_2(n);\n", p.Type.CName(), p.Name, p.Name)
			args1 = append(args1, p.Name+"_1[e]")
			args2 = append(args2, p.Name+"_2[e]")
		}
		fmt.Fprintf(&b, "      for (long long e = 0; e < n; e++) {\n        k%d_raw(%s);\n        k%d_printed(%s);\n      }\n",
			k, strings.Join(append([]string{"e", "n"}, args1...), ", "), k, strings.Join(append([]string{"e", "n"}, args2...), ", "))
		for _, p := range out {
			fmt.Fprintf(&b, "      wr(%s_1); wr(%s_2);\n", p.Name, p.Name)
		}
		b.WriteString("      break;\n    }\n")
	}
	b.WriteString("    default:\n      return 3;\n    }\n  }\n  return 0;\n}\n")
	return b.String()
}

// buildCpp compiles the test program, or skips the test without a compiler.
func buildCpp(t *testing.T, src string) string {
	cxx, err := exec.LookPath("g++")
	if err != nil {
		if cxx, err = exec.LookPath("c++"); err != nil {
			t.Skip("no C++ compiler (g++ or c++) on PATH: the differential test against C++ cannot run")
		}
	}
	dir := t.TempDir()
	srcPath := filepath.Join(dir, "diff.cc")
	require.NoError(t, os.WriteFile(srcPath, []byte(src), 0o644))
	bin := filepath.Join(dir, "diff")
	// -fwrapv: signed overflow wraps, as on the GPU and in Go;
	// -ffp-contract=off: no fused multiply-adds the host does not do.
	cmd := exec.Command(cxx, "-std=c++20", "-O1", "-fwrapv", "-ffp-contract=off", "-w", "-o", bin, srcPath, "-lm")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s failed: %v\n%s", cxx, err, out)
	}
	return bin
}

type instance struct {
	k       int
	n       int
	cols    []any // the C++ side's inputs
	args    []any // Eval's inputs: the columns, or a scalar
	outs    []any
	scalars string
}

func TestDifferentialAgainstCpp(t *testing.T) {
	src := cppSource(t)
	bin := buildCpp(t, src)
	r := rand.New(rand.NewPCG(1, 2))
	const n = 1100 // more than two chunks, the last one partial
	var insts []*instance
	var stdin bytes.Buffer
	for k, c := range diffCases {
		in, out := parseParams(t, c.in), parseParams(t, c.out)
		var cols []any
		for j, p := range in {
			cols = append(cols, genColumn(r, p.Type, c.gen[j], n))
		}
		// Every input an array; then each input in turn a scalar.
		for s := -1; s < len(in); s++ {
			inst := &instance{k: k, n: n, scalars: "none"}
			for j, col := range cols {
				if j == s {
					cc, v := constantColumn(col)
					inst.cols = append(inst.cols, cc)
					inst.args = append(inst.args, v)
					inst.scalars = in[j].Name
				} else {
					inst.cols = append(inst.cols, col)
					inst.args = append(inst.args, col)
				}
			}
			for _, p := range out {
				inst.outs = append(inst.outs, newColumn(p.Type, n))
			}
			insts = append(insts, inst)
			require.NoError(t, binary.Write(&stdin, binary.LittleEndian, uint32(k)))
			require.NoError(t, binary.Write(&stdin, binary.LittleEndian, int64(n)))
			for _, col := range inst.cols {
				require.NoError(t, binary.Write(&stdin, binary.LittleEndian, col))
			}
		}
	}
	cmd := exec.Command(bin)
	cmd.Stdin = &stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "the C++ program: %s", stderr.String())

	exprs := map[int]*Expr{}
	for _, inst := range insts {
		c := diffCases[inst.k]
		in, out := parseParams(t, c.in), parseParams(t, c.out)
		e := exprs[inst.k]
		if e == nil {
			var opts []Option
			for name, ty := range c.tp {
				opts = append(opts, TypeParam(name, ty))
			}
			var err error
			e, err = Compile(in, out, c.body, opts...)
			require.NoError(t, err)
			exprs[inst.k] = e
		}
		require.NoError(t, e.Eval(inst.n, append(append([]any{}, inst.args...), inst.outs...)...))
		for j, p := range out {
			for _, form := range []string{"as written", "as printed"} {
				want := newColumn(p.Type, inst.n)
				require.NoError(t, binary.Read(&stdout, binary.LittleEndian, want))
				if bad := compareColumns(inst.outs[j], want, c.ulps); bad >= 0 {
					t.Fatalf("case %d %q (scalar input: %s), output %s, element %d: Eval gives %v, C++ (%s) gives %v; inputs %s\nprinted:\n%s",
						inst.k, c.body, inst.scalars, p.Name, bad, elem(inst.outs[j], bad), form, elem(want, bad), inputsAt(in, inst.cols, bad), e.Body())
				}
			}
		}
	}
	require.Zero(t, stdout.Len(), "C++ wrote more than was read")
}

func elem(col any, k int) string {
	switch s := col.(type) {
	case []float32:
		return fmt.Sprintf("%v (%#08x)", s[k], math.Float32bits(s[k]))
	case []float64:
		return fmt.Sprintf("%v (%#016x)", s[k], math.Float64bits(s[k]))
	case []int32:
		return fmt.Sprint(s[k])
	case []int64:
		return fmt.Sprint(s[k])
	case []uint8:
		return fmt.Sprint(s[k])
	}
	return "?"
}

func inputsAt(in []Param, cols []any, k int) string {
	var parts []string
	for j, p := range in {
		parts = append(parts, p.Name+"="+elem(cols[j], k))
	}
	return strings.Join(parts, " ")
}

// compareColumns is the first element where got and want differ (-1 if
// none): exactly, or for floats by at most ulps units in the last place
// (any NaN equals any NaN).
func compareColumns(got, want any, ulps uint64) int {
	switch g := got.(type) {
	case []float32:
		w := want.([]float32)
		for k := range g {
			if !closeBits(float64(g[k]), float64(w[k]), ulpDist32(g[k], w[k]), ulps) {
				return k
			}
		}
	case []float64:
		w := want.([]float64)
		for k := range g {
			if !closeBits(g[k], w[k], ulpDist64(g[k], w[k]), ulps) {
				return k
			}
		}
	case []int32:
		return firstDiff(g, want.([]int32))
	case []int64:
		return firstDiff(g, want.([]int64))
	case []uint8:
		return firstDiff(g, want.([]uint8))
	}
	return -1
}

func firstDiff[T comparable](a, b []T) int {
	for k := range a {
		if a[k] != b[k] {
			return k
		}
	}
	return -1
}

func closeBits(a, b float64, dist, ulps uint64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return dist <= ulps
}

// ulpDist32 is how many floats lie between a and b (±0 are 0 apart only
// when exactness is not asked: their bits differ by one step across zero).
func ulpDist32(a, b float32) uint64 {
	return ordered(int64(int32(math.Float32bits(a))), int64(int32(math.Float32bits(b))))
}

func ulpDist64(a, b float64) uint64 {
	ia, ib := int64(math.Float64bits(a)), int64(math.Float64bits(b))
	// Map sign-magnitude to a monotonic order; differences fit uint64.
	if ia < 0 {
		ia = math.MinInt64 - ia
	}
	if ib < 0 {
		ib = math.MinInt64 - ib
	}
	if ia > ib {
		return uint64(ia) - uint64(ib)
	}
	return uint64(ib) - uint64(ia)
}

func ordered(a, b int64) uint64 {
	if a < 0 {
		a = math.MinInt32 - a
	}
	if b < 0 {
		b = math.MinInt32 - b
	}
	if a > b {
		return uint64(a - b)
	}
	return uint64(b - a)
}
