package rtc_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/internal/testsupport/arraytest"
)

// The tests run on the backend gocuda picks (GOCUDA_BACKEND): the host
// backend here, the GPU with GOCUDA_BACKEND=cuda, with the pool strategy
// GOCUDA_MEMORY_POOL names.

// freshPool and newStream are arraytest's: a pool of the configured
// strategy that only this test uses, and a stream whose arrays come from it.
var (
	freshPool = arraytest.FreshPool
	newStream = arraytest.NewStream
)

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
