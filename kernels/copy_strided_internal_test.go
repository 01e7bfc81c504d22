package kernels

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPlanCopyFindsTranspositions: the layouts the tiled kernel runs, after
// sorting by dst's strides and merging, and those it does not.
func TestPlanCopyFindsTranspositions(t *testing.T) {
	cases := []struct {
		name          string
		shape, ds, ss []int
		want          transposeLayout
		ok            bool
	}{
		{"2-D", []int{3, 5}, []int{5, 1}, []int{1, 3}, transposeLayout{batch: 1, rows: 3, cols: 5, dRow: 5, sCol: 3}, true},
		{"permute (2 0 1) merges to 2-D", []int{4, 2, 3}, []int{6, 3, 1}, []int{1, 12, 4},
			transposeLayout{batch: 1, rows: 4, cols: 6, dRow: 6, sCol: 4}, true},
		{"batched", []int{2, 3, 5}, []int{15, 5, 1}, []int{15, 1, 3},
			transposeLayout{batch: 2, rows: 3, cols: 5, dBatch: 15, dRow: 5, sBatch: 15, sCol: 3}, true},
		{"scatter into a transposed dst is sorted into one", []int{5, 3}, []int{1, 5}, []int{3, 1},
			transposeLayout{batch: 1, rows: 3, cols: 5, dRow: 5, sCol: 3}, true},
		{"contiguous", []int{3, 5}, []int{5, 1}, []int{5, 1}, transposeLayout{}, false},
		{"stepped, not a transpose", []int{3, 5}, []int{5, 1}, []int{10, 2}, transposeLayout{}, false},
		{"4 dimensions left", []int{2, 3, 2, 3}, []int{18, 6, 3, 1}, []int{9, 1, 18, 3}, transposeLayout{}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, err := planCopy(c.shape, c.ds, c.ss)
			require.NoError(t, err)
			tr, ok := l.transpose()
			assert.Equal(t, c.ok, ok)
			assert.Equal(t, c.want, tr)
		})
	}
}
