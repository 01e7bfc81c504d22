package cuarray_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/cuarray"
)

func TestAtAndSetAtReachEveryElementOfEveryShape(t *testing.T) {
	defer cuarray.SetScalarIndexing("allow")()
	for _, shape := range [][]int{{}, {1}, {7}, {3, 4}, {2, 3, 5}} {
		n := 1
		for _, d := range shape {
			n *= d
		}
		data := make([]float64, n)
		for i := range data {
			data[i] = float64(i) + 0.5
		}
		a, err := cuarray.FromSlice(data, n) // then the shape: FromSlice's empty shape means 1-D
		require.NoError(t, err)
		a, err = a.Reshape(shape...)
		require.NoError(t, err)
		// Every index, row-major: element k of the flat data.
		idx := make([]int, len(shape))
		for k := range n {
			v, err := a.At(idx...)
			require.NoError(t, err)
			assert.Equal(t, data[k], v, "%v at %v", a, idx)
			require.NoError(t, a.SetAt(-v, idx...))
			for d := len(idx) - 1; d >= 0; d-- { // next index
				if idx[d]++; idx[d] < shape[d] {
					break
				}
				idx[d] = 0
			}
		}
		got, err := a.ToSlice()
		require.NoError(t, err)
		for k := range got {
			assert.Equal(t, -data[k], got[k], "SetAt of element %d of %v", k, a)
		}
	}
}

func TestSetAtIsOrderedAfterQueuedWork(t *testing.T) {
	defer cuarray.SetScalarIndexing("allow")()
	s, err := cuarray.NewStream(0)
	require.NoError(t, err)
	defer s.Close()
	f := cuarray.On[float32](s)
	a, err := f.Full(1, 1<<20)
	require.NoError(t, err)
	require.NoError(t, errOf(f.Scale(a, 3, a))) // queued on s; SetAt runs on the default stream after it
	require.NoError(t, a.SetAt(7, 5))
	got, err := a.ToSlice()
	require.NoError(t, err)
	assert.Equal(t, float32(3), got[4])
	assert.Equal(t, float32(7), got[5], "SetAt lost to the Scale queued before it")
	v, err := a.At(5)
	require.NoError(t, err)
	assert.Equal(t, float32(7), v)
}

func TestScalarIndexingErrorsOnBadIndicesAndWhenForbidden(t *testing.T) {
	defer cuarray.SetScalarIndexing("allow")()
	a, err := cuarray.Zeros[int32](2, 3)
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		idx  []int
		want string
	}{
		{"too few indices", []int{1}, "At[1] of int32[2 3]: 1 indices for 2 dimensions"},
		{"too many indices", []int{1, 2, 0}, "At[1 2 0] of int32[2 3]: 3 indices for 2 dimensions"},
		{"past the end", []int{2, 0}, "At[2 0] of int32[2 3]: index 2 of dimension 0 is out of range [0, 2)"},
		{"negative", []int{0, -1}, "At[0 -1] of int32[2 3]: index -1 of dimension 1 is out of range [0, 3)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := a.At(tc.idx...)
			require.ErrorIs(t, err, cuarray.ErrShape)
			assert.ErrorContains(t, err, "cuarray: "+tc.want)
		})
	}

	restore := cuarray.SetScalarIndexing("error")
	_, err = a.At(0, 0)
	require.ErrorIs(t, err, cuarray.ErrScalarIndexing)
	assert.ErrorContains(t, err, "read many elements with ToSlice or CopyTo, or set GOCUDA_SCALAR_INDEXING=allow")
	err = a.SetAt(1, 0, 0)
	require.ErrorIs(t, err, cuarray.ErrScalarIndexing)
	restore()

	a.UnsafeFree()
	_, err = a.At(0, 0)
	require.ErrorIs(t, err, cuarray.ErrFreed)
}

func TestScalarIndexingWarnsOncePerCallSite(t *testing.T) {
	defer cuarray.SetScalarIndexing("warn")()
	var log bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&log, nil)))
	defer slog.SetDefault(prev)

	a, err := cuarray.FromSlice([]float32{1, 2, 3})
	require.NoError(t, err)
	for i := range 3 {
		_, err := a.At(i) // one site, three calls
		require.NoError(t, err)
	}
	require.NoError(t, a.SetAt(9, 0)) // another site
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	require.Len(t, lines, 2, "one warning per call site:\n%s", log.String())
	assert.Contains(t, lines[0], "scalar_test.go:")
	assert.Contains(t, lines[0], "GOCUDA_SCALAR_INDEXING=allow silences this")
}
