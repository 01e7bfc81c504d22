package kernels_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/kernels"
)

type binaryFn = func(backend.Device, backend.Stream, backend.Ptr, backend.Ptr, backend.Ptr, int) error

func allTypes(f32, f64, i32, i64, u8, c64, i8, i16, u32 func(*testing.T)) []typed {
	return []typed{{"float32", f32}, {"float64", f64}, {"int32", i32}, {"int64", i64}, {"uint8", u8}, {"complex64", c64},
		{"int8", i8}, {"int16", i16}, {"uint32", u32}}
}

// refDiv is Div's rule: Go's division, except that an integer divided by
// zero is 0.
func refDiv[T number](a, b T) T {
	if isInteger[T]() && b == 0 {
		return 0
	}
	return a / b
}

// complexOnly is rtol for complex64 and exact for the rest: real float
// arithmetic is IEEE round-to-nearest on both backends, so it must match
// bit for bit; complex multiplication may fuse a multiply-add on a GPU, and
// complex division rounds its float64 result once more.
func complexOnly[T kernels.Elem](rtol float64) float64 {
	if kernels.DTypeOf[T]() == kernels.Complex64 {
		return rtol
	}
	return 0
}

func TestFill(t *testing.T) {
	e := newEnv(t)
	runTyped(t, allTypes(
		func(t *testing.T) { testFill[float32](t, e) }, func(t *testing.T) { testFill[float64](t, e) },
		func(t *testing.T) { testFill[int32](t, e) }, func(t *testing.T) { testFill[int64](t, e) },
		func(t *testing.T) { testFill[uint8](t, e) }, func(t *testing.T) { testFill[complex64](t, e) },
		func(t *testing.T) { testFill[int8](t, e) }, func(t *testing.T) { testFill[int16](t, e) }, func(t *testing.T) { testFill[uint32](t, e) }))
}

func testFill[T kernels.Elem](t *testing.T, e *env) {
	for _, n := range testSizes() {
		for _, off := range []bool{false, true} {
			t.Run(fmt.Sprintf("n=%d/offset=%v", n, off), func(t *testing.T) {
				v := genOne[T](e.r, general)
				dst := alloc[T](t, e, n, off)
				require.NoError(t, kernels.Fill(e.dev, e.s, dst.p, v, n))
				checkAll(t, dst.read(t), 0, func(int) (T, float64) { return v, 0 })
			})
		}
	}
}

func TestCopy(t *testing.T) {
	e := newEnv(t)
	runTyped(t, allTypes(
		func(t *testing.T) { testCopy[float32](t, e) }, func(t *testing.T) { testCopy[float64](t, e) },
		func(t *testing.T) { testCopy[int32](t, e) }, func(t *testing.T) { testCopy[int64](t, e) },
		func(t *testing.T) { testCopy[uint8](t, e) }, func(t *testing.T) { testCopy[complex64](t, e) },
		func(t *testing.T) { testCopy[int8](t, e) }, func(t *testing.T) { testCopy[int16](t, e) }, func(t *testing.T) { testCopy[uint32](t, e) }))
}

func testCopy[T kernels.Elem](t *testing.T, e *env) {
	for _, n := range []int{1, 1000} {
		src := gen[T](e.r, n, general)
		ds := upload(t, e, src, true)
		dst := alloc[T](t, e, n, false)
		require.NoError(t, kernels.Copy[T](e.dev, e.s, dst.p, ds.p, n))
		checkAll(t, dst.read(t), 0, func(i int) (T, float64) { return src[i], 0 })
	}
}

func TestBinary(t *testing.T) {
	e := newEnv(t)
	runTyped(t, allTypes(
		func(t *testing.T) { testBinary[float32](t, e) }, func(t *testing.T) { testBinary[float64](t, e) },
		func(t *testing.T) { testBinary[int32](t, e) }, func(t *testing.T) { testBinary[int64](t, e) },
		func(t *testing.T) { testBinary[uint8](t, e) }, func(t *testing.T) { testBinary[complex64](t, e) },
		func(t *testing.T) { testBinary[int8](t, e) }, func(t *testing.T) { testBinary[int16](t, e) }, func(t *testing.T) { testBinary[uint32](t, e) }))
}

func testBinary[T number](t *testing.T, e *env) {
	ops := []struct {
		name string
		run  binaryFn
		ref  func(a, b T) (T, float64)
		rtol float64
		kind genKind // of b
	}{
		{"Add", kernels.Add[T], func(a, b T) (T, float64) { return a + b, 0 }, 0, general},
		{"Sub", kernels.Sub[T], func(a, b T) (T, float64) { return a - b, 0 }, 0, general},
		{"Mul", kernels.Mul[T], func(a, b T) (T, float64) { return a * b, mag(a) * mag(b) }, complexOnly[T](1e-6), general},
		{"Div", kernels.Div[T], func(a, b T) (T, float64) { q := refDiv(a, b); return q, mag(q) }, complexOnly[T](1e-6), divisor},
	}
	for _, op := range ops {
		for _, n := range testSizes() {
			for _, l := range layoutsFor(n) {
				t.Run(fmt.Sprintf("%s/n=%d/%s", op.name, n, l.name), func(t *testing.T) {
					a, b := gen[T](e.r, n, general), gen[T](e.r, n, op.kind)
					da, db := upload(t, e, a, l.inOff), upload(t, e, b, l.inOff)
					dst := alloc[T](t, e, n, l.outOff)
					require.NoError(t, op.run(e.dev, e.s, dst.p, da.p, db.p, n))
					checkAll(t, dst.read(t), op.rtol, func(i int) (T, float64) { return op.ref(a[i], b[i]) })
				})
			}
		}
		t.Run(op.name+"/in-place", func(t *testing.T) {
			n := 1003
			a, b := gen[T](e.r, n, general), gen[T](e.r, n, op.kind)
			da, db := upload(t, e, a, false), upload(t, e, b, false)
			require.NoError(t, op.run(e.dev, e.s, da.p, da.p, db.p, n))
			checkAll(t, da.read(t), op.rtol, func(i int) (T, float64) { return op.ref(a[i], b[i]) })
		})
	}
}

func TestScalar(t *testing.T) {
	e := newEnv(t)
	runTyped(t, allTypes(
		func(t *testing.T) { testScalar[float32](t, e) }, func(t *testing.T) { testScalar[float64](t, e) },
		func(t *testing.T) { testScalar[int32](t, e) }, func(t *testing.T) { testScalar[int64](t, e) },
		func(t *testing.T) { testScalar[uint8](t, e) }, func(t *testing.T) { testScalar[complex64](t, e) },
		func(t *testing.T) { testScalar[int8](t, e) }, func(t *testing.T) { testScalar[int16](t, e) }, func(t *testing.T) { testScalar[uint32](t, e) }))
}

func testScalar[T number](t *testing.T, e *env) {
	type scalarFn = func(backend.Device, backend.Stream, backend.Ptr, backend.Ptr, T, int) error
	ops := []struct {
		name string
		run  scalarFn
		ref  func(a, b T) (T, float64)
		rtol float64
		kind genKind
	}{
		{"AddScalar", kernels.AddScalar[T], func(a, b T) (T, float64) { return a + b, 0 }, 0, general},
		{"SubScalar", kernels.SubScalar[T], func(a, b T) (T, float64) { return a - b, 0 }, 0, general},
		{"MulScalar", kernels.MulScalar[T], func(a, b T) (T, float64) { return a * b, mag(a) * mag(b) }, complexOnly[T](1e-6), general},
		{"DivScalar", kernels.DivScalar[T], func(a, b T) (T, float64) { q := refDiv(a, b); return q, mag(q) }, complexOnly[T](1e-6), divisor},
	}
	for _, op := range ops {
		for _, n := range testSizes() {
			for _, l := range layoutsFor(n) {
				t.Run(fmt.Sprintf("%s/n=%d/%s", op.name, n, l.name), func(t *testing.T) {
					a, b := gen[T](e.r, n, general), genOne[T](e.r, op.kind)
					da := upload(t, e, a, l.inOff)
					dst := alloc[T](t, e, n, l.outOff)
					require.NoError(t, op.run(e.dev, e.s, dst.p, da.p, b, n))
					checkAll(t, dst.read(t), op.rtol, func(i int) (T, float64) { return op.ref(a[i], b) })
				})
			}
		}
	}
	if isInteger[T]() {
		// The scalars that need care: 0 (defined as 0, not a panic) and -1
		// (MinInt / -1 wraps to MinInt); for uint8, 255 is -1's bits.
		zero, one := T(0), T(1)
		for _, b := range []T{zero, one, zero - one} {
			t.Run(fmt.Sprintf("DivScalar/by=%v", b), func(t *testing.T) {
				n := 1000
				a := gen[T](e.r, n, general)
				da := upload(t, e, a, false)
				dst := alloc[T](t, e, n, false)
				require.NoError(t, kernels.DivScalar(e.dev, e.s, dst.p, da.p, b, n))
				checkAll(t, dst.read(t), 0, func(i int) (T, float64) { return refDiv(a[i], b), 0 })
			})
		}
	}
}

func TestDivSignedEdges(t *testing.T) {
	e := newEnv(t)
	a := []int32{math.MinInt32, math.MinInt32, 7, -7, 7, -7, 0, math.MaxInt32, 5}
	b := []int32{-1, 1, 2, 2, -2, -2, 0, -1, 0}
	want := []int32{math.MinInt32, math.MinInt32, 3, -3, -3, 3, 0, -math.MaxInt32, 0}
	da, db := upload(t, e, a, false), upload(t, e, b, false)
	dst := alloc[int32](t, e, len(a), false)
	require.NoError(t, kernels.Div[int32](e.dev, e.s, dst.p, da.p, db.p, len(a)))
	require.Equal(t, want, dst.read(t))

	a64 := []int64{math.MinInt64, 9, -9, 3}
	b64 := []int64{-1, 0, 4, -1}
	d64 := upload(t, e, a64, false)
	e64 := upload(t, e, b64, false)
	out := alloc[int64](t, e, len(a64), false)
	require.NoError(t, kernels.Div[int64](e.dev, e.s, out.p, d64.p, e64.p, len(a64)))
	require.Equal(t, []int64{math.MinInt64, 0, -2, -3}, out.read(t))
}

func TestFloatSpecials(t *testing.T) {
	e := newEnv(t)
	inf, nan, negZero := math.Inf(1), math.NaN(), math.Copysign(0, -1)
	a := []float64{1, -1, 0, inf, nan, negZero, 3}
	b := []float64{0, 0, 0, inf, 1, 2, -inf}
	da, db := upload(t, e, a, false), upload(t, e, b, false)
	dst := alloc[float64](t, e, len(a), false)
	require.NoError(t, kernels.Div[float64](e.dev, e.s, dst.p, da.p, db.p, len(a)))
	checkAll(t, dst.read(t), 0, func(i int) (float64, float64) { return a[i] / b[i], 0 })

	// Relu takes NaN as not positive, and gives +0 for -0.
	x := []float32{float32(nan), float32(-inf), float32(inf), float32(negZero), 0, 2}
	dx := upload(t, e, x, false)
	out := alloc[float32](t, e, len(x), false)
	require.NoError(t, kernels.Relu[float32](e.dev, e.s, out.p, dx.p, len(x)))
	relu := out.read(t)
	require.Equal(t, []float32{0, 0, float32(inf), 0, 0, 2}, relu)
	require.False(t, math.Signbit(float64(relu[3])), "Relu(-0) is +0")

	// complex64 division by zero follows Go (C99 Annex G): Inf, not NaN.
	ca := []complex64{1 + 1i, complex(float32(inf), 0), 2 + 0i}
	cb := []complex64{0, 1 + 1i, complex(float32(inf), 0)}
	dca, dcb := upload(t, e, ca, false), upload(t, e, cb, false)
	cdst := alloc[complex64](t, e, len(ca), false)
	require.NoError(t, kernels.Div[complex64](e.dev, e.s, cdst.p, dca.p, dcb.p, len(ca)))
	checkAll(t, cdst.read(t), 0, func(i int) (complex64, float64) { return ca[i] / cb[i], 0 })
}

func TestAxpyScale(t *testing.T) {
	e := newEnv(t)
	runTyped(t, []typed{
		{"float32", func(t *testing.T) { testAxpyScale[float32](t, e) }},
		{"float64", func(t *testing.T) { testAxpyScale[float64](t, e) }},
		{"complex64", func(t *testing.T) { testAxpyScale[complex64](t, e) }},
	})
}

func testAxpyScale[T number](t *testing.T, e *env) {
	// A GPU fuses alpha*x + y: within an ulp or two of |alpha*x| + |y|.
	rtol := rtolFor[T](3e-7, 5e-16)
	if kernels.DTypeOf[T]() == kernels.Complex64 {
		rtol = 1e-6
	}
	for _, n := range testSizes() {
		for _, l := range layoutsFor(n) {
			t.Run(fmt.Sprintf("Axpy/n=%d/%s", n, l.name), func(t *testing.T) {
				x, y, alpha := gen[T](e.r, n, general), gen[T](e.r, n, general), genOne[T](e.r, general)
				dx, dy := upload(t, e, x, l.inOff), upload(t, e, y, l.outOff)
				require.NoError(t, kernels.Axpy(e.dev, e.s, alpha, dx.p, dy.p, n))
				checkAll(t, dy.read(t), rtol, func(i int) (T, float64) {
					return alpha*x[i] + y[i], mag(alpha)*mag(x[i]) + mag(y[i])
				})
			})
			t.Run(fmt.Sprintf("Scale/n=%d/%s", n, l.name), func(t *testing.T) {
				x, alpha := gen[T](e.r, n, general), genOne[T](e.r, general)
				dx := upload(t, e, x, l.inOff)
				require.NoError(t, kernels.Scale(e.dev, e.s, alpha, dx.p, n))
				checkAll(t, dx.read(t), complexOnly[T](1e-6), func(i int) (T, float64) {
					return alpha * x[i], mag(alpha) * mag(x[i])
				})
			})
		}
	}
}

func TestUnary(t *testing.T) {
	e := newEnv(t)
	runTyped(t, []typed{
		{"float32", func(t *testing.T) { testUnary[float32](t, e) }},
		{"float64", func(t *testing.T) { testUnary[float64](t, e) }},
	})
}

type floatT interface{ float32 | float64 }

func testUnary[T floatT](t *testing.T, e *env) {
	type unaryFn = func(backend.Device, backend.Stream, backend.Ptr, backend.Ptr, int) error
	// The CUDA math library is within 2 ulp (float32) and 1 ulp (float64) of
	// the exact result for exp, log and tanh; sigmoid adds a rounding or two.
	r32, r64 := 1e-6, 1e-14
	ops := []struct {
		name string
		run  unaryFn
		ref  func(x float64) float64
		rtol float64
		kind genKind
	}{
		{"Exp", kernels.Exp[T], math.Exp, rtolFor[T](r32, r64), general},
		{"Log", kernels.Log[T], math.Log, rtolFor[T](r32, r64), positive},
		{"Tanh", kernels.Tanh[T], math.Tanh, rtolFor[T](r32, r64), general},
		{"Sigmoid", kernels.Sigmoid[T], func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }, rtolFor[T](r32, r64), general},
		{"Sqrt", kernels.Sqrt[T], math.Sqrt, 0, positive}, // IEEE: correctly rounded
		{"Abs", kernels.Abs[T], math.Abs, 0, general},
		{"Neg", kernels.Neg[T], func(x float64) float64 { return -x }, 0, general},
		{"Relu", kernels.Relu[T], func(x float64) float64 { return max(x, 0) }, 0, general},
	}
	for _, op := range ops {
		for _, n := range testSizes() {
			for _, l := range layoutsFor(n) {
				t.Run(fmt.Sprintf("%s/n=%d/%s", op.name, n, l.name), func(t *testing.T) {
					x := gen[T](e.r, n, op.kind)
					dx := upload(t, e, x, l.inOff)
					dst := alloc[T](t, e, n, l.outOff)
					require.NoError(t, op.run(e.dev, e.s, dst.p, dx.p, n))
					checkAll(t, dst.read(t), op.rtol, func(i int) (T, float64) { return T(op.ref(float64(x[i]))), 0 })
				})
			}
		}
	}
	for _, n := range testSizes() {
		for _, l := range layoutsFor(n) {
			t.Run(fmt.Sprintf("ReluGrad/n=%d/%s", n, l.name), func(t *testing.T) {
				x, dy := gen[T](e.r, n, general), gen[T](e.r, n, general)
				dx, ddy := upload(t, e, x, l.inOff), upload(t, e, dy, l.inOff)
				dst := alloc[T](t, e, n, l.outOff)
				require.NoError(t, kernels.ReluGrad[T](e.dev, e.s, dst.p, dx.p, ddy.p, n))
				checkAll(t, dst.read(t), 0, func(i int) (T, float64) {
					if x[i] > 0 {
						return dy[i], 0
					}
					return 0, 0
				})
			})
		}
	}
}
