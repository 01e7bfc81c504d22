package kernels_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/kernels"
)

// Reductions down the columns of matrices of the shapes the cluster mode
// takes on an H100 (reduce_axes.go's colCluster: 1024 rows or more, strips
// of 8, 16 and 32 lanes, a part strip, a column slice of a wider matrix),
// against a loop. On a GPU of compute capability 9.0 they run the
// gocuda_<op>colc_* kernels; elsewhere the other modes, checked the same.
// The values are small integers, so sums are exact in any order, and one
// column holds a NaN, which every reduction propagates.
func TestColumnReductionsOfLongMatricesMatchALoop(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		name               string
		rows, cols, stride int
	}{
		{"1024 × 1028: strips of 8 lanes, the last one part full", 1024, 1028, 1028},
		{"1031 × 4100: strips of 32 lanes, rows not a multiple of 8", 1031, 4100, 4100},
		{"2048 × 2052: strips of 16 lanes", 2048, 2052, 2052},
		{"1500 × 2048 of a 4096-wide matrix: a column slice", 1500, 2048, 4096},
	}
	if testing.Short() {
		cases = cases[:1]
	}
	for _, c := range cases {
		t.Run(c.name+" float32", func(t *testing.T) { columnReductions[float32](t, e, c.rows, c.cols, c.stride) })
		t.Run(c.name+" float64", func(t *testing.T) { columnReductions[float64](t, e, c.rows, c.cols, c.stride) })
	}
}

func columnReductions[T float32 | float64](t *testing.T, e *env, rows, cols, stride int) {
	vals := make([]T, (rows-1)*stride+cols)
	for i := range vals {
		vals[i] = T(e.r.IntN(9) - 4)
	}
	nanCol := cols / 3
	vals[rows/2*stride+nanCol] = T(math.NaN())
	x := upload(t, e, vals, false)
	for _, op := range []kernels.ReduceOp{kernels.ReduceSum, kernels.ReduceMean, kernels.ReduceMax, kernels.ReduceMin} {
		want := make([]T, cols)
		for c := range cols {
			s, m := 0.0, float64(vals[c])
			for r := range rows {
				v := float64(vals[r*stride+c])
				s += v
				switch {
				case math.IsNaN(m) || math.IsNaN(v):
					m = math.NaN()
				case op == kernels.ReduceMax:
					m = max(m, v)
				case op == kernels.ReduceMin:
					m = min(m, v)
				}
			}
			switch op {
			case kernels.ReduceSum:
				want[c] = T(s)
			case kernels.ReduceMean:
				want[c] = T(s / float64(rows))
			default:
				want[c] = T(m)
			}
		}
		dst := alloc[T](t, e, cols, false)
		require.NoError(t, kernels.ReduceAxes[T](e.dev, e.s, op, dst.p, x.p, []int{rows, cols}, []int{stride, 1}, []int{0}, kernels.Scratch{}), "%s", op)
		got := dst.read(t)
		for c := range cols {
			g, w := float64(got[c]), float64(want[c])
			if !(g == w || math.IsNaN(g) && math.IsNaN(w)) {
				require.Failf(t, "wrong column", "%s of %d × %d (row stride %d), column %d: got %v, want %v", op, rows, cols, stride, c, g, w)
			}
		}
	}
}
