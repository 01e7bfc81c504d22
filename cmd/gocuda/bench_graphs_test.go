package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda"
)

// The chain's line, in graphs.py's format, after the backend and device.
func TestBenchGraphsPrintsTheAnchorsLine(t *testing.T) {
	b, err := gocuda.Backend()
	require.NoError(t, err)
	code, stdout, stderr := runCLI(t, "bench", "graphs", "--steps", "30", "--iters", "3")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "backend "+b.Name()+", device 0: ")
	assert.Regexp(t, `\nchain 30 ops x 4096 floats: eager +\d+\.\d us/step  graph +\d+\.\d us/step  eager/graph +\d+\.\d\d  \(\d+\.\d\d vs \d+\.\d\d us/op; 50 operations a step\)\n$`, stdout)
}

func TestBenchGraphsRejectsBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--steps", "0"}, "--steps 0 --iters 200: give positive counts"},
		{[]string{"extra"}, `bench graphs takes no arguments, got ["extra"]`},
	} {
		code, _, stderr := runCLI(t, append([]string{"bench", "graphs"}, c.args...)...)
		assert.Equal(t, 2, code, c.args)
		assert.Contains(t, stderr, c.want)
	}
}
