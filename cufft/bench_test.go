package cufft_test

import (
	"fmt"
	"testing"

	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/cufft"
)

// benchCases are the transforms timed here, by `gocuda bench fft` and by
// bench/torch_fft.py (torch.fft.fft, ifft, fft2, rfft, irfft with out=):
// sizes where an H100 is busy for tens of microseconds or more, so that
// the figure is the library's, not the call's.
var benchCases = []struct {
	op    string
	shape []int // the real side's for rfft and irfft
}{
	{"fft", []int{1 << 20}},
	{"fft", []int{1024, 1024}}, // 1-D, batched
	{"ifft", []int{1 << 20}},   // with the division by n
	{"fft2", []int{4096, 4096}},
	{"rfft", []int{1 << 24}},
	{"irfft", []int{1 << 24}}, // with the copy of its input, and the division
}

// newCase makes the arrays of one case on s and returns its transform.
func newCase(s *cuarray.Stream, op string, shape []int) (func() error, int64) {
	c := func(shape ...int) *cuarray.Array[complex64] {
		return cuarray.Must(cuarray.On[complex64](s).Zeros(shape...))
	}
	r := func(shape ...int) *cuarray.Array[float32] {
		return cuarray.Must(cuarray.On[float32](s).Zeros(shape...))
	}
	half := append(append([]int(nil), shape[:len(shape)-1]...), shape[len(shape)-1]/2+1)
	n := int64(1)
	for _, d := range shape {
		n *= int64(d)
	}
	nh := n / int64(shape[len(shape)-1]) * int64(half[len(half)-1])
	switch op {
	case "fft", "ifft", "fft2":
		x, y := c(shape...), c(shape...)
		f := map[string]func(*cuarray.Stream, *cuarray.Array[complex64], *cuarray.Array[complex64]) error{
			"fft": cufft.FFT, "ifft": cufft.IFFT, "fft2": cufft.FFT2}[op]
		return func() error { return f(s, y, x) }, 16 * n
	case "rfft":
		x, y := r(shape...), c(half...)
		return func() error { return cufft.RFFT(s, y, x) }, 4*n + 8*nh
	case "irfft":
		x, y := c(half...), r(shape...)
		return func() error { return cufft.IRFFT(s, y, x) }, 8*nh + 4*n
	}
	panic("no case " + op)
}

// BenchmarkTransforms queues each case's transform back to back on device
// 0's default stream and synchronizes once at the end, inside the timing,
// as BenchmarkGemm does; the bytes are one read of the input and one write
// of the output (GB/s = 1e9 bytes). On the host backend (gonum) the large
// cases take seconds, and only run without -short.
func BenchmarkTransforms(b *testing.B) {
	for _, bc := range benchCases {
		b.Run(fmt.Sprintf("%s/%v", bc.op, bc.shape), func(b *testing.B) {
			s, err := cuarray.DefaultStream(0)
			if err != nil {
				b.Fatal(err)
			}
			if testing.Short() && s.Device().Info().Major == 0 {
				b.Skip("host backend: gonum takes seconds at these sizes; run without -short")
			}
			run, bytes := newCase(s, bc.op, bc.shape)
			// Warm up: cuFFT's plan, the work area in the pool.
			if err := run(); err != nil {
				b.Fatal(err)
			}
			if err := s.Synchronize(); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(bytes)
			b.ResetTimer()
			for range b.N {
				if err := run(); err != nil {
					b.Fatal(err)
				}
			}
			if err := s.Synchronize(); err != nil {
				b.Fatal(err)
			}
		})
	}
}
