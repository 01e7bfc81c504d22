package cugonum_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/cugonum"
)

// seq is rows×cols distinct values, some not exact in float32.
func seq(rows, cols int) []float64 {
	d := make([]float64, rows*cols)
	for i := range d {
		d[i] = float64(i) + 1/3.0 + math.Ldexp(1, -40)*float64(i%7)
	}
	return d
}

// dense is a rows×cols matrix: contiguous, or a view into a larger one
// (stride > cols) whose other elements are -1.
func dense(rows, cols int, view bool) *mat.Dense {
	if !view {
		return mat.NewDense(rows, cols, seq(rows, cols))
	}
	big := mat.NewDense(rows+2, cols+3, nil)
	for i := range rows + 2 {
		for j := range cols + 3 {
			big.Set(i, j, -1)
		}
	}
	v := big.Slice(1, rows+1, 2, cols+2).(*mat.Dense)
	v.Copy(mat.NewDense(rows, cols, seq(rows, cols)))
	return v
}

func TestDenseRoundTripsOnEveryLayout(t *testing.T) {
	for _, tc := range []struct {
		name       string
		rows, cols int
		view       bool
	}{
		{"contiguous", 3, 4, false},
		{"a view with a longer stride", 3, 4, true},
		{"one element", 1, 1, false},
		{"one row of a view", 1, 5, true},
		{"one column of a view", 7, 1, true},
		{"prime sizes", 13, 17, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := dense(tc.rows, tc.cols, tc.view)
			want := mat.DenseCopyOf(m)

			a, err := cugonum.FromDense[float64](nil, m)
			require.NoError(t, err)
			assert.Equal(t, []int{tc.rows, tc.cols}, a.Shape())
			got, err := a.ToSlice()
			require.NoError(t, err)
			assert.Equal(t, mat.DenseCopyOf(want).RawMatrix().Data, got, "row-major, exact")

			// float32: each element rounded to nearest, as Go's conversion does.
			a32, err := cugonum.FromDense[float32](nil, m)
			require.NoError(t, err)
			got32, err := a32.ToSlice()
			require.NoError(t, err)
			for i, v := range got32 {
				assert.Equal(t, float32(want.At(i/tc.cols, i%tc.cols)), v, "element %d", i)
			}

			// Down into the same storage, after zeroing it: every element
			// comes back, and nothing outside the view is written.
			var outside []float64
			raw := m.RawMatrix()
			if tc.view {
				outside = append(outside, raw.Data[0], raw.Data[len(raw.Data)-1])
			}
			m.Zero()
			require.NoError(t, cugonum.ToDense(m, a))
			assert.True(t, mat.Equal(want, m))
			if tc.view {
				assert.Equal(t, outside, []float64{raw.Data[0], raw.Data[len(raw.Data)-1]}, "elements outside the view changed")
			}
			m.Zero()
			require.NoError(t, cugonum.ToDense(m, a32))
			for i := range tc.rows {
				for j := range tc.cols {
					assert.Equal(t, float64(float32(want.At(i, j))), m.At(i, j))
				}
			}

			// An empty Dense takes the array's shape.
			var e mat.Dense
			require.NoError(t, cugonum.ToDense(&e, a))
			assert.True(t, mat.Equal(want, &e))
		})
	}
}

func TestVecDenseRoundTripsWithAnIncrement(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    *mat.VecDense
	}{
		{"contiguous", mat.NewVecDense(5, seq(5, 1))},
		{"a column of a matrix (increment 4)", dense(6, 4, false).ColView(2).(*mat.VecDense)},
		{"one element", mat.NewVecDense(1, []float64{math.Pi})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := mat.VecDenseCopyOf(tc.v)
			a, err := cugonum.FromVecDense[float64](nil, tc.v)
			require.NoError(t, err)
			assert.Equal(t, []int{tc.v.Len()}, a.Shape())
			got, err := a.ToSlice()
			require.NoError(t, err)
			assert.Equal(t, want.RawVector().Data, got)

			tc.v.Zero()
			require.NoError(t, cugonum.ToVecDense(tc.v, a))
			assert.True(t, mat.Equal(want, tc.v))

			var e mat.VecDense
			require.NoError(t, cugonum.ToVecDense(&e, a))
			assert.True(t, mat.Equal(want, &e))
		})
	}
}

func TestGeneralsRoundTripIncludingEmpty(t *testing.T) {
	for _, tc := range []struct {
		name               string
		rows, cols, stride int
	}{
		{"contiguous", 2, 3, 3},
		{"stride 5", 2, 3, 5},
		{"no rows", 0, 3, 3},
		{"no columns", 4, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := max(0, (tc.rows-1)*tc.stride+tc.cols)
			g := blas64.General{Rows: tc.rows, Cols: tc.cols, Stride: tc.stride, Data: seq(1, n)}
			a, err := cugonum.FromGeneral[float64](nil, g)
			require.NoError(t, err)
			assert.Equal(t, []int{tc.rows, tc.cols}, a.Shape())
			back := blas64.General{Rows: tc.rows, Cols: tc.cols, Stride: tc.stride, Data: make([]float64, n)}
			require.NoError(t, cugonum.ToGeneral(back, a))
			for i := range tc.rows {
				for j := range tc.cols {
					assert.Equal(t, g.Data[i*tc.stride+j], back.Data[i*tc.stride+j])
				}
			}

			g32 := blas32.General{Rows: tc.rows, Cols: tc.cols, Stride: tc.stride, Data: make([]float32, n)}
			for i, v := range g.Data {
				g32.Data[i] = float32(v)
			}
			a32, err := cugonum.FromGeneral32(nil, g32)
			require.NoError(t, err)
			back32 := blas32.General{Rows: tc.rows, Cols: tc.cols, Stride: tc.stride, Data: make([]float32, n)}
			require.NoError(t, cugonum.ToGeneral32(back32, a32))
			for i := range tc.rows {
				for j := range tc.cols {
					assert.Equal(t, g32.Data[i*tc.stride+j], back32.Data[i*tc.stride+j])
				}
			}
		})
	}
}

func TestUploadsRunOnTheGivenStream(t *testing.T) {
	s, err := cuarray.NewStream(0)
	require.NoError(t, err)
	defer s.Close()
	a, err := cugonum.FromDense[float32](s, dense(2, 2, false))
	require.NoError(t, err)
	// The array starts on s: summing on s needs no other stream.
	sum, err := cuarray.On[float32](s).Sum(a)
	require.NoError(t, err)
	assert.InDelta(t, 0+1+2+3+4.0/3, sum, 1e-5)
}

func TestBadShapesAreRefusedWithTheReason(t *testing.T) {
	a23, err := cuarray.Zeros[float64](2, 3)
	require.NoError(t, err)
	a3, err := cuarray.Zeros[float64](3)
	require.NoError(t, err)
	var empty mat.Dense
	for _, tc := range []struct {
		name string
		err  func() error
		want string
	}{
		{"nil Dense up", func() error { _, err := cugonum.FromDense[float64](nil, nil); return err }, "FromDense: an empty or nil mat.Dense"},
		{"empty Dense up", func() error { _, err := cugonum.FromDense[float64](nil, &empty); return err }, "FromDense: an empty or nil mat.Dense"},
		{"wrong shape down", func() error { return cugonum.ToDense(mat.NewDense(3, 2, nil), a23) }, "ToDense: float64[2 3] into a 3×2 matrix"},
		{"1-D array into a Dense", func() error { return cugonum.ToDense(mat.NewDense(3, 1, nil), a3) }, "ToDense: float64[3] is not 2-D"},
		{"2-D array into a VecDense", func() error { return cugonum.ToVecDense(mat.NewVecDense(6, nil), a23) }, "ToVecDense: float64[2 3] is not 1-D"},
		{"wrong length down", func() error { return cugonum.ToVecDense(mat.NewVecDense(4, nil), a3) }, "ToVecDense: float64[3] into a mat.VecDense of 4"},
		{"stride shorter than a row", func() error {
			_, err := cugonum.FromGeneral[float32](nil, blas64.General{Rows: 2, Cols: 3, Stride: 2, Data: make([]float64, 6)})
			return err
		}, "FromGeneral: a stride of 2, shorter than its 3 columns"},
		{"too little data", func() error {
			return cugonum.ToGeneral(blas64.General{Rows: 2, Cols: 3, Stride: 4, Data: make([]float64, 6)}, a23)
		}, "ToGeneral: 6 elements of data, too few for 2×3 with stride 4 (7 needed)"},
		{"negative rows", func() error {
			_, err := cugonum.FromGeneral32(nil, blas32.General{Rows: -1, Cols: 3, Stride: 3})
			return err
		}, "FromGeneral32: a negative dimension (-1×3)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			require.ErrorIs(t, err, cugonum.ErrShape)
			assert.ErrorContains(t, err, "cugonum: "+tc.want)
		})
	}
}

// BenchmarkUploadDense compares uploading a 1024×1024 mat.Dense with
// uploading the same values from a []float64 through cuarray: the
// contiguous case adds nothing, the view pays for one host pack.
func BenchmarkUploadDense(b *testing.B) {
	for _, tc := range []struct {
		name string
		m    *mat.Dense
	}{{"contiguous", dense(1024, 1024, false)}, {"view", dense(1024, 1024, true)}} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(1024 * 1024 * 8)
			for range b.N {
				a, err := cugonum.FromDense[float64](nil, tc.m)
				if err != nil {
					b.Fatal(err)
				}
				a.UnsafeFree()
			}
		})
	}
	b.Run("anchor: cuarray.FromSlice", func(b *testing.B) {
		d := seq(1024, 1024)
		b.SetBytes(1024 * 1024 * 8)
		for range b.N {
			a, err := cuarray.FromSlice(d, 1024, 1024)
			if err != nil {
				b.Fatal(err)
			}
			a.UnsafeFree()
		}
	})
}
