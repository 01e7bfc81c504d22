package kernels_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/kernels"
)

// indexSizes: none, one, two (dst[1] is set apart in Arange), odd, prime,
// several blocks, and more than one host grain (split across goroutines).
func indexSizes() []int { return []int{0, 1, 2, 7, 257, 4099, 1<<16 + 7} }

func allTyped(run func(t *testing.T, e *env, dt kernels.DType)) func(t *testing.T) {
	return func(t *testing.T) {
		e := newEnv(t)
		for _, dt := range []kernels.DType{kernels.Float32, kernels.Float64, kernels.Int32, kernels.Int64, kernels.Uint8, kernels.Complex64} {
			t.Run(dt.String(), func(t *testing.T) { run(t, e, dt) })
		}
	}
}

func TestArangeIsStartPlusIDeltaInT(t *testing.T) {
	e := newEnv(t)
	runTyped(t, []typed{
		{"float32", func(t *testing.T) { testArange[float32](t, e, 0.1, 0.3) }},
		{"float64", func(t *testing.T) { testArange[float64](t, e, -2.5, 0.1) }},
		{"int32", func(t *testing.T) { testArange[int32](t, e, -1000, 7) }},
		{"int64", func(t *testing.T) { testArange[int64](t, e, 1<<40, -3) }},
		{"uint8", func(t *testing.T) { testArange[uint8](t, e, 3, 1) }},
	})
}

func testArange[T realT](t *testing.T, e *env, start, step T) {
	for _, n := range indexSizes() {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			d := alloc[T](t, e, n, n%2 == 1)
			require.NoError(t, kernels.Arange(e.dev, e.s, d.p, start, step, n))
			delta := (start + step) - start
			checkAll(t, d.read(t), 0, func(i int) (T, float64) {
				if i == 1 {
					return start + step, 0
				}
				return start + T(T(i)*delta), 0
			})
		})
	}
}

func TestLinspaceMatchesNumPy(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct {
		start, stop float64
		n           int
		endpoint    bool
		want        []float64
	}{
		{0, 1, 5, true, []float64{0, 0.25, 0.5, 0.75, 1}},
		{0, 1, 5, false, []float64{0, 0.2, 0.4, 0.6000000000000001, 0.8}},
		{2, 3, 1, true, []float64{2}},
		{0, 10, 4, true, []float64{0, 3.3333333333333335, 6.666666666666667, 10}},
		{1, 0, 3, true, []float64{1, 0.5, 0}},
		{0, 1, 0, true, []float64{}},
	} {
		t.Run(fmt.Sprintf("%g..%g/%d/%v", c.start, c.stop, c.n, c.endpoint), func(t *testing.T) {
			d := alloc[float64](t, e, c.n, false)
			require.NoError(t, kernels.Linspace[float64](e.dev, e.s, d.p, c.start, c.stop, c.n, c.endpoint))
			checkAll(t, d.read(t), 0, func(i int) (float64, float64) { return c.want[i], 0 })
			// int32 truncates toward zero, as NumPy's astype.
			di := alloc[int32](t, e, c.n, true)
			require.NoError(t, kernels.Linspace[int32](e.dev, e.s, di.p, c.start, c.stop, c.n, c.endpoint))
			checkAll(t, di.read(t), 0, func(i int) (int32, float64) { return int32(c.want[i]), 0 })
		})
	}
	// Large: every element as the formula gives it, in float32 too.
	for _, n := range indexSizes() {
		d := alloc[float32](t, e, n, false)
		require.NoError(t, kernels.Linspace[float32](e.dev, e.s, d.p, -3, 7.5, n, true))
		div := float64(max(n-1, 1))
		checkAll(t, d.read(t), 0, func(i int) (float32, float64) {
			if n > 1 && i == n-1 {
				return 7.5, 0
			}
			return float32(float64(float64(i)*(10.5/div)) + -3), 0
		})
	}
	// A step that underflows to 0 multiplies by the span after dividing.
	d := alloc[float64](t, e, 3, false)
	require.NoError(t, kernels.Linspace[float64](e.dev, e.s, d.p, 0, 5e-324, 3, false))
	require.Equal(t, []float64{0, 0, 5e-324 * 2 / 3}, d.read(t))
}

func TestEyeHasOnesOnDiagonalK(t *testing.T) {
	allTyped(func(t *testing.T, e *env, dt kernels.DType) {
		switch dt {
		case kernels.Float32:
			testEye[float32](t, e)
		case kernels.Float64:
			testEye[float64](t, e)
		case kernels.Int32:
			testEye[int32](t, e)
		case kernels.Int64:
			testEye[int64](t, e)
		case kernels.Uint8:
			testEye[uint8](t, e)
		case kernels.Complex64:
			testEye[complex64](t, e)
		}
	})(t)
}

func testEye[T number](t *testing.T, e *env) {
	for _, sh := range [][2]int{{0, 3}, {1, 1}, {3, 3}, {4, 7}, {7, 4}, {300, 301}} {
		for _, k := range []int{-8, -1, 0, 2, 400} {
			rows, cols := sh[0], sh[1]
			d := alloc[T](t, e, rows*cols, k%2 == 0)
			require.NoError(t, kernels.Eye[T](e.dev, e.s, d.p, rows, cols, k))
			checkAll(t, d.read(t), 0, func(i int) (T, float64) {
				if i%cols-i/cols == k {
					return 1, 0
				}
				return 0, 0
			})
		}
	}
}

func TestConcatLaysPartsSideBySide(t *testing.T) {
	allTyped(func(t *testing.T, e *env, dt kernels.DType) {
		switch dt {
		case kernels.Float32:
			testConcat[float32](t, e)
		case kernels.Float64:
			testConcat[float64](t, e)
		case kernels.Int32:
			testConcat[int32](t, e)
		case kernels.Int64:
			testConcat[int64](t, e)
		case kernels.Uint8:
			testConcat[uint8](t, e)
		case kernels.Complex64:
			testConcat[complex64](t, e)
		}
	})(t)
}

func testConcat[T kernels.Elem](t *testing.T, e *env) {
	// One row (the GPU's copy a part), a few rows, more than 8 parts (two
	// launches), parts of no columns, and enough rows to split on the host.
	for _, c := range []struct{ rows, parts int }{{1, 1}, {1, 5}, {3, 1}, {3, 5}, {37, 8}, {5, 11}, {70001, 3}, {0, 2}} {
		t.Run(fmt.Sprintf("%dx%d", c.rows, c.parts), func(t *testing.T) {
			var parts []kernels.ConcatPart
			var data [][]T
			cols := 0
			for j := range c.parts {
				w := e.r.IntN(5)
				if c.rows > 1000 {
					w = 1 + j
				}
				x := gen[T](e.r, c.rows*w, general)
				data = append(data, x)
				p := kernels.ConcatPart{Cols: w}
				if len(x) > 0 {
					p.Src = upload(t, e, x, j%2 == 1).p
				}
				parts = append(parts, p)
				cols += w
			}
			d := alloc[T](t, e, c.rows*cols, false)
			require.NoError(t, kernels.Concat[T](e.dev, e.s, d.p, c.rows, parts))
			checkAll(t, d.read(t), 0, func(i int) (T, float64) {
				r, col := i/cols, i%cols
				for j, p := range parts {
					if col < p.Cols {
						return data[j][r*p.Cols+col], 0
					}
					col -= p.Cols
				}
				panic("unreachable")
			})
		})
	}
}

// indexCase is a layout and indices with negative ones, and out-of-range
// ones when bad.
type indexCase struct {
	l   kernels.IndexLayout
	bad bool
}

func indexCases() []indexCase {
	var cs []indexCase
	for _, l := range []kernels.IndexLayout{
		{Outer: 1, Dim: 1, Inner: 1, Indices: 1},
		{Outer: 1, Dim: 7, Inner: 1, Indices: 13},
		{Outer: 3, Dim: 5, Inner: 4, Indices: 6},
		{Outer: 2, Dim: 9, Inner: 1, Indices: 3001},
		{Outer: 5, Dim: 3, Inner: 700, Indices: 4},
		{Outer: 1, Dim: 10, Inner: 1, Indices: 1<<16 + 7},
		{Outer: 4, Dim: 0, Inner: 3, Indices: 0},
	} {
		cs = append(cs, indexCase{l, false})
		if l.Indices > 2 {
			cs = append(cs, indexCase{l, true})
		}
	}
	return cs
}

func (c indexCase) indices(e *env, unique bool) []int64 {
	idx := make([]int64, c.l.Indices)
	for j := range idx {
		if unique {
			idx[j] = int64(j % c.l.Dim)
		} else {
			idx[j] = int64(e.r.IntN(2*c.l.Dim) - c.l.Dim)
		}
		if e.r.IntN(2) == 0 && idx[j] >= 0 {
			idx[j] -= int64(c.l.Dim) // the same element, counted from the end
		}
	}
	if c.bad {
		idx[len(idx)/2] = int64(c.l.Dim + e.r.IntN(3))
		idx[len(idx)-1] = int64(-c.l.Dim - 1 - e.r.IntN(3))
	}
	return idx
}

func wrapRef(raw int64, dim int) int {
	if raw < 0 {
		raw += int64(dim)
	}
	if raw < 0 || raw >= int64(dim) {
		return -1
	}
	return int(raw)
}

func TestTakeGathersAlongTheAxis(t *testing.T) {
	allTyped(func(t *testing.T, e *env, dt kernels.DType) {
		switch dt {
		case kernels.Float32:
			testTake[float32](t, e)
		case kernels.Float64:
			testTake[float64](t, e)
		case kernels.Int32:
			testTake[int32](t, e)
		case kernels.Int64:
			testTake[int64](t, e)
		case kernels.Uint8:
			testTake[uint8](t, e)
		case kernels.Complex64:
			testTake[complex64](t, e)
		}
	})(t)
}

func testTake[T kernels.Elem](t *testing.T, e *env) {
	for _, c := range indexCases() {
		t.Run(fmt.Sprintf("%v/bad=%v", c.l, c.bad), func(t *testing.T) {
			l := c.l
			idx := c.indices(e, false)
			x := gen[T](e.r, l.Outer*l.Dim*l.Inner, general)
			src := upload(t, e, x, true)
			di := upload(t, e, idx, false)
			n := l.Outer * l.Indices * l.Inner
			want := func(i int) (T, float64) {
				k, r := i%l.Inner, i/l.Inner
				o, j := r/l.Indices, r%l.Indices
				w := wrapRef(idx[j], l.Dim)
				if w < 0 { // clamped
					w = 0
					if idx[j] >= 0 {
						w = l.Dim - 1
					}
				}
				return x[(o*l.Dim+w)*l.Inner+k], 0
			}
			for _, checked := range []bool{false, true} {
				d := alloc[T](t, e, n, false)
				err := kernels.Take[T](e.dev, e.s, d.p, src.p, di.p, l, checked)
				if c.bad && checked {
					require.ErrorIs(t, err, kernels.ErrIndex)
					require.Contains(t, err.Error(), fmt.Sprintf("out of range for an axis of length %d", l.Dim))
				} else {
					require.NoError(t, err)
				}
				checkAll(t, d.read(t), 0, want)
			}
		})
	}
}

func TestScatterAndScatterAddWriteAlongTheAxis(t *testing.T) {
	allTyped(func(t *testing.T, e *env, dt kernels.DType) {
		switch dt {
		case kernels.Float32:
			testScatter[float32](t, e)
		case kernels.Float64:
			testScatter[float64](t, e)
		case kernels.Int32:
			testScatter[int32](t, e)
		case kernels.Int64:
			testScatter[int64](t, e)
		case kernels.Uint8:
			testScatter[uint8](t, e)
		case kernels.Complex64:
			testScatter[complex64](t, e)
		}
	})(t)
}

func testScatter[T number](t *testing.T, e *env) {
	for _, c := range indexCases() {
		for _, add := range []bool{false, true} {
			t.Run(fmt.Sprintf("%v/bad=%v/add=%v", c.l, c.bad, add), func(t *testing.T) {
				l := c.l
				// Scatter: distinct targets (which of repeated writes wins
				// is not fixed on a GPU). ScatterAdd: many repeats.
				idx := c.indices(e, !add)
				src := gen[T](e.r, l.Outer*l.Indices*l.Inner, small)
				dst0 := gen[T](e.r, l.Outer*l.Dim*l.Inner, small)
				if !add {
					// Scatter: the value a repeated index writes depends
					// only on its target, so the result does not depend on
					// which write wins (not fixed on a GPU).
					byTarget := gen[T](e.r, len(dst0), small)
					for i := range src {
						k, r := i%l.Inner, i/l.Inner
						o, j := r/l.Indices, r%l.Indices
						if w := wrapRef(idx[j], l.Dim); w >= 0 {
							src[i] = byTarget[(o*l.Dim+w)*l.Inner+k]
						}
					}
				}
				want := append([]T(nil), dst0...)
				for o := range l.Outer {
					for j := range l.Indices {
						w := wrapRef(idx[j], l.Dim)
						if w < 0 {
							continue
						}
						for k := range l.Inner {
							s := src[(o*l.Indices+j)*l.Inner+k]
							if add {
								want[(o*l.Dim+w)*l.Inner+k] += s
							} else {
								want[(o*l.Dim+w)*l.Inner+k] = s
							}
						}
					}
				}
				ds, di := upload(t, e, src, false), upload(t, e, idx, false)
				d := upload(t, e, dst0, true)
				op := kernels.Scatter[T]
				if add {
					op = kernels.ScatterAdd[T]
				}
				err := op(e.dev, e.s, d.p, ds.p, di.p, l, true)
				if c.bad && l.Outer*l.Inner > 0 {
					require.ErrorIs(t, err, kernels.ErrIndex)
				} else {
					require.NoError(t, err)
				}
				// Sums of repeated indices may be added in any order on a
				// GPU: exact for integers, within rounding for floats.
				checkAll(t, d.read(t), rtolFor[T](1e-5, 1e-12), func(i int) (T, float64) { return want[i], float64(l.Indices) })
			})
		}
	}
}

func TestScatterAddSumsRepeatedIndicesExactlyForIntegers(t *testing.T) {
	e := newEnv(t)
	// Every index the same few targets, uint8 neighbours of one 32-bit word
	// among them: the GPU's compare-and-swap on the word must lose no add.
	const n = 100000
	idx := make([]int64, n)
	src := make([]uint8, n)
	want := make([]uint8, 6)
	for j := range idx {
		idx[j] = int64(j % 6)
		src[j] = uint8(j)
		want[j%6] += uint8(j)
	}
	d := upload(t, e, make([]uint8, 6), true)
	di, ds := upload(t, e, idx, false), upload(t, e, src, false)
	require.NoError(t, kernels.ScatterAdd[uint8](e.dev, e.s, d.p, ds.p, di.p, kernels.IndexLayout{Outer: 1, Dim: 6, Inner: 1, Indices: n}, false))
	require.Equal(t, want, d.read(t))

	src64 := make([]int64, n)
	var sum int64
	for j := range src64 {
		src64[j] = math.MaxInt64 / 3 * int64(j%5-2)
		sum += src64[j]
	}
	zero := make([]int64, n)
	d64 := upload(t, e, []int64{0}, false)
	ds64, dz := upload(t, e, src64, false), upload(t, e, zero, false)
	require.NoError(t, kernels.ScatterAdd[int64](e.dev, e.s, d64.p, ds64.p, dz.p, kernels.IndexLayout{Outer: 1, Dim: 1, Inner: 1, Indices: n}, false))
	require.Equal(t, []int64{sum}, d64.read(t), "int64 sums wrap exactly as Go's")
}

// Bad arguments are errors that say what was wrong, before anything is
// queued; empty layouts queue nothing and may have nil pointers.
func TestIndexArgumentErrors(t *testing.T) {
	e := newEnv(t)
	m := alloc[float32](t, e, 64, false)
	ix := alloc[int64](t, e, 8, false)
	p, q := m.p, ix.p
	l := kernels.IndexLayout{Outer: 2, Dim: 3, Inner: 2, Indices: 4}
	cases := []struct {
		name string
		err  error
		want error
		text string
	}{
		{"Arange complex", kernels.Arange[complex64](e.dev, e.s, p, 0, 1, 4), kernels.ErrUnsupportedDType, "float32, float64, int32, int64, uint8"},
		{"Arange negative", kernels.Arange[float32](e.dev, e.s, p, 0, 1, -1), backend.ErrInvalidValue, "negative"},
		{"Arange empty", kernels.Arange[float32](e.dev, e.s, 0, 0, 1, 0), nil, ""},
		{"Linspace int out of range", kernels.Linspace[uint8](e.dev, e.s, p, 0, 300, 4, true), backend.ErrInvalidValue, "uint8's range"},
		{"Linspace int NaN", kernels.Linspace[int32](e.dev, e.s, p, math.NaN(), 1, 4, true), backend.ErrInvalidValue, "range"},
		{"Eye negative", kernels.Eye[float32](e.dev, e.s, p, -1, 2, 0), backend.ErrInvalidValue, "negative"},
		{"Eye nil", kernels.Eye[float32](e.dev, e.s, 0, 2, 2, 0), backend.ErrInvalidValue, "pointer dst is nil"},
		{"Concat negative part", kernels.Concat[float32](e.dev, e.s, p, 2, []kernels.ConcatPart{{p, -1}}), backend.ErrInvalidValue, "part 0 has -1 columns"},
		{"Concat nil part", kernels.Concat[float32](e.dev, e.s, p, 2, []kernels.ConcatPart{{0, 2}}), backend.ErrInvalidValue, "pointer src is nil"},
		{"Concat no parts", kernels.Concat[float32](e.dev, e.s, 0, 2, nil), nil, ""},
		{"Take negative layout", kernels.Take[float32](e.dev, e.s, p, p, q, kernels.IndexLayout{Outer: -1}, true), backend.ErrInvalidValue, "negative"},
		{"Take overflow", kernels.Take[float32](e.dev, e.s, p, p, q, kernels.IndexLayout{Outer: math.MaxInt / 2, Dim: 1, Inner: 3, Indices: 1}, true), backend.ErrInvalidValue, "overflows"},
		{"Take nil idx", kernels.Take[float32](e.dev, e.s, p, p, 0, l, true), backend.ErrInvalidValue, "pointer idx is nil"},
		{"Take misaligned idx", kernels.Take[float32](e.dev, e.s, p, p, q+4, l, true), backend.ErrInvalidValue, "8-byte aligned"},
		{"Take empty axis", kernels.Take[float32](e.dev, e.s, p, p, q, kernels.IndexLayout{Outer: 1, Dim: 0, Inner: 1, Indices: 2}, true), kernels.ErrIndex, "axis of length 0"},
		{"Take no indices", kernels.Take[float32](e.dev, e.s, 0, p, 0, kernels.IndexLayout{Outer: 1, Dim: 3, Inner: 1}, true), nil, ""},
		{"Scatter nil src", kernels.Scatter[float32](e.dev, e.s, p, 0, q, l, true), backend.ErrInvalidValue, "pointer src is nil"},
		{"ScatterAdd nil device", kernels.ScatterAdd[float32](nil, e.s, p, p, q, l, true), backend.ErrInvalidValue, "nil device"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.want == nil {
				require.NoError(t, c.err)
				return
			}
			require.Error(t, c.err)
			require.True(t, errors.Is(c.err, c.want), "%v should wrap %v", c.err, c.want)
			require.Contains(t, c.err.Error(), c.text)
		})
	}
	require.NoError(t, e.s.Synchronize())
}
