package cuarray_test

import (
	"fmt"
	"log"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/kernels"
)

// TestNilDstMakesWhatADstGets runs each operation with a nil dst and with
// a dst on the same operands: the results must be identical (the same
// kernels), the made one of the result's shape, and the operands untouched.
func TestNilDstMakesWhatADstGets(t *testing.T) {
	const rows, cols = 4, 25
	xs, ys := make([]float64, rows*cols), make([]float64, rows*cols)
	for i := range xs {
		xs[i] = float64(i)/30 - 1.5
		ys[i] = float64(i%7) + 1
	}
	x := cuarray.Must(cuarray.FromSlice(xs, rows, cols))
	y := cuarray.Must(cuarray.FromSlice(ys, rows*cols)) // another shape, same length
	row := cuarray.Must(cuarray.FromSlice(ys[:cols], cols))
	col := cuarray.Must(cuarray.FromSlice(ys[:rows], rows, 1))
	w := cuarray.Must(cuarray.FromSlice(ys[:cols*3], cols, 3))
	type form struct {
		name    string
		alloc   func() (*cuarray.Array[float64], error)
		inPlace func(dst *cuarray.Array[float64]) error
		shape   []int
	}
	cases := []form{
		{"Add", func() (*cuarray.Array[float64], error) { return cuarray.Add(nil, x, row) },
			func(d *cuarray.Array[float64]) error { return errOf(cuarray.Add(d, x, row)) }, nil},
		{"Sub", func() (*cuarray.Array[float64], error) { return cuarray.Sub(nil, col, x) },
			func(d *cuarray.Array[float64]) error { return errOf(cuarray.Sub(d, col, x)) }, nil},
		{"Mul", func() (*cuarray.Array[float64], error) { return cuarray.Mul(nil, x, row) },
			func(d *cuarray.Array[float64]) error { return errOf(cuarray.Mul(d, x, row)) }, nil},
		{"Div", func() (*cuarray.Array[float64], error) { return cuarray.Div(nil, x, col) },
			func(d *cuarray.Array[float64]) error { return errOf(cuarray.Div(d, x, col)) }, nil},
		{"AddScalar", func() (*cuarray.Array[float64], error) { return cuarray.AddScalar(nil, x, 2.5) },
			func(d *cuarray.Array[float64]) error { return errOf(cuarray.AddScalar(d, x, 2.5)) }, nil},
		{"SubScalar", func() (*cuarray.Array[float64], error) { return cuarray.SubScalar(nil, x, 2.5) },
			func(d *cuarray.Array[float64]) error { return errOf(cuarray.SubScalar(d, x, 2.5)) }, nil},
		{"MulScalar", func() (*cuarray.Array[float64], error) { return cuarray.MulScalar(nil, x, 2.5) },
			func(d *cuarray.Array[float64]) error { return errOf(cuarray.MulScalar(d, x, 2.5)) }, nil},
		{"DivScalar", func() (*cuarray.Array[float64], error) { return cuarray.DivScalar(nil, x, 2.5) },
			func(d *cuarray.Array[float64]) error { return errOf(cuarray.DivScalar(d, x, 2.5)) }, nil},
		{"Exp", func() (*cuarray.Array[float64], error) { return cuarray.Exp(nil, x) },
			func(d *cuarray.Array[float64]) error { return errOf(cuarray.Exp(d, x)) }, nil},
		{"Log", func() (*cuarray.Array[float64], error) { return cuarray.Log(nil, y) },
			func(d *cuarray.Array[float64]) error { return errOf(cuarray.Log(d, y)) }, []int{rows * cols}},
		{"Tanh", func() (*cuarray.Array[float64], error) { return cuarray.Tanh(nil, x) },
			func(d *cuarray.Array[float64]) error { return errOf(cuarray.Tanh(d, x)) }, nil},
		{"Relu", func() (*cuarray.Array[float64], error) { return cuarray.Relu(nil, x) },
			func(d *cuarray.Array[float64]) error { return errOf(cuarray.Relu(d, x)) }, nil},
		{"Axpy", func() (*cuarray.Array[float64], error) { return cuarray.Axpy(nil, 3, x, y) },
			func(d *cuarray.Array[float64]) error {
				if err := cuarray.Copy(d, y); err != nil {
					return err
				}
				return errOf(cuarray.Axpy(d, 3, x, d))
			}, []int{rows * cols}},
		{"Scale", func() (*cuarray.Array[float64], error) { return cuarray.Scale(nil, -2, x) },
			func(d *cuarray.Array[float64]) error {
				if err := cuarray.Copy(d, x); err != nil {
					return err
				}
				return errOf(cuarray.Scale(d, -2, d))
			}, nil},
		{"MatMul", func() (*cuarray.Array[float64], error) { return cuarray.MatMul(nil, x, w) },
			func(d *cuarray.Array[float64]) error { return errOf(cuarray.MatMul(d, x, w)) }, []int{rows, 3}},
		{"Gemv", func() (*cuarray.Array[float64], error) { return cuarray.Gemv(nil, false, 2, x, row, 0) },
			func(d *cuarray.Array[float64]) error { return errOf(cuarray.Gemv(d, false, 2, x, row, 0)) }, []int{rows}},
		{"Gemm transposed", func() (*cuarray.Array[float64], error) { return cuarray.Gemm(nil, true, false, 0.5, x, x, 0) },
			func(d *cuarray.Array[float64]) error { return errOf(cuarray.Gemm(d, true, false, 0.5, x, x, 0)) }, []int{cols, cols}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			shape := c.shape
			if shape == nil {
				shape = []int{rows, cols}
			}
			got, err := c.alloc()
			require.NoError(t, err)
			assert.Equal(t, shape, got.Shape())
			want := cuarray.Must(cuarray.New[float64](shape...))
			require.NoError(t, c.inPlace(want))
			assert.Equal(t, read(t, want), read(t, got))
			assert.Equal(t, xs, read(t, x), "x untouched")
			assert.Equal(t, ys, read(t, y), "y untouched")
			assert.Equal(t, ys[:cols], read(t, row), "row untouched")
			assert.Equal(t, ys[:rows], read(t, col), "col untouched")
		})
	}
}

func TestNilDstOfOtherTypes(t *testing.T) {
	i := cuarray.Must(cuarray.FromSlice([]int32{7, -7, 3}))
	assert.Equal(t, []int32{14, -14, 6}, read(t, cuarray.Must(cuarray.Add(nil, i, i))))
	u := cuarray.Must(cuarray.FromSlice([]uint8{1, 2, 200}))
	assert.Equal(t, []uint8{3, 4, 202}, read(t, cuarray.Must(cuarray.AddScalar(nil, u, 2))))
	c := cuarray.Must(cuarray.FromSlice([]complex64{1 + 1i, 2}))
	assert.Equal(t, []complex64{2i, 2 + 2i}, read(t, cuarray.Must(cuarray.Scale(nil, 1+1i, c))))
	f := cuarray.Must(cuarray.FromSlice([]float32{-1, 0.5}))
	assert.Equal(t, []float32{0, 0.5}, read(t, cuarray.Must(cuarray.Relu(nil, f))))
}

// Axpy and Scale take dst = y (x): BLAS in place, returning it; a nil dst:
// a new array, the operands as they were; another dst: written (y or x
// copied into it first) and returned, the operands as they were.
func TestAxpyAndScaleTakeTheirOperandNilOrAnotherDst(t *testing.T) {
	xs, ys := []float64{1, -2, 3.5, 0.25}, []float64{10, 20, 30, 40}
	axpy := []float64{13, 14, 40.5, 40.75} // 3x + y
	scale := []float64{-2, 4, -7, -0.5}    // -2x
	cases := []struct {
		name string
		dst  func(x, y *cuarray.Array[float64]) *cuarray.Array[float64] // nil: made
		op   func(dst, x, y *cuarray.Array[float64]) (*cuarray.Array[float64], error)
		want []float64
		same string // which operand dst is: "x", "y" or ""
	}{
		{"Axpy into y", func(_, y *cuarray.Array[float64]) *cuarray.Array[float64] { return y },
			func(d, x, y *cuarray.Array[float64]) (*cuarray.Array[float64], error) {
				return cuarray.Axpy(d, 3, x, y)
			}, axpy, "y"},
		{"Axpy nil", func(_, _ *cuarray.Array[float64]) *cuarray.Array[float64] { return nil },
			func(d, x, y *cuarray.Array[float64]) (*cuarray.Array[float64], error) {
				return cuarray.Axpy(d, 3, x, y)
			}, axpy, ""},
		{"Axpy into another", func(_, _ *cuarray.Array[float64]) *cuarray.Array[float64] {
			return cuarray.Must(cuarray.Ones[float64](4))
		},
			func(d, x, y *cuarray.Array[float64]) (*cuarray.Array[float64], error) {
				return cuarray.Axpy(d, 3, x, y)
			}, axpy, ""},
		{"Scale into x", func(x, _ *cuarray.Array[float64]) *cuarray.Array[float64] { return x },
			func(d, x, _ *cuarray.Array[float64]) (*cuarray.Array[float64], error) { return cuarray.Scale(d, -2, x) }, scale, "x"},
		{"Scale nil", func(_, _ *cuarray.Array[float64]) *cuarray.Array[float64] { return nil },
			func(d, x, _ *cuarray.Array[float64]) (*cuarray.Array[float64], error) { return cuarray.Scale(d, -2, x) }, scale, ""},
		{"Scale into another", func(_, _ *cuarray.Array[float64]) *cuarray.Array[float64] {
			return cuarray.Must(cuarray.Ones[float64](4))
		},
			func(d, x, _ *cuarray.Array[float64]) (*cuarray.Array[float64], error) { return cuarray.Scale(d, -2, x) }, scale, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x := cuarray.Must(cuarray.FromSlice(xs))
			y := cuarray.Must(cuarray.FromSlice(ys))
			dst := c.dst(x, y)
			got, err := c.op(dst, x, y)
			require.NoError(t, err)
			if dst != nil {
				assert.Same(t, dst, got, "the result is dst")
			}
			assert.Equal(t, []int{4}, got.Shape())
			assert.Equal(t, c.want, read(t, got))
			if c.same != "x" {
				assert.Equal(t, xs, read(t, x), "x untouched")
			}
			if c.same != "y" {
				assert.Equal(t, ys, read(t, y), "y untouched")
			}
		})
	}
}

// TestNilDstResultsTakeTheOperandsStreamAndPool checks where made results
// come from: On(s)'s pool, and, for the package-level forms, the first
// operand's pool.
func TestNilDstResultsTakeTheOperandsStreamAndPool(t *testing.T) {
	p := freshPool(t)
	s := newStream(t, p)
	defer s.Close()
	f := cuarray.On[float32](s)
	a := cuarray.Must(f.Full(2, 1000))
	allocs := p.Stats().Allocs

	r := cuarray.Must(f.Mul(nil, a, a))
	assert.Equal(t, allocs+1, p.Stats().Allocs, "On(s)'s result comes from s's pool")
	r2 := cuarray.Must(cuarray.AddScalar(nil, r, 1))
	assert.Equal(t, allocs+2, p.Stats().Allocs, "a package-level result comes from its operand's pool")
	assert.Equal(t, a.Device(), r2.Device())
	assert.Equal(t, filled(1000, float32(5)), read(t, r2))

	// A result on the default stream of an array made on device 0's
	// default stream: device 0's pool, nothing of p.
	d := cuarray.Must(cuarray.Ones[float32](10))
	cuarray.Must(cuarray.Exp(nil, d))
	assert.Equal(t, allocs+2, p.Stats().Allocs)
}

func TestNilDstErrorsLeaveNothingAllocated(t *testing.T) {
	p := freshPool(t)
	s := newStream(t, p)
	defer s.Close()
	f := cuarray.On[float32](s)
	a := cuarray.Must(f.Zeros(6))
	m := cuarray.Must(f.Zeros(2, 3))
	c := cuarray.Must(f.Zeros(5))
	freed := cuarray.Must(f.Zeros(6))
	freed.UnsafeFree()
	fi := cuarray.On[int32](s)
	i := cuarray.Must(fi.Zeros(4))
	closed := newStream(t, p)
	require.NoError(t, closed.Close())

	cases := []struct {
		name   string
		err    func() error
		target error
		want   []string
	}{
		{"shapes", func() error { _, err := f.Add(nil, a, c); return err }, cuarray.ErrShape,
			[]string{"Add: a float32[6] and b float32[5] do not broadcast"}},
		{"equal lengths, other shapes", func() error { _, err := f.Mul(nil, a, m); return err }, cuarray.ErrShape,
			[]string{"Mul: a float32[6] and b float32[2 3] do not broadcast"}},
		{"nil", func() error { _, err := f.Sub(nil, a, nil); return err }, nil, []string{"Sub", "b is a nil array"}},
		{"freed", func() error { _, err := f.Tanh(nil, freed); return err }, cuarray.ErrFreed, []string{"Tanh", "x float32[6]"}},
		{"Axpy lengths", func() error { _, err := f.Axpy(nil, 1, c, a); return err }, cuarray.ErrShape, []string{"Axpy", "x float32[5]"}},
		{"Exp int32", func() error { _, err := fi.Exp(nil, i); return err }, kernels.ErrUnsupportedDType, []string{"Exp", "float32, float64"}},
		{"Scale int32", func() error { _, err := fi.Scale(nil, 2, i); return err }, kernels.ErrUnsupportedDType, []string{"Scale"}},
		{"MatMul inner", func() error { _, err := f.MatMul(nil, m, m); return err }, cuarray.ErrShape,
			[]string{"MatMul", "a is [2 3], b is [2 3]", "inner dimensions 3 and 2"}},
		{"MatMul 1-d", func() error { _, err := f.MatMul(nil, a, m); return err }, cuarray.ErrShape, []string{"MatMul", "2-D"}},
		{"Gemm int32", func() error { _, err := fi.Gemm(nil, false, false, 1, i, i, 0); return err }, kernels.ErrUnsupportedDType,
			[]string{"Gemm", "float32, float64"}},
		{"closed stream", func() error { _, err := cuarray.On[float32](closed).Add(nil, a, a); return err }, cuarray.ErrClosed,
			[]string{"Add"}},
		{"AddRowVector bias", func() error { _, err := f.AddRowVector(nil, m, c); return err }, cuarray.ErrShape,
			[]string{"AddRowVector", "x's columns, 3"}},
		{"SumCols 1-D", func() error { _, err := f.SumCols(nil, a); return err }, cuarray.ErrShape, []string{"SumCols", "2-D"}},
		{"SumRows freed", func() error { _, err := f.SumRows(nil, freed); return err }, cuarray.ErrFreed, []string{"SumRows", "x float32[6]"}},
		{"ReluGrad lengths", func() error { _, err := f.ReluGrad(nil, a, c); return err }, cuarray.ErrShape,
			[]string{"ReluGrad", "x float32[6]", "dy float32[5]"}},
		{"ReluGrad nil dy", func() error { _, err := f.ReluGrad(nil, a, nil); return err }, nil, []string{"ReluGrad", "dy is a nil array"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := p.Stats()
			err := c.err()
			require.Error(t, err)
			if c.target != nil {
				assert.ErrorIs(t, err, c.target)
			}
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w)
			}
			after := p.Stats()
			assert.Equal(t, before.Live, after.Live, "no result left behind")
			assert.Equal(t, before.Allocs-before.Frees, after.Allocs-after.Frees)
		})
	}
}

// Every operation that writes a destination makes it when dst is nil and
// returns it, so expressions compose and Must wraps them.
func Example_nilDst() {
	x := cuarray.Must(cuarray.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3))
	w := cuarray.Must(cuarray.FromSlice([]float32{1, 0, 0, 1, 1, -1}, 3, 2))

	// h = 2·relu(x·w - 1), one new array a step, all queued on the GPU.
	h := cuarray.Must(cuarray.Scale(nil, 2,
		cuarray.Must(cuarray.Relu(nil,
			cuarray.Must(cuarray.SubScalar(nil,
				cuarray.Must(cuarray.MatMul(nil, x, w)), 1))))))
	fmt.Printf("%g\n", h)
	fmt.Println("sum", cuarray.Must(cuarray.Sum(h)))

	// Errors name the operation and its operands.
	_, err := cuarray.Add(nil, h, x)
	fmt.Println(err)

	// In a loop, a dst reuses one destination instead (here in place).
	if _, err := cuarray.Relu(h, h); err != nil {
		log.Fatal(err)
	}
	// Output:
	// [[ 6  0]
	//  [18  0]]
	// sum 24
	// cuarray: Add: a float32[2 2] and b float32[2 3] do not broadcast: dimension 1 of the result would be 2 in one and 3 in the other; aligned at their last dimensions, each pair of dimensions must be equal or one of them 1 (Reshape one to combine them element by element): bad shape
}
