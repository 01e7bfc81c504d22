package kernels

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The layout a strided operation is simplified to, and the GPU mode it
// takes: broadcasting a row or a column must reach the fast paths however
// many dimensions of 1 the shapes carry.
func TestPlanStridedSimplifiesAndPicksTheFastPaths(t *testing.T) {
	cases := []struct {
		name          string
		shape, sa, sb []int
		want          []int // simplified shape
		mode          int   // -1: general or contiguous
		rows, cols    int
		contiguous    bool
	}{
		{"same shape", []int{4, 5, 6}, []int{30, 6, 1}, []int{30, 6, 1}, []int{120}, -1, 0, 0, true},
		{"row", []int{4096, 4096}, []int{4096, 1}, []int{0, 1}, []int{4096, 4096}, stridedRow, 4096, 4096, false},
		{"row, dims of 1", []int{1, 8, 1, 16}, []int{0, 16, 0, 1}, []int{0, 0, 5, 1}, []int{8, 16}, stridedRow, 8, 16, false},
		{"row under two outer dims", []int{3, 4, 16}, []int{64, 16, 1}, []int{0, 0, 1}, []int{12, 16}, stridedRow, 12, 16, false},
		{"column", []int{8, 16}, []int{16, 1}, []int{1, 0}, []int{8, 16}, stridedCol, 8, 16, false},
		{"row is a", []int{8, 16}, []int{0, 1}, []int{16, 1}, []int{8, 16}, stridedRow | stridedSwap, 8, 16, false},
		{"column is a", []int{8, 16}, []int{1, 0}, []int{16, 1}, []int{8, 16}, stridedCol | stridedSwap, 8, 16, false},
		{"one value", []int{2, 3}, []int{3, 1}, []int{0, 0}, []int{6}, stridedCol, 1, 6, false},
		{"one value is a", []int{2, 3}, []int{0, 0}, []int{3, 1}, []int{6}, stridedCol | stridedSwap, 1, 6, false},
		{"a single element", []int{1, 1}, []int{9, 9}, []int{0, 0}, nil, -1, 0, 0, true},
		{"outer product", []int{5, 7}, []int{0, 1}, []int{1, 0}, []int{5, 7}, -1, 0, 0, false},
		{"middle broadcast", []int{2, 3, 4}, []int{12, 4, 1}, []int{4, 0, 1}, []int{2, 3, 4}, -1, 0, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, err := planStrided(c.shape, c.sa, c.sb)
			require.NoError(t, err)
			assert.Equal(t, c.want, l.shape)
			assert.Equal(t, c.contiguous, l.contiguous())
			mode, rows, cols := l.rowCol()
			assert.Equal(t, c.mode, mode)
			assert.Equal(t, c.rows, rows)
			assert.Equal(t, c.cols, cols)
		})
	}
}

func TestPlanStridedExtents(t *testing.T) {
	l, err := planStrided([]int{3, 4, 5}, []int{0, 5, 1}, []int{20, 0, 0})
	require.NoError(t, err)
	assert.Equal(t, 60, l.n)
	assert.Equal(t, 20, l.extentA)
	assert.Equal(t, 41, l.extentB)
	l, err = planStrided([]int{3, 0, 5}, []int{0, 5, 1}, []int{20, 0, 0})
	require.NoError(t, err)
	assert.Zero(t, l.n)
}

func TestStridedKernelNames(t *testing.T) {
	names := kernelNames()
	for _, want := range []string{"gocuda_add_strided_f32", "gocuda_div_strided_u8", "gocuda_mul_strided_c64", "gocuda_sub_strided_i64"} {
		assert.Contains(t, names, want)
	}
	assert.Equal(t, "gocuda_sub_strided_f64", kernelName(stridedKop(kSub), Float64, 0))
}
