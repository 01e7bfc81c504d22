package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda"
)

// Each case prints arrays.py's name for it, its time and its bandwidth
// from arrays.py's byte count; --match picks cases.
func TestBenchArraysPrintsArraysPysLines(t *testing.T) {
	b, err := gocuda.Backend()
	require.NoError(t, err)
	code, stdout, stderr := runCLI(t, "bench", "arrays", "--match", "copy", "--iters", "1", "--repeats", "1")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "backend "+b.Name()+", device 0: ")
	assert.Contains(t, stdout, "1 calls between two timing events, median of 1")
	assert.Regexp(t, `\ncopy 4096x4096 f32 \(read\+write\) +\d+\.\d us +\d+\.\d GB/s\n`, stdout)
	assert.NotContains(t, stdout, "exp 4096x4096")
}

func TestBenchArraysRejectsBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--iters", "0"}, "--iters 0 --repeats 5: give positive counts"},
		{[]string{"--match", "no such case"}, `--match "no such case" matches no case`},
		{[]string{"extra"}, `bench arrays takes no arguments, got ["extra"]`},
	} {
		code, _, stderr := runCLI(t, append([]string{"bench", "arrays"}, c.args...)...)
		assert.Equal(t, 2, code, c.args)
		assert.Contains(t, stderr, c.want, c.args)
	}
}
