package elemexpr

import (
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// params are the parameters most tests use: one of each element type.
var (
	testIn = []Param{{"x", Float32}, {"d", Float64}, {"k", Int32}, {"l", Int64}, {"u", Uint8}}
)

func compileOut(t *testing.T, out Type, body string, opts ...Option) *Expr {
	t.Helper()
	e, err := Compile(testIn, []Param{{"z", out}}, body, opts...)
	require.NoError(t, err, body)
	return e
}

// TestTypesFollowCpp checks the types the checker gives, through the casts
// and overloads Body prints.
func TestTypesFollowCpp(t *testing.T) {
	for _, c := range []struct {
		out  Type
		body string
		want string
	}{
		{Float32, "z = x * 1.5", "z = ((float)(((double)x) * 1.5));"},
		{Float32, "z = x * 1.5f", "z = (x * 1.5f);"},
		{Float32, "z = x * 2", "z = (x * ((float)2));"},
		{Float32, "z = sqrt(x)", "z = sqrtf(x);"},
		{Float32, "z = sqrt(k)", "z = ((float)sqrt(((double)k)));"},
		{Float32, "z = sqrtf(d)", "z = sqrtf(((float)d));"},
		{Float32, "z = pow(x, 2)", "z = ((float)pow(((double)x), ((double)2)));"},
		{Float32, "z = powf(x, 2)", "z = powf(x, ((float)2));"},
		{Float32, "z = fmin(x, x)", "z = fminf(x, x);"},
		{Float32, "z = min(x, 1.0)", "z = ((float)fmin(((double)x), 1.0));"},
		{Int32, "z = min(k, u)", "z = min(k, ((int)u));"},
		{Int64, "z = abs(l)", "z = llabs(l);"},
		{Int32, "z = abs(u)", "z = abs(((int)u));"},
		{Int32, "z = u + u", "z = (((int)u) + ((int)u));"},
		{Int64, "z = k + l", "z = (((long long)k) + l);"},
		{Int32, "z = k < 1u", "z = ((int)(((unsigned int)k) < 1u));"},
		{Int64, "z = l + 1u", "z = (l + ((long long)1u));"},
		{Int64, "z = k + 3000000000", "z = (((long long)k) + 3000000000);"},
		{Int64, "z = k + 0xFFFFFFFF", "z = ((long long)(((unsigned int)k) + 0xFFFFFFFF));"},
		{Uint8, "z = k ? u : u", "z = (((bool)k) ? u : u);"},
		{Float64, "z = k ? u : 2.5", "z = (((bool)k) ? ((double)u) : 2.5);"},
		{Int32, "z = u << 2", "z = (((int)u) << 2);"},
		{Int64, "z = k << l", "z = ((long long)(k << l));"},
		{Int32, "z = !x + ~u", "z = (((int)(!((bool)x))) + (~((int)u)));"},
		{Int32, "z = isnan(x) + isinf(d) + isnan(k)", "z = ((((int)isnan(x)) + ((int)isinf(d))) + ((int)isnan(((double)k))));"},
		{Float32, "z = x; z += 1", "z = x;\nz = (z + ((float)1));"},
		{Int32, "z = k; z *= 0.5", "z = k;\nz = ((int)(((double)z) * 0.5));"},
		{Float32, "float t = k; double s = t; z = s", "float t = ((float)k);\ndouble s = ((double)t);\nz = ((float)s);"},
		{Float32, "T t = k; z = t", "float t = ((float)k);\nz = t;"},
		{Float32, "auto t = u + 1; z = t", "int t = (((int)u) + 1);\nz = ((float)t);"},
		{Float32, "const float32 c = 2; z = c * i + n", "const float c = ((float)2);\nz = ((c * ((float)i)) + ((float)n));"},
		{Float32, "z = (double)x / static_cast<int>(d) + float(k)", "z = ((float)((((double)x) / ((double)((int)d))) + ((double)((float)k))));"},
		{Int32, "z = k; z++; --z", "z = k;\nz = (z + 1);\nz = (z - 1);"},
		{Float32, "z = x /* a comment */ // and another\n", "z = x;"},
		{Float32, "if (k) z = 1; else if (x > 2) { float t = x; z = t; } else ; z += 1", "if (((bool)k)) {\n  z = ((float)1);\n} else {\n  if ((x > ((float)2))) {\n    float t = x;\n    z = t;\n  }\n}\nz = (z + ((float)1));"},
		{Int64, "unsigned long long a = l; unsigned b = a; long c = b; z = c", "unsigned long long a = ((unsigned long long)l);\nunsigned int b = ((unsigned int)a);\nlong long c = ((long long)b);\nz = c;"},
	} {
		e := compileOut(t, c.out, c.body, TypeParam("T", Float32))
		assert.Equal(t, c.want, strings.TrimSpace(e.Body()), c.body)
	}
}

// TestBadBodiesSayWhereAndWhat: errors name the place, what was found and
// what is accepted.
func TestBadBodiesSayWhereAndWhat(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{"z = expp(x)", "1:5: unknown function expp (did you mean exp?)"},
		{"z = x +", "1:8: expected a value"},
		{"z = y", "1:5: unknown name y"},
		{"float total = 1; z = totl", "1:22: unknown name totl (did you mean total?)"},
		{"x = 1", "1:1: x is an input"},
		{"i = 1", "i is the body's element index"},
		{"z = x % 2", "1:7: % takes integers; the operands are float and int"},
		{"z = x << 1", "<< takes integers"},
		{"z = ~x", "~ takes an integer"},
		{"for (;;) z = 1", "1:1: for statements are not accepted"},
		{"{ z = 1; }", "blocks { } are accepted only as the branches of an if"},
		{"else z = 1", "else without an if"},
		{"if (x) { z = 1;", "1:8: block { is not closed with }"},
		{"if x z = 1", "expected \"(\" after if"},
		{"if (x) { z = 1 }", "expected \";\" after a statement"},
		{"if (x) { float t = 1; } z = t", "unknown name t"},
		{"float t; if (x) t = 1; z = t", "1:28: t is read before it is given a value"},
		{"if (x) { float x = 1; }", "x is already an input"},
		{"z = x[0]", "indexing [ ] is not accepted"},
		{"z = 'a'", "character and string literals"},
		{"float t; z = t", "1:14: t is read before it is given a value"},
		{"float t; t += 1", "t is read (by +=) before it is given a value"},
		{"auto t; z = 1", "t needs an initializer"},
		{"z = x;\n  float x = 1", "2:9: x is already an input"},
		{"float t = 1; float t = 2", "1:20: t is already a local declared at 1:7"},
		{"z = 1, 2", "comma operator"},
		{"z = 10f", "malformed integer literal 10f"},
		{"z = 1.5L", "long double literal"},
		{"z = 99999999999999999999", "does not fit 64 bits"},
		{"z = 1ux", "malformed integer literal 1ux"},
		{"z = 1lul", "suffix \"lul\""},
		{"z = sqrt(x, x)", "sqrt takes 1 argument, not 2"},
		{"z = pow(x)", "pow takes 2 arguments, not 1"},
		{"z = abs(1u)", "abs of unsigned int is ambiguous"},
		{"z = x(1)", "x is a variable, not a function"},
		{"z = std::exp(x)", "std:: is not accepted"},
		{"half h = 1", "type half is not accepted here; write float"},
		{"z = (char)x", "type char is not accepted here; write unsigned char"},
		{"x + 1", "this expression is computed and dropped"},
		{"z = (z = 1)", "assignment inside an expression"},
		{"z = x++", "++ inside an expression"},
		{"const float c = 1; c = 2", "c is declared const"},
		{"float _t = 1", "starts with _"},
		{"float exp = 1", "reserved"},
		{"z = 0x1.8", "needs an exponent"},
		{"z = x /* open", "not closed"},
		{"z = $", "unexpected character '$'"},
		{"z = " + strings.Repeat("(", 300) + "x" + strings.Repeat(")", 300), "nested more than 200 deep"},
		{"z = float", "type float where a value was expected"},
		{"z = unsigned int(x)", "a functional cast takes a one-word type"},
		{"float *p = x", "pointers and references are not accepted"},
	} {
		_, err := Compile(testIn, []Param{{"z", Float32}}, c.body)
		require.Error(t, err, c.body)
		assert.Contains(t, err.Error(), c.want, c.body)
		var pe *Error
		assert.ErrorAs(t, err, &pe, c.body)
	}
}

func TestBadParametersAreRefused(t *testing.T) {
	for _, c := range []struct {
		in, out []Param
		opts    []Option
		want    string
	}{
		{[]Param{{"1x", Float32}}, nil, nil, "not a C identifier"},
		{[]Param{{"x", Float32}, {"x", Float32}}, nil, nil, "used twice"},
		{[]Param{{"i", Float32}}, nil, nil, "used twice (i and n are the body's own)"},
		{[]Param{{"float", Float32}}, nil, nil, "reserved"},
		{[]Param{{"exp", Float32}}, nil, nil, "reserved"},
		{[]Param{{"x", Invalid}}, nil, nil, "no valid type"},
		{[]Param{{"T", Float32}}, nil, []Option{TypeParam("T", Float32)}, "also a type parameter"},
		{nil, nil, []Option{TypeParam("int", Float32)}, "not a free C identifier"},
	} {
		_, err := Compile(c.in, c.out, "", c.opts...)
		require.Error(t, err)
		assert.Contains(t, err.Error(), c.want)
	}
}

// eval1 runs body on one element of the test parameters.
func eval1[T any](t *testing.T, out Type, body string, x float32, d float64, k int32, l int64, u uint8) T {
	t.Helper()
	e := compileOut(t, out, body)
	z := make([]T, 1)
	require.NoError(t, e.Eval(1, []float32{x}, []float64{d}, []int32{k}, []int64{l}, []uint8{u}, z))
	return z[0]
}

// TestHostDefinesWhatCLeavesUndefined: gocuda's choices where C has none.
func TestHostDefinesWhatCLeavesUndefined(t *testing.T) {
	assert.Equal(t, int32(0), eval1[int32](t, Int32, "z = k / 0", 0, 0, 7, 0, 0), "integer division by 0 is 0")
	assert.Equal(t, int32(0), eval1[int32](t, Int32, "z = k % (k - 7)", 0, 0, 7, 0, 0), "integer remainder by 0 is 0")
	assert.Equal(t, int64(0), eval1[int64](t, Int64, "z = 5 / l", 0, 0, 0, 0, 0), "by a scalar 0 too")
	assert.Equal(t, int32(math.MinInt32), eval1[int32](t, Int32, "z = k / -1", 0, 0, math.MinInt32, 0, 0), "MinInt / -1 wraps")
	assert.Equal(t, int32(math.MaxInt32), eval1[int32](t, Int32, "z = x", 1e20, 0, 0, 0, 0), "float to int saturates")
	assert.Equal(t, int32(math.MinInt32), eval1[int32](t, Int32, "z = x", -1e20, 0, 0, 0, 0), "float to int saturates")
	assert.Equal(t, int32(0), eval1[int32](t, Int32, "z = x", float32(math.NaN()), 0, 0, 0, 0), "NaN to int is 0")
	assert.Equal(t, int64(math.MaxInt64), eval1[int64](t, Int64, "z = d", 0, math.Inf(1), 0, 0, 0))
	assert.Equal(t, uint8(255), eval1[uint8](t, Uint8, "z = x", 300, 0, 0, 0, 0), "float to uint8 saturates")
	assert.Equal(t, uint8(0), eval1[uint8](t, Uint8, "z = x", -3, 0, 0, 0, 0))
	assert.Equal(t, int32(0), eval1[int32](t, Int32, "z = k << 40", 0, 0, 1, 0, 0), "a shift by the width or more gives 0")
	assert.Equal(t, int32(-1), eval1[int32](t, Int32, "z = k >> 40", 0, 0, -8, 0, 0), "or the sign")
	assert.Equal(t, int32(0), eval1[int32](t, Int32, "z = k << -1", 0, 0, 1, 0, 0), "a negative count is a huge one")
	assert.Equal(t, int32(math.MinInt32), eval1[int32](t, Int32, "z = k + 1", 0, 0, math.MaxInt32, 0, 0), "signed overflow wraps")
	assert.Equal(t, uint8(44), eval1[uint8](t, Uint8, "z = k", 0, 0, 300, 0, 0), "int to uint8 wraps")
	assert.Equal(t, int32(-3), eval1[int32](t, Int32, "z = -7 / 2", 0, 0, 0, 0, 0), "division truncates toward zero")
	assert.Equal(t, int32(-1), eval1[int32](t, Int32, "z = -7 % 2", 0, 0, 0, 0, 0), "the remainder has the dividend's sign")
	assert.Equal(t, int32(-4), eval1[int32](t, Int32, "z = k / 2", 0, 0, -9, 0, 0), "a power of two divides toward zero too")
	assert.Equal(t, int64(math.MinInt64), eval1[int64](t, Int64, "z = abs(l)", 0, 0, 0, math.MinInt64, 0))
	assert.Equal(t, float32(0), eval1[float32](t, Float32, "z = z * 2 + 0", 0, 0, 0, 0, 0), "an output reads 0 until set")
	assert.Equal(t, float32(1), eval1[float32](t, Float32, "z = fmin(x, 1)", float32(math.NaN()), 0, 0, 0, 0), "fmin drops a NaN")
	assert.True(t, math.Signbit(float64(eval1[float32](t, Float32, "z = fmin(x, -0.0f)", 0, 0, 0, 0, 0))), "fmin(+0, -0) is -0")
	assert.False(t, math.Signbit(float64(eval1[float32](t, Float32, "z = fmax(-0.0f, x)", 0, 0, 0, 0, 0))), "fmax(-0, +0) is +0")
	assert.Equal(t, float32(3), eval1[float32](t, Float32, "z = round(x)", 2.5, 0, 0, 0, 0), "round halves away from zero")
}

// TestScalarsAndArraysAgree evaluates bodies with every mix of scalar and
// array inputs, through several chunks, and compares element by element.
func TestScalarsAndArraysAgree(t *testing.T) {
	const n = 1500
	in := []Param{{"a", Float32}, {"b", Int32}, {"c", Float64}}
	xs := make([]float32, n)
	ks := make([]int32, n)
	ds := make([]float64, n)
	for j := range n {
		xs[j], ks[j], ds[j] = 2.5, -7, 0.25
	}
	for _, body := range []string{
		"z = a * b + c",
		"z = b / 2 - b % 3 + (b << 2) + (b & 6) - (a > c ? a : c)",
		"z = fmin(a, c) + sqrt(c) + tanh(a) + fma(a, c, b) + max(b, 3) + abs(b) - (a == b) * !c",
		"float t = a; t -= b; z = t > 0 && c < 1 ? t : -t; z /= 3; z += i",
		"double t = a; z = t * c + c; z += c * t; z = z * 2 + 1; z = 3 * c + z * t",
		"if (a > c) z = b; else if (b < 0) { z = c; z *= c; } z += i",
	} {
		e, err := Compile(in, []Param{{"z", Float64}}, body)
		require.NoError(t, err, body)
		want := make([]float64, n)
		require.NoError(t, e.Eval(n, xs, ks, ds, want), body)
		for mask := 1; mask < 8; mask++ {
			args := []any{xs, ks, ds}
			if mask&1 != 0 {
				args[0] = xs[0]
			}
			if mask&2 != 0 {
				args[1] = ks[0]
			}
			if mask&4 != 0 {
				args[2] = ds[0]
			}
			got := make([]float64, n)
			require.NoError(t, e.Eval(n, append(args, got)...), body)
			require.Equal(t, want, got, "%s with scalar mask %03b", body, mask)
		}
	}
}

// A parameter may be named as a type C or Go has and bodies do not accept
// (NVRTC compiles such a body): in the body it is the parameter, in a cast
// too, while a declaration with the type's name is still refused.
func TestParametersMayBeNamedAsTypesBodiesRefuse(t *testing.T) {
	for _, name := range []string{"half", "float16", "int8", "int16", "uint16", "size_t"} {
		t.Run(name, func(t *testing.T) {
			e, err := Compile([]Param{{name, Float32}}, []Param{{"z", Float32}}, "z = "+name+" * 2 + (float)"+name)
			require.NoError(t, err)
			z := make([]float32, 3)
			require.NoError(t, e.Eval(3, []float32{1, 2, 3}, z))
			assert.Equal(t, []float32{3, 6, 9}, z)
		})
	}
	_, err := Compile([]Param{{"x", Float32}}, []Param{{"z", Float32}}, "half h = x; z = h")
	assert.ErrorContains(t, err, "type half is not accepted here; write float")
}

func TestIndexAndCountAreTheRunsOwn(t *testing.T) {
	e, err := Compile(nil, []Param{{"z", Int64}}, "z = i * 1000 + n")
	require.NoError(t, err)
	z := make([]int64, 3)
	require.NoError(t, e.EvalAt(600, 10000, 3, z))
	assert.Equal(t, []int64{610000, 611000, 612000}, z)
	require.NoError(t, e.Eval(3, z))
	assert.Equal(t, []int64{3, 1003, 2003}, z)
}

// TestInPlaceReadsBeforeItWrites: an output that is an input's slice gets
// the body's result even when the body reads the input after setting the
// output.
func TestInPlaceReadsBeforeItWrites(t *testing.T) {
	for _, c := range []struct {
		body string
		want []float32
	}{
		{"z = 2 * x", []float32{2, 4, 6}},
		{"z = 1; z = z + x", []float32{2, 3, 4}},
		{"z = x + 1; w = x * 10", []float32{2, 3, 4}},
		{"w = x; z = w + x", []float32{2, 4, 6}},
	} {
		e, err := Compile([]Param{{"x", Float32}}, []Param{{"z", Float32}, {"w", Float32}}, c.body)
		require.NoError(t, err)
		v := []float32{1, 2, 3}
		w := make([]float32, 3)
		require.NoError(t, e.Eval(3, v, v, w))
		assert.Equal(t, c.want, v, c.body)
	}
}

// TestIfSelectsLikeABranch: both branches are computed and each variable
// they set takes the value of the branch the condition picks.
func TestIfSelectsLikeABranch(t *testing.T) {
	e, err := Compile([]Param{{"x", Int32}, {"y", Int32}}, []Param{{"z", Int32}, {"w", Int32}},
		`float t;
		if (y != 0) { z = x / y; t = 1; } else t = 2;
		if (x > 10) if (y > 0) w = 1; else w = 2; else w = t;`)
	require.NoError(t, err)
	x, y := []int32{7, 7, 20, 20, 20}, []int32{2, 0, 5, -5, 0}
	z, w := make([]int32, 5), make([]int32, 5)
	require.NoError(t, e.Eval(5, x, y, z, w))
	assert.Equal(t, []int32{3, 0, 4, -4, 0}, z)
	assert.Equal(t, []int32{1, 2, 1, 2, 2}, w)
	require.NoError(t, e.Eval(5, int32(20), int32(0), z, w), "a uniform condition")
	assert.Equal(t, []int32{0, 0, 0, 0, 0}, z)
	assert.Equal(t, []int32{2, 2, 2, 2, 2}, w)
}

func TestUnsetOutputsAreZero(t *testing.T) {
	e, err := Compile([]Param{{"x", Float32}}, []Param{{"z", Float32}, {"w", Int32}}, "z = x")
	require.NoError(t, err)
	z, w := []float32{9, 9}, []int32{9, 9}
	require.NoError(t, e.Eval(2, []float32{1, 2}, z, w))
	assert.Equal(t, []int32{0, 0}, w)
}

func TestBadArgumentsAreRefused(t *testing.T) {
	e, err := Compile([]Param{{"x", Float32}}, []Param{{"z", Float32}}, "z = x")
	require.NoError(t, err)
	for _, c := range []struct {
		n    int
		args []any
		want string
	}{
		{2, []any{[]float32{1, 2}}, "1 arguments; the body takes 2, the inputs then the outputs (x float32 or []float32, z []float32)"},
		{2, []any{float64(1), make([]float32, 2)}, "input x is a float64; it is a float32 or a []float32"},
		{2, []any{[]float32{1}, make([]float32, 2)}, "input x has 1 elements; it needs at least 2"},
		{2, []any{float32(1), float32(2)}, "output z is a float32; it is a []float32"},
		{2, []any{float32(1), make([]float32, 1)}, "output z has 1 elements"},
		{-1, []any{float32(1), make([]float32, 1)}, "-1 elements"},
	} {
		err := e.Eval(c.n, c.args...)
		require.Error(t, err)
		assert.Contains(t, err.Error(), c.want)
	}
}

func TestConcurrentEvalsAreIndependent(t *testing.T) {
	e, err := Compile([]Param{{"a", Float32}, {"x", Float32}}, []Param{{"z", Float32}}, "z = a * x + i")
	require.NoError(t, err)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			x := make([]float32, 2000)
			z := make([]float32, 2000)
			for j := range x {
				x[j] = float32(j)
			}
			for range 20 {
				if !assert.NoError(t, e.Eval(2000, float32(g), x, z)) {
					return
				}
				for j := range z {
					if z[j] != float32(g)*float32(j)+float32(j) {
						t.Errorf("goroutine %d element %d: %v", g, j, z[j])
						return
					}
				}
			}
		})
	}
	wg.Wait()
}

func TestFunctionIsACppFunction(t *testing.T) {
	e, err := Compile([]Param{{"x", Float32}}, []Param{{"z", Float32}}, "z = exp(x)")
	require.NoError(t, err)
	assert.Equal(t, `__device__ void f(const long long i, const long long n, const float x, float& z) {
  (void)i;
  (void)n;
  z = 0;
  z = expf(x);
}
`, e.Function("__device__", "f"))
}

func TestTypeNames(t *testing.T) {
	for ty := Bool; ty <= Float64; ty++ {
		got, ok := ParseType(ty.String())
		assert.True(t, ok)
		assert.Equal(t, ty, got)
	}
	_, ok := ParseType("float")
	assert.False(t, ok, "ParseType takes Go names")
	assert.Equal(t, "long long", Int64.CName())
	assert.Equal(t, "invalid", Type(99).String())
}
