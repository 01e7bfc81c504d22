package kernels_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/kernels"
)

// The small elementwise operations are launch-bound: on a GPU their path
// (checks, module and kernel lookup, cuda.Stream.LaunchWords) must not
// allocate, since an allocation a launch is garbage the collector pays
// for a few microseconds later (issue 28). The host backend queues a Go
// closure instead, which allocates by design.
func TestElementwiseLaunchesAllocateNothingOnGPU(t *testing.T) {
	e := newEnv(t)
	if e.dev.Info().Major == 0 {
		t.Skip("the host backend queues a closure per operation; run with GOCUDA_BACKEND=cuda on a GPU")
	}
	const n = 4096
	x, y := alloc[float32](t, e, n, false), alloc[float32](t, e, n, false)
	for _, c := range []struct {
		name string
		op   func() error
	}{
		{"Add", func() error { return kernels.Add[float32](e.dev, e.s, y.p, x.p, y.p, n) }},
		{"AddScalar", func() error { return kernels.AddScalar(e.dev, e.s, y.p, y.p, float32(1), n) }},
		{"Fill", func() error { return kernels.Fill(e.dev, e.s, x.p, float32(0.5), n) }},
		{"Axpy", func() error { return kernels.Axpy(e.dev, e.s, float32(2), x.p, y.p, n) }},
		{"Exp (generated)", func() error { return kernels.Exp[float32](e.dev, e.s, y.p, x.p, n) }},
		{"SumRows", func() error { return kernels.SumRows[float32](e.dev, e.s, y.p, x.p, 64, 64) }},
	} {
		require.NoError(t, c.op(), c.name) // loads the module and the kernel
		allocs := testing.AllocsPerRun(100, func() {
			if err := c.op(); err != nil {
				t.Fatal(err)
			}
		})
		assert.Zero(t, allocs, "%s: allocations a launch", c.name)
	}
	require.NoError(t, e.s.Synchronize())
}
