package cuarray_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/cuarray"
)

// A freed array stays an error, names itself and keeps its device after
// UnsafeFree's buffer has been reused by later arrays; a view made before
// the free keeps the data.
func TestFreedAfterBufferReuse(t *testing.T) {
	f := cuarray.On[float32](newStream(t, freshPool(t)))
	a, err := f.FromSlice(iota[float32](6), 2, 3)
	require.NoError(t, err)
	dev := a.Device()
	v, err := a.View(1, 4)
	require.NoError(t, err)
	a.UnsafeFree()
	assert.Equal(t, []float32{1, 2, 3, 4}, read(t, v))
	v.UnsafeFree()
	for range 64 { // reuse the freed buffer (sync.Pool may drop some)
		b, err := f.Full(7, 3)
		require.NoError(t, err)
		assert.Equal(t, []float32{7, 7, 7}, read(t, b))
		b.UnsafeFree()
	}
	for _, x := range []*cuarray.Array[float32]{a, v} {
		assert.True(t, x.Freed())
		assert.Equal(t, dev, x.Device())
		_, err := x.ToSlice()
		require.True(t, errors.Is(err, cuarray.ErrFreed), "%v", err)
		assert.Contains(t, err.Error(), x.String())
		require.True(t, errors.Is(f.Fill(x, 1), cuarray.ErrFreed))
	}
	assert.Equal(t, "float32[2 3]", a.String())
	assert.Equal(t, "float32[4]", v.String())
}

// Shapes of more than 4 dimensions (stored out of line) survive New,
// Reshape and Slice.
func TestLongShape(t *testing.T) {
	f := cuarray.On[float32](newStream(t, freshPool(t)))
	a, err := f.FromSlice(iota[float32](64), 2, 2, 2, 2, 2, 2)
	require.NoError(t, err)
	assert.Equal(t, []int{2, 2, 2, 2, 2, 2}, a.Shape())
	assert.Equal(t, 6, a.Ndim())
	assert.Equal(t, "float32[2 2 2 2 2 2]", a.String())
	s, err := a.Slice(1, 2)
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2, 2, 2, 2, 2}, s.Shape())
	assert.Equal(t, iota[float32](64)[32:], read(t, s))
	r, err := s.Reshape(4, 8)
	require.NoError(t, err)
	assert.Equal(t, []int{4, 8}, r.Shape())
	sh := a.Shape()
	sh[0] = 99 // a copy
	assert.Equal(t, []int{2, 2, 2, 2, 2, 2}, a.Shape())
}
