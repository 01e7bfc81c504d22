package kernels_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/half"
	"github.com/gocuda/gocuda/kernels"
	"github.com/gocuda/gocuda/kernels/internal/optable"
)

// Tests of the operations generated from the table (ops_gen.go): every
// operation on every type it takes, against references written here with
// package math and Go's operators, on sizes 0, 1, odd and prime ones and
// several blocks, at aligned and offset pointers, with special values
// (NaN, ±Inf, ±0, subnormals, the integer extremes) mixed in.

// optSizes: empty, one, odd, prime, and many blocks with a tail.
func optSizes() []int {
	if testing.Short() {
		return []int{0, 1, 7, 1009, 1<<14 + 3}
	}
	return []int{0, 1, 7, 1009, 1<<17 + 3}
}

// specials are mixed into every input, one element in five.
func specials[T kernels.Elem]() []T {
	var out []any
	switch any(*new(T)).(type) {
	case float32:
		for _, v := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1)),
			math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32, math.MaxFloat32, -math.MaxFloat32, 0.5, 1.5, 2.5, -2.5, 1e-7, 3e9, -3e9, 255.9, 1} {
			out = append(out, v)
		}
	case float64:
		for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1),
			math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64, math.MaxFloat64, -math.MaxFloat64, 0.5, 1.5, 2.5, -2.5, 1e-17, 1e19, -1e19, 255.9, 1} {
			out = append(out, v)
		}
	case int32:
		for _, v := range []int32{math.MinInt32, math.MaxInt32, -1, 0, 1, 2, -2} {
			out = append(out, v)
		}
	case int64:
		for _, v := range []int64{math.MinInt64, math.MaxInt64, -1, 0, 1, 2, -2} {
			out = append(out, v)
		}
	case uint8:
		for _, v := range []uint8{0, 1, 2, 3, 255} {
			out = append(out, v)
		}
	case int8:
		for _, v := range []int8{math.MinInt8, math.MaxInt8, -1, 0, 1, 2, -2} {
			out = append(out, v)
		}
	case int16:
		for _, v := range []int16{math.MinInt16, math.MaxInt16, -1, 0, 1, 2, -2, 255, 256} {
			out = append(out, v)
		}
	case uint32:
		for _, v := range []uint32{0, 1, 2, 255, 1 << 31, math.MaxUint32} {
			out = append(out, v)
		}
	case complex64:
		for _, v := range []complex64{0, 1, complex(float32(math.NaN()), 0), complex(0, 1), complex(float32(math.Inf(1)), -1), complex(-3e9, 2)} {
			out = append(out, v)
		}
	case bool:
		out = append(out, true, false)
	}
	vals := make([]T, len(out))
	for i, v := range out {
		vals[i] = v.(T)
	}
	return vals
}

// optInput is n random values of T with specials every fifth element.
func optInput[T kernels.Elem](e *env, n int) []T {
	x := gen[T](e.r, n, general)
	sp := specials[T]()
	for i := 0; i < n; i += 5 {
		x[i] = sp[e.r.IntN(len(sp))]
	}
	return x
}

// optRun runs one case at every size and layout: in makes the inputs,
// run queues the operation, check compares.
func optRun[O kernels.Elem](t *testing.T, e *env, name string, nin int, run func(dst backend.Ptr, in []backend.Ptr, n int) error,
	inputs func(n int, off bool) ([]backend.Ptr, func(i int) (O, float64)), rtol float64) {
	for _, n := range optSizes() {
		for _, l := range layouts {
			t.Run(fmt.Sprintf("%s/n=%d/%s", name, n, l.name), func(t *testing.T) {
				ptrs, want := inputs(n, l.inOff)
				require.Len(t, ptrs, nin)
				dst := alloc[O](t, e, n, l.outOff)
				require.NoError(t, run(dst.p, ptrs, n))
				checkAll(t, dst.read(t), rtol, want)
			})
		}
	}
}

type unaryRef[T kernels.Elem] struct {
	name string
	run  func(backend.Device, backend.Stream, backend.Ptr, backend.Ptr, int) error
	ref  func(T) T
	rtol float64
}

func testUnaryOps[T kernels.Elem](t *testing.T, e *env, ops []unaryRef[T]) {
	for _, op := range ops {
		optRun(t, e, op.name, 1, func(dst backend.Ptr, in []backend.Ptr, n int) error {
			return op.run(e.dev, e.s, dst, in[0], n)
		}, func(n int, off bool) ([]backend.Ptr, func(int) (T, float64)) {
			x := optInput[T](e, n)
			return []backend.Ptr{upload(t, e, x, off).p}, func(i int) (T, float64) {
				if op.name == "Sin" || op.name == "Cos" || op.name == "Tan" {
					return op.ref(x[i]), hugeTrig(x[i])
				}
				return op.ref(x[i]), 0
			}
		}, op.rtol)
	}
}

// f64 lifts a float64 function to T, computing in float64 and rounding.
func f64[T float32 | float64](f func(float64) float64) func(T) T {
	return func(x T) T { return T(f(float64(x))) }
}

// hugeTrig: for |x| past 2^60 the trigonometric functions are compared
// within rtol absolutely, not relative to the result: Go's argument
// reduction there is not the CUDA library's (sin(MaxFloat64) is
// 0.004961954789184084 in Go, ...061 on the H100, 2026-11-26, ...062 in glibc).
func hugeTrig[T kernels.Elem](x T) float64 {
	if v, ok := any(x).(float64); ok && math.Abs(v) > 0x1p60 {
		return 1
	}
	return 0
}

// numpySign is np.sign: NaN for NaN, 0 for ±0.
func numpySign(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return x
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

func floatUnaryOps[T float32 | float64]() []unaryRef[T] {
	// The CUDA math library's bounds: a few ulp for float32, 1-2 for
	// float64; IEEE operations (sqrt, floor, rint, abs) are exact.
	r := rtolFor[T](4e-7*4, 1e-15*4)
	sigmoid := func(x T) T { return 1 / (1 + T(math.Exp(-float64(x)))) } // in T, as documented
	return []unaryRef[T]{
		{"Exp", kernels.Exp[T], f64[T](math.Exp), r},
		// ln(x) = log2(x)·ln 2 for subnormals: go1.26's amd64 math.Log is
		// wrong there (the H100's log was right, 2026-11-26).
		{"Log", kernels.Log[T], f64[T](func(x float64) float64 {
			if x > 0 && x < 0x1p-1022 {
				return math.Log2(x) * math.Ln2
			}
			return math.Log(x)
		}), r},
		{"Log1p", kernels.Log1p[T], f64[T](math.Log1p), r},
		{"Expm1", kernels.Expm1[T], f64[T](math.Expm1), r},
		{"Sqrt", kernels.Sqrt[T], f64[T](math.Sqrt), 0},
		{"Rsqrt", kernels.Rsqrt[T], f64[T](func(x float64) float64 { return 1 / math.Sqrt(x) }), r},
		{"Abs", kernels.Abs[T], f64[T](math.Abs), 0},
		{"Neg", kernels.Neg[T], func(x T) T { return -x }, 0},
		{"Sign", kernels.Sign[T], f64[T](numpySign), 0},
		{"Floor", kernels.Floor[T], f64[T](math.Floor), 0},
		{"Ceil", kernels.Ceil[T], f64[T](math.Ceil), 0},
		{"Round", kernels.Round[T], f64[T](math.RoundToEven), 0},
		{"Sin", kernels.Sin[T], f64[T](math.Sin), r},
		{"Cos", kernels.Cos[T], f64[T](math.Cos), r},
		{"Tan", kernels.Tan[T], f64[T](math.Tan), r},
		{"Tanh", kernels.Tanh[T], f64[T](math.Tanh), r},
		{"Erf", kernels.Erf[T], f64[T](math.Erf), r},
		{"Sigmoid", kernels.Sigmoid[T], sigmoid, r},
		{"Relu", kernels.Relu[T], func(x T) T {
			if x > 0 {
				return x
			}
			return 0 // also for NaN
		}, 0},
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func intUnaryOps[T int8 | int16 | int32 | int64]() []unaryRef[T] {
	return []unaryRef[T]{
		{"Abs", kernels.Abs[T], func(x T) T {
			if x < 0 {
				return -x // MinInt stays MinInt: Go's -x wraps
			}
			return x
		}, 0},
		{"Sign", kernels.Sign[T], func(x T) T { return T(numpySign(float64(x))) }, 0},
	}
}

func TestTableUnary(t *testing.T) {
	e := newEnv(t)
	runTyped(t, []typed{
		{"float32", func(t *testing.T) { testUnaryOps(t, e, floatUnaryOps[float32]()) }},
		{"float64", func(t *testing.T) { testUnaryOps(t, e, floatUnaryOps[float64]()) }},
		{"int32", func(t *testing.T) { testUnaryOps(t, e, intUnaryOps[int32]()) }},
		{"int64", func(t *testing.T) { testUnaryOps(t, e, intUnaryOps[int64]()) }},
		{"uint8", func(t *testing.T) {
			testUnaryOps(t, e, []unaryRef[uint8]{
				{"Abs", kernels.Abs[uint8], func(x uint8) uint8 { return x }, 0},
				{"Sign", kernels.Sign[uint8], func(x uint8) uint8 { return uint8(b2f(x > 0)) }, 0},
			})
		}},
		{"int8", func(t *testing.T) { testUnaryOps(t, e, intUnaryOps[int8]()) }},
		{"int16", func(t *testing.T) { testUnaryOps(t, e, intUnaryOps[int16]()) }},
		{"uint32", func(t *testing.T) {
			testUnaryOps(t, e, []unaryRef[uint32]{
				{"Abs", kernels.Abs[uint32], func(x uint32) uint32 { return x }, 0},
				{"Sign", kernels.Sign[uint32], func(x uint32) uint32 { return uint32(b2f(x > 0)) }, 0},
			})
		}},
		{"bool", func(t *testing.T) {
			testUnaryOps(t, e, []unaryRef[bool]{{"LogicalNot", kernels.LogicalNot[bool], func(x bool) bool { return !x }, 0}})
		}},
	})
}

type binaryRef[O, T kernels.Elem] struct {
	name string
	run  func(backend.Device, backend.Stream, backend.Ptr, backend.Ptr, backend.Ptr, int) error
	ref  func(a, b T) O
	rtol float64
	// scale, if set, is the magnitude rtol is taken of (at least the
	// result's): room for a reference less exact than the kernel.
	scale func(a, b T) float64
}

func (op binaryRef[O, T]) want(a, b T) (O, float64) {
	if op.scale == nil {
		return op.ref(a, b), 0
	}
	return op.ref(a, b), op.scale(a, b)
}

// powRefScale is room for math.Pow's own error: it raises to the integer
// part of b by repeated squaring, each squaring doubling the relative error,
// and multiplies by Exp(frac(b)·Log(a)), so its error grows with |b| and
// |ln a|, about one float64 epsilon each (the H100 gave 60 ulps apart from
// it at b = 255.9, a result near 1e193). CUDA's pow is within 2 ulps.
// pow64Ref is math.Pow, but for a subnormal base, which Go's math.Pow gets
// wrong (Pow(5e-324, -0.45) is 5.4e138 there, 4.4e145 in C's libm and on
// the GPU): the base is scaled into the normal range first and 2^(-64b)
// multiplied back.
func pow64Ref(a, b float64) float64 {
	if a != 0 && math.Abs(a) < 0x1p-1022 {
		return math.Pow(a*0x1p64, b) * math.Exp2(-64*b)
	}
	return math.Pow(a, b)
}

// Where the result or an operand is 0, infinite or NaN (IEEE's special
// cases, exact in both), it is 0: no room.
func powRefScale(a, b float64) float64 {
	w := math.Abs(pow64Ref(a, b))
	if w == 0 || math.IsInf(w, 0) || math.IsNaN(w) || a == 0 || math.IsInf(a, 0) || math.IsInf(b, 0) {
		return 0
	}
	return w * (1 + (math.Abs(b)+math.Abs(math.Log(math.Abs(a))))*0x1p-52/4e-15)
}

func testBinaryOps[O, T kernels.Elem](t *testing.T, e *env, ops []binaryRef[O, T]) {
	for _, op := range ops {
		optRun(t, e, op.name, 2, func(dst backend.Ptr, in []backend.Ptr, n int) error {
			return op.run(e.dev, e.s, dst, in[0], in[1], n)
		}, func(n int, off bool) ([]backend.Ptr, func(int) (O, float64)) {
			a, b := optInput[T](e, n), optInput[T](e, n)
			for i := 3; i < n; i += 7 {
				b[i] = a[i] // equal pairs, for the comparisons and ties
			}
			return []backend.Ptr{upload(t, e, a, off).p, upload(t, e, b, off).p},
				func(i int) (O, float64) { return op.want(a[i], b[i]) }
		}, op.rtol)
		// With a, b or both a single element (WithScalars), on either side.
		for _, sc := range []kernels.Scalars{1, 2, 3} {
			optRun(t, e, fmt.Sprintf("%s/scalars=%02b", op.name, sc), 2, func(dst backend.Ptr, in []backend.Ptr, n int) error {
				return kernels.WithScalars[T](op.name, e.dev, e.s, dst, in, sc, n)
			}, func(n int, off bool) ([]backend.Ptr, func(int) (O, float64)) {
				a, b := scalarInput[T](e, n, sc&1 != 0), scalarInput[T](e, n, sc&2 != 0)
				return []backend.Ptr{upload(t, e, a.v, off).p, upload(t, e, b.v, off).p},
					func(i int) (O, float64) { return op.want(a.at(i), b.at(i)) }
			}, op.rtol)
		}
	}
}

// scalarIn is an input of n elements, or of one that stands for all n.
type scalarIn[T kernels.Elem] struct {
	v      []T
	scalar bool
}

func scalarInput[T kernels.Elem](e *env, n int, scalar bool) scalarIn[T] {
	if scalar {
		return scalarIn[T]{optInput[T](e, 1), true}
	}
	return scalarIn[T]{optInput[T](e, n), false}
}

func (s scalarIn[T]) at(i int) T {
	if s.scalar {
		return s.v[0]
	}
	return s.v[i]
}

type tableReal interface {
	float32 | float64 | int32 | int64 | uint8 | int8 | int16 | uint32
}

// NumPy's minimum and maximum: NaN if either is NaN, else the smaller
// (larger), a on ties.
func isNaN[T tableReal](x T) bool { return math.IsNaN(float64(x)) }

func npMinimum[T tableReal](a, b T) T {
	switch {
	case isNaN(a):
		return a
	case isNaN(b):
		return b
	case b < a:
		return b
	}
	return a
}

func npMaximum[T tableReal](a, b T) T {
	switch {
	case isNaN(a):
		return a
	case isNaN(b):
		return b
	case b > a:
		return b
	}
	return a
}

func realBinaryOps[T tableReal]() []binaryRef[T, T] {
	return []binaryRef[T, T]{
		{"Minimum", kernels.Minimum[T], npMinimum[T], 0, nil},
		{"Maximum", kernels.Maximum[T], npMaximum[T], 0, nil},
	}
}

func compareOps[T tableReal]() []binaryRef[bool, T] {
	return []binaryRef[bool, T]{
		{"Equal", kernels.Equal[T], func(a, b T) bool { return a == b }, 0, nil},
		{"NotEqual", kernels.NotEqual[T], func(a, b T) bool { return a != b }, 0, nil},
		{"Less", kernels.Less[T], func(a, b T) bool { return a < b }, 0, nil},
		{"LessEqual", kernels.LessEqual[T], func(a, b T) bool { return a <= b }, 0, nil},
		{"Greater", kernels.Greater[T], func(a, b T) bool { return a > b }, 0, nil},
		{"GreaterEqual", kernels.GreaterEqual[T], func(a, b T) bool { return a >= b }, 0, nil},
	}
}

func testRealBinary[T tableReal](t *testing.T, e *env) {
	testBinaryOps(t, e, realBinaryOps[T]())
	testBinaryOps(t, e, compareOps[T]())
}

func TestTableBinary(t *testing.T) {
	e := newEnv(t)
	runTyped(t, []typed{
		{"float32", func(t *testing.T) {
			testRealBinary[float32](t, e)
			testBinaryOps(t, e, []binaryRef[float32, float32]{{"Pow", kernels.Pow[float32], func(a, b float32) float32 {
				return float32(math.Pow(float64(a), float64(b)))
			}, 4 * 4e-7, nil}})
		}},
		{"float64", func(t *testing.T) {
			testRealBinary[float64](t, e)
			testBinaryOps(t, e, []binaryRef[float64, float64]{{name: "Pow", run: kernels.Pow[float64], ref: pow64Ref, rtol: 4e-15, scale: powRefScale}})
		}},
		{"int32", func(t *testing.T) { testRealBinary[int32](t, e) }},
		{"int64", func(t *testing.T) { testRealBinary[int64](t, e) }},
		{"uint8", func(t *testing.T) { testRealBinary[uint8](t, e) }},
		{"int8", func(t *testing.T) { testRealBinary[int8](t, e) }},
		{"int16", func(t *testing.T) { testRealBinary[int16](t, e) }},
		{"uint32", func(t *testing.T) { testRealBinary[uint32](t, e) }},
		{"bool", func(t *testing.T) {
			testBinaryOps(t, e, []binaryRef[bool, bool]{
				{"LogicalAnd", kernels.LogicalAnd[bool], func(a, b bool) bool { return a && b }, 0, nil},
				{"LogicalOr", kernels.LogicalOr[bool], func(a, b bool) bool { return a || b }, 0, nil},
				{"LogicalXor", kernels.LogicalXor[bool], func(a, b bool) bool { return a != b }, 0, nil},
				{"Equal", kernels.Equal[bool], func(a, b bool) bool { return a == b }, 0, nil},
				{"NotEqual", kernels.NotEqual[bool], func(a, b bool) bool { return a != b }, 0, nil},
			})
		}},
	})
}

func testWhere[T kernels.Elem](t *testing.T, e *env) {
	for sc := kernels.Scalars(1); sc < 8; sc++ {
		optRun(t, e, fmt.Sprintf("Where/scalars=%03b", sc), 3, func(dst backend.Ptr, in []backend.Ptr, n int) error {
			return kernels.WithScalars[T]("Where", e.dev, e.s, dst, in, sc, n)
		}, func(n int, off bool) ([]backend.Ptr, func(int) (T, float64)) {
			c, a, b := scalarInput[bool](e, n, sc&1 != 0), scalarInput[T](e, n, sc&2 != 0), scalarInput[T](e, n, sc&4 != 0)
			return []backend.Ptr{upload(t, e, c.v, off).p, upload(t, e, a.v, off).p, upload(t, e, b.v, off).p}, func(i int) (T, float64) {
				if c.at(i) {
					return a.at(i), 0
				}
				return b.at(i), 0
			}
		}, 0)
	}
	optRun(t, e, "Where", 3, func(dst backend.Ptr, in []backend.Ptr, n int) error {
		return kernels.Where[T](e.dev, e.s, dst, in[0], in[1], in[2], n)
	}, func(n int, off bool) ([]backend.Ptr, func(int) (T, float64)) {
		c, a, b := optInput[bool](e, n), optInput[T](e, n), optInput[T](e, n)
		return []backend.Ptr{upload(t, e, c, off).p, upload(t, e, a, off).p, upload(t, e, b, off).p}, func(i int) (T, float64) {
			if c[i] {
				return a[i], 0
			}
			return b[i], 0
		}
	}, 0)
}

func testClamp[T tableReal](t *testing.T, e *env, lo, hi T) {
	optRun(t, e, "Clamp", 1, func(dst backend.Ptr, in []backend.Ptr, n int) error {
		return kernels.Clamp(e.dev, e.s, dst, in[0], lo, hi, n)
	}, func(n int, off bool) ([]backend.Ptr, func(int) (T, float64)) {
		x := optInput[T](e, n)
		return []backend.Ptr{upload(t, e, x, off).p}, func(i int) (T, float64) { return npMinimum(npMaximum(x[i], lo), hi), 0 }
	}, 0)
}

func TestTableWhereAndClamp(t *testing.T) {
	e := newEnv(t)
	runTyped(t, []typed{
		{"float32", func(t *testing.T) { testWhere[float32](t, e); testClamp[float32](t, e, -2, 3) }},
		{"float64", func(t *testing.T) { testWhere[float64](t, e); testClamp[float64](t, e, -2, 3) }},
		{"int32", func(t *testing.T) { testWhere[int32](t, e); testClamp[int32](t, e, -2, 3) }},
		{"int64", func(t *testing.T) { testWhere[int64](t, e); testClamp[int64](t, e, -2, 3) }},
		{"uint8", func(t *testing.T) { testWhere[uint8](t, e); testClamp[uint8](t, e, 2, 3) }},
		{"int8", func(t *testing.T) { testWhere[int8](t, e); testClamp[int8](t, e, -2, 3) }},
		{"int16", func(t *testing.T) { testWhere[int16](t, e); testClamp[int16](t, e, -2, 3) }},
		{"uint32", func(t *testing.T) { testWhere[uint32](t, e); testClamp[uint32](t, e, 2, 1<<31) }},
		{"complex64", func(t *testing.T) { testWhere[complex64](t, e) }},
		{"bool", func(t *testing.T) { testWhere[bool](t, e) }},
	})
}

// refConvert is Convert's documented rule, written independently of the
// generated code: Go's conversions, except float → integer (truncate,
// saturate, NaN → 0), bool ↔ numbers (x != 0; 0 or 1), complex64 → real
// (its real part, as a float32).
func refConvert[U, T kernels.Elem](x T) U {
	var re, im float64 // the value as a complex128, for floats and bools
	var i64 int64
	isInt := false
	switch v := any(x).(type) {
	case float32:
		re = float64(v)
	case float64:
		re = v
	case complex64:
		re, im = float64(real(v)), float64(imag(v))
	case bool:
		re = b2f(v)
	case int32:
		i64, isInt = int64(v), true
	case int64:
		i64, isInt = v, true
	case uint8:
		i64, isInt = int64(v), true
	case int8:
		i64, isInt = int64(v), true
	case int16:
		i64, isInt = int64(v), true
	case uint32:
		i64, isInt = int64(v), true
	}
	// toInt converts the float re with saturation to the range [lo, hi].
	toInt := func(lo, hi float64) (int64, bool) {
		switch t := math.Trunc(re); {
		case math.IsNaN(re):
			return 0, true
		case t <= lo:
			return int64(lo), true
		case t >= hi:
			return 0, false // the maximum: the caller picks it
		default:
			return int64(t), true
		}
	}
	var out any
	switch any(*new(U)).(type) {
	case bool:
		if isInt {
			out = i64 != 0
		} else {
			out = re != 0 || im != 0
		}
	case complex64:
		switch v := any(x).(type) {
		case complex64:
			out = v
		case float64:
			out = complex(float32(v), 0)
		default:
			if isInt {
				out = complex(float32(i64), 0)
			} else {
				out = complex(float32(re), 0)
			}
		}
	case float32:
		switch {
		case isInt:
			out = float32(i64)
		default:
			out = float32(re)
		}
	case float64:
		switch {
		case isInt:
			out = float64(i64)
		default:
			out = re
		}
	case int32:
		if isInt {
			out = int32(i64)
		} else if v, ok := toInt(math.MinInt32, math.MaxInt32); ok {
			out = int32(v)
		} else {
			out = int32(math.MaxInt32)
		}
	case int64:
		if isInt {
			out = i64
		} else if v, ok := toInt(math.MinInt64, 0x1p63); ok {
			out = v
		} else {
			out = int64(math.MaxInt64)
		}
	case uint8:
		if isInt {
			out = uint8(i64)
		} else if v, ok := toInt(0, math.MaxUint8); ok {
			out = uint8(v)
		} else {
			out = uint8(math.MaxUint8)
		}
	case int8:
		if isInt {
			out = int8(i64)
		} else if v, ok := toInt(math.MinInt8, math.MaxInt8); ok {
			out = int8(v)
		} else {
			out = int8(math.MaxInt8)
		}
	case int16:
		if isInt {
			out = int16(i64)
		} else if v, ok := toInt(math.MinInt16, math.MaxInt16); ok {
			out = int16(v)
		} else {
			out = int16(math.MaxInt16)
		}
	case uint32:
		if isInt {
			out = uint32(i64)
		} else if v, ok := toInt(0, math.MaxUint32); ok {
			out = uint32(v)
		} else {
			out = uint32(math.MaxUint32)
		}
	}
	return out.(U)
}

func testConvert[U, T kernels.Elem](t *testing.T, e *env) {
	optRun(t, e, "to "+kernels.DTypeOf[U]().String(), 1, func(dst backend.Ptr, in []backend.Ptr, n int) error {
		return kernels.Convert[U, T](e.dev, e.s, dst, in[0], n)
	}, func(n int, off bool) ([]backend.Ptr, func(int) (U, float64)) {
		x := optInput[T](e, n)
		return []backend.Ptr{upload(t, e, x, off).p}, func(i int) (U, float64) { return refConvert[U](x[i]), 0 }
	}, 0)
}

func convertFrom[T kernels.Elem](e *env) func(t *testing.T) {
	return func(t *testing.T) {
		testConvert[float32, T](t, e)
		testConvert[float64, T](t, e)
		testConvert[int32, T](t, e)
		testConvert[int64, T](t, e)
		testConvert[uint8, T](t, e)
		testConvert[complex64, T](t, e)
		testConvert[bool, T](t, e)
		testConvert[int8, T](t, e)
		testConvert[int16, T](t, e)
		testConvert[uint32, T](t, e)
	}
}

func TestTableConvert(t *testing.T) {
	e := newEnv(t)
	runTyped(t, []typed{
		{"float32", convertFrom[float32](e)}, {"float64", convertFrom[float64](e)},
		{"int32", convertFrom[int32](e)}, {"int64", convertFrom[int64](e)}, {"uint8", convertFrom[uint8](e)},
		{"complex64", convertFrom[complex64](e)}, {"bool", convertFrom[bool](e)},
		{"int8", convertFrom[int8](e)}, {"int16", convertFrom[int16](e)}, {"uint32", convertFrom[uint32](e)},
	})
}

// Edge cases of the conversions, spelled out.
func TestConvertSaturatesAndTruncates(t *testing.T) {
	e := newEnv(t)
	in := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 3e9, -3e9, 2.9, -2.9, -0.5, 255.5, 256, 1e19, -1e19}
	x := upload(t, e, in, false)
	i32 := alloc[int32](t, e, len(in), false)
	u8 := alloc[uint8](t, e, len(in), false)
	i64 := alloc[int64](t, e, len(in), false)
	b := alloc[bool](t, e, len(in), false)
	require.NoError(t, kernels.Convert[int32, float64](e.dev, e.s, i32.p, x.p, len(in)))
	require.NoError(t, kernels.Convert[uint8, float64](e.dev, e.s, u8.p, x.p, len(in)))
	require.NoError(t, kernels.Convert[int64, float64](e.dev, e.s, i64.p, x.p, len(in)))
	require.NoError(t, kernels.Convert[bool, float64](e.dev, e.s, b.p, x.p, len(in)))
	assert.Equal(t, []int32{0, math.MaxInt32, math.MinInt32, math.MaxInt32, math.MinInt32, 2, -2, 0, 255, 256, math.MaxInt32, math.MinInt32}, i32.read(t))
	assert.Equal(t, []uint8{0, 255, 0, 255, 0, 2, 0, 0, 255, 255, 255, 0}, u8.read(t))
	assert.Equal(t, []int64{0, math.MaxInt64, math.MinInt64, 3e9, -3e9, 2, -2, 0, 255, 256, math.MaxInt64, math.MinInt64}, i64.read(t))
	assert.Equal(t, []bool{true, true, true, true, true, true, true, true, true, true, true, true}, b.read(t))
	i8 := alloc[int8](t, e, len(in), false)
	i16 := alloc[int16](t, e, len(in), false)
	u32 := alloc[uint32](t, e, len(in), false)
	require.NoError(t, kernels.Convert[int8, float64](e.dev, e.s, i8.p, x.p, len(in)))
	require.NoError(t, kernels.Convert[int16, float64](e.dev, e.s, i16.p, x.p, len(in)))
	require.NoError(t, kernels.Convert[uint32, float64](e.dev, e.s, u32.p, x.p, len(in)))
	assert.Equal(t, []int8{0, 127, -128, 127, -128, 2, -2, 0, 127, 127, 127, -128}, i8.read(t))
	assert.Equal(t, []int16{0, 32767, -32768, 32767, -32768, 2, -2, 0, 255, 256, 32767, -32768}, i16.read(t))
	assert.Equal(t, []uint32{0, math.MaxUint32, 0, 3e9, 0, 2, 0, 0, 255, 256, math.MaxUint32, 0}, u32.read(t))
}

// opsFor calls every generated operation on T by its table name, on n
// elements at p (each operand and dst).
func opsFor[T kernels.Elem](e *env, p backend.Ptr, n int) map[string]func() error {
	d, s := e.dev, e.s
	var z T
	un := func(f func(backend.Device, backend.Stream, backend.Ptr, backend.Ptr, int) error) func() error {
		return func() error { return f(d, s, p, p, n) }
	}
	bin := func(f func(backend.Device, backend.Stream, backend.Ptr, backend.Ptr, backend.Ptr, int) error) func() error {
		return func() error { return f(d, s, p, p, p, n) }
	}
	return map[string]func() error{
		"Exp": un(kernels.Exp[T]), "Log": un(kernels.Log[T]), "Log1p": un(kernels.Log1p[T]), "Expm1": un(kernels.Expm1[T]),
		"Sqrt": un(kernels.Sqrt[T]), "Rsqrt": un(kernels.Rsqrt[T]), "Abs": un(kernels.Abs[T]), "Neg": un(kernels.Neg[T]),
		"Sign": un(kernels.Sign[T]), "Floor": un(kernels.Floor[T]), "Ceil": un(kernels.Ceil[T]), "Round": un(kernels.Round[T]),
		"Sin": un(kernels.Sin[T]), "Cos": un(kernels.Cos[T]), "Tan": un(kernels.Tan[T]), "Tanh": un(kernels.Tanh[T]),
		"Erf": un(kernels.Erf[T]), "Sigmoid": un(kernels.Sigmoid[T]), "Relu": un(kernels.Relu[T]), "LogicalNot": un(kernels.LogicalNot[T]),
		"Pow": bin(kernels.Pow[T]), "Minimum": bin(kernels.Minimum[T]), "Maximum": bin(kernels.Maximum[T]),
		"Equal": bin(kernels.Equal[T]), "NotEqual": bin(kernels.NotEqual[T]), "Less": bin(kernels.Less[T]),
		"LessEqual": bin(kernels.LessEqual[T]), "Greater": bin(kernels.Greater[T]), "GreaterEqual": bin(kernels.GreaterEqual[T]),
		"LogicalAnd": bin(kernels.LogicalAnd[T]), "LogicalOr": bin(kernels.LogicalOr[T]), "LogicalXor": bin(kernels.LogicalXor[T]),
		"Where": func() error { return kernels.Where[T](d, s, p, p, p, p, n) },
		"Clamp": func() error { return kernels.Clamp(d, s, p, p, z, z, n) },
	}
}

// The generated API and the table agree: every table entry has a kernels
// function that takes exactly the entry's types, and refuses the others
// with an error naming the operation, the type and the accepted types.
func TestTableTypesMatchAPI(t *testing.T) {
	e := newEnv(t)
	check := func(t *testing.T, dt kernels.DType, calls map[string]func() error) {
		require.Len(t, calls, len(optable.Ops), "opsFor must list every table entry")
		for _, op := range optable.Ops {
			call, ok := calls[op.Name]
			require.True(t, ok, "no kernels function for %s", op.Name)
			var accepted []string
			takes := false
			for _, c := range op.Cases() {
				accepted = append(accepted, c.Type.Name())
				takes = takes || c.Type.Name() == dt.String()
			}
			err := call()
			if takes {
				assert.NoError(t, err, "%s on %s", op.Name, dt)
				continue
			}
			require.ErrorIs(t, err, kernels.ErrUnsupportedDType, "%s on %s", op.Name, dt)
			assert.Contains(t, err.Error(), fmt.Sprintf("%s does not take %s; it takes %s", op.Name, dt, strings.Join(accepted, ", ")))
		}
	}
	// Every operand is one 16-element buffer, in place: only acceptance
	// is under test here.
	buf := alloc[complex64](t, e, 16, false)
	t.Run("float32", func(t *testing.T) { check(t, kernels.Float32, opsFor[float32](e, buf.p, 16)) })
	t.Run("float64", func(t *testing.T) { check(t, kernels.Float64, opsFor[float64](e, buf.p, 16)) })
	t.Run("int32", func(t *testing.T) { check(t, kernels.Int32, opsFor[int32](e, buf.p, 16)) })
	t.Run("int64", func(t *testing.T) { check(t, kernels.Int64, opsFor[int64](e, buf.p, 16)) })
	t.Run("uint8", func(t *testing.T) { check(t, kernels.Uint8, opsFor[uint8](e, buf.p, 16)) })
	t.Run("complex64", func(t *testing.T) { check(t, kernels.Complex64, opsFor[complex64](e, buf.p, 16)) })
	t.Run("bool", func(t *testing.T) { check(t, kernels.Bool, opsFor[bool](e, buf.p, 16)) })
	t.Run("float16", func(t *testing.T) { check(t, kernels.Float16, opsFor[half.Float16](e, buf.p, 16)) })
	t.Run("bfloat16", func(t *testing.T) { check(t, kernels.BFloat16, opsFor[half.BFloat16](e, buf.p, 16)) })
}

// Mixed-type operands are checked each at its own element size: a bool
// dst may sit at any byte, a float32 input must be 4-byte aligned.
func TestTableChecksEachOperandAtItsType(t *testing.T) {
	e := newEnv(t)
	x := alloc[float32](t, e, 8, false)
	b := alloc[bool](t, e, 9, false)
	require.NoError(t, kernels.Less[float32](e.dev, e.s, b.p+1, x.p, x.p, 8))
	err := kernels.Less[float32](e.dev, e.s, b.p, x.p+2, x.p, 8)
	require.ErrorIs(t, err, backend.ErrInvalidValue)
	assert.Contains(t, err.Error(), "Less float32: pointer a")
	assert.Contains(t, err.Error(), "not 4-byte aligned, as float32 elements must be")
	err = kernels.Where[float64](e.dev, e.s, x.p, 0, x.p, x.p, 2)
	require.ErrorIs(t, err, backend.ErrInvalidValue)
	assert.Contains(t, err.Error(), "Where float64: pointer cond is nil")
	err = kernels.Convert[int32, float32](e.dev, e.s, x.p, x.p, -1)
	require.ErrorIs(t, err, backend.ErrInvalidValue)
	assert.Contains(t, err.Error(), "Convert float32")
}

// The table's type names and kernels' agree.
func TestTableTypesAreKernelsDTypes(t *testing.T) {
	var names []string
	for dt := kernels.Float32; dt.Valid(); dt++ {
		names = append(names, dt.String())
	}
	var table []string
	for _, ty := range optable.Types {
		table = append(table, ty.Name())
	}
	assert.Equal(t, names, table)
	assert.True(t, slices.Contains(names, "bool"))
}

// BenchmarkTableExpFloat32 compares the generated host loop of Exp with a
// plain Go loop over a slice, the bar it must stay within 3x of: run it
// with -cpu 1 for one core (the host backend splits large arrays across
// GOMAXPROCS goroutines). On the host backend kernels.Exp includes queuing
// on the stream and waiting for it.
func BenchmarkTableExpFloat32(b *testing.B) {
	const n = 1 << 20
	e := newEnv(b)
	x := gen[float32](e.r, n, general)
	dx := upload(b, e, x, false)
	dst := alloc[float32](b, e, n, false)
	b.Run("kernels.Exp", func(b *testing.B) {
		b.SetBytes(8 * n)
		for b.Loop() {
			if err := kernels.Exp[float32](e.dev, e.s, dst.p, dx.p, n); err != nil {
				b.Fatal(err)
			}
			if err := e.s.Synchronize(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("plain-loop", func(b *testing.B) {
		b.SetBytes(8 * n)
		d := make([]float32, n)
		for b.Loop() {
			for i, v := range x {
				d[i] = float32(math.Exp(float64(v)))
			}
		}
	})
}

// WithScalars rejects what it cannot run, naming it.
func TestWithScalarsErrors(t *testing.T) {
	e := newEnv(t)
	p := alloc[float32](t, e, 4, false).p
	cases := []struct {
		name, op string
		in       int
		sc       kernels.Scalars
		want     string
	}{
		{"unary op", "Exp", 2, 1, `operation "Exp" is not a generated operation of two or three inputs`},
		{"unknown op", "Frob", 2, 1, `operation "Frob"`},
		{"too few inputs", "Where", 2, 1, "Where takes 3 inputs"},
		{"bit past the inputs", "Pow", 2, 4, "Pow takes 2 inputs and scalar bits 0 to 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := make([]backend.Ptr, c.in)
			for i := range in {
				in[i] = p
			}
			err := kernels.WithScalars[float32](c.op, e.dev, e.s, p, in, c.sc, 4)
			require.ErrorIs(t, err, backend.ErrInvalidValue)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

// powRefScale gives room only where math.Pow's own error can be: never at
// IEEE's special cases, whose results both sides have exactly (a NaN room
// there failed the H100's float64 Pow at a = 0 under compute-sanitizer).
func TestPowRefScaleLeavesSpecialsExact(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	for _, c := range []struct{ a, b float64 }{
		{0, 3}, {0, -3}, {math.Copysign(0, -1), -1}, {inf, 2}, {-inf, 3}, {2, inf}, {0.5, -inf},
		{1, inf}, {nan, 2}, {2, nan}, {1e300, 10}, {1e-300, 10},
	} {
		assert.Zero(t, powRefScale(c.a, c.b), "pow(%g, %g)", c.a, c.b)
	}
	w := math.Pow(1.5, 255.9)
	assert.Greater(t, powRefScale(1.5, 255.9), 2*w, "a large exponent gets room")
	// C's pow(5e-324, -0.450492223011425), which the H100 gave as well.
	assert.InEpsilon(t, 4.4354293232348234e+145, pow64Ref(5e-324, -0.450492223011425), 1e-13, "a subnormal base")
	assert.InEpsilon(t, 1.0, powRefScale(1.5, 1)/1.5, 0.2, "a small exponent little")
}

// Pow of a subnormal base agrees with C's pow on both backends (Go's
// math.Pow, which the host backend used, was off by seven orders there).
func TestPowOfASubnormalBaseIsCs(t *testing.T) {
	e := newEnv(t)
	a := upload(t, e, []float64{5e-324, -5e-324, 5e-324}, false)
	b := upload(t, e, []float64{-0.450492223011425, 3, 0.3431100381505967}, false)
	d := alloc[float64](t, e, 3, false)
	require.NoError(t, kernels.Pow[float64](e.dev, e.s, d.p, a.p, b.p, 3))
	got := d.read(t)
	for i, want := range []float64{4.4354293232348234e+145, math.Copysign(0, -1), 1.1759588349399293e-111} {
		if want == 0 {
			assert.Equal(t, math.Signbit(want), math.Signbit(got[i]), "[%d] sign", i)
			assert.Zero(t, got[i], "[%d]", i)
			continue
		}
		assert.InEpsilon(t, want, got[i], 1e-13, "[%d]", i)
	}
}
