package cuarray_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/half"
)

// Reductions of float16 and bfloat16 arrays run in float32 and round once:
// small integers keep every sum exact, so the results are the plain-Go
// sums to the bit, on a contiguous array and on its transpose.
func TestHalfReductionsAccumulateInFloat32(t *testing.T) {
	const rows, cols = 5, 7
	vals := make([]float32, rows*cols)
	for i := range vals {
		vals[i] = float32(i%9 - 4)
	}
	vals[17] = 30 // the unique maximum: row 2, column 3
	colSum := make([]float32, cols)
	rowMax := make([]float32, rows)
	rowArg := make([]int64, rows)
	for r := range rows {
		rowMax[r] = vals[r*cols]
		for c := range cols {
			v := vals[r*cols+c]
			colSum[c] += v
			if v > rowMax[r] {
				rowMax[r], rowArg[r] = v, int64(c)
			}
		}
	}
	t.Run("bfloat16", func(t *testing.T) { testHalfReductions(t, bf16s(vals), rows, cols, colSum, rowMax, rowArg) })
	t.Run("float16", func(t *testing.T) { testHalfReductions(t, f16s(vals), rows, cols, colSum, rowMax, rowArg) })
}

func testHalfReductions[H half.Float16 | half.BFloat16](t *testing.T, data []H, rows, cols int, colSum, rowMax []float32, rowArg []int64) {
	x := cuarray.Must(cuarray.FromSlice(data, rows, cols))
	widen := func(a *cuarray.Array[H]) []float32 {
		f, err := cuarray.Convert[float32](nil, nil, a)
		require.NoError(t, err)
		return cuarray.Must(f.ToSlice())
	}

	s, err := cuarray.SumAxes(nil, x, []int{0}, false)
	require.NoError(t, err)
	assert.Equal(t, colSum, widen(s), "SumAxes down the columns")

	xt := cuarray.Must(x.Transpose()) // cols × rows view: the same sums along its rows
	st, err := cuarray.SumAxes(nil, xt, []int{1}, true)
	require.NoError(t, err)
	assert.Equal(t, []int{cols, 1}, st.Shape())
	assert.Equal(t, colSum, widen(st), "SumAxes of the transpose")

	m, err := cuarray.MaxAxes(nil, x, []int{1}, false)
	require.NoError(t, err)
	assert.Equal(t, rowMax, widen(m))

	am, err := cuarray.ArgMaxAxes(nil, x, []int{1}, false)
	require.NoError(t, err)
	assert.Equal(t, rowArg, cuarray.Must(am.ToSlice()))

	mean, err := cuarray.MeanAxes(nil, x, []int{0}, false)
	require.NoError(t, err)
	for i, v := range widen(mean) {
		assert.InDelta(t, colSum[i]/float32(rows), v, 0.02, "mean of column %d", i)
	}

	anyNZ, err := cuarray.AnyAxes(nil, x, []int{0, 1}, false)
	require.NoError(t, err)
	assert.Equal(t, []bool{true}, cuarray.Must(anyNZ.ToSlice()))

	// A dst of the wrong shape is refused, and nothing is written.
	bad := cuarray.Must(cuarray.Zeros[H](3))
	_, err = cuarray.SumAxes(bad, x, []int{0}, false)
	require.Error(t, err)
}
