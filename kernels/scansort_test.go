package kernels_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/kernels"
)

// Results are checked against references in cuarray's tests (every op,
// type and shape); here the kernels' own argument checks, and a strided
// scan and a top-k through the raw API.

func TestScanAndSortRejectBadArguments(t *testing.T) {
	e := newEnv(t)
	x := upload(t, e, []float32{1, 2, 3, 4, 5, 6}, false)
	dst := alloc[float32](t, e, 6, false)
	idx := alloc[int64](t, e, 6, false)
	cases := []struct {
		name   string
		err    error
		target error
		want   []string
	}{
		{"unknown scan", kernels.Scan[float32](e.dev, e.s, dst.p, x.p, kernels.ScanOp(7), 1, 6, 1, kernels.Scratch{}),
			backend.ErrInvalidValue, []string{"ScanOp(7)", "Cumsum, Cumprod, Cummax, Cummin"}},
		{"negative dimension", kernels.Scan[float32](e.dev, e.s, dst.p, x.p, kernels.CumSum, 1, -6, 1, kernels.Scratch{}),
			backend.ErrInvalidValue, []string{"Cumsum float32", "[1 -6 1]", "negative"}},
		{"complex scan", kernels.Scan[complex64](e.dev, e.s, dst.p, x.p, kernels.CumMax, 1, 3, 1, kernels.Scratch{}),
			kernels.ErrUnsupportedDType, []string{"Cummax", "complex64"}},
		{"nil dst", kernels.Sort[float32](e.dev, e.s, 0, x.p, 2, 3, false, kernels.Scratch{}),
			backend.ErrInvalidValue, []string{"Sort float32", "dst", "nil"}},
		{"misaligned indices", kernels.Argsort[float32](e.dev, e.s, idx.p+4, x.p, 2, 3, false, kernels.Scratch{}),
			backend.ErrInvalidValue, []string{"Argsort float32", "8-byte aligned"}},
		{"k past the row", kernels.TopK[float32](e.dev, e.s, dst.p, idx.p, x.p, 2, 3, 4, true, kernels.Scratch{}),
			backend.ErrInvalidValue, []string{"TopK float32", "k = 4", "[0, 3]"}},
		{"misaligned scratch", kernels.Sort[float32](e.dev, e.s, dst.p, x.p, 2, 3, false, kernels.Scratch{Ptr: 3, Bytes: 8}),
			backend.ErrInvalidValue, []string{"scratch", "8-byte aligned"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Error(t, c.err)
			assert.ErrorIs(t, c.err, c.target)
			for _, w := range c.want {
				assert.Contains(t, c.err.Error(), w)
			}
		})
	}
}

func TestScanDownAStridedAxisAndTopKThroughTheRawAPI(t *testing.T) {
	e := newEnv(t)
	// 2 × 3 × 2, scanned along the middle axis.
	x := upload(t, e, []int32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, false)
	dst := alloc[int32](t, e, 12, false)
	sc := kernels.ScanScratch(e.dev, 2, 3, 2)
	var scratch kernels.Scratch
	if sc > 0 {
		p, err := e.dev.Alloc(uint64(sc))
		require.NoError(t, err)
		t.Cleanup(func() { assert.NoError(t, e.s.Synchronize()); assert.NoError(t, e.dev.Free(p)) })
		scratch = kernels.Scratch{Ptr: p, Bytes: sc}
	}
	require.NoError(t, kernels.Scan[int32](e.dev, e.s, dst.p, x.p, kernels.CumSum, 2, 3, 2, scratch))
	assert.Equal(t, []int32{1, 2, 4, 6, 9, 12, 7, 8, 16, 18, 27, 30}, dst.read(t))

	f := upload(t, e, []float64{0.5, -2, 9, 9, 1, -7}, false)
	vals := alloc[float64](t, e, 4, false)
	idx := alloc[int64](t, e, 4, false)
	require.NoError(t, kernels.TopK[float64](e.dev, e.s, vals.p, idx.p, f.p, 2, 3, 2, false, kernels.Scratch{}))
	assert.Equal(t, []float64{-2, 0.5, -7, 1}, vals.read(t))
	assert.Equal(t, []int64{1, 0, 2, 1}, idx.read(t))
}
