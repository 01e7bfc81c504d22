package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda"
)

// A row per case, and --json writes the same rows with the bytes each
// moves: what bench/torch_fft.py --go-json reads.
func TestBenchFFTPrintsATableAndWritesJSON(t *testing.T) {
	b, err := gocuda.Backend()
	require.NoError(t, err)
	out := filepath.Join(t.TempDir(), "fft.json")
	code, stdout, stderr := runCLI(t, "bench", "fft", "--cases", "fft:256,fft2:8x16,ifft:4x64,rfft:100,irfft:3x33", "--iters", "2", "--repeats", "3", "--json", out)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "backend "+b.Name()+", device 0: ")
	assert.Contains(t, stdout, "2 transforms then one synchronization, median of 3")
	assert.Regexp(t, `\n +op +shape +µs +GB/s\n`, stdout)
	for _, row := range []string{`fft +256`, `fft2 +8x16`, `ifft +4x64`, `rfft +100`, `irfft +3x33`} {
		assert.Regexp(t, `\n +`+row+` +\d+\.\d +\d+\.\d\n`, stdout)
	}
	buf, err := os.ReadFile(out)
	require.NoError(t, err)
	var rep fftReport
	require.NoError(t, json.Unmarshal(buf, &rep))
	assert.Equal(t, b.Name(), rep.Backend)
	assert.Equal(t, []int{2, 3}, []int{rep.Iters, rep.Repeats})
	require.Len(t, rep.Rows, 5)
	// One read of the input and one write of the output: complex64 is 8
	// bytes, float32 4, and a real transform's complex side n/2+1 long.
	assert.Equal(t, []int64{16 * 256, 16 * 128, 16 * 256, 4*100 + 8*51, 8*3*17 + 4*3*33},
		[]int64{rep.Rows[0].Bytes, rep.Rows[1].Bytes, rep.Rows[2].Bytes, rep.Rows[3].Bytes, rep.Rows[4].Bytes})
	assert.Equal(t, []int{3, 33}, rep.Rows[4].Shape)
	for _, r := range rep.Rows {
		assert.Positive(t, r.Seconds)
		assert.InDelta(t, float64(r.Bytes)/r.Seconds/1e9, r.GBps, 1e-9*r.GBps)
	}
}

func TestBenchFFTRejectsBadCases(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--cases", "fft"}, `--cases "fft": give OP:SHAPE, OP one of fft, ifft, fft2, rfft, irfft`},
		{[]string{"--cases", "dct:64"}, `--cases "dct:64": give OP:SHAPE`},
		{[]string{"--cases", "fft:0"}, `--cases "fft:0": "0" is not a positive size`},
		{[]string{"--cases", "fft2:64"}, "fft2 transforms the last two dimensions"},
		{[]string{"--iters", "0"}, "--iters 0 --repeats 5: give positive counts"},
		{[]string{"extra"}, `bench fft takes no arguments, got ["extra"]`},
	} {
		code, _, stderr := runCLI(t, append([]string{"bench", "fft"}, c.args...)...)
		assert.Equal(t, 2, code, c.args)
		assert.Contains(t, stderr, c.want, c.args)
		assert.Contains(t, stderr, "gocuda bench fft --help", c.args)
	}
}
