package kernels

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
)

func TestNNKernelNames(t *testing.T) {
	names := kernelNames()
	for _, want := range []string{
		"gocuda_addrowvec_f32", "gocuda_addrowvec_f64", "gocuda_sumcols_f32_pass1", "gocuda_sumcols_f32_pass2",
		"gocuda_sumcols_f64_pass1", "gocuda_sumcols_f64_pass2",
		"gocuda_softmaxxent_f32", "gocuda_softmaxxent_f64",
	} {
		assert.Contains(t, names, want)
	}
	assert.NotContains(t, names, "gocuda_softmaxxent_i32")
}

// SumCols' first pass fills one wave of the GPU (132 SMs x 8 blocks = 1056
// on an H100) with column tiles times runs of rows, within what the rows
// and the scratch allow.
func TestSumColsPlanFillsTheGPUWithinItsLimits(t *testing.T) {
	const sms, wave, all = 132, 132 * blocksPerSM, math.MaxInt
	cases := []struct {
		name              string
		rows, cols, bytes int
		grid              uint32
		chunks            int
	}{
		{"narrow batch: 32 tiles, 33 runs", 8192, 1024, all, 32 * 33, 33},
		{"last layer: one tile, runs of 64 rows", 8192, 10, all, 128, 128},
		{"wide: tiles fill the wave", 4096, 40000, all, wave, 1},
		{"wide but few tiles more than the wave", 4096, 32 * wave, all, wave, 1},
		{"short: too few rows to split", 100, 1024, all, 32, 1},
		{"scratch for 4 runs", 8192, 1024, 4 * 1024 * 8, 32 * 4, 4},
		{"scratch for less than 2 runs", 8192, 1024, 1024*8 + 8, 32, 1},
		{"no scratch", 8192, 1024, 0, 32, 1},
		{"no rows", 0, 10, all, 1, 1},
		{"columns that would overflow cols*8", 1 << 20, math.MaxInt / 4, all, wave, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			grid, chunks := sumColsPlan(c.rows, c.cols, sms, c.bytes)
			assert.Equal(t, c.grid, grid)
			assert.Equal(t, c.chunks, chunks)
			assert.LessOrEqual(t, int(grid), wave)
			if chunks > 1 {
				assert.GreaterOrEqual(t, c.rows/chunks, sumColsMinRows, "runs of at least sumColsMinRows rows")
				assert.LessOrEqual(t, chunks*c.cols*sumColsAccBytes, c.bytes, "partials fit the scratch")
			}
		})
	}
}

// A kernel the embedded PTX lacks (PTX older than kernels.cu) is an error
// that names the kernel and says how to regenerate the PTX, not a crash.
// gocuda_axpy_i32 is never in the PTX (Axpy takes the inexact types), so
// the test stays meaningful once the PTX is current. It needs a GPU: GOCUDA_BACKEND=cuda.
func TestMissingKernelGivesClearError(t *testing.T) {
	m, err := moduleFor(cudaDevice(t).Context())
	if errors.Is(err, ErrNoPTX) {
		t.Skip("the embedded PTX is the placeholder")
	}
	require.NoError(t, err)
	_, err = m.function(kernelID(kAxpy, Int32, 0))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "kernel gocuda_axpy_i32 is missing from the embedded kernels")
	assert.Contains(t, err.Error(), "scripts/gen-ptx.sh")
}

// SumCols takes ReduceAxes' column reduction where it reads 16-byte
// vectors (x aligned, whole vectors of columns), else sum_cols; its scratch
// hint covers whichever path runs.
func TestSumColsTakesTheColumnReductionForVectors(t *testing.T) {
	const sms = 132
	cases := []struct {
		name       string
		dt         DType
		x          uintptr
		rows, cols int
		byReduce   bool
	}{
		{"float32, aligned", Float32, 256, 4096, 4096, true},
		{"float64, aligned, odd rows", Float64, 256, 4097, 1026, true},
		{"one row", Float32, 0, 1, 8, true},
		{"float32 columns not whole vectors", Float32, 256, 4096, 1026, false},
		{"x off a 16-byte boundary", Float32, 260, 4096, 4096, false},
		{"no rows", Float32, 256, 0, 4096, false},
		{"one column: one output, sum_cols", Float32, 256, 7, 1, false},
		{"one element", Float64, 256, 1, 1, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, ok := sumColsByReduce(c.dt, backend.Ptr(c.x), c.rows, c.cols)
			assert.Equal(t, c.byReduce, ok)
			if !ok {
				return
			}
			assert.Equal(t, c.cols, p.nout)
			assert.Equal(t, c.rows, p.nred)
			l := p.launch(ReduceSum, c.dt, backend.Ptr(c.x), sms, sumColsScratchBytes(c.rows, c.cols, sms))
			full := p.launch(ReduceSum, c.dt, backend.Ptr(c.x), sms, math.MaxInt)
			assert.Equal(t, full, l, "SumColsScratch's bytes give the launch unlimited scratch would")
		})
	}
	// Every small shape plans without a panic (one column plans to no
	// output dimension at all: the H100 run of 13:31 panicked there).
	for rows := 0; rows <= 9; rows++ {
		for cols := 0; cols <= 9; cols++ {
			assert.NotPanics(t, func() { sumColsScratchBytes(rows, cols, sms) }, "%d x %d", rows, cols)
		}
	}
	// Columns that are not whole vectors take sum_cols, with its scratch.
	_, chunks := sumColsPlan(8192, 1026, sms, math.MaxInt)
	require.Greater(t, chunks, 1)
	assert.GreaterOrEqual(t, sumColsScratchBytes(8192, 1026, sms), chunks*1026*sumColsAccBytes)
}
