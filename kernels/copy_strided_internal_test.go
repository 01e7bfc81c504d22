package kernels

import (
	"testing"

	"github.com/gocuda/gocuda/backend"

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

// TestTransposeGridIsABlockATile: 64×64 tiles (32×32 for 16-byte
// elements), edge tiles counted, batches multiplied, capped where blocks
// loop.
func TestTransposeGridIsABlockATile(t *testing.T) {
	cases := []struct {
		name string
		size int
		tr   transposeLayout
		grid uint32
	}{
		{"float32 4096²", 4, transposeLayout{batch: 1, rows: 4096, cols: 4096}, 64 * 64},
		{"uint8 4096²", 1, transposeLayout{batch: 1, rows: 4096, cols: 4096}, 64 * 64},
		{"float64 odd edges", 8, transposeLayout{batch: 1, rows: 65, cols: 129}, 2 * 3},
		{"batched", 2, transposeLayout{batch: 3, rows: 5, cols: 7}, 3},
		{"16-byte elements take 32-tiles", 16, transposeLayout{batch: 1, rows: 64, cols: 33}, 2 * 2},
		{"capped", 4, transposeLayout{batch: 1 << 20, rows: 100, cols: 100}, maxTransposeBlocks},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.grid, transposeGrid(c.size, c.tr))
		})
	}
}

// TestEachOuterVisitsEveryOuterIndex: a layout of more dimensions than a
// launch takes runs once for each index of the outer ones, with their
// offsets in a contiguous dst and through each operand's strides.
func TestEachOuterVisitsEveryOuterIndex(t *testing.T) {
	// 8 dimensions of 2 whose strides never merge: 2 outer dimensions.
	shape := []int{2, 2, 2, 2, 2, 2, 2, 2}
	sa := []int{1000, 300, 100, 30, 10, 3, 1 << 10, 1}
	sb := []int{1, 5, 25, 125, 625, 3125, 15625, 78125}
	l, err := planStrided(shape, sa, sb)
	require.NoError(t, err)
	require.Len(t, l.shape, 8)
	type call struct{ off, oa, ob int }
	var got []call
	require.NoError(t, l.eachOuter(func(in stridedInner, off, oa, ob int) error {
		assert.Equal(t, 64, in.n)
		assert.Equal(t, shape[2:], in.shape)
		got = append(got, call{off, oa, ob})
		return nil
	}))
	assert.Equal(t, []call{{0, 0, 0}, {64, 300, 5}, {128, 1000, 1}, {192, 1300, 6}}, got)
	// An error stops the walk.
	n := 0
	err = l.eachOuter(func(stridedInner, int, int, int) error { n++; return backend.ErrInvalidValue })
	assert.ErrorIs(t, err, backend.ErrInvalidValue)
	assert.Equal(t, 1, n)
}
