package cufft_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/cufft"
)

// tol bounds the relative error (2-norm over the whole array) of a float32
// FFT: float32's epsilon (1.2e-7) times log2 of the largest n here (about
// 7), with a margin of 10. The host backend, computing in float64 and
// rounding once, is near 6e-8; cuFFT's float32 arithmetic near 1e-7·log2 n.
const tol = 1e-5

// stream is a stream of the process's backend (the host backend here, the
// GPU under GOCUDA_BACKEND=cuda), closed when the test ends.
func stream(t *testing.T) *cuarray.Stream {
	t.Helper()
	s, err := cuarray.NewStream(0)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, s.Close()) })
	return s
}

// skipWithoutCUFFT skips a GPU test where cuFFT is not installed, with the
// loader's message; any other error fails.
func skipWithoutCUFFT(t *testing.T, err error) {
	t.Helper()
	if errors.Is(err, cufft.ErrNoCUFFT) {
		t.Skip(err.Error())
	}
}

// dft is the direct discrete Fourier transform in float64 of each of the
// batch planes of n0 × n1 in x (n0 = 1 for a 1-D transform), O((n0·n1)²):
// the reference. The inverse divides by n0·n1.
func dft(x []complex128, batch, n0, n1 int, inverse bool) []complex128 {
	sign, scale := -1.0, 1.0
	if inverse {
		sign, scale = 1, 1/float64(n0*n1)
	}
	out := make([]complex128, len(x))
	per := n0 * n1
	for b := range batch {
		for k0 := range n0 {
			for k1 := range n1 {
				var sum complex128
				for j0 := range n0 {
					for j1 := range n1 {
						// Reduced modulo n before dividing: exact angles.
						a := 2 * math.Pi * (float64(j0*k0%n0)/float64(n0) + float64(j1*k1%n1)/float64(n1))
						s, c := math.Sincos(sign * a)
						sum += x[b*per+j0*n1+j1] * complex(c, s)
					}
				}
				out[b*per+k0*n1+k1] = sum * complex(scale, 0)
			}
		}
	}
	return out
}

// halfOf keeps the first n1/2+1 of each row of n1: what a real transform
// stores.
func halfOf(x []complex128, n1 int) []complex128 {
	h := n1/2 + 1
	var out []complex128
	for r := 0; r < len(x); r += n1 {
		out = append(out, x[r:r+h]...)
	}
	return out
}

// relErr is ‖got − want‖₂ / ‖want‖₂.
func relErr[G complex64 | float32, W complex128 | float64](got []G, want []W) float64 {
	var diff, norm float64
	for i := range got {
		g, w := toC(got[i]), toC(want[i])
		d := g - w
		diff += real(d)*real(d) + imag(d)*imag(d)
		norm += real(w)*real(w) + imag(w)*imag(w)
	}
	if norm == 0 {
		return math.Sqrt(diff)
	}
	return math.Sqrt(diff / norm)
}

func toC[T complex64 | float32 | complex128 | float64](v T) complex128 {
	switch v := any(v).(type) {
	case complex64:
		return complex128(v)
	case float32:
		return complex(float64(v), 0)
	case complex128:
		return v
	case float64:
		return complex(v, 0)
	}
	panic("unreachable")
}

func randComplex(rng *rand.Rand, n int) ([]complex64, []complex128) {
	x, x64 := make([]complex64, n), make([]complex128, n)
	for i := range x {
		x[i] = complex(rng.Float32()*2-1, rng.Float32()*2-1)
		x64[i] = complex128(x[i])
	}
	return x, x64
}

func randReal(rng *rand.Rand, n int) ([]float32, []complex128) {
	x, x64 := make([]float32, n), make([]complex128, n)
	for i := range x {
		x[i] = rng.Float32()*2 - 1
		x64[i] = complex(float64(x[i]), 0)
	}
	return x, x64
}

func prod(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// dims splits shape into batch and the transformed n0 × n1.
func dims(shape []int, rank int) (batch, n0, n1 int) {
	lead := len(shape) - rank
	batch = prod(shape[:lead])
	if rank == 1 {
		return batch, 1, shape[lead]
	}
	return batch, shape[lead], shape[lead+1]
}

func withLast(shape []int, n int) []int {
	out := append([]int(nil), shape...)
	out[len(out)-1] = n
	return out
}

// Shapes of even, odd and prime sizes, 1 included, with one and two
// leading (batch) dimensions.
var shapes1D = [][]int{{1}, {2}, {3}, {7}, {16}, {17}, {100}, {128}, {3, 128}, {2, 3, 17}, {4, 1}}
var shapes2D = [][]int{{1, 1}, {2, 3}, {7, 16}, {17, 16}, {16, 17}, {3, 7, 5}, {2, 2, 8, 9}, {5, 1}}

// Every complex transform against the direct DFT, then its inverse back
// to the input (the inverse divided by n, as torch.fft's default).
func TestComplexTransformsMatchTheDirectDFT(t *testing.T) {
	s := stream(t)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		rank    int
		fwd     func(*cuarray.Stream, *cuarray.Array[complex64], *cuarray.Array[complex64]) error
		inv     func(*cuarray.Stream, *cuarray.Array[complex64], *cuarray.Array[complex64]) error
		name    string
		shapess [][]int
	}{
		{1, cufft.FFT, cufft.IFFT, "FFT", shapes1D},
		{2, cufft.FFT2, cufft.IFFT2, "FFT2", shapes2D},
	} {
		for _, shape := range tc.shapess {
			t.Run(fmt.Sprintf("%s%v", tc.name, shape), func(t *testing.T) {
				batch, n0, n1 := dims(shape, tc.rank)
				x, x64 := randComplex(rng, prod(shape))
				a := cuarray.Must(cuarray.On[complex64](s).FromSlice(x, shape...))
				y := cuarray.Must(cuarray.On[complex64](s).New(shape...))
				err := tc.fwd(s, y, a)
				skipWithoutCUFFT(t, err)
				require.NoError(t, err)
				got := cuarray.Must(y.ToSlice())
				want := dft(x64, batch, n0, n1, false)
				assert.LessOrEqual(t, relErr(got, want), tol, "forward")

				// The inverse of the exact spectrum is the input.
				spec := make([]complex64, len(want))
				for i, v := range want {
					spec[i] = complex64(v)
				}
				exact := cuarray.Must(cuarray.On[complex64](s).FromSlice(spec, shape...))
				back := cuarray.Must(cuarray.On[complex64](s).New(shape...))
				require.NoError(t, tc.inv(s, back, exact))
				assert.LessOrEqual(t, relErr(cuarray.Must(back.ToSlice()), x64), tol, "inverse")
				assert.LessOrEqual(t, relErr(cuarray.Must(back.ToSlice()), dft(want, batch, n0, n1, true)), tol, "inverse against the DFT")
			})
		}
	}
}

// Every real transform against the direct DFT: the forward's n/2+1
// frequencies of each row, and the inverse of the exact half spectrum,
// which is the input (the inverse divided by n).
func TestRealTransformsMatchTheDirectDFT(t *testing.T) {
	s := stream(t)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		rank    int
		fwd     func(*cuarray.Stream, *cuarray.Array[complex64], *cuarray.Array[float32]) error
		inv     func(*cuarray.Stream, *cuarray.Array[float32], *cuarray.Array[complex64]) error
		name    string
		shapess [][]int
	}{
		{1, cufft.RFFT, cufft.IRFFT, "RFFT", shapes1D},
		{2, cufft.RFFT2, cufft.IRFFT2, "RFFT2", shapes2D},
	} {
		for _, shape := range tc.shapess {
			t.Run(fmt.Sprintf("%s%v", tc.name, shape), func(t *testing.T) {
				batch, n0, n1 := dims(shape, tc.rank)
				half := withLast(shape, n1/2+1)
				x, x64 := randReal(rng, prod(shape))
				a := cuarray.Must(cuarray.On[float32](s).FromSlice(x, shape...))
				y := cuarray.Must(cuarray.On[complex64](s).New(half...))
				err := tc.fwd(s, y, a)
				skipWithoutCUFFT(t, err)
				require.NoError(t, err)
				want := halfOf(dft(x64, batch, n0, n1, false), n1)
				assert.LessOrEqual(t, relErr(cuarray.Must(y.ToSlice()), want), tol, "forward")

				spec := make([]complex64, len(want))
				for i, v := range want {
					spec[i] = complex64(v)
				}
				exact := cuarray.Must(cuarray.On[complex64](s).FromSlice(spec, half...))
				back := cuarray.Must(cuarray.On[float32](s).New(shape...))
				require.NoError(t, tc.inv(s, back, exact))
				assert.LessOrEqual(t, relErr(cuarray.Must(back.ToSlice()), x64), tol, "inverse")
				assert.Equal(t, spec, cuarray.Must(exact.ToSlice()), "the inverse leaves its input as it was")
			})
		}
	}
}

// A transform and its inverse give the input back, in place too.
func TestRoundTripsInPlace(t *testing.T) {
	s := stream(t)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		name     string
		shape    []int
		fwd, inv func(*cuarray.Stream, *cuarray.Array[complex64], *cuarray.Array[complex64]) error
	}{
		{"FFT 1000", []int{1000}, cufft.FFT, cufft.IFFT},
		{"FFT 4×257", []int{4, 257}, cufft.FFT, cufft.IFFT},
		{"FFT2 2×64×48", []int{2, 64, 48}, cufft.FFT2, cufft.IFFT2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, x64 := randComplex(rng, prod(tc.shape))
			a := cuarray.Must(cuarray.On[complex64](s).FromSlice(x, tc.shape...))
			err := tc.fwd(s, a, a)
			skipWithoutCUFFT(t, err)
			require.NoError(t, err)
			require.NoError(t, tc.inv(s, a, a))
			assert.LessOrEqual(t, relErr(cuarray.Must(a.ToSlice()), x64), tol)
		})
	}
}

// Bad arguments are an error naming the operation and both arrays'
// shapes, before anything is queued or allocated.
func TestBadArgumentsAreClearErrors(t *testing.T) {
	s := stream(t)
	c := func(shape ...int) *cuarray.Array[complex64] {
		return cuarray.Must(cuarray.On[complex64](s).Zeros(shape...))
	}
	r := func(shape ...int) *cuarray.Array[float32] {
		return cuarray.Must(cuarray.On[float32](s).Zeros(shape...))
	}
	whole := c(16)
	lo, hi := cuarray.Must(whole.View(0, 8)), cuarray.Must(whole.View(4, 8))
	freed := c(4)
	freed.UnsafeFree()
	type (
		cc = func(*cuarray.Stream, *cuarray.Array[complex64], *cuarray.Array[complex64]) error
		rc = func(*cuarray.Stream, *cuarray.Array[complex64], *cuarray.Array[float32]) error
		cr = func(*cuarray.Stream, *cuarray.Array[float32], *cuarray.Array[complex64]) error
	)
	// The calls' arrays are made here, with the table, so that what is
	// live before the calls can be compared with what is live after.
	c2c := func(f cc, d, x *cuarray.Array[complex64]) func() error { return func() error { return f(s, d, x) } }
	r2c := func(f rc, d *cuarray.Array[complex64], x *cuarray.Array[float32]) func() error {
		return func() error { return f(s, d, x) }
	}
	c2r := func(f cr, d *cuarray.Array[float32], x *cuarray.Array[complex64]) func() error {
		return func() error { return f(s, d, x) }
	}
	tests := []struct {
		name string
		call func() error
		want string
		is   error
	}{
		{"shapes differ", c2c(cufft.FFT, c(4), c(5)), "cufft: FFT: dst is complex64[4], src complex64[5]: the shapes differ", cuarray.ErrShape},
		{"n = 0", c2c(cufft.IFFT, c(0), c(0)), "cufft: IFFT: dst is complex64[0], src complex64[0]: transformed dimension 0 is n = 0; each must be at least 1", cuarray.ErrShape},
		{"n = 0 in a batch", r2c(cufft.RFFT, c(3, 1), r(3, 0)), "transformed dimension 1 is n = 0", cuarray.ErrShape},
		{"2-D of a vector", c2c(cufft.FFT2, c(8), c(8)), "FFT2 needs arrays of at least 2 dimensions", cuarray.ErrShape},
		{"a scalar", c2c(cufft.FFT, c(), c()), "FFT needs arrays of at least 1 dimensions", cuarray.ErrShape},
		{"dimensions differ in number", r2c(cufft.RFFT, c(5), r(1, 8)), "both of the same number", cuarray.ErrShape},
		{"batches differ", r2c(cufft.RFFT, c(3, 5), r(2, 8)), "dst is complex64[3 5], src float32[2 8]: the leading (batch) dimensions [3] and [2] differ", cuarray.ErrShape},
		{"real forward, wrong half", r2c(cufft.RFFT, c(4), r(8)), "cufft: RFFT: dst is complex64[4], src float32[8]: src's last dimension n = 8 gives n/2+1 = 5 frequencies: dst must be [5]", cuarray.ErrShape},
		{"real inverse, wrong n", c2r(cufft.IRFFT, r(2, 10), c(2, 5)), "cufft: IRFFT: dst is float32[2 10], src complex64[2 5]: dst's last dimension n = 10 needs n/2+1 = 6 frequencies: src must be [2 6]", cuarray.ErrShape},
		{"real inverse 2-D, rows differ", c2r(cufft.IRFFT2, r(4, 10), c(3, 6)), "cufft: IRFFT2: dst is float32[4 10], src complex64[3 6]: dst's last dimension n = 10 needs n/2+1 = 6 frequencies: src must be [4 6]", cuarray.ErrShape},
		{"nil", c2c(cufft.FFT, nil, c(4)), "cufft: FFT: dst is <nil array> and src complex64[4]: both must be arrays", backend.ErrInvalidValue},
		{"freed", c2c(cufft.FFT, c(4), freed), "cufft: FFT: src complex64[4] was freed", cuarray.ErrFreed},
		{"partial overlap", c2c(cufft.FFT, hi, lo), "cufft: FFT: dst complex64[8] shares part of src complex64[8]'s memory", cuarray.ErrShape},
	}
	require.NoError(t, s.Synchronize())
	live := s.Pool().Stats().Live
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			skipWithoutCUFFT(t, err)
			require.ErrorIs(t, err, tc.is)
			assert.ErrorContains(t, err, tc.want)
		})
	}
	require.NoError(t, s.Synchronize())
	assert.Equal(t, live, s.Pool().Stats().Live, "a failed call leaves no work area or copy allocated")
	assert.NoError(t, cufft.FFT(s, c(0, 8), c(0, 8)), "an empty batch transforms nothing")
}

// Real data at an odd float32 offset (a view) is not aligned as complex
// data, which cuFFT needs: the transform goes through an aligned copy and
// is as right as any other.
func TestRealDataAtAnOddOffset(t *testing.T) {
	s := stream(t)
	const n = 64
	rng := rand.New(rand.NewPCG(7, 8))
	x, x64 := randReal(rng, n)
	whole := cuarray.Must(cuarray.On[float32](s).FromSlice(append([]float32{42}, x...)))
	src := cuarray.Must(whole.View(1, n))
	spec := cuarray.Must(cuarray.On[complex64](s).New(n/2 + 1))
	err := cufft.RFFT(s, spec, src)
	skipWithoutCUFFT(t, err)
	require.NoError(t, err)
	want := halfOf(dft(x64, 1, 1, n, false), n)
	assert.LessOrEqual(t, relErr(cuarray.Must(spec.ToSlice()), want), tol, "forward from an odd offset")

	out := cuarray.Must(cuarray.On[float32](s).Zeros(n + 1))
	dst := cuarray.Must(out.View(1, n))
	require.NoError(t, cufft.IRFFT(s, dst, spec))
	got := cuarray.Must(out.ToSlice())
	assert.Zero(t, got[0], "the element before the view is left alone")
	assert.LessOrEqual(t, relErr(got[1:], x64), tol, "inverse into an odd offset")
}
