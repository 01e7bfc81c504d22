package cuarray_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/kernels"
)

// forTypes runs one instantiation of a generic test per element type
// (complex64 only when withComplex).
func forTypes(t *testing.T, withComplex bool, f32, f64, i32, i64, u8, c64, i8, i16, u32 func(t *testing.T)) {
	t.Run("float32", f32)
	t.Run("float64", f64)
	t.Run("int32", i32)
	t.Run("int64", i64)
	t.Run("uint8", u8)
	if withComplex {
		t.Run("complex64", c64)
	}
	t.Run("int8", i8)
	t.Run("int16", i16)
	t.Run("uint32", u32)
}

func TestArangeMatchesNumPy(t *testing.T) {
	// NumPy's own results: np.arange(...) with the dtype.
	got := read(t, cuarray.Must(cuarray.Arange[float64](nil, 0, 1, 0.25)))
	assert.Equal(t, []float64{0, 0.25, 0.5, 0.75}, got)
	// NumPy fills element i ≥ 2 with start + i*delta, delta = (start+step) -
	// start, not with a running sum: np.arange(1, 0, -0.3).
	start, step := 1.0, -0.3 // variables: constant arithmetic would be exact
	delta := (start + step) - start
	got = read(t, cuarray.Must(cuarray.Arange[float64](nil, start, 0, step)))
	assert.Equal(t, []float64{1, 0.7, 0.3999999999999999, 0.09999999999999987}, got)
	assert.Equal(t, []float64{start, start + step, start + float64(2*delta), start + float64(3*delta)}, got)
	assert.Equal(t, []int32{-3, -1, 1, 3}, read(t, cuarray.Must(cuarray.Arange[int32](nil, -3, 5, 2))))
	assert.Equal(t, []int32{5, 2, -1}, read(t, cuarray.Must(cuarray.Arange[int32](nil, 5, -2, -3))))
	assert.Empty(t, read(t, cuarray.Must(cuarray.Arange[int64](nil, 5, 5, 1))))
	assert.Empty(t, read(t, cuarray.Must(cuarray.Arange[int64](nil, 5, 0, 1))), "a range of the wrong sign is empty")
	assert.Equal(t, []uint8{250, 252, 254}, read(t, cuarray.Must(cuarray.Arange[uint8](nil, 250, 255, 2))))
	// Lengths exact at int64's ends, where float64 division would round.
	a := cuarray.Must(cuarray.Arange[int64](nil, math.MinInt64, math.MaxInt64, math.MaxInt64))
	assert.Equal(t, []int64{math.MinInt64, -1, math.MaxInt64 - 1}, read(t, a))

	forTypes(t, false,
		func(t *testing.T) { testArange[float32](t, 0.1, 0.3) },
		func(t *testing.T) { testArange[float64](t, -2, 0.1) },
		func(t *testing.T) { testArange[int32](t, -100, 3) },
		func(t *testing.T) { testArange[int64](t, 1<<40, 7) },
		func(t *testing.T) { testArange[uint8](t, 0, 1) },
		nil,
		func(t *testing.T) { testArange[int8](t, -100, 3) },
		func(t *testing.T) { testArange[int16](t, -30000, 7) },
		func(t *testing.T) { testArange[uint32](t, 1<<31, 7) })
}

type realElem interface {
	float32 | float64 | int32 | int64 | uint8 | int8 | int16 | uint32
}

func testArange[T realElem](t *testing.T, start, step T) {
	for _, n := range []int{0, 1, 2, 7, 97, 255, 1000} {
		if int(T(n)) != n { // uint8 holds no more
			continue
		}
		stop := start + T(n)*step
		a, err := cuarray.Arange(nil, start, stop, step)
		require.NoError(t, err)
		got := read(t, a)
		// NumPy's length: ceil((stop - start)/step) in float64.
		want := int(math.Ceil((float64(stop) - float64(start)) / float64(step)))
		require.Len(t, got, max(want, 0), "n=%d", n)
		delta := (start + step) - start
		for i, g := range got {
			w := start + T(T(i)*delta)
			if i == 1 {
				w = start + step
			}
			require.Equal(t, w, g, "element %d of %d", i, n)
		}
	}
}

func TestLinspaceMatchesNumPy(t *testing.T) {
	for _, c := range []struct {
		start, stop float64
		num         int
		endpoint    bool
		want        []float64
	}{
		{0, 1, 5, true, []float64{0, 0.25, 0.5, 0.75, 1}},
		{0, 1, 5, false, []float64{0, 0.2, 0.4, 0.6000000000000001, 0.8}},
		{2, 3, 1, true, []float64{2}},
		{-1, 1, 0, true, []float64{}},
	} {
		a, err := cuarray.Linspace[float64](nil, c.start, c.stop, c.num, c.endpoint)
		require.NoError(t, err)
		assert.Equal(t, c.want, read(t, a))
	}
	// Integers truncate toward zero as NumPy's astype: np.linspace(-5, 5, 4, dtype=int32).
	assert.Equal(t, []int32{-5, -1, 1, 5}, read(t, cuarray.Must(cuarray.Linspace[int32](nil, -5, 5, 4, true))))
	assert.Equal(t, []uint8{0, 85, 170, 255}, read(t, cuarray.Must(cuarray.Linspace[uint8](nil, 0, 255, 4, true))))
	assert.Equal(t, []float32{0, 0.1, 0.2}, read(t, cuarray.Must(cuarray.Linspace[float32](nil, 0, 0.3, 3, false))))
	assert.Equal(t, []int64{10, 8, 6, 4, 2}, read(t, cuarray.Must(cuarray.Linspace[int64](nil, 10, 0, 5, false))))
}

func TestEyeIsNumPysEye(t *testing.T) {
	forTypes(t, true, testEye[float32], testEye[float64], testEye[int32], testEye[int64], testEye[uint8], testEye[complex64], testEye[int8], testEye[int16], testEye[uint32])
}

func testEye[T cuarray.Elem](t *testing.T) {
	for _, sh := range [][3]int{{0, 0, 0}, {1, 1, 0}, {3, 3, 0}, {2, 5, 1}, {5, 2, -1}, {4, 4, 9}, {13, 7, -3}} {
		n, m, k := sh[0], sh[1], sh[2]
		a, err := cuarray.Eye[T](nil, n, m, k)
		require.NoError(t, err)
		require.Equal(t, []int{n, m}, a.Shape())
		got := read(t, a)
		for i, g := range got {
			want := num[T](0)
			if i%m-i/m == k {
				want = num[T](1)
			}
			require.Equal(t, want, g, "eye(%d, %d, %d)[%d]", n, m, k, i)
		}
	}
	// Into a dst of the right shape, on another stream.
	s := newStream(t, freshPool(t))
	dst := cuarray.Must(cuarray.On[T](s).Zeros(2, 2))
	got, err := cuarray.On[T](s).Eye(dst, 2, 2, 0)
	require.NoError(t, err)
	require.Same(t, dst, got)
	assert.Equal(t, []T{num[T](1), num[T](0), num[T](0), num[T](1)}, read(t, dst))
}

// unravel and ravel convert between a flat row-major index and coordinates.
func unravel(i int, shape []int) []int {
	c := make([]int, len(shape))
	for d := len(shape) - 1; d >= 0; d-- {
		c[d] = i % shape[d]
		i /= shape[d]
	}
	return c
}

func ravel(c, shape []int) int {
	i := 0
	for d := range shape {
		i = i*shape[d] + c[d]
	}
	return i
}

// concatRef is NumPy's concatenate by coordinates: element c of the result
// is element c of the input whose range along axis holds c[axis].
func concatRef[T cuarray.Elem](data [][]T, shapes [][]int, axis int) ([]T, []int) {
	out := append([]int(nil), shapes[0]...)
	out[axis] = 0
	for _, s := range shapes {
		out[axis] += s[axis]
	}
	n := 1
	for _, d := range out {
		n *= d
	}
	res := make([]T, n)
	for i := range res {
		c := unravel(i, out)
		j, at := 0, c[axis]
		for at >= shapes[j][axis] {
			at -= shapes[j][axis]
			j++
		}
		c[axis] = at
		res[i] = data[j][ravel(c, shapes[j])]
	}
	return res, out
}

func TestConcatAlongEveryAxis(t *testing.T) {
	forTypes(t, true, testConcat[float32], testConcat[float64], testConcat[int32], testConcat[int64], testConcat[uint8], testConcat[complex64], testConcat[int8], testConcat[int16], testConcat[uint32])
}

func testConcat[T cuarray.Elem](t *testing.T) {
	base := [][]int{{5}, {3, 4}, {2, 3, 4}, {0, 3}}
	for _, shape := range base {
		for axis := range shape {
			for k := 1; k <= 5; k++ {
				t.Run(fmt.Sprintf("%v/axis%d/%d", shape, axis, k), func(t *testing.T) {
					var arrs []*cuarray.Array[T]
					var data [][]T
					var shapes [][]int
					for j := range k {
						sh := append([]int(nil), shape...)
						sh[axis] = (j*3 + 1) % 4 // 1, 0, 3, 2, 1: an empty part among them
						n := 1
						for _, d := range sh {
							n *= d
						}
						x := make([]T, n)
						for i := range x {
							x[i] = num[T](j*50 + i%50)
						}
						arrs = append(arrs, cuarray.Must(cuarray.FromSlice(x, sh...)))
						data, shapes = append(data, x), append(shapes, sh)
					}
					want, wantShape := concatRef(data, shapes, axis)
					got, err := cuarray.Concat(nil, arrs, axis)
					require.NoError(t, err)
					require.Equal(t, wantShape, got.Shape())
					require.Equal(t, want, read(t, got))
					// A negative axis counts from the end.
					got2, err := cuarray.Concat(nil, arrs, axis-len(shape))
					require.NoError(t, err)
					require.Equal(t, want, read(t, got2))
				})
			}
		}
	}
}

func TestStackAlongEveryAxis(t *testing.T) {
	forTypes(t, true, testStack[float32], testStack[float64], testStack[int32], testStack[int64], testStack[uint8], testStack[complex64], testStack[int8], testStack[int16], testStack[uint32])
}

func testStack[T cuarray.Elem](t *testing.T) {
	for _, shape := range [][]int{{}, {4}, {2, 3}, {2, 1, 3}} {
		for axis := 0; axis <= len(shape); axis++ {
			for k := 1; k <= 5; k++ {
				var arrs []*cuarray.Array[T]
				var data [][]T
				var shapes [][]int
				// Stacking is concatenating arrays with a dimension of 1
				// inserted at axis.
				sh1 := append(append(append([]int(nil), shape[:axis]...), 1), shape[axis:]...)
				for j := range k {
					n := 1
					for _, d := range shape {
						n *= d
					}
					x := make([]T, n)
					for i := range x {
						x[i] = num[T](j*20 + i)
					}
					var a *cuarray.Array[T]
					if len(shape) == 0 { // FromSlice with no shape is 1-D
						a = cuarray.Must(cuarray.Full(x[0]))
					} else {
						a = cuarray.Must(cuarray.FromSlice(x, shape...))
					}
					arrs = append(arrs, a)
					data, shapes = append(data, x), append(shapes, sh1)
				}
				want, wantShape := concatRef(data, shapes, axis)
				got, err := cuarray.Stack(nil, arrs, axis)
				require.NoError(t, err, "%v axis %d", shape, axis)
				require.Equal(t, wantShape, got.Shape())
				require.Equal(t, want, read(t, got), "%v axis %d, %d arrays", shape, axis, k)
			}
		}
	}
	// -1 is the new last axis.
	a := cuarray.Must(cuarray.FromSlice([]T{num[T](1), num[T](2)}))
	b := cuarray.Must(cuarray.FromSlice([]T{num[T](3), num[T](4)}))
	got := cuarray.Must(cuarray.Stack(nil, []*cuarray.Array[T]{a, b}, -1))
	assert.Equal(t, []int{2, 2}, got.Shape())
	assert.Equal(t, []T{num[T](1), num[T](3), num[T](2), num[T](4)}, read(t, got))
}

func TestConcatIntoDstOnAStream(t *testing.T) {
	s := newStream(t, freshPool(t))
	f := cuarray.On[float32](s)
	a := cuarray.Must(f.FromSlice([]float32{1, 2, 3, 4}, 2, 2))
	b := cuarray.Must(f.FromSlice([]float32{5, 6}, 2, 1))
	dst := cuarray.Must(f.New(2, 3))
	got, err := f.Concat(dst, []*cuarray.Array[float32]{a, b}, 1)
	require.NoError(t, err)
	require.Same(t, dst, got)
	assert.Equal(t, []float32{1, 2, 5, 3, 4, 6}, read(t, dst))
	// Many inputs: more than a launch takes.
	var parts []*cuarray.Array[float32]
	var want []float32
	for j := range 19 {
		parts = append(parts, cuarray.Must(f.FromSlice([]float32{float32(j), float32(100 + j)}, 2, 1)))
	}
	for r := range 2 {
		for j := range 19 {
			want = append(want, float32(100*r+j))
		}
	}
	assert.Equal(t, want, read(t, cuarray.Must(f.Concat(nil, parts, 1))))
}

// Bad arguments are errors naming the operation, the shapes and the axis,
// and leave nothing allocated.
func TestConstructionErrors(t *testing.T) {
	p := freshPool(t)
	s := newStream(t, p)
	f := cuarray.On[float32](s)
	a := cuarray.Must(f.Zeros(2, 3))
	b := cuarray.Must(f.Zeros(2, 4))
	c := cuarray.Must(f.Zeros(3))
	freed := cuarray.Must(f.Zeros(2, 3))
	freed.UnsafeFree()
	small := cuarray.Must(f.Zeros(2))
	view := cuarray.Must(a.Reshape(6))
	scalar := cuarray.Must(f.Zeros())
	big := cuarray.Must(f.Zeros(12))
	half := cuarray.Must(big.View(0, 6))
	closed := newStream(t, p)
	require.NoError(t, closed.Close())
	cases := []struct {
		name   string
		err    func() error
		target error
		want   []string
	}{
		{"Arange step 0", func() error { _, err := f.Arange(nil, 0, 1, 0); return err }, backend.ErrInvalidValue, []string{"Arange", "step is 0"}},
		{"Arange NaN", func() error { _, err := f.Arange(nil, 0, float32(math.NaN()), 1); return err }, backend.ErrInvalidValue, []string{"finite"}},
		{"Arange complex", func() error { _, err := cuarray.Arange[complex64](nil, 0, 1, 1); return err }, kernels.ErrUnsupportedDType, []string{"Arange"}},
		{"Arange int step 0", func() error { _, err := cuarray.Arange[int32](nil, 0, 1, 0); return err }, backend.ErrInvalidValue, []string{"step is 0"}},
		{"Arange dst shape", func() error { _, err := f.Arange(small, 0, 3, 1); return err }, cuarray.ErrShape, []string{"Arange", "dst float32[2]", "[3]"}},
		{"Linspace negative", func() error { _, err := f.Linspace(nil, 0, 1, -1, true); return err }, cuarray.ErrShape, []string{"num = -1"}},
		{"Linspace uint8 range", func() error { _, err := cuarray.On[uint8](s).Linspace(nil, -1, 3, 4, true); return err }, backend.ErrInvalidValue, []string{"uint8's range"}},
		{"Linspace complex", func() error { _, err := cuarray.On[complex64](s).Linspace(nil, 0, 1, 4, true); return err }, kernels.ErrUnsupportedDType, []string{"Linspace"}},
		{"Eye negative", func() error { _, err := f.Eye(nil, -1, 2, 0); return err }, cuarray.ErrShape, []string{"Eye"}},
		{"Concat none", func() error { _, err := f.Concat(nil, nil, 0); return err }, backend.ErrInvalidValue, []string{"Concat", "at least one"}},
		{"Concat nil", func() error { _, err := f.Concat(nil, []*cuarray.Array[float32]{a, nil}, 0); return err }, backend.ErrInvalidValue, []string{"arrays[1]"}},
		{"Concat freed", func() error { _, err := f.Concat(nil, []*cuarray.Array[float32]{a, freed}, 0); return err }, cuarray.ErrFreed, []string{"arrays[1]"}},
		{"Concat shapes", func() error { _, err := f.Concat(nil, []*cuarray.Array[float32]{a, b}, 0); return err }, cuarray.ErrShape,
			[]string{"Concat along axis 0", "arrays[1] float32[2 4]", "arrays[0] float32[2 3]"}},
		{"Concat ndim", func() error { _, err := f.Concat(nil, []*cuarray.Array[float32]{a, c}, 0); return err }, cuarray.ErrShape, []string{"arrays[1] float32[3]"}},
		{"Concat axis", func() error { _, err := f.Concat(nil, []*cuarray.Array[float32]{a, b}, 2); return err }, cuarray.ErrShape,
			[]string{"axis 2 is out of range for [2 3]", "[-2, 2)"}},
		{"Concat scalar", func() error { _, err := f.Concat(nil, []*cuarray.Array[float32]{scalar}, 0); return err }, cuarray.ErrShape,
			[]string{"[] has no axes; axis 0 needs"}},
		{"Concat dst shape", func() error { _, err := f.Concat(a, []*cuarray.Array[float32]{a, a}, 0); return err }, cuarray.ErrShape, []string{"dst float32[2 3]", "[4 3]"}},
		{"Concat dst overlaps", func() error { _, err := f.Concat(big, []*cuarray.Array[float32]{half, view}, 0); return err }, cuarray.ErrShape,
			[]string{"arrays[0]", "shares memory with dst"}},
		{"Stack shapes", func() error { _, err := f.Stack(nil, []*cuarray.Array[float32]{a, b}, 0); return err }, cuarray.ErrShape,
			[]string{"Stack along axis 0", "one shape"}},
		{"Stack axis", func() error { _, err := f.Stack(nil, []*cuarray.Array[float32]{a, a}, 3); return err }, cuarray.ErrShape,
			[]string{"axis 3 is out of range", "[-3, 3)"}},
		{"Concat closed stream", func() error {
			_, err := cuarray.On[float32](closed).Concat(nil, []*cuarray.Array[float32]{a, a}, 0)
			return err
		}, cuarray.ErrClosed, []string{"Concat"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := p.Stats()
			err := c.err()
			require.Error(t, err)
			assert.ErrorIs(t, err, c.target)
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w)
			}
			after := p.Stats()
			assert.Equal(t, before.Live, after.Live, "no result left behind")
		})
	}
}
