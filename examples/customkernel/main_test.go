package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/nvrtc"
)

// TestExampleRuns runs the example on this machine's backend: the Go form
// and the evaluated expression here, the CUDA code with GOCUDA_BACKEND=cuda (skipped on a GPU without
// NVRTC, which compiles it). run checks the results against Go itself.
func TestExampleRuns(t *testing.T) {
	b, err := gocuda.Backend()
	require.NoError(t, err)
	if b.Name() == "cuda" {
		if _, err := nvrtc.Library(); err != nil {
			t.Skipf("the GPU has no NVRTC to compile the kernels: %v", err)
		}
	}
	var out strings.Builder
	require.NoError(t, run(&out))
	t.Log("\n" + out.String())
	assert.Contains(t, out.String(), "backend: "+b.Name())
	assert.Contains(t, out.String(), "clamp_scale: y[0] = -0.5, y[500] = 0, y[1000] = 1;")
	assert.Contains(t, out.String(), "softplus beta=1: y(-10) = 4.54e-05, y(0) = 0.6931, y(10) = 10")
	assert.Contains(t, out.String(), "softplus beta=4: y(-10) = 1.06e-18, y(0) = 0.1733, y(10) = 10")
}
