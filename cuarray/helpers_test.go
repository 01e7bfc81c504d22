package cuarray_test

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
// this test uses, so that its Stats count this test's work alone.
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

func iota[T cuarray.Elem](n int) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = num[T](i % 100)
	}
	return out
}

// num converts a small int to T (complex64 with a zero imaginary part).
func num[T cuarray.Elem](i int) T {
	var z T
	switch any(z).(type) {
	case float32:
		return any(float32(i)).(T)
	case float64:
		return any(float64(i)).(T)
	case int32:
		return any(int32(i)).(T)
	case int64:
		return any(int64(i)).(T)
	case uint8:
		return any(uint8(i)).(T)
	case complex64:
		return any(complex(float32(i), 0)).(T)
	}
	panic("unreachable")
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
