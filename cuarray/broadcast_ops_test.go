package cuarray_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/cuarray"
)

// Broadcasting in the table's operations of two and three inputs, on the
// host backend, against a plain-Go broadcast of the same data: shapes that
// broadcast both ways, a scalar (0-d, one element, a broadcast view of one)
// on either side and in every input of Where, empty results, views, and
// sizes past the host loops' pieces.

// bcastAt is the flat index into an input of shape sh of element i of the
// row-major result of shape out, by NumPy's rule.
func bcastAt(sh, out []int, i int) int {
	idx, mul := 0, 1
	for k := len(out) - 1; k >= 0; k-- {
		c := i % out[k]
		i /= out[k]
		if j := k - (len(out) - len(sh)); j >= 0 {
			if sh[j] != 1 {
				idx += c * mul
			}
			mul *= sh[j]
		}
	}
	return idx
}

// shaped is v as an array of shape sh: a 0-d one for no dimensions
// (FromSlice with no shape makes a vector).
func shaped[T cuarray.Elem](t *testing.T, v []T, sh []int) *cuarray.Array[T] {
	t.Helper()
	if len(sh) == 0 {
		a, err := cuarray.Full(v[0])
		require.NoError(t, err)
		require.Empty(t, a.Shape())
		return a
	}
	a, err := cuarray.FromSlice(v, sh...)
	require.NoError(t, err)
	return a
}

func numel(sh []int) int {
	n := 1
	for _, d := range sh {
		n *= d
	}
	return n
}

// ramp is n values with some repeats, negatives and zeros, so that
// comparisons and Where see both outcomes.
func ramp(n, seed int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32((i*7+seed*3)%11 - 5)
	}
	return v
}

func TestBroadcastBinaryAndCompare(t *testing.T) {
	cases := []struct{ a, b []int }{
		{[]int{3, 1}, []int{1, 4}},
		{[]int{3, 4}, []int{}},  // 0-d on the right
		{[]int{}, []int{3, 4}},  // and on the left
		{[]int{1}, []int{5}},    // one element on the left
		{[]int{7}, []int{1, 1}}, // on the right, with more dimensions
		{[]int{2, 3, 4}, []int{4}},
		{[]int{2, 3, 4}, []int{3, 1}},
		{[]int{50, 100}, []int{}}, // past the host loops' pieces
		{[]int{}, []int{}},
		{[]int{0, 3}, []int{1, 3}}, // empty
		{[]int{0}, []int{}},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%v×%v", c.a, c.b), func(t *testing.T) {
			out, err := cuarray.BroadcastShapes(c.a, c.b)
			require.NoError(t, err)
			av, bv := ramp(numel(c.a), 1), ramp(numel(c.b), 2)
			a, b := shaped(t, av, c.a), shaped(t, bv, c.b)
			n := numel(out)
			wantMin, wantGt := make([]float32, n), make([]bool, n)
			for i := range n {
				x, y := av[bcastAt(c.a, out, i)], bv[bcastAt(c.b, out, i)]
				wantMin[i], wantGt[i] = min(x, y), x > y
			}

			m, err := cuarray.Minimum(nil, a, b)
			require.NoError(t, err)
			assert.Equal(t, out, append([]int{}, m.Shape()...))
			assert.Equal(t, wantMin, read(t, m))

			g, err := cuarray.Greater(nil, a, b)
			require.NoError(t, err)
			assert.Equal(t, out, append([]int{}, g.Shape()...))
			assert.Equal(t, wantGt, read(t, g))

			// Into given dsts of the result's shape.
			md := cuarray.Must(cuarray.Full[float32](-99, out...))
			got, err := cuarray.Minimum(md, a, b)
			require.NoError(t, err)
			assert.Same(t, md, got)
			assert.Equal(t, wantMin, read(t, md))
			gd := cuarray.Must(cuarray.Zeros[bool](out...))
			_, err = cuarray.Greater(gd, a, b)
			require.NoError(t, err)
			assert.Equal(t, wantGt, read(t, gd))
		})
	}
}

func TestBroadcastWhere(t *testing.T) {
	cases := []struct{ c, a, b []int }{
		{[]int{3, 1}, []int{1, 4}, []int{}},
		{[]int{}, []int{3, 4}, []int{3, 4}},
		{[]int{3, 4}, []int{3, 4}, []int{}}, // where(x > 0, x, 0)
		{[]int{3, 4}, []int{}, []int{3, 4}},
		{[]int{3, 4}, []int{1}, []int{}},
		{[]int{}, []int{}, []int{}},
		{[]int{4}, []int{2, 1}, []int{1, 4}},
		{[]int{60, 70}, []int{}, []int{60, 70}}, // past the host loops' pieces
		{[]int{0, 2}, []int{2}, []int{}},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%v,%v,%v", c.c, c.a, c.b), func(t *testing.T) {
			out, err := cuarray.BroadcastShapes(c.c, c.a, c.b)
			require.NoError(t, err)
			cv := make([]bool, numel(c.c))
			for i := range cv {
				cv[i] = i%3 != 1
			}
			av, bv := ramp(numel(c.a), 1), ramp(numel(c.b), 2)
			cond := shaped(t, cv, c.c)
			a, b := shaped(t, av, c.a), shaped(t, bv, c.b)
			want := make([]float32, numel(out))
			for i := range want {
				if cv[bcastAt(c.c, out, i)] {
					want[i] = av[bcastAt(c.a, out, i)]
				} else {
					want[i] = bv[bcastAt(c.b, out, i)]
				}
			}
			w, err := cuarray.Where(nil, cond, a, b)
			require.NoError(t, err)
			assert.Equal(t, out, append([]int{}, w.Shape()...))
			assert.Equal(t, want, read(t, w))
		})
	}
}

// The idiom the scalar path is for: where(x > 0, x, 0) with 0 a 0-d array
// (Full with no shape), the result written over x in place.
func TestBroadcastReluIdiomInPlace(t *testing.T) {
	s := newStream(t, freshPool(t))
	f := cuarray.On[float64](s)
	x := cuarray.Must(f.FromSlice([]float64{-2, 3, math.NaN(), 0, 5, -1}, 2, 3))
	zero := cuarray.Must(f.Full(0))
	mask, err := f.Greater(nil, x, zero)
	require.NoError(t, err)
	assert.Equal(t, []bool{false, true, false, false, true, false}, read(t, mask))
	y, err := f.Where(x, mask, x, zero)
	require.NoError(t, err)
	assert.Same(t, x, y)
	assert.Equal(t, []float64{0, 3, 0, 0, 5, 0}, read(t, x))
}

// Views as inputs: a transpose (packed), a broadcast view of one element
// (read as a scalar) and a stepped slice, against the same data made
// contiguous.
func TestBroadcastViews(t *testing.T) {
	base := cuarray.Must(cuarray.FromSlice(ramp(12, 3), 4, 3))
	tr := cuarray.Must(base.Transpose()) // [3 4]
	one := cuarray.Must(cuarray.FromSlice([]float32{1}))
	ones := cuarray.Must(one.BroadcastTo(3, 4)) // strides [0 0]
	step := cuarray.Must(cuarray.Must(cuarray.FromSlice(ramp(8, 4), 8)).SliceAxis(0, 0, 8, 2))
	require.False(t, tr.IsContiguous())
	require.False(t, ones.IsContiguous())

	trv, stepv := read(t, tr), read(t, step)
	cases := []struct {
		name string
		a, b *cuarray.Array[float32]
		want func(i int) float32
	}{
		{"transpose and broadcast scalar", tr, ones, func(i int) float32 { return min(trv[i], 1) }},
		{"broadcast scalar and transpose", ones, tr, func(i int) float32 { return min(1, trv[i]) }},
		{"transpose and stepped row", tr, step, func(i int) float32 { return min(trv[i], stepv[i%4]) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := cuarray.Minimum(nil, c.a, c.b)
			require.NoError(t, err)
			want := make([]float32, 12)
			for i := range want {
				want[i] = c.want(i)
			}
			assert.Equal(t, want, read(t, m))
			// The operands are unchanged (the scalar view was not written).
			assert.Equal(t, []float32{1}, read(t, one))
		})
	}
	cond := cuarray.Must(cuarray.Must(cuarray.FromSlice([]bool{true}, 1, 1)).BroadcastTo(3, 4))
	w, err := cuarray.Where(nil, cond, tr, ones)
	require.NoError(t, err)
	assert.Equal(t, trv, read(t, w))
}

func TestBroadcastOpErrors(t *testing.T) {
	a := cuarray.Must(cuarray.Zeros[float32](2, 3))
	b := cuarray.Must(cuarray.Zeros[float32](3, 2))
	col := cuarray.Must(cuarray.Zeros[float32](3, 1))
	m := cuarray.Must(cuarray.Zeros[bool](2, 1))
	d := cuarray.Must(cuarray.Zeros[float32](4))
	bd := cuarray.Must(cuarray.Zeros[bool](2, 3))
	big := cuarray.Must(cuarray.Zeros[float32](7))
	part := cuarray.Must(big.View(0, 6))
	one := cuarray.Must(big.View(3, 1))
	cases := []struct {
		name string
		err  func() error
		want []string
	}{
		{"Pow shapes", func() error { _, err := cuarray.Pow(nil, a, b); return err },
			[]string{"Pow: a float32[2 3] and b float32[3 2] do not broadcast", "dimension 1"}},
		{"Greater shapes", func() error { _, err := cuarray.Greater(nil, a, col); return err },
			[]string{"Greater: a float32[2 3] and b float32[3 1] do not broadcast"}},
		{"Where shapes", func() error { _, err := cuarray.Where(nil, m, a, col); return err },
			[]string{"Where: ", "float32[3 1] do not broadcast"}},
		{"Minimum dst shape", func() error { _, err := cuarray.Minimum(d, a, cuarray.Must(cuarray.Full[float32](1))); return err },
			[]string{"Minimum: dst float32[4] does not have the shape [2 3] that a float32[2 3] and b float32[] broadcast to"}},
		{"Less dst shape", func() error { _, err := cuarray.Less(bd, col, col); return err },
			[]string{"Less: dst bool[2 3] and a float32[3 1] differ in shape"}},
		{"Where dst shape", func() error { _, err := cuarray.Where(d, m, a, a); return err },
			[]string{"Where: dst float32[4] does not have the shape [2 3] that cond bool[2 1], a float32[2 3] and b float32[2 3] broadcast to"}},
		{"scalar inside dst", func() error { _, err := cuarray.Maximum(part, part, one); return err },
			[]string{"Maximum", "overlap"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.err()
			require.ErrorIs(t, err, cuarray.ErrShape)
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}
