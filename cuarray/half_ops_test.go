package cuarray_test

import (
	"math"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/half"
	"github.com/gocuda/gocuda/kernels"
)

// Every array operation on float16 and bfloat16 arrays (issue 27), on
// whatever backend the tests run, against plain Go that computes from the
// half values in float64 (or float32 where the operation is float32's) and
// rounds once. Tolerances: none (bit for bit) where the result is exact or
// the order of the arithmetic is fixed; one step of the half type (the
// neighbouring pattern) where a GPU may add in another order: Cumsum,
// Cumprod, Sum and Dot of values whose float64 sum is inexact.

func halfFrom64[H halfElem](f float64) H {
	var h H
	if _, ok := any(h).(half.Float16); ok {
		return H(half.Float16FromFloat64(f))
	}
	return H(half.BFloat16FromFloat64(f))
}

func f64[H halfElem](h H) float64 { return float64(h.Float32()) }

// halfVals is n values: small multiples of 1/4 (many equal, so sorts show
// their stability, and sums are exact in any order) when small, else
// values in [-8, 8).
func halfVals[H halfElem](r *rand.Rand, n int, small bool) []H {
	out := make([]H, n)
	for i := range out {
		if small {
			out[i] = halfFrom64[H](float64(r.IntN(33)-16) / 4)
		} else {
			out[i] = halfFrom64[H](r.Float64()*16 - 8)
		}
	}
	return out
}

// nearHalf: got is want's pattern or a neighbour of it.
func nearHalf[H halfElem](got, want H) bool {
	if got == want {
		return true
	}
	g, w := f64(got), f64(want)
	if math.IsInf(g, 0) || math.IsInf(w, 0) || math.IsNaN(g) || math.IsNaN(w) {
		return false
	}
	lo, hi := math.Min(g, w), math.Max(g, w)
	// No pattern strictly between them: adjacent values.
	mid := halfFrom64[H]((lo + hi) / 2)
	return f64(mid) == lo || f64(mid) == hi
}

func newRand(t *testing.T) *rand.Rand {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, 27))
}

func fromSlice[H cuarray.Elem](t *testing.T, data []H, shape ...int) *cuarray.Array[H] {
	t.Helper()
	a, err := cuarray.FromSlice(data, shape...)
	require.NoError(t, err)
	t.Cleanup(a.UnsafeFree)
	return a
}

func TestHalfElementwiseArithmetic(t *testing.T) {
	t.Run("float16", testHalfElementwise[half.Float16])
	t.Run("bfloat16", testHalfElementwise[half.BFloat16])
}

func testHalfElementwise[H halfElem](t *testing.T) {
	r := newRand(t)
	const rows, cols = 37, 41
	ops := []struct {
		name string
		run  func(dst, a, b *cuarray.Array[H]) (*cuarray.Array[H], error)
		sc   func(dst, a *cuarray.Array[H], v H) (*cuarray.Array[H], error)
		ref  func(a, b float64) float64
	}{
		{"Add", cuarray.Add[H], cuarray.AddScalar[H], func(a, b float64) float64 { return a + b }},
		{"Sub", cuarray.Sub[H], cuarray.SubScalar[H], func(a, b float64) float64 { return a - b }},
		{"Mul", cuarray.Mul[H], cuarray.MulScalar[H], func(a, b float64) float64 { return a * b }},
		{"Div", cuarray.Div[H], cuarray.DivScalar[H], func(a, b float64) float64 { return a / b }},
	}
	av, bv := halfVals[H](r, rows*cols, false), halfVals[H](r, rows*cols, false)
	rowv, colv := halfVals[H](r, cols, false), halfVals[H](r, rows, false)
	a, b := fromSlice(t, av, rows, cols), fromSlice(t, bv, rows, cols)
	row, col := fromSlice(t, rowv, cols), fromSlice(t, colv, rows, 1)
	d := cuarray.Must(cuarray.New[H](rows, cols))
	defer d.UnsafeFree()
	s := halfFrom64[H](-1.375)
	for _, op := range ops {
		cases := []struct {
			name string
			b    *cuarray.Array[H]
			at   func(i int) H
		}{
			{"same shape", b, func(i int) H { return bv[i] }},
			{"row broadcast", row, func(i int) H { return rowv[i%cols] }},
			{"column broadcast", col, func(i int) H { return colv[i/cols] }},
		}
		for _, c := range cases {
			require.NoError(t, errOf(op.run(d, a, c.b)), "%s %s", op.name, c.name)
			for i, got := range read(t, d) {
				require.Equal(t, halfFrom64[H](op.ref(f64(av[i]), f64(c.at(i)))), got, "%s %s at %d: %v, %v", op.name, c.name, i, av[i], c.at(i))
			}
		}
		require.NoError(t, errOf(op.sc(d, a, s)))
		for i, got := range read(t, d) {
			require.Equal(t, halfFrom64[H](op.ref(f64(av[i]), f64(s))), got, "%sScalar at %d", op.name, i)
		}
	}
	// A transposed view as an operand.
	at := cuarray.Must(b.Reshape(cols, rows))
	defer at.UnsafeFree()
	tv := cuarray.Must(at.Transpose())
	require.NoError(t, errOf(cuarray.Add(d, a, tv)))
	for i, got := range read(t, d) {
		r, c := i/cols, i%cols
		require.Equal(t, halfFrom64[H](f64(av[i])+f64(bv[c*rows+r])), got, "Add of a transposed view at %d", i)
	}
	// Axpy: alpha*x exact in float32, the sum rounded in float32, then to H.
	y := fromSlice(t, slices.Clone(bv), rows, cols)
	require.NoError(t, errOf(cuarray.Axpy(y, s, a, y)))
	for i, got := range read(t, y) {
		want := halfFrom64[H](float64(float32(s.Float32()*av[i].Float32()) + bv[i].Float32()))
		require.Equal(t, want, got, "Axpy at %d", i)
	}
	require.NoError(t, cuarray.Copy(y, a))
	require.NoError(t, errOf(cuarray.Scale(y, s, y)))
	for i, got := range read(t, y) {
		require.Equal(t, halfFrom64[H](f64(s)*f64(av[i])), got, "Scale at %d", i)
	}
}

func TestHalfWholeArrayReductions(t *testing.T) {
	t.Run("float16", testHalfWholeReductions[half.Float16])
	t.Run("bfloat16", testHalfWholeReductions[half.BFloat16])
}

func testHalfWholeReductions[H halfElem](t *testing.T) {
	r := newRand(t)
	for _, n := range []int{1, 7, 1009, 70001} {
		xv, yv := halfVals[H](r, n, n > 1009), halfVals[H](r, n, false)
		x, y := fromSlice(t, xv, n), fromSlice(t, yv, n)
		var sum, dot float64
		mx, mn := math.Inf(-1), math.Inf(1)
		for i := range xv {
			sum += f64(xv[i])
			dot += f64(xv[i]) * f64(yv[i])
			mx, mn = math.Max(mx, f64(xv[i])), math.Min(mn, f64(xv[i]))
		}
		got, err := cuarray.Sum(x)
		require.NoError(t, err)
		assert.True(t, nearHalf(got, halfFrom64[H](sum)), "Sum n=%d: %v, want %v", n, got, halfFrom64[H](sum))
		if n > 1009 { // small values: the float64 sum is exact in any order
			assert.Equal(t, halfFrom64[H](sum), got, "Sum n=%d", n)
		}
		got, err = cuarray.Dot(x, y)
		require.NoError(t, err)
		assert.True(t, nearHalf(got, halfFrom64[H](dot)), "Dot n=%d: %v, want %v", n, got, halfFrom64[H](dot))
		got, err = cuarray.Max(x)
		require.NoError(t, err)
		assert.Equal(t, halfFrom64[H](mx), got, "Max n=%d", n)
		got, err = cuarray.Min(x)
		require.NoError(t, err)
		assert.Equal(t, halfFrom64[H](mn), got, "Min n=%d", n)
	}
	// A view is packed first; NaN wins Max; an empty array has no Max.
	m := fromSlice(t, []H{halfFrom64[H](1), halfFrom64[H](2), halfFrom64[H](3), halfFrom64[H](4), halfFrom64[H](5), halfFrom64[H](6)}, 2, 3)
	col := cuarray.Must(m.SliceAxis(1, 1, 2, 1))
	defer col.UnsafeFree()
	got, err := cuarray.Sum(col)
	require.NoError(t, err)
	assert.Equal(t, halfFrom64[H](7), got)
	nan := fromSlice(t, []H{halfFrom64[H](1), halfFrom64[H](math.NaN()), halfFrom64[H](3)}, 3)
	got, err = cuarray.Max(nan)
	require.NoError(t, err)
	assert.True(t, math.IsNaN(f64(got)), "Max with a NaN: %v", got)
	empty := cuarray.Must(cuarray.New[H](0))
	defer empty.UnsafeFree()
	_, err = cuarray.Max(empty)
	require.ErrorIs(t, err, kernels.ErrEmpty)
	_, err = cuarray.Dot(x3(t, m), empty)
	require.Error(t, err)
}

func x3[H halfElem](t *testing.T, m *cuarray.Array[H]) *cuarray.Array[H] {
	v := cuarray.Must(m.Reshape(6))
	t.Cleanup(v.UnsafeFree)
	return v
}

func TestHalfScansAndSorts(t *testing.T) {
	t.Run("float16", testHalfScansSorts[half.Float16])
	t.Run("bfloat16", testHalfScansSorts[half.BFloat16])
}

func testHalfScansSorts[H halfElem](t *testing.T) {
	r := newRand(t)
	const rows, cols = 5, 301
	xv := halfVals[H](r, rows*cols, true)
	xv[7] = halfFrom64[H](math.Copysign(0, -1))
	x := fromSlice(t, xv, rows, cols)
	scans := []struct {
		name  string
		run   func(dst, x *cuarray.Array[H], axis int) (*cuarray.Array[H], error)
		step  func(acc, v float64) float64
		exact bool
	}{
		{"Cumsum", cuarray.Cumsum[H], func(a, v float64) float64 { return a + v }, false},
		{"Cumprod", cuarray.Cumprod[H], func(a, v float64) float64 { return a * v }, false},
		// NumPy's maximum.accumulate: a NaN stays, and a tie keeps the
		// running value (-0 then +0 stays -0), where Go's max would take +0.
		{"Cummax", cuarray.Cummax[H], func(a, v float64) float64 {
			if v > a || v != v {
				return v
			}
			return a
		}, true},
		{"Cummin", cuarray.Cummin[H], func(a, v float64) float64 {
			if v < a || v != v {
				return v
			}
			return a
		}, true},
	}
	for _, sc := range scans {
		for _, axis := range []int{1, 0} {
			got, err := sc.run(nil, x, axis)
			require.NoError(t, err, sc.name)
			g := read(t, got)
			got.UnsafeFree()
			n, stride := cols, 1
			lines, lineStep := rows, cols
			if axis == 0 {
				n, stride, lines, lineStep = rows, cols, cols, 1
			}
			for l := range lines {
				var acc float64 // Cumsum and Cumprod accumulate in float64
				for j := range n {
					i := l*lineStep + j*stride
					if j == 0 {
						acc = f64(xv[i])
					} else {
						acc = sc.step(acc, f64(xv[i]))
					}
					want := halfFrom64[H](acc)
					if sc.exact {
						require.Equal(t, want, g[i], "%s axis %d at %d", sc.name, axis, i)
					} else {
						require.True(t, nearHalf(g[i], want), "%s axis %d at %d: %v, want %v", sc.name, axis, i, g[i], want)
					}
				}
			}
		}
	}

	// Sort, Argsort and TopK of each row: the float32 order, stable.
	for _, desc := range []bool{false, true} {
		sorted, err := cuarray.Sort(nil, x, desc)
		require.NoError(t, err)
		idx, err := cuarray.Argsort(nil, x, desc)
		require.NoError(t, err)
		vals, top, err := cuarray.TopK(nil, nil, x, 9, !desc)
		require.NoError(t, err)
		sv, iv, tv, ti := read(t, sorted), read(t, idx), read(t, vals), read(t, top)
		for _, a := range []interface{ UnsafeFree() }{sorted, idx, vals, top} {
			a.UnsafeFree()
		}
		for rr := range rows {
			row := xv[rr*cols : (rr+1)*cols]
			perm := make([]int, cols)
			for i := range perm {
				perm[i] = i
			}
			sort.SliceStable(perm, func(i, j int) bool {
				a, b := row[perm[i]].Float32(), row[perm[j]].Float32()
				if desc {
					return a > b
				}
				return a < b
			})
			for j, p := range perm {
				require.Equal(t, row[p], sv[rr*cols+j], "Sort desc=%v row %d at %d", desc, rr, j)
				require.Equal(t, int64(p), iv[rr*cols+j], "Argsort desc=%v row %d at %d", desc, rr, j)
			}
			// TopK largest (desc=false here) is the descending order's first k.
			slices.SortStableFunc(perm, func(i, j int) int {
				a, b := row[i].Float32(), row[j].Float32()
				if !desc {
					a, b = b, a
				}
				switch {
				case a < b:
					return -1
				case a > b:
					return 1
				}
				return 0
			})
			for j := range 9 {
				require.Equal(t, row[perm[j]].Float32(), tv[rr*9+j].Float32(), "TopK largest=%v row %d at %d", !desc, rr, j)
				require.Equal(t, row[perm[j]].Float32(), row[ti[rr*9+j]].Float32(), "TopK index largest=%v row %d at %d", !desc, rr, j)
			}
		}
	}
	// In place, into a given dst; a dst of the wrong shape is refused
	// before anything runs.
	y := fromSlice(t, slices.Clone(xv), rows, cols)
	_, err := cuarray.Sort(y, y, false)
	require.NoError(t, err)
	yv := read(t, y)
	for rr := range rows {
		require.True(t, slices.IsSortedFunc(yv[rr*cols:(rr+1)*cols], func(a, b H) int {
			return cmpF32(a.Float32(), b.Float32())
		}), "row %d", rr)
	}
	bad := cuarray.Must(cuarray.New[H](rows, cols+1))
	defer bad.UnsafeFree()
	_, err = cuarray.Sort(bad, x, false)
	require.ErrorIs(t, err, cuarray.ErrShape)
	_, err = cuarray.Cumsum(bad, x, 0)
	require.ErrorIs(t, err, cuarray.ErrShape)
	_, err = cuarray.Cumsum(nil, x, 2)
	require.ErrorIs(t, err, cuarray.ErrShape)
}

func cmpF32(a, b float32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func TestHalfIndexAndConstruction(t *testing.T) {
	t.Run("float16", testHalfIndexConstruct[half.Float16])
	t.Run("bfloat16", testHalfIndexConstruct[half.BFloat16])
}

func testHalfIndexConstruct[H halfElem](t *testing.T) {
	r := newRand(t)
	const rows, cols = 6, 7
	xv := halfVals[H](r, rows*cols, true)
	x := fromSlice(t, xv, rows, cols)
	idx := fromSlice(t, []int64{5, 0, -1, 5, 2}, 5)

	taken, err := cuarray.Take(nil, x, idx, 0)
	require.NoError(t, err)
	tv := read(t, taken)
	taken.UnsafeFree()
	for j, k := range []int{5, 0, 5, 5, 2} {
		require.Equal(t, xv[k*cols:(k+1)*cols], tv[j*cols:(j+1)*cols], "Take row %d", j)
	}

	// ScatterAdd: repeated indices add (in float32, rounded once at the
	// end); small values add exactly in any order.
	srcv := halfVals[H](r, 5*cols, true)
	src := fromSlice(t, srcv, 5, cols)
	dst := fromSlice(t, slices.Clone(xv), rows, cols)
	_, err = cuarray.ScatterAdd(dst, src, idx, 0)
	require.NoError(t, err)
	want := make([]float32, len(xv))
	for i, v := range xv {
		want[i] = v.Float32()
	}
	for j, k := range []int{5, 0, 5, 5, 2} {
		for c := range cols {
			want[k*cols+c] += srcv[j*cols+c].Float32()
		}
	}
	for i, got := range read(t, dst) {
		require.Equal(t, halfFrom64[H](float64(want[i])), got, "ScatterAdd at %d", i)
	}
	_, err = cuarray.ScatterAdd(dst, x, idx, 0) // src of the wrong shape
	require.ErrorIs(t, err, cuarray.ErrShape)

	cat, err := cuarray.Concat(nil, []*cuarray.Array[H]{x, x}, 1)
	require.NoError(t, err)
	cv := read(t, cat)
	cat.UnsafeFree()
	for rr := range rows {
		require.Equal(t, xv[rr*cols:(rr+1)*cols], cv[rr*2*cols:rr*2*cols+cols])
		require.Equal(t, xv[rr*cols:(rr+1)*cols], cv[rr*2*cols+cols:(rr+1)*2*cols])
	}
	st, err := cuarray.Stack(nil, []*cuarray.Array[H]{x, x}, 0)
	require.NoError(t, err)
	assert.Equal(t, append(slices.Clone(xv), xv...), read(t, st))
	st.UnsafeFree()

	// Arange's length is NumPy's; element i is start + i*delta in float32.
	ar, err := cuarray.Arange(nil, halfFrom64[H](-1), halfFrom64[H](2), halfFrom64[H](0.25))
	require.NoError(t, err)
	av := read(t, ar)
	ar.UnsafeFree()
	require.Len(t, av, 12)
	for i, got := range av {
		assert.Equal(t, halfFrom64[H](-1+0.25*float64(i)), got, "Arange at %d", i)
	}
	ls, err := cuarray.Linspace[H](nil, 0, 1, 5, true)
	require.NoError(t, err)
	assert.Equal(t, []H{halfFrom64[H](0), halfFrom64[H](0.25), halfFrom64[H](0.5), halfFrom64[H](0.75), halfFrom64[H](1)}, read(t, ls))
	ls.UnsafeFree()
	eye, err := cuarray.Eye[H](nil, 3, 4, 1)
	require.NoError(t, err)
	o, z := halfFrom64[H](1), H(0)
	assert.Equal(t, []H{z, o, z, z, z, z, o, z, z, z, z, o}, read(t, eye))
	eye.UnsafeFree()
	_, err = cuarray.Arange(nil, halfFrom64[H](0), halfFrom64[H](1), H(0))
	require.Error(t, err, "a step of 0")
}

func TestHalfMatrixProductsAndLayers(t *testing.T) {
	t.Run("float16", testHalfMatrix[half.Float16])
	t.Run("bfloat16", testHalfMatrix[half.BFloat16])
}

func testHalfMatrix[H halfElem](t *testing.T) {
	r := newRand(t)
	const m, k, n = 9, 37, 11
	// Small integers: float32 accumulates them exactly, so every product
	// is the exact sum rounded once.
	ints := func(cnt int) []H {
		out := make([]H, cnt)
		for i := range out {
			out[i] = halfFrom64[H](float64(r.IntN(9) - 4))
		}
		return out
	}
	av, bv, cv := ints(m*k), ints(k*n), ints(m*n)
	a, b := fromSlice(t, av, m, k), fromSlice(t, bv, k, n)
	c := fromSlice(t, slices.Clone(cv), m, n)
	require.NoError(t, errOf(cuarray.MatMul(c, a, b)))
	prod := func(i, j int) float64 {
		var s float64
		for p := range k {
			s += f64(av[i*k+p]) * f64(bv[p*n+j])
		}
		return s
	}
	for i, got := range read(t, c) {
		require.Equal(t, halfFrom64[H](prod(i/n, i%n)), got, "MatMul at %d", i)
	}
	require.NoError(t, cuarray.Copy(c, fromSlice(t, cv, m, n)))
	alpha, beta := halfFrom64[H](2), halfFrom64[H](-1)
	require.NoError(t, errOf(cuarray.Gemm(c, false, false, alpha, a, b, beta)))
	for i, got := range read(t, c) {
		require.Equal(t, halfFrom64[H](2*prod(i/n, i%n)-f64(cv[i])), got, "Gemm at %d", i)
	}

	xv, yv := ints(k), ints(m)
	x, y := fromSlice(t, xv, k), fromSlice(t, slices.Clone(yv), m)
	require.NoError(t, errOf(cuarray.Gemv(y, false, alpha, a, x, beta)))
	for i, got := range read(t, y) {
		var s float64
		for p := range k {
			s += f64(av[i*k+p]) * f64(xv[p])
		}
		require.Equal(t, halfFrom64[H](2*s-f64(yv[i])), got, "Gemv at %d", i)
	}
	require.ErrorIs(t, errOf(cuarray.Gemv(y, false, alpha, a, y, beta)), cuarray.ErrShape)

	// The layers: AddRowVector (the strided Add's row mode), SumRows,
	// SumCols (float64 sums rounded once), ReluGrad.
	bias := ints(k)
	z := cuarray.Must(cuarray.New[H](m, k))
	defer z.UnsafeFree()
	require.NoError(t, errOf(cuarray.AddRowVector(z, a, fromSlice(t, bias, k))))
	for i, got := range read(t, z) {
		require.Equal(t, halfFrom64[H](f64(av[i])+f64(bias[i%k])), got, "AddRowVector at %d", i)
	}
	sr, sc := cuarray.Must(cuarray.New[H](m)), cuarray.Must(cuarray.New[H](k))
	defer sr.UnsafeFree()
	defer sc.UnsafeFree()
	require.NoError(t, errOf(cuarray.SumRows(sr, a)))
	require.NoError(t, errOf(cuarray.SumCols(sc, a)))
	rs, cs := make([]float64, m), make([]float64, k)
	for i, v := range av {
		rs[i/k] += f64(v)
		cs[i%k] += f64(v)
	}
	for i, got := range read(t, sr) {
		require.Equal(t, halfFrom64[H](rs[i]), got, "SumRows at %d", i)
	}
	for i, got := range read(t, sc) {
		require.Equal(t, halfFrom64[H](cs[i]), got, "SumCols at %d", i)
	}
	require.ErrorIs(t, errOf(cuarray.SumRows(sc, a)), cuarray.ErrShape)
	dy := ints(m * k)
	require.NoError(t, errOf(cuarray.ReluGrad(z, a, fromSlice(t, dy, m, k))))
	for i, got := range read(t, z) {
		want := H(0)
		if av[i].Float32() > 0 {
			want = dy[i]
		}
		require.Equal(t, want, got, "ReluGrad at %d", i)
	}
}

// Rand and Randn draw float32 values and round each once: Rand's lie in
// [0, 1] (a draw near 1 may round up to it), Randn's are finite with about
// the mean and spread asked for.
func TestHalfRandom(t *testing.T) {
	t.Run("float16", testHalfRandom[half.Float16])
	t.Run("bfloat16", testHalfRandom[half.BFloat16])
}

func testHalfRandom[H halfElem](t *testing.T) {
	const n = 4096
	u, err := cuarray.Rand[H](n)
	require.NoError(t, err)
	defer u.UnsafeFree()
	uv := read(t, u)
	distinct := map[H]bool{}
	for _, v := range uv {
		require.True(t, v.Float32() >= 0 && v.Float32() <= 1, "Rand gave %v", v)
		distinct[v] = true
	}
	assert.Greater(t, len(distinct), 100, "Rand's values should vary")
	g := cuarray.Must(cuarray.New[H](64, 64))
	defer g.UnsafeFree()
	require.NoError(t, cuarray.FillRandn(g, halfFrom64[H](3), halfFrom64[H](0.5)))
	var sum, sq float64
	for _, v := range read(t, g) {
		require.False(t, math.IsNaN(f64(v)) || math.IsInf(f64(v), 0))
		sum += f64(v)
		sq += f64(v) * f64(v)
	}
	mean := sum / n
	sd := math.Sqrt(sq/n - mean*mean)
	assert.InDelta(t, 3, mean, 0.1, "Randn mean")
	assert.InDelta(t, 0.5, sd, 0.1, "Randn stddev")
	require.NoError(t, cuarray.FillRand(g))
	gv := read(t, g)
	assert.NotEqual(t, gv[0:8], gv[8:16], "FillRand draws")
}

// The temporaries of the operations that go through float32 or float64
// go back to the pool on every path: after each operation, its errors
// included, and the arrays the test made freed, the pool holds nothing.
func TestHalfTemporariesGoBack(t *testing.T) {
	t.Run("float16", testHalfTemporaries[half.Float16])
	t.Run("bfloat16", testHalfTemporaries[half.BFloat16])
}

func testHalfTemporaries[H halfElem](t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	r := newRand(t)
	p := freshPool(t)
	s := newStream(t, p)
	f := cuarray.On[H](s)
	var made []interface{ UnsafeFree() }
	keep := func(a interface{ UnsafeFree() }) { made = append(made, a) }
	mk := func(shape ...int) *cuarray.Array[H] {
		n := 1
		for _, d := range shape {
			n *= d
		}
		a, err := f.FromSlice(halfVals[H](r, n, true), shape...)
		require.NoError(t, err)
		keep(a)
		return a
	}
	x, y, v, w := mk(6, 8), mk(6, 8), mk(8), mk(6)
	xt, err := x.Transpose() // a view: packed first
	require.NoError(t, err)
	keep(xt)
	idx, err := cuarray.On[int64](s).FromSlice([]int64{1, 1, 4}, 3)
	require.NoError(t, err)
	keep(idx)
	bad := mk(5, 5)
	ok := func(a interface{ UnsafeFree() }, err error) {
		t.Helper()
		require.NoError(t, err)
		keep(a)
	}
	fails := func(err error) {
		t.Helper()
		require.Error(t, err)
	}
	_, err = f.Sum(xt)
	require.NoError(t, err)
	_, err = f.Max(xt)
	require.NoError(t, err)
	_, err = f.Dot(v, v)
	require.NoError(t, err)
	ok(f.Cumsum(nil, xt, 0))
	ok(f.Cummax(nil, x, 1))
	fails(func() error { _, err := f.Cumsum(bad, x, 0); return err }())
	ok(f.Sort(nil, xt, true))
	fails(func() error { _, err := f.Sort(bad, x, false); return err }())
	ok(f.Argsort(nil, x, false))
	vals, ids, err := f.TopK(nil, nil, x, 3, true)
	ok(vals, err)
	keep(ids)
	fails(func() error { _, _, err := f.TopK(nil, nil, x, 9, true); return err }())
	fails(func() error { _, _, err := f.TopK(bad, nil, x, 3, true); return err }())
	ok(f.ScatterAdd(y, mk(6, 3), idx, 1))
	fails(func() error { _, err := f.ScatterAdd(y, bad, idx, 1); return err }())
	require.NoError(t, errOf(f.Gemv(w, false, halfFrom64[H](1), x, v, halfFrom64[H](0))))
	fails(errOf(f.Gemv(w, false, halfFrom64[H](1), x, w, halfFrom64[H](0))))
	c := mk(6, 6)
	require.NoError(t, errOf(f.MatMul(c, x, xt)))
	fails(errOf(f.MatMul(bad, x, xt)))
	require.NoError(t, f.FillRandn(x, halfFrom64[H](0), halfFrom64[H](1)))
	require.NoError(t, errOf(f.SumRows(w, x)))
	require.NoError(t, errOf(f.SumCols(v, x)))
	fails(errOf(f.SumCols(w, x)))
	require.NoError(t, s.Synchronize())
	for _, a := range made {
		a.UnsafeFree()
	}
	require.NoError(t, s.Synchronize())
	// No collection first: a leaked temporary would be freed by its
	// finalizer, which is what this test must not count on.
	assert.Zero(t, p.Stats().Live, "%v", p.Stats())
}
