package curand_test

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/curand"
	"github.com/gocuda/gocuda/pool/pooltest"
)

// alloc gives n bytes of device memory, filled with 0xFF (NaN as floats)
// so that an element left unwritten shows, freed when the test ends.
func alloc(t *testing.T, dev backend.Device, s backend.Stream, n uint64) backend.Ptr {
	t.Helper()
	p, err := dev.Alloc(n)
	require.NoError(t, err)
	t.Cleanup(func() {
		// The fill below, or a generation, may still be queued: free
		// only once the stream has run it.
		assert.NoError(t, s.Synchronize())
		assert.NoError(t, dev.Free(p))
	})
	pooltest.Write(t, dev, p, bytes.Repeat([]byte{0xFF}, int(n)), s)
	return p
}

// read reads n elements of T back.
func read[T curand.Float](t *testing.T, dev backend.Device, s backend.Stream, p backend.Ptr, n int) []float64 {
	t.Helper()
	var zero T
	size := int(binary.Size(zero))
	raw := pooltest.Read(t, dev, p, uint64(n*size), s)
	out := make([]float64, n)
	for i := range out {
		if size == 4 {
			out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])))
		} else {
			out[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
		}
	}
	return out
}

func moments(xs []float64) (mean, variance float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / float64(len(xs)-1)
}

func newGenerator(t *testing.T, dev backend.Device, seed uint64) *curand.Generator {
	t.Helper()
	g, err := curand.New(dev, seed)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, g.Close()) })
	return g
}

// Uniform numbers lie in (0, 1] with the uniform distribution's mean and
// variance; normal ones have the mean and deviation asked for, odd counts
// and a single element included; every element is written.
func TestDistributions(t *testing.T) {
	dev := pooltest.Device(t)
	s := pooltest.NewStream(t, dev)
	g := newGenerator(t, dev, 7)
	const n = 200_001 // odd: cuRAND makes normal numbers in pairs
	for _, tc := range []struct {
		name     string
		f64      bool
		normal   bool
		n        int
		mean, sd float64
	}{
		{"uniform float32", false, false, n, 0.5, math.Sqrt(1.0 / 12)},
		{"uniform float64", true, false, n, 0.5, math.Sqrt(1.0 / 12)},
		{"normal float32, odd count", false, true, n, 3, 2},
		{"normal float64, odd count", true, true, n, -1, 0.5},
		{"normal float32, one", false, true, 1, 0, 1},
		{"normal float64, two", true, true, 2, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			size := uint64(4)
			if tc.f64 {
				size = 8
			}
			// One element more than asked: it must stay untouched.
			p := alloc(t, dev, s, uint64(tc.n+1)*size)
			var xs []float64
			if tc.f64 {
				if tc.normal {
					require.NoError(t, curand.Normal[float64](g, s, p, tc.n, tc.mean, tc.sd))
				} else {
					require.NoError(t, curand.Uniform[float64](g, s, p, tc.n))
				}
				xs = read[float64](t, dev, s, p, tc.n+1)
			} else {
				if tc.normal {
					require.NoError(t, curand.Normal[float32](g, s, p, tc.n, float32(tc.mean), float32(tc.sd)))
				} else {
					require.NoError(t, curand.Uniform[float32](g, s, p, tc.n))
				}
				xs = read[float32](t, dev, s, p, tc.n+1)
			}
			assert.True(t, math.IsNaN(xs[tc.n]), "the element after the last was written")
			xs = xs[:tc.n]
			for i, x := range xs {
				require.False(t, math.IsNaN(x) || math.IsInf(x, 0), "element %d is %v", i, x)
				if !tc.normal {
					require.True(t, x > 0 && x <= 1, "element %d = %v is outside (0, 1]", i, x)
				}
			}
			if tc.n < 1000 {
				return
			}
			mean, variance := moments(xs)
			// Five standard errors: a false failure in millions of runs.
			se := tc.sd / math.Sqrt(float64(tc.n))
			assert.InDelta(t, tc.mean, mean, 5*se, "mean")
			assert.InDelta(t, tc.sd*tc.sd, variance, 0.02*tc.sd*tc.sd, "variance")
		})
	}
}

// A seed and a series of calls give the same numbers; another seed, or
// the next call, others.
func TestSeedsReproduce(t *testing.T) {
	dev := pooltest.Device(t)
	s := pooltest.NewStream(t, dev)
	const n = 1001
	draw := func(seed uint64, calls int) [][]float64 {
		g := newGenerator(t, dev, seed)
		var out [][]float64
		for range calls {
			p := alloc(t, dev, s, 4*n)
			require.NoError(t, curand.Normal[float32](g, s, p, n, 0, 1))
			out = append(out, read[float32](t, dev, s, p, n))
		}
		return out
	}
	a, b, c := draw(42, 2), draw(42, 2), draw(43, 1)
	assert.Equal(t, a, b, "one seed, one series of calls: the same numbers")
	assert.NotEqual(t, a[0], a[1], "the next call continues the sequence")
	assert.NotEqual(t, a[0], c[0], "another seed")
	assert.Equal(t, uint64(42), newGenerator(t, dev, 42).Seed())
}

func TestBadArgumentsAreClearErrors(t *testing.T) {
	dev := pooltest.Device(t)
	s := pooltest.NewStream(t, dev)
	g := newGenerator(t, dev, 1)
	p := alloc(t, dev, s, 64)
	closed, err := curand.New(dev, 1)
	require.NoError(t, err)
	require.NoError(t, closed.Close())
	require.NoError(t, closed.Close(), "Close again does nothing")
	for _, tc := range []struct {
		name string
		call func() error
		want string
		is   error
	}{
		{"negative count", func() error { return curand.Uniform[float32](g, s, p, -1) }, "n = -1 is negative", backend.ErrInvalidValue},
		{"nil pointer", func() error { return curand.Uniform[float64](g, s, 0, 4) }, "pointer is nil", backend.ErrInvalidValue},
		{"misaligned", func() error { return curand.Normal[float64](g, s, p+4, 2, 0, 1) }, "is not 8-byte aligned, as float64 elements must be", backend.ErrInvalidValue},
		{"negative deviation", func() error { return curand.Normal[float32](g, s, p, 2, 0, -1) }, "the deviation at least 0", backend.ErrInvalidValue},
		{"NaN mean", func() error { return curand.Normal(g, s, p, 2, math.NaN(), 1) }, "must be finite", backend.ErrInvalidValue},
		{"nil generator", func() error { return curand.Uniform[float32](nil, s, p, 2) }, "nil Generator", backend.ErrInvalidValue},
		{"nil stream", func() error { return curand.Uniform[float32](g, nil, p, 2) }, "nil device or stream", backend.ErrInvalidValue},
		{"closed", func() error { return curand.Uniform[float32](closed, s, p, 2) }, "the generator was closed", curand.ErrClosed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			require.ErrorIs(t, err, tc.is)
			assert.ErrorContains(t, err, tc.want)
			assert.Contains(t, err.Error(), "curand: ")
		})
	}
	_, err = curand.New(nil, 1)
	require.ErrorIs(t, err, backend.ErrNotSupported)
	require.NoError(t, curand.Uniform[float32](g, s, 0, 0), "nothing to make: no pointer needed")
}
