package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/blas"
)

// A row per case, each product checked (a product of ones is n), and
// --json writes the rows with each case's iterations: what
// bench/torch_mm.py --go-json reads. TF32 is as it was afterwards.
func TestBenchGemmPrintsATableAndWritesJSON(t *testing.T) {
	b, err := gocuda.Backend()
	require.NoError(t, err)
	tf32 := blas.TF32()
	out := filepath.Join(t.TempDir(), "gemm.json")
	code, stdout, stderr := runCLI(t, "bench", "gemm", "--cases", "bf16:16,f16:9,tf32:8,f32:7,bf16:3x5,f32:2x4", "--iters", "2", "--repeats", "3", "--json", out)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, tf32, blas.TF32(), "the tf32 case puts the setting back")
	assert.Contains(t, stdout, "backend "+b.Name()+", device 0: ")
	assert.Contains(t, stdout, "median of 3; TFLOP/s counts 2·batch·n³")
	assert.Regexp(t, `\n +type +batch +n +iters +ms +TFLOP/s\n`, stdout)
	for _, row := range []string{`bf16 +1 +16`, `f16 +1 +9`, `tf32 +1 +8`, `f32 +1 +7`, `bf16 +3 +5`, `f32 +2 +4`} {
		assert.Regexp(t, `\n +`+row+` +2 +\d+\.\d{4} +\d+\.\d\d\n`, stdout)
	}
	buf, err := os.ReadFile(out)
	require.NoError(t, err)
	var rep gemmReport
	require.NoError(t, json.Unmarshal(buf, &rep))
	assert.Equal(t, b.Name(), rep.Backend)
	assert.Equal(t, 3, rep.Repeats)
	require.Len(t, rep.Rows, 6)
	assert.Equal(t, gemmRow{Case: "bf16:3x5", Type: "bf16", Batch: 3, N: 5, Iters: 2}, gemmRow{Case: rep.Rows[4].Case, Type: rep.Rows[4].Type,
		Batch: rep.Rows[4].Batch, N: rep.Rows[4].N, Iters: rep.Rows[4].Iters})
	for _, r := range rep.Rows {
		assert.Positive(t, r.Seconds)
		assert.InDelta(t, 2*float64(r.Batch)*float64(r.N*r.N*r.N)/r.Seconds/1e12, r.TFLOPS, 1e-9*r.TFLOPS)
	}
}

func TestBenchGemmPicksIterationsBySize(t *testing.T) {
	rows, err := parseGemmCases(gemmCases)
	require.NoError(t, err)
	require.Len(t, rows, 5)
	assert.Equal(t, gemmRow{Case: "bf16:64x512", Type: "bf16", Batch: 64, N: 512}, rows[4])
	// About 2e13 flops a repeat: 18 products of 8192³, 145 of 4096³.
	assert.Equal(t, 18, int(min(2000, max(3, 2e13/rows[0].flops()))))
	assert.Equal(t, 145, int(min(2000, max(3, 2e13/rows[2].flops()))))
}

func TestBenchGemmRejectsBadCases(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--cases", "bf16"}, `--cases "bf16": give TYPE:N or TYPE:BATCHxN, TYPE one of f32, tf32, f16, bf16`},
		{[]string{"--cases", "fp8:64"}, `--cases "fp8:64": give TYPE:N`},
		{[]string{"--cases", "f16:0"}, `--cases "f16:0": "0" is not a size from 1 to 1048576`},
		{[]string{"--cases", "f16:2x3x4"}, `"2x3x4" has more than two sizes`},
		{[]string{"--repeats", "0"}, "--iters 0 --repeats 0: give a positive count of repeats"},
		{[]string{"extra"}, `bench gemm takes no arguments, got ["extra"]`},
	} {
		code, _, stderr := runCLI(t, append([]string{"bench", "gemm"}, c.args...)...)
		assert.Equal(t, 2, code, c.args)
		assert.Contains(t, stderr, c.want, c.args)
		assert.Contains(t, stderr, "gocuda bench gemm --help", c.args)
	}
}
