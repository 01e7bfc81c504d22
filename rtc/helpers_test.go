package rtc_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/pool"
)

// The tests run on the backend gocuda picks (GOCUDA_BACKEND): the host
// backend here, the GPU with GOCUDA_BACKEND=cuda, with the pool strategy
// GOCUDA_MEMORY_POOL names.

// freshPool makes a pool of the configured strategy on device 0 that only
// this test uses.
func freshPool(t testing.TB) pool.Pool {
	t.Helper()
	c, err := gocuda.Config()
	require.NoError(t, err)
	dev, err := gocuda.Device(0)
	require.NoError(t, err)
	p, err := pool.New(c.Pool, dev, gocuda.LimitsFor(c, dev))
	require.NoError(t, err)
	return p
}

// newStream makes a stream on device 0 whose arrays come from p.
func newStream(t testing.TB, p pool.Pool) *cuarray.Stream {
	t.Helper()
	s, err := cuarray.NewStreamPool(p)
	require.NoError(t, err)
	return s
}

// iota is 0, 1, 2, ... (modulo 100) as T.
func iota[T float32 | float64 | int32 | int64 | uint8](n int) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = T(i % 100)
	}
	return out
}

func filled[T cuarray.Elem](n int, v T) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func read[T cuarray.Elem](t testing.TB, a *cuarray.Array[T]) []T {
	t.Helper()
	out, err := a.ToSlice()
	require.NoError(t, err)
	return out
}
