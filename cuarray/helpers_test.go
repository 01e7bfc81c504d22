package cuarray_test

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
	case int8:
		return any(int8(i)).(T)
	case int16:
		return any(int16(i)).(T)
	case uint32:
		return any(uint32(i)).(T)
	case complex64:
		return any(complex(float32(i), 0)).(T)
	case bool:
		return any(i%3 == 1).(T) // a pattern a transposition moves
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

// number is cuarray.Elem less bool: the types with arithmetic.
type number interface {
	float32 | float64 | int32 | int64 | uint8 | complex64 | int8 | int16 | uint32
}

// errOf is the error of an operation's (result, error), for calls into a
// dst whose result the test does not look at.
func errOf[T any](_ T, err error) error { return err }
