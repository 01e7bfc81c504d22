package cuarray_test

import (
	"fmt"
	"math"
	"math/cmplx"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/kernels"
)

// Reductions over axes against a plain-Go reference: every operation on
// every element type it takes, every subset of the axes of 1-D to 4-D
// shapes (empty, one element, odd and prime sizes, and some past the host
// backend's split), keeping and dropping the axes.

// reduceShapes are the shapes every operation runs on. The large ones
// cross the host backend's goroutine split along rows and down columns.
func reduceShapes() [][]int {
	shapes := [][]int{
		{}, {0}, {1}, {7}, {2, 3}, {3, 0}, {1, 5}, {5, 1}, {13, 17},
		{2, 3, 5}, {3, 1, 4}, {0, 2, 3}, {2, 3, 4, 5}, {2, 0, 3, 2}, {1, 1, 1, 1}, {3, 2, 1, 7},
	}
	if !testing.Short() {
		shapes = append(shapes, []int{257, 300}, []int{33, 40, 61})
	}
	return shapes
}

// reducePattern is a cheap input whose sums are exact in float32 (small
// dyadic values), with zeros for Any and All and repeats for ties.
func reducePattern[T cuarray.Elem](n int) []T {
	floats := []float64{1, -1, 2, 0.5, -2, 0, 3, 0.25, 1, -0.5, 2}
	ints := []int64{1, -1, 2, 3, 0, -2, 5, 7, 1, 2, 250}
	out := make([]T, n)
	for i := range out {
		j := (i*7 + 3) % len(floats)
		var v any
		switch any(out[i]).(type) {
		case float32:
			v = float32(floats[j])
		case float64:
			v = floats[j]
		case int32:
			v = int32(ints[j])
		case int64:
			v = ints[j]
		case uint8:
			v = uint8(ints[j])
		case int8:
			v = int8(ints[j])
		case int16:
			v = int16(ints[j] * 100) // past int8's range
		case uint32:
			v = uint32(ints[j]) // -1 and -2 wrap to near 2^32
		case complex64:
			v = complex(float32(floats[j]), float32(floats[(i*3)%len(floats)]))
		}
		out[i] = v.(T)
	}
	return out
}

// reduceOp is one reduction run through cuarray, its result read back as
// complex128 (exact for every value the inputs give), and its reference.
type reduceOp[T cuarray.Elem] struct {
	name string
	run  func(f cuarray.Ops[T], x *cuarray.Array[T], axes []int, keep bool) ([]int, []complex128, error)
	ref  func(x []T, shape, red []int) ([]complex128, error)
}

func asComplex[U cuarray.Elem](a *cuarray.Array[U], err error) ([]int, []complex128, error) {
	if err != nil {
		return nil, nil, err
	}
	defer a.UnsafeFree()
	vals, err := a.ToSlice()
	if err != nil {
		return nil, nil, err
	}
	out := make([]complex128, len(vals))
	for i, v := range vals {
		out[i] = toComplex(v)
	}
	return a.Shape(), out, nil
}

func toComplex[U cuarray.Elem](v U) complex128 {
	switch x := any(v).(type) {
	case float32:
		return complex(float64(x), 0)
	case float64:
		return complex(x, 0)
	case int32:
		return complex(float64(x), 0)
	case int64:
		return complex(float64(x), 0)
	case uint8:
		return complex(float64(x), 0)
	case int8:
		return complex(float64(x), 0)
	case int16:
		return complex(float64(x), 0)
	case uint32:
		return complex(float64(x), 0)
	case complex64:
		return complex128(x)
	case bool:
		if x {
			return 1
		}
		return 0
	}
	panic("unreachable")
}

// visitReduced calls fn for every element of a row-major array of shape:
// o is its output (row-major over the kept axes), r its index among the
// reduced elements (row-major over red), i its own index. Each output's
// elements come in increasing r.
func visitReduced(shape, red []int, fn func(o, r, i int)) {
	n := 1
	for _, d := range shape {
		n *= d
	}
	coord := make([]int, len(shape))
	for i := range n {
		rem := i
		for k := len(shape) - 1; k >= 0; k-- {
			coord[k] = rem % shape[k]
			rem /= shape[k]
		}
		o, r := 0, 0
		for k, c := range coord {
			if slices.Contains(red, k) {
				r = r*shape[k] + c
			} else {
				o = o*shape[k] + c
			}
		}
		fn(o, r, i)
	}
}

func counts(shape, red []int) (nout, nred int) {
	nout, nred = 1, 1
	for k, d := range shape {
		if slices.Contains(red, k) {
			nred *= d
		} else {
			nout *= d
		}
	}
	return nout, nred
}

func isIntType[T cuarray.Elem]() bool {
	switch kernels.DTypeOf[T]() {
	case kernels.Int32, kernels.Int64, kernels.Uint8, kernels.Int8, kernels.Int16, kernels.Uint32:
		return true
	}
	return false
}

// refFold is the reference sum (or product) and mean: float64 for floats,
// int64 for integers, complex128 for complex64, rounded to the result type.
func refFold[T cuarray.Elem](prod, mean bool) func(x []T, shape, red []int) ([]complex128, error) {
	return func(x []T, shape, red []int) ([]complex128, error) {
		nout, nred := counts(shape, red)
		acc := make([]complex128, nout)
		iacc := make([]int64, nout)
		for o := range acc {
			if prod {
				acc[o], iacc[o] = 1, 1
			}
		}
		integer := isIntType[T]() && !mean
		visitReduced(shape, red, func(o, _, i int) {
			v := toComplex(x[i])
			switch {
			case integer && prod:
				iacc[o] *= int64(real(v))
			case integer:
				iacc[o] += int64(real(v))
			case prod:
				acc[o] *= v
			default:
				acc[o] += v
			}
		})
		for o := range acc {
			switch {
			case integer:
				acc[o] = complex(float64(iacc[o]), 0)
			case mean:
				acc[o] /= complex(float64(nred), 0)
			}
			if kernels.DTypeOf[T]() == kernels.Float32 {
				acc[o] = complex(float64(float32(real(acc[o]))), 0)
			}
			if kernels.DTypeOf[T]() == kernels.Complex64 {
				acc[o] = complex128(complex64(acc[o]))
			}
		}
		return acc, nil
	}
}

func refExtremum[T cuarray.Elem](isMax, arg bool) func(x []T, shape, red []int) ([]complex128, error) {
	return func(x []T, shape, red []int) ([]complex128, error) {
		nout, nred := counts(shape, red)
		if nred == 0 && nout > 0 {
			return nil, kernels.ErrEmpty
		}
		best := make([]float64, nout)
		idx := make([]int, nout)
		for o := range idx {
			idx[o] = -1
		}
		visitReduced(shape, red, func(o, r, i int) {
			v := real(toComplex(x[i]))
			b := best[o]
			take := idx[o] < 0 || (!math.IsNaN(b) && (math.IsNaN(v) || (isMax && v > b) || (!isMax && v < b)))
			if take {
				best[o], idx[o] = v, r
			}
		})
		out := make([]complex128, nout)
		for o := range out {
			if arg {
				out[o] = complex(float64(idx[o]), 0)
			} else {
				out[o] = complex(best[o], 0)
			}
		}
		return out, nil
	}
}

func refTruth[T cuarray.Elem](all bool) func(x []T, shape, red []int) ([]complex128, error) {
	return func(x []T, shape, red []int) ([]complex128, error) {
		nout, _ := counts(shape, red)
		res := make([]bool, nout)
		for o := range res {
			res[o] = all
		}
		visitReduced(shape, red, func(o, _, i int) {
			if nz := toComplex(x[i]) != 0; nz != all {
				res[o] = !all
			}
		})
		out := make([]complex128, nout)
		for o, b := range res {
			if b {
				out[o] = 1
			}
		}
		return out, nil
	}
}

// reduceOps is every reduction that takes T.
func reduceOps[T cuarray.Elem]() []reduceOp[T] {
	dt := kernels.DTypeOf[T]()
	real := dt != kernels.Complex64
	var ops []reduceOp[T]
	if isIntType[T]() {
		ops = append(ops,
			reduceOp[T]{"SumAxesInt64", func(f cuarray.Ops[T], x *cuarray.Array[T], a []int, k bool) ([]int, []complex128, error) {
				return asComplex(f.SumAxesInt64(nil, x, a, k))
			}, refFold[T](false, false)},
			reduceOp[T]{"ProdAxesInt64", func(f cuarray.Ops[T], x *cuarray.Array[T], a []int, k bool) ([]int, []complex128, error) {
				return asComplex(f.ProdAxesInt64(nil, x, a, k))
			}, refFold[T](true, false)},
			reduceOp[T]{"MeanAxesFloat64", func(f cuarray.Ops[T], x *cuarray.Array[T], a []int, k bool) ([]int, []complex128, error) {
				return asComplex(f.MeanAxesFloat64(nil, x, a, k))
			}, refFold[T](false, true)})
	} else {
		ops = append(ops,
			reduceOp[T]{"SumAxes", func(f cuarray.Ops[T], x *cuarray.Array[T], a []int, k bool) ([]int, []complex128, error) {
				return asComplex(f.SumAxes(nil, x, a, k))
			}, refFold[T](false, false)},
			reduceOp[T]{"ProdAxes", func(f cuarray.Ops[T], x *cuarray.Array[T], a []int, k bool) ([]int, []complex128, error) {
				return asComplex(f.ProdAxes(nil, x, a, k))
			}, refFold[T](true, false)},
			reduceOp[T]{"MeanAxes", func(f cuarray.Ops[T], x *cuarray.Array[T], a []int, k bool) ([]int, []complex128, error) {
				return asComplex(f.MeanAxes(nil, x, a, k))
			}, refFold[T](false, true)})
	}
	if real {
		ops = append(ops,
			reduceOp[T]{"MaxAxes", func(f cuarray.Ops[T], x *cuarray.Array[T], a []int, k bool) ([]int, []complex128, error) {
				return asComplex(f.MaxAxes(nil, x, a, k))
			}, refExtremum[T](true, false)},
			reduceOp[T]{"MinAxes", func(f cuarray.Ops[T], x *cuarray.Array[T], a []int, k bool) ([]int, []complex128, error) {
				return asComplex(f.MinAxes(nil, x, a, k))
			}, refExtremum[T](false, false)},
			reduceOp[T]{"ArgMaxAxes", func(f cuarray.Ops[T], x *cuarray.Array[T], a []int, k bool) ([]int, []complex128, error) {
				return asComplex(f.ArgMaxAxes(nil, x, a, k))
			}, refExtremum[T](true, true)},
			reduceOp[T]{"ArgMinAxes", func(f cuarray.Ops[T], x *cuarray.Array[T], a []int, k bool) ([]int, []complex128, error) {
				return asComplex(f.ArgMinAxes(nil, x, a, k))
			}, refExtremum[T](false, true)})
	}
	return append(ops,
		reduceOp[T]{"AnyAxes", func(f cuarray.Ops[T], x *cuarray.Array[T], a []int, k bool) ([]int, []complex128, error) {
			return asComplex(f.AnyAxes(nil, x, a, k))
		}, refTruth[T](false)},
		reduceOp[T]{"AllAxes", func(f cuarray.Ops[T], x *cuarray.Array[T], a []int, k bool) ([]int, []complex128, error) {
			return asComplex(f.AllAxes(nil, x, a, k))
		}, refTruth[T](true)})
}

// sameValues compares results: exactly for integers, indices and truth
// values, to a relative 1e-5 (float32) or 1e-12 for floats, whose order of
// addition differs between backends; NaN equals NaN.
func sameValues(got, want []complex128, tol float64) bool {
	if len(got) != len(want) {
		return false
	}
	// A complex product that overflows is NaN in Go's arithmetic and may be
	// an infinity in the GPU's (C99's): any non-finite value matches any
	// other, a finite one only a finite one.
	finite := func(z complex128) bool {
		return !math.IsNaN(real(z)) && !math.IsNaN(imag(z)) && !math.IsInf(real(z), 0) && !math.IsInf(imag(z), 0)
	}
	for i := range got {
		g, w := got[i], want[i]
		if !finite(g) || !finite(w) {
			if finite(g) != finite(w) {
				return false
			}
			continue
		}
		if cmplx.Abs(g-w) > tol*(1+cmplx.Abs(w)) {
			return false
		}
	}
	return true
}

func expectedShape(shape, red []int, keep bool) []int {
	var out []int // nil for zero dimensions, as Shape gives
	for k, d := range shape {
		switch {
		case !slices.Contains(red, k):
			out = append(out, d)
		case keep:
			out = append(out, 1)
		}
	}
	return out
}

func testReduceAxesAgainstReference[T cuarray.Elem](t *testing.T) {
	s := newStream(t, freshPool(t))
	f := cuarray.On[T](s)
	tol := 1e-12
	if dt := kernels.DTypeOf[T](); dt == kernels.Float32 || dt == kernels.Complex64 {
		tol = 1e-5
	}
	for _, shape := range reduceShapes() {
		n := 1
		for _, d := range shape {
			n *= d
		}
		data := reducePattern[T](n)
		x, err := f.FromSlice(data, shape...)
		require.NoError(t, err)
		if len(shape) == 0 { // FromSlice makes [1]: the zero-dimensional view
			x0 := x
			x, err = x0.Reshape()
			require.NoError(t, err)
			x0.UnsafeFree()
		}
		nd := len(shape)
		for mask := 0; mask < 1<<nd; mask++ {
			var axes, red []int
			for k := range nd {
				if mask&(1<<k) != 0 {
					axes = append(axes, k)
				}
			}
			red = axes
			if mask == 0 { // no axes: every axis
				red = make([]int, nd)
				for k := range red {
					red[k] = k
				}
			}
			for _, keep := range []bool{false, true} {
				for _, op := range reduceOps[T]() {
					name := fmt.Sprintf("%s %v axes %v keep %t", op.name, shape, axes, keep)
					want, wantErr := op.ref(data, shape, red)
					gotShape, got, err := op.run(f, x, axes, keep)
					if wantErr != nil {
						require.ErrorIs(t, err, wantErr, name)
						continue
					}
					require.NoError(t, err, name)
					require.Equal(t, expectedShape(shape, red, keep), gotShape, name)
					require.True(t, sameValues(got, want, tol), "%s: got %v, want %v", name, got, want)
				}
			}
		}
		x.UnsafeFree()
	}
}

func TestReduceAxesMatchesPlainGo(t *testing.T) {
	t.Run("float32", testReduceAxesAgainstReference[float32])
	t.Run("float64", testReduceAxesAgainstReference[float64])
	t.Run("int32", testReduceAxesAgainstReference[int32])
	t.Run("int64", testReduceAxesAgainstReference[int64])
	t.Run("uint8", testReduceAxesAgainstReference[uint8])
	t.Run("int8", testReduceAxesAgainstReference[int8])
	t.Run("int16", testReduceAxesAgainstReference[int16])
	t.Run("uint32", testReduceAxesAgainstReference[uint32])
	t.Run("complex64", testReduceAxesAgainstReference[complex64])
}

func TestReduceAxesNaNAsNumPy(t *testing.T) {
	nan := float32(math.NaN())
	x := cuarray.Must(cuarray.FromSlice([]float32{1, nan, 3, nan, 2, nan, 4, 4, 1}, 3, 3))
	defer x.UnsafeFree()
	vals := func(a *cuarray.Array[float32], err error) []float32 {
		require.NoError(t, err)
		defer a.UnsafeFree()
		return read(t, a)
	}
	idx := func(a *cuarray.Array[int64], err error) []int64 {
		require.NoError(t, err)
		defer a.UnsafeFree()
		return read(t, a)
	}
	isNaN := func(v float32) bool { return v != v }
	rowMax := vals(cuarray.MaxAxes(nil, x, []int{1}, false))
	assert.True(t, isNaN(rowMax[0]) && isNaN(rowMax[1]), "Max propagates NaN: %v", rowMax)
	assert.Equal(t, float32(4), rowMax[2])
	assert.Equal(t, []int64{1, 0, 0}, idx(cuarray.ArgMaxAxes(nil, x, []int{1}, false)), "ArgMax: the first NaN, else the first of the ties")
	assert.Equal(t, []int64{1, 0, 2}, idx(cuarray.ArgMinAxes(nil, x, []int{1}, false)))
	colSum := vals(cuarray.SumAxes(nil, x, []int{0}, false))
	assert.True(t, isNaN(colSum[0]) && isNaN(colSum[1]) && isNaN(colSum[2]), "Sum propagates NaN: %v", colSum)
	mean := vals(cuarray.MeanAxes(nil, x, []int{1}, true))
	assert.True(t, isNaN(mean[0]), "Mean propagates NaN: %v", mean)
	assert.Equal(t, float32(3), mean[2])
	anyNaN := cuarray.Must(cuarray.FromSlice([]float32{0, nan}))
	defer anyNaN.UnsafeFree()
	any1 := cuarray.Must(cuarray.AllAxes(nil, anyNaN, []int{0}, false))
	defer any1.UnsafeFree()
	assert.Equal(t, []bool{false}, read(t, any1), "0 is false")
	any2 := cuarray.Must(cuarray.AnyAxes(nil, anyNaN, nil, false))
	defer any2.UnsafeFree()
	assert.Equal(t, []bool{true}, read(t, any2), "NaN is nonzero: true")
}

func TestReduceAxesEmptyAsNumPy(t *testing.T) {
	x := cuarray.Must(cuarray.Zeros[float64](2, 0))
	defer x.UnsafeFree()
	sum := cuarray.Must(cuarray.SumAxes(nil, x, []int{1}, false))
	prod := cuarray.Must(cuarray.ProdAxes(nil, x, []int{1}, false))
	mean := cuarray.Must(cuarray.MeanAxes(nil, x, []int{1}, false))
	all := cuarray.Must(cuarray.AllAxes(nil, x, []int{1}, false))
	anyv := cuarray.Must(cuarray.AnyAxes(nil, x, []int{1}, false))
	assert.Equal(t, []float64{0, 0}, read(t, sum))
	assert.Equal(t, []float64{1, 1}, read(t, prod))
	m := read(t, mean)
	assert.True(t, math.IsNaN(m[0]) && math.IsNaN(m[1]), "mean of nothing is NaN: %v", m)
	assert.Equal(t, []bool{true, true}, read(t, all))
	assert.Equal(t, []bool{false, false}, read(t, anyv))
	for _, a := range []*cuarray.Array[float64]{sum, prod, mean} {
		a.UnsafeFree()
	}

	_, err := cuarray.MaxAxes(nil, x, []int{1}, false)
	require.ErrorIs(t, err, kernels.ErrEmpty)
	assert.ErrorContains(t, err, "MaxAxes of float64[2 0]")
	_, err = cuarray.ArgMinAxes(nil, x, nil, false)
	require.ErrorIs(t, err, kernels.ErrEmpty)
	// Over the other axis there is nothing to write: no error, as NumPy.
	m0 := cuarray.Must(cuarray.MaxAxes(nil, x, []int{0}, false))
	assert.Equal(t, []int{0}, m0.Shape())
	m0.UnsafeFree()
}

func TestReduceAxesIntegerSumsDoNotWrap(t *testing.T) {
	x := cuarray.Must(cuarray.FromSlice([]uint8{250, 3, 4}))
	defer x.UnsafeFree()
	_, err := cuarray.Sum(x)
	require.ErrorIs(t, err, cuarray.ErrOverflow)
	assert.ErrorContains(t, err, "the sum 257 does not fit uint8; SumInt64")
	total, err := cuarray.SumInt64(x)
	require.NoError(t, err)
	assert.Equal(t, int64(257), total)
	s := cuarray.Must(cuarray.SumAxesInt64(nil, x, nil, false))
	defer s.UnsafeFree()
	assert.Empty(t, s.Shape(), "every axis: zero dimensions")
	assert.Equal(t, []int64{257}, read(t, s))
	mean := cuarray.Must(cuarray.MeanAxesFloat64(nil, x, nil, true))
	defer mean.UnsafeFree()
	assert.Equal(t, []int{1}, mean.Shape())
	assert.InDelta(t, 257.0/3, read(t, mean)[0], 1e-12)

	small := cuarray.Must(cuarray.FromSlice([]uint8{200, 50}))
	defer small.UnsafeFree()
	v, err := cuarray.Sum(small)
	require.NoError(t, err)
	assert.Equal(t, uint8(250), v, "a sum that fits comes back in T")
}

func TestReduceAxesIntoDst(t *testing.T) {
	x := cuarray.Must(cuarray.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3))
	defer x.UnsafeFree()
	dst := cuarray.Must(cuarray.Zeros[float32](1, 3))
	defer dst.UnsafeFree()
	got, err := cuarray.SumAxes(dst, x, []int{-2}, true)
	require.NoError(t, err)
	assert.Same(t, dst, got)
	assert.Equal(t, []float32{5, 7, 9}, read(t, dst))

	idx := cuarray.Must(cuarray.Zeros[int64](2))
	defer idx.UnsafeFree()
	_, err = cuarray.ArgMaxAxes(idx, x, []int{1}, false)
	require.NoError(t, err)
	assert.Equal(t, []int64{2, 2}, read(t, idx))
}

func TestReduceAxesRejectsBadArguments(t *testing.T) {
	p := freshPool(t)
	s := newStream(t, p)
	f := cuarray.On[float32](s)
	x, err := f.FromSlice(iota[float32](6), 2, 3)
	require.NoError(t, err)
	fi := cuarray.On[int32](s)
	xi, err := fi.FromSlice(iota[int32](6), 2, 3)
	require.NoError(t, err)
	wrong, err := f.Zeros(3)
	require.NoError(t, err)
	view, err := x.View(0, 3)
	require.NoError(t, err)
	live := p.Stats().Allocs - p.Stats().Frees

	cases := []struct {
		name string
		run  func() error
		is   error
		msg  string
	}{
		{"axis out of range", func() error { _, err := f.SumAxes(nil, x, []int{2}, false); return err }, cuarray.ErrShape,
			"SumAxes of float32[2 3], axes [2]: axis 2 is out of range for 2 dimensions; axes must be in [-2, 2)"},
		{"negative axis out of range", func() error { _, err := f.MaxAxes(nil, x, []int{-3}, false); return err }, cuarray.ErrShape,
			"MaxAxes of float32[2 3], axes [-3]: axis -3 is out of range"},
		{"repeated axis", func() error { _, err := f.MeanAxes(nil, x, []int{1, -1}, false); return err }, cuarray.ErrShape,
			"MeanAxes of float32[2 3], axes [1 -1]: axis -1 is named twice"},
		{"integer sum into int32", func() error { _, err := fi.SumAxes(nil, xi, nil, false); return err }, kernels.ErrUnsupportedDType,
			"SumAxes of int32[2 3]: the Sum of int32 is int64, which SumAxes does not return; use SumAxesInt64"},
		{"float sum into int64", func() error { _, err := f.SumAxesInt64(nil, x, nil, false); return err }, kernels.ErrUnsupportedDType,
			"use SumAxes"},
		{"dst of another shape", func() error { _, err := f.SumAxes(wrong, x, []int{1}, true); return err }, cuarray.ErrShape,
			"dst float32[3] must have the result's shape [2 1]"},
		{"dst sharing x", func() error { _, err := f.SumAxes(view, x, []int{0}, false); return err }, cuarray.ErrShape,
			"cannot run in place"},
		{"complex max", func() error {
			c := cuarray.Must(cuarray.On[complex64](s).Zeros(2))
			defer c.UnsafeFree()
			_, err := cuarray.On[complex64](s).MaxAxes(nil, c, nil, false)
			return err
		}, kernels.ErrUnsupportedDType, "Max does not take complex64"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			require.ErrorIs(t, err, tc.is)
			assert.ErrorContains(t, err, tc.msg)
			st := p.Stats()
			assert.Equal(t, live, st.Allocs-st.Frees, "nothing stays allocated")
		})
	}
	x.UnsafeFree()
	_, err = f.SumAxes(nil, x, nil, false)
	require.ErrorIs(t, err, cuarray.ErrFreed)
}

// FuzzReduceAxes reduces small arrays of any shape over any axes and
// checks every float32 reduction against the reference.
func FuzzReduceAxes(f *testing.F) {
	f.Add([]byte{2, 3}, uint8(1), true)
	f.Add([]byte{1, 0, 4}, uint8(6), false)
	f.Add([]byte{3, 1, 2, 5}, uint8(9), true)
	f.Fuzz(func(t *testing.T, dims []byte, mask uint8, keep bool) {
		if len(dims) > 4 {
			dims = dims[:4]
		}
		shape := make([]int, len(dims))
		n := 1
		for i, d := range dims {
			shape[i] = int(d % 9)
			n *= shape[i]
		}
		var axes []int
		for k := range shape {
			if mask&(1<<k) != 0 {
				axes = append(axes, k)
			}
		}
		red := axes
		if len(axes) == 0 {
			red = make([]int, len(shape))
			for k := range red {
				red[k] = k
			}
		}
		data := reducePattern[float32](n)
		x := cuarray.Must(cuarray.FromSlice(data, shape...))
		defer x.UnsafeFree()
		if len(shape) == 0 {
			x = cuarray.Must(x.Reshape())
			defer x.UnsafeFree()
		}
		for _, op := range reduceOps[float32]() {
			want, wantErr := op.ref(data, shape, red)
			gotShape, got, err := op.run(cuarray.Ops[float32]{}, x, axes, keep)
			if wantErr != nil {
				require.ErrorIs(t, err, wantErr, op.name)
				continue
			}
			require.NoError(t, err, op.name)
			require.Equal(t, expectedShape(shape, red, keep), gotShape, op.name)
			require.True(t, sameValues(got, want, 1e-5), "%s %v %v: got %v want %v", op.name, shape, axes, got, want)
		}
	})
}
