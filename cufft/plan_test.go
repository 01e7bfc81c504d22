package cufft

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/internal/devstream"
)

// gpuStream is a stream of the process's backend when it is the GPU
// (GOCUDA_BACKEND=cuda), with cuFFT loaded and no plan cached; the test
// skips elsewhere, or where cuFFT is absent, with the reason.
func gpuStream(t *testing.T) *cuarray.Stream {
	t.Helper()
	b, err := gocuda.Backend()
	require.NoError(t, err)
	if b.Name() != "cuda" {
		t.Skipf("the process's backend is %s; plans are cuFFT's (GOCUDA_BACKEND=cuda)", b.Name())
	}
	if _, err := library.Load(); errors.Is(err, ErrNoCUFFT) {
		t.Skip(err.Error())
	}
	require.NoError(t, ClearPlans())
	s, err := cuarray.NewStream(0)
	require.NoError(t, err)
	t.Cleanup(func() {
		assert.NoError(t, s.Close())
		assert.NoError(t, ClearPlans())
	})
	return s
}

// One plan per (device, kind, sizes, batch), made on first use and reused.
func TestPlansAreCachedPerShapeAndKind(t *testing.T) {
	s := gpuStream(t)
	c := func(shape ...int) *cuarray.Array[complex64] {
		return cuarray.Must(cuarray.On[complex64](s).Zeros(shape...))
	}
	r := func(shape ...int) *cuarray.Array[float32] {
		return cuarray.Must(cuarray.On[float32](s).Zeros(shape...))
	}
	a, b := c(4, 64), c(4, 64)
	require.NoError(t, FFT(s, b, a))
	require.NoError(t, IFFT(s, a, b)) // the same plan: C2C either way
	assert.Equal(t, 1, cachedPlans())
	require.NoError(t, FFT(s, c(64), c(64)))
	assert.Equal(t, 2, cachedPlans(), "another batch, another plan")
	require.NoError(t, RFFT(s, c(4, 33), r(4, 64)))
	require.NoError(t, IRFFT(s, r(4, 64), c(4, 33)))
	assert.Equal(t, 4, cachedPlans(), "R2C and C2R")
	require.NoError(t, FFT2(s, c(8, 8), c(8, 8)))
	assert.Equal(t, 5, cachedPlans())
	require.NoError(t, s.Synchronize())
	require.NoError(t, ClearPlans())
	assert.Zero(t, cachedPlans())
	require.NoError(t, FFT(s, b, a), "a plan is made again after ClearPlans")
}

// Past MaxPlans the least recently used plan goes; transforms stay right.
func TestTheCacheKeepsAtMostMaxPlans(t *testing.T) {
	s := gpuStream(t)
	for n := 1; n <= MaxPlans+8; n++ {
		x := cuarray.Must(cuarray.On[complex64](s).Full(1, n))
		y := cuarray.Must(cuarray.On[complex64](s).New(n))
		require.NoError(t, FFT(s, y, x))
		got := cuarray.Must(y.ToSlice())
		assert.InDelta(t, float64(n), real(got[0]), 1e-3*float64(n), "n = %d: the sum of n ones", n)
	}
	assert.LessOrEqual(t, cachedPlans(), MaxPlans)
}

// A plan's work area comes from the stream's pool for each call, and goes
// back to it after: pool limits and statistics count it. A prime size
// (Bluestein's algorithm) needs one.
func TestTheWorkAreaComesFromThePool(t *testing.T) {
	s := gpuStream(t)
	const n = 10007
	x := cuarray.Must(cuarray.On[complex64](s).Full(1, 2, n))
	y := cuarray.Must(cuarray.On[complex64](s).New(2, n))
	require.NoError(t, FFT(s, y, x)) // makes the plan
	require.NoError(t, s.Synchronize())
	p, err := getPlan(planKey{dev: gpuOf(t, s), kind: c2c, rank: 1, n: [2]int{n, 1}, batch: 2})
	require.NoError(t, err)
	p.release()
	t.Logf("plan for %s: work area %d bytes", p.key, p.work)
	before := s.Pool().Stats()
	require.NoError(t, FFT(s, y, x))
	require.NoError(t, s.Synchronize())
	after := s.Pool().Stats()
	if p.work > 0 {
		assert.Equal(t, before.Allocs+1, after.Allocs, "one allocation: the work area")
	}
	assert.Equal(t, before.Live, after.Live, "and it is freed")
}

func gpuOf(t *testing.T, s *cuarray.Stream) devstream.GPU {
	t.Helper()
	g, ok := s.Device().(devstream.GPU)
	require.True(t, ok)
	return g
}
