package cuarray_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/kernels"
)

// Rand and Randn make arrays of the shape asked, uniform in (0, 1] and
// standard normal; FillRandn gives the mean and deviation asked, and a
// view's fill stays inside the view.
func TestRandomArrays(t *testing.T) {
	u := cuarray.Must(cuarray.Rand[float32](300, 200))
	assert.Equal(t, []int{300, 200}, u.Shape())
	xs := read(t, u)
	var sum float64
	for _, x := range xs {
		require.True(t, x > 0 && x <= 1, "%v is outside (0, 1]", x)
		sum += float64(x)
	}
	assert.InDelta(t, 0.5, sum/float64(len(xs)), 0.01)

	z := cuarray.Must(cuarray.Randn[float64](100_001))
	mean, sd := meanSD(read(t, z))
	assert.InDelta(t, 0, mean, 0.02)
	assert.InDelta(t, 1, sd, 0.02)

	whole := cuarray.Must(cuarray.Full[float64](-7, 1001))
	view := cuarray.Must(whole.View(1, 999)) // an odd count, at an odd element
	require.NoError(t, cuarray.FillRandn(view, 10, 0.5))
	all := read(t, whole)
	assert.Equal(t, -7.0, all[0], "before the view")
	assert.Equal(t, -7.0, all[1000], "after the view")
	mean, sd = meanSD(all[1:1000])
	assert.InDelta(t, 10, mean, 0.1)
	assert.InDelta(t, 0.5, sd, 0.1)

	s := newStream(t, freshPool(t))
	f := cuarray.On[float32](s)
	a := cuarray.Must(f.Randn(17))
	require.NoError(t, f.FillRand(a))
	for _, x := range read(t, a) {
		require.True(t, x > 0 && x <= 1, "%v is outside (0, 1]", x)
	}
}

// Seed makes the random arrays the same in every run; without it, or with
// another seed, they differ.
func TestSeedReproducesRandomArrays(t *testing.T) {
	draw := func(seed uint64) ([]float32, []float64) {
		require.NoError(t, cuarray.Seed(0, seed))
		return read(t, cuarray.Must(cuarray.Rand[float32](1000))), read(t, cuarray.Must(cuarray.Randn[float64](33)))
	}
	a1, a2 := draw(5)
	b1, b2 := draw(5)
	c1, _ := draw(6)
	assert.Equal(t, a1, b1)
	assert.Equal(t, a2, b2)
	assert.NotEqual(t, a1, c1)
}

func TestRandomArraysTakeOnlyFloats(t *testing.T) {
	_, err := cuarray.Rand[int32](4)
	require.ErrorIs(t, err, kernels.ErrUnsupportedDType)
	assert.ErrorContains(t, err, "cuarray: Rand does not take int32; it takes float32, float64")
	a := cuarray.Must(cuarray.Zeros[complex64](4))
	require.ErrorIs(t, cuarray.FillRandn(a, 0, 1), kernels.ErrUnsupportedDType)
	b := cuarray.Must(cuarray.Zeros[float32](4))
	err = cuarray.FillRandn(b, 0, -1)
	require.Error(t, err)
	assert.ErrorContains(t, err, "the deviation at least 0")
	require.Error(t, cuarray.Seed(-1, 1))
}

func meanSD[T float32 | float64](xs []T) (mean, sd float64) {
	for _, x := range xs {
		mean += float64(x)
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		sd += (float64(x) - mean) * (float64(x) - mean)
	}
	return mean, math.Sqrt(sd / float64(len(xs)-1))
}
