package kernels_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/half"
	"github.com/gocuda/gocuda/kernels"
)

// Tests of the hand-written operations on float16 and bfloat16 (half_ops.go,
// cuda/half_ops.cuh) against plain Go. The reference of +, -, *, / is the
// operation in float64 rounded once to the type: exact or correctly rounded,
// so the kernels' float32 arithmetic must match it bit for bit (float32
// has the 2p+2 bits that make rounding twice innocuous). Tolerance: none,
// every result is compared as bits.

// halfArith is the four operations as the reference computes them.
var halfArith = []struct {
	name string
	ref  func(a, b float64) float64
}{
	{"Add", func(a, b float64) float64 { return a + b }},
	{"Sub", func(a, b float64) float64 { return a - b }},
	{"Mul", func(a, b float64) float64 { return a * b }},
	{"Div", func(a, b float64) float64 { return a / b }},
}

// halfInputs is n patterns of H: any pattern (NaN, ±Inf, subnormals), values
// of a few bits near each other (their sums land on rounding ties) and
// ordinary values, with exact ties and signed zeros up front.
func halfInputs[H halfType](e *env, n int) (a, b []H) {
	_, from64 := halfOf[H]()
	a, b = make([]H, n), make([]H, n)
	for i := range a {
		for _, p := range []*H{&a[i], &b[i]} {
			switch e.r.IntN(3) {
			case 0:
				*p = H(e.r.Uint32())
			case 1:
				*p = from64(math.Ldexp(float64(e.r.IntN(4097)-2048), e.r.IntN(14)-13))
			default:
				*p = from64(e.r.Float64()*16 - 8)
			}
		}
	}
	p := 11
	if _, ok := any(H(0)).(half.BFloat16); ok {
		p = 8
	}
	fixed := [][2]float64{
		{1, math.Ldexp(1, -p)},                      // a tie: to 1
		{1 + math.Ldexp(1, 1-p), math.Ldexp(1, -p)}, // a tie: to 1 + 2 ulps
		{math.Inf(1), math.Inf(-1)},
		{0, math.Copysign(0, -1)},
	}
	for i, f := range fixed {
		if i < n {
			a[i], b[i] = from64(f[0]), from64(f[1])
		}
	}
	return a, b
}

func halfRef[H halfType](ref func(a, b float64) float64) func(a, b H) H {
	_, from64 := halfOf[H]()
	return func(a, b H) H { return from64(ref(float64(a.Float32()), float64(b.Float32()))) }
}

type halfBinaryFn = func(backend.Device, backend.Stream, backend.Ptr, backend.Ptr, backend.Ptr, int) error

func testHalfArithmetic[H halfType](t *testing.T, e *env) {
	bin := []halfBinaryFn{kernels.Add[H], kernels.Sub[H], kernels.Mul[H], kernels.Div[H]}
	sc := []func(backend.Device, backend.Stream, backend.Ptr, backend.Ptr, H, int) error{
		kernels.AddScalar[H], kernels.SubScalar[H], kernels.MulScalar[H], kernels.DivScalar[H]}
	_, from64 := halfOf[H]()
	for k, op := range halfArith {
		ref := halfRef[H](op.ref)
		for _, n := range []int{0, 1, 9, 1001, 1<<16 + 3} {
			for _, l := range layouts {
				name := fmt.Sprintf("%s n=%d %s", op.name, n, l.name)
				a, b := halfInputs[H](e, n)
				pa, pb := upload(t, e, a, l.inOff), upload(t, e, b, l.inOff)
				d := alloc[H](t, e, n, l.outOff)
				require.NoError(t, bin[k](e.dev, e.s, d.p, pa.p, pb.p, n), name)
				for i, got := range d.read(t) {
					require.Equal(t, ref(a[i], b[i]), got, "%s: %v, %v", name, a[i], b[i])
				}
				if n == 0 {
					continue
				}
				for _, s := range []H{b[0], from64(3), from64(0), H(0x7fc1), from64(math.Inf(-1))} {
					require.NoError(t, sc[k](e.dev, e.s, d.p, pa.p, s, n), name)
					for i, got := range d.read(t) {
						require.Equal(t, ref(a[i], s), got, "%sScalar %s: %v, %v", op.name, name, a[i], s)
					}
				}
			}
		}
	}
}

func TestHalfArithmetic(t *testing.T) {
	e := newEnv(t)
	t.Run("float16", func(t *testing.T) { testHalfArithmetic[half.Float16](t, e) })
	t.Run("bfloat16", func(t *testing.T) { testHalfArithmetic[half.BFloat16](t, e) })
}

func testHalfStrided[H halfType](t *testing.T, e *env) {
	runs := []stridedFn{kernels.AddStrided[H], kernels.SubStrided[H], kernels.MulStrided[H], kernels.DivStrided[H]}
	for k, op := range halfArith {
		ref := halfRef[H](op.ref)
		for _, l := range stridedLayouts {
			for _, lay := range layouts {
				name := fmt.Sprintf("%s/%s/%s", op.name, l.name, lay.name)
				n := 1
				for _, d := range l.shape {
					n *= d
				}
				a, _ := halfInputs[H](e, extent(l.shape, l.sa))
				_, b := halfInputs[H](e, extent(l.shape, l.sb))
				da, db := upload(t, e, a, lay.inOff), upload(t, e, b, lay.inOff)
				dst := alloc[H](t, e, n, lay.outOff)
				require.NoError(t, runs[k](e.dev, e.s, dst.p, da.p, db.p, l.shape, l.sa, l.sb), name)
				ia, ib := stridedIndex(l.shape, l.sa), stridedIndex(l.shape, l.sb)
				for i, got := range dst.read(t) {
					require.Equal(t, ref(a[ia[i]], b[ib[i]]), got, "%s at %d", name, i)
				}
			}
		}
	}
}

func TestHalfStrided(t *testing.T) {
	e := newEnv(t)
	t.Run("float16", func(t *testing.T) { testHalfStrided[half.Float16](t, e) })
	t.Run("bfloat16", func(t *testing.T) { testHalfStrided[half.BFloat16](t, e) })
}

// Axpy and Scale: alpha*x is exact in float32 (for products that neither
// overflow nor underflow it), the sum rounds in float32, then to the type;
// Scale is MulScalar in place. ReluGrad copies dy's pattern where x > 0.
func testHalfAxpyScaleReluGrad[H halfType](t *testing.T, e *env) {
	from32, from64 := halfOf[H]()
	for _, n := range []int{1, 9, 1001, 1<<16 + 3} {
		x, y := halfInputs[H](e, n)
		alpha := from64(-1.75)
		px, py := upload(t, e, x, false), upload(t, e, y, true)
		require.NoError(t, kernels.Axpy(e.dev, e.s, alpha, px.p, py.p, n))
		for i, got := range py.read(t) {
			want := from32(float32(alpha.Float32()*x[i].Float32()) + y[i].Float32())
			require.Equal(t, want, got, "Axpy n=%d: %v*%v + %v", n, alpha, x[i], y[i])
		}
		require.NoError(t, kernels.Scale(e.dev, e.s, alpha, px.p, n))
		for i, got := range px.read(t) {
			require.Equal(t, from64(float64(alpha.Float32())*float64(x[i].Float32())), got, "Scale n=%d: %v", n, x[i])
		}
		dy, _ := halfInputs[H](e, n)
		pdy := upload(t, e, dy, true)
		px = upload(t, e, x, true)
		d := alloc[H](t, e, n, false)
		require.NoError(t, kernels.ReluGrad[H](e.dev, e.s, d.p, px.p, pdy.p, n))
		for i, got := range d.read(t) {
			want := H(0)
			if x[i].Float32() > 0 {
				want = dy[i]
			}
			require.Equal(t, want, got, "ReluGrad n=%d: x %v", n, x[i])
		}
	}
}

func TestHalfAxpyScaleReluGrad(t *testing.T) {
	e := newEnv(t)
	t.Run("float16", func(t *testing.T) { testHalfAxpyScaleReluGrad[half.Float16](t, e) })
	t.Run("bfloat16", func(t *testing.T) { testHalfAxpyScaleReluGrad[half.BFloat16](t, e) })
}

// Arange computes start + i*delta in float32 (delta the rounded second
// element minus start) and rounds once; Linspace rounds its float64 values
// once; Eye writes the pattern of 1.
func testHalfConstruct[H halfType](t *testing.T, e *env) {
	from32, from64 := halfOf[H]()
	for _, c := range [][2]float64{{0.1, 0.3}, {-100, 0.7}, {3, -1}, {0, 1}} {
		start, step := from64(c[0]), from64(c[1])
		second := from32(start.Float32() + step.Float32())
		delta := second.Float32() - start.Float32()
		for _, n := range []int{1, 2, 3, 1001, 1<<16 + 1} {
			d := alloc[H](t, e, n, n%2 == 1)
			require.NoError(t, kernels.Arange(e.dev, e.s, d.p, start, step, n))
			for i, got := range d.read(t) {
				want := from32(start.Float32() + float32(float32(i)*delta))
				if i == 1 {
					want = second
				}
				require.Equal(t, want, got, "Arange(%v, %v) n=%d at %d", start, step, n, i)
			}
		}
	}
	for _, n := range []int{1, 2, 51, 4099} {
		for _, endpoint := range []bool{false, true} {
			d := alloc[H](t, e, n, true)
			require.NoError(t, kernels.Linspace[H](e.dev, e.s, d.p, -1.5, 1e4/3, n, endpoint))
			div := float64(n)
			if endpoint {
				div = float64(n - 1)
			}
			for i, got := range d.read(t) {
				y := -1.5 + float64(float64(i)*((1e4/3+1.5)/max(div, 1))) // no fused multiply-add
				if endpoint && i == n-1 && n > 1 {
					y = 1e4 / 3
				}
				require.Equal(t, from64(y), got, "Linspace n=%d endpoint=%v at %d", n, endpoint, i)
			}
		}
	}
	for _, sh := range [][3]int{{1, 1, 0}, {4, 7, 2}, {7, 4, -1}, {300, 301, 0}} {
		d := alloc[H](t, e, sh[0]*sh[1], true)
		require.NoError(t, kernels.Eye[H](e.dev, e.s, d.p, sh[0], sh[1], sh[2]))
		for i, got := range d.read(t) {
			want := H(0)
			if i%sh[1]-i/sh[1] == sh[2] {
				want = from64(1)
			}
			require.Equal(t, want, got, "Eye %v at %d", sh, i)
		}
	}
}

func TestHalfArangeLinspaceEye(t *testing.T) {
	e := newEnv(t)
	t.Run("float16", func(t *testing.T) { testHalfConstruct[half.Float16](t, e) })
	t.Run("bfloat16", func(t *testing.T) { testHalfConstruct[half.BFloat16](t, e) })
}

// Concat, Take and Scatter move patterns, NaN payloads included.
func testHalfMoves[H halfType](t *testing.T, e *env) {
	rows := 37
	p0, _ := halfInputs[H](e, rows*5)
	p1, _ := halfInputs[H](e, rows*3)
	d0, d1 := upload(t, e, p0, false), upload(t, e, p1, true)
	d := alloc[H](t, e, rows*8, false)
	require.NoError(t, kernels.Concat[H](e.dev, e.s, d.p, rows, []kernels.ConcatPart{{Src: d0.p, Cols: 5}, {Src: d1.p, Cols: 3}}))
	for i, got := range d.read(t) {
		r, c := i/8, i%8
		var want H
		if c < 5 {
			want = p0[r*5+c]
		} else {
			want = p1[r*3+c-5]
		}
		require.Equal(t, want, got, "Concat at %d", i)
	}

	l := kernels.IndexLayout{Outer: 3, Dim: 7, Inner: 5, Indices: 4}
	src, _ := halfInputs[H](e, l.Outer*l.Dim*l.Inner)
	idx := []int64{6, -1, 0, 2}
	ds, di := upload(t, e, src, true), upload(t, e, idx, false)
	dt := alloc[H](t, e, l.Outer*l.Indices*l.Inner, true)
	require.NoError(t, kernels.Take[H](e.dev, e.s, dt.p, ds.p, di.p, l, true))
	taken := dt.read(t)
	for i, got := range taken {
		o, j, k := i/(l.Indices*l.Inner), i/l.Inner%l.Indices, i%l.Inner
		w := (int(idx[j]) + l.Dim) % l.Dim
		require.Equal(t, src[(o*l.Dim+w)*l.Inner+k], got, "Take at %d", i)
	}
	idx = []int64{6, 1, 0, 2}
	di = upload(t, e, idx, false)
	dd := upload(t, e, make([]H, len(src)), false)
	require.NoError(t, kernels.Scatter[H](e.dev, e.s, dd.p, dt.p, di.p, l, true))
	for i, got := range dd.read(t) {
		o, w, k := i/(l.Dim*l.Inner), i/l.Inner%l.Dim, i%l.Inner
		want := H(0)
		for j, x := range idx {
			if int(x) == w {
				want = taken[(o*l.Indices+j)*l.Inner+k]
			}
		}
		require.Equal(t, want, got, "Scatter at %d", i)
	}
}

func TestHalfConcatTakeScatter(t *testing.T) {
	e := newEnv(t)
	t.Run("float16", func(t *testing.T) { testHalfMoves[half.Float16](t, e) })
	t.Run("bfloat16", func(t *testing.T) { testHalfMoves[half.BFloat16](t, e) })
}
