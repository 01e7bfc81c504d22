package cuarray_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/kernels"
)

// The cuarray side of the table's operations (ops_gen.go): the one API
// shape (nil dst allocates, a dst is written and returned), shapes,
// mixed element types, streams and errors. The arithmetic of every op on
// every type is tested in package kernels.

func TestTableOpNilDstAllocatesResult(t *testing.T) {
	x := cuarray.Must(cuarray.FromSlice([]float32{0, 1, 4, 9, 16, 25}, 2, 3))
	y, err := cuarray.Sqrt[float32](nil, x)
	require.NoError(t, err)
	assert.Equal(t, []int{2, 3}, y.Shape())
	assert.Equal(t, []float32{0, 1, 2, 3, 4, 5}, read(t, y))

	// A dst is written and returned; in place works.
	got, err := cuarray.Sqrt(x, x)
	require.NoError(t, err)
	assert.Same(t, x, got)
	assert.Equal(t, []float32{0, 1, 2, 3, 4, 5}, read(t, x))
}

func TestTableOpOnStream(t *testing.T) {
	s := newStream(t, freshPool(t))
	f := cuarray.On[float64](s)
	a := cuarray.Must(f.FromSlice([]float64{1, -2, math.NaN(), 4}))
	b := cuarray.Must(f.FromSlice([]float64{3, -5, 0, math.NaN()}))
	lo, err := f.Minimum(nil, a, b)
	require.NoError(t, err)
	got := read(t, lo)
	assert.Equal(t, []float64{1, -5}, got[:2])
	assert.True(t, math.IsNaN(got[2]) && math.IsNaN(got[3]), "NaN propagates: %v", got)

	p, err := f.Pow(nil, a, cuarray.Must(f.Full(2, 4)))
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 4}, read(t, p)[:2])
}

func TestTableComparisonsGiveBool(t *testing.T) {
	a := cuarray.Must(cuarray.FromSlice([]int32{1, 2, 3, math.MinInt32}))
	b := cuarray.Must(cuarray.FromSlice([]int32{3, 2, 1, math.MaxInt32}))
	cases := []struct {
		name string
		op   func(dst *cuarray.Array[bool], a, b *cuarray.Array[int32]) (*cuarray.Array[bool], error)
		want []bool
	}{
		{"Equal", cuarray.Equal[int32], []bool{false, true, false, false}},
		{"NotEqual", cuarray.NotEqual[int32], []bool{true, false, true, true}},
		{"Less", cuarray.Less[int32], []bool{true, false, false, true}},
		{"LessEqual", cuarray.LessEqual[int32], []bool{true, true, false, true}},
		{"Greater", cuarray.Greater[int32], []bool{false, false, true, false}},
		{"GreaterEqual", cuarray.GreaterEqual[int32], []bool{false, true, true, false}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := c.op(nil, a, b)
			require.NoError(t, err)
			assert.Equal(t, c.want, read(t, m))
			// Into a given dst, at an offset of one byte.
			big := cuarray.Must(cuarray.Zeros[bool](5))
			dst := cuarray.Must(big.View(1, 4))
			got, err := c.op(dst, a, b)
			require.NoError(t, err)
			assert.Same(t, dst, got)
			assert.Equal(t, append([]bool{false}, c.want...), read(t, big))
		})
	}
}

func TestTableWhereAndLogic(t *testing.T) {
	c := cuarray.Must(cuarray.FromSlice([]bool{true, false, true}))
	a := cuarray.Must(cuarray.FromSlice([]complex64{1, 2, 3}))
	b := cuarray.Must(cuarray.FromSlice([]complex64{-1, -2, -3i}))
	w, err := cuarray.Where(nil, c, a, b)
	require.NoError(t, err)
	assert.Equal(t, []complex64{1, -2, 3}, read(t, w))

	d := cuarray.Must(cuarray.FromSlice([]bool{true, true, false}))
	and, err := cuarray.LogicalAnd(nil, c, d)
	require.NoError(t, err)
	assert.Equal(t, []bool{true, false, false}, read(t, and))
	not, err := cuarray.LogicalNot(nil, c)
	require.NoError(t, err)
	assert.Equal(t, []bool{false, true, false}, read(t, not))
}

func TestTableClamp(t *testing.T) {
	x := cuarray.Must(cuarray.FromSlice([]float32{-5, 0.5, 7, float32(math.NaN())}))
	y, err := cuarray.Clamp(nil, x, -1, 1)
	require.NoError(t, err)
	got := read(t, y)
	assert.Equal(t, []float32{-1, 0.5, 1}, got[:3])
	assert.True(t, math.IsNaN(float64(got[3])))
}

func TestConvert(t *testing.T) {
	x := cuarray.Must(cuarray.FromSlice([]float32{-1.7, 2.5, float32(math.NaN()), 3e9, 0}, 5))
	i, err := cuarray.Convert[int32](nil, nil, x)
	require.NoError(t, err)
	assert.Equal(t, []int32{-1, 2, 0, math.MaxInt32, 0}, read(t, i))
	b, err := cuarray.Convert[bool](nil, nil, x)
	require.NoError(t, err)
	assert.Equal(t, []bool{true, true, true, true, false}, read(t, b))
	back, err := cuarray.Convert[float64](nil, nil, b)
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 1, 1, 1, 0}, read(t, back))

	// On a stream, into a dst that is a view at an offset.
	s := newStream(t, freshPool(t))
	big := cuarray.Must(cuarray.On[uint8](s).Zeros(6))
	dst := cuarray.Must(big.View(1, 5))
	got, err := cuarray.Convert(s, dst, x)
	require.NoError(t, err)
	assert.Same(t, dst, got)
	assert.Equal(t, []uint8{0, 0, 2, 0, 255, 0}, read(t, big))
}

func TestTableOpErrors(t *testing.T) {
	f := cuarray.Must(cuarray.Zeros[float32](2, 3))
	g := cuarray.Must(cuarray.Zeros[float32](3, 2))
	i := cuarray.Must(cuarray.Zeros[int32](6))
	m := cuarray.Must(cuarray.Zeros[bool](6))
	freed := cuarray.Must(cuarray.Zeros[float32](2, 3))
	freed.UnsafeFree()
	v := cuarray.Must(cuarray.Zeros[float32](7))
	v1, v2 := cuarray.Must(v.View(0, 6)), cuarray.Must(v.View(1, 6))
	cases := []struct {
		name   string
		err    func() error
		target error
		want   []string
	}{
		{"Pow shapes", func() error { _, err := cuarray.Pow(nil, f, g); return err }, cuarray.ErrShape,
			[]string{"Pow: a float32[2 3] and b float32[3 2] do not broadcast", "dimension 1"}},
		{"Sqrt dst shape", func() error { _, err := cuarray.Sqrt(g, f); return err }, cuarray.ErrShape,
			[]string{"Sqrt: dst float32[3 2] and x float32[2 3] differ in shape"}},
		{"Sqrt int32", func() error { _, err := cuarray.Sqrt(nil, i); return err }, kernels.ErrUnsupportedDType,
			[]string{"Sqrt does not take int32; it takes float32, float64"}},
		{"Less dst shape", func() error { _, err := cuarray.Less(m, f, f); return err }, cuarray.ErrShape,
			[]string{"Less: dst bool[6] and a float32[2 3] differ in shape"}},
		{"LogicalAnd float32", func() error { _, err := cuarray.LogicalAnd(nil, f, f); return err }, kernels.ErrUnsupportedDType,
			[]string{"LogicalAnd does not take float32; it takes bool"}},
		{"Where freed", func() error { _, err := cuarray.Where(nil, m, freed, f); return err }, cuarray.ErrFreed,
			[]string{"Where: a float32[2 3]"}},
		{"Where nil cond", func() error { _, err := cuarray.Where[float32](nil, nil, f, f); return err }, nil,
			[]string{"Where: cond is a nil array"}},
		{"Convert shape", func() error { _, err := cuarray.Convert(nil, m, f); return err }, cuarray.ErrShape,
			[]string{"Convert float32 to bool: dst bool[6] and x float32[2 3] differ in shape"}},
		{"Abs overlap", func() error { _, err := cuarray.Abs(v2, v1); return err }, cuarray.ErrShape, []string{"overlap"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.err()
			require.Error(t, err)
			if c.target != nil {
				assert.ErrorIs(t, err, c.target)
			}
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// Bool arrays are arrays like the others: made, filled, copied, read and
// printed; arithmetic on them is a clear error.
func TestBoolArrays(t *testing.T) {
	a := cuarray.Must(cuarray.FromSlice([]bool{true, false, true}))
	assert.Equal(t, kernels.Bool, a.DType())
	assert.Equal(t, "bool[3]", a.String())
	assert.Equal(t, []bool{true, true, true}, read(t, cuarray.Must(cuarray.Ones[bool](3))))
	assert.Equal(t, []bool{false, false}, read(t, cuarray.Must(cuarray.Zeros[bool](2))))
	b := cuarray.Must(cuarray.New[bool](3))
	require.NoError(t, cuarray.Copy(b, a))
	assert.Equal(t, []bool{true, false, true}, read(t, b))
	require.NoError(t, cuarray.Fill(b, false))
	assert.Equal(t, []bool{false, false, false}, read(t, b))
	assert.Contains(t, fmt.Sprintf("%v", a), "3-element bool on device 0")
	assert.Contains(t, fmt.Sprintf("%v", a), "[ true false  true]")
	_, err := cuarray.Sum(a)
	require.ErrorIs(t, err, kernels.ErrUnsupportedDType)
	assert.Contains(t, err.Error(), "Sum does not take bool")
	_, err = cuarray.Add(b, a, a)
	require.ErrorIs(t, err, kernels.ErrUnsupportedDType)
}
