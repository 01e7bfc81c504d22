package main

import (
	"fmt"
	"unsafe"

	"gonum.org/v1/gonum/dsp/fourier"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/cudabackend"
	"github.com/gocuda/gocuda/backend/host"
	"github.com/gocuda/gocuda/cuarray"
)

// fft sets dst to the discrete Fourier transforms of src, taken as rows of
// n elements (src.Len() a multiple of n; dst the same length, and may be
// src): X[k] = Σ x[j]·exp(-2πi·jk/n), or with inverse the same sum with
// +2πi. Neither is scaled, so a forward then an inverse transform
// multiplies by n, as in cuFFT and gonum.
//
// It runs on stream s and returns without waiting, like a cuarray
// operation, with the same guarantees: through WithPointers the transform
// waits for whatever work on any stream last wrote src or still uses dst,
// neither array is freed under it, and later uses of either wait for it.
func fft(s *cuarray.Stream, dst, src *cuarray.Array[complex64], n int, inverse bool) error {
	if n <= 0 || src.Len() == 0 || src.Len()%n != 0 || dst.Len() != src.Len() {
		return fmt.Errorf("fft: src has %d elements and dst %d; both need the same, a positive multiple of n = %d",
			src.Len(), dst.Len(), n)
	}
	batch := src.Len() / n
	return cuarray.WithPointers(s, func(bs backend.Stream, p []backend.Ptr) error {
		// p[0] is dst's address, p[1] src's, in the order of the Args below.
		// Whatever runs here queues its work on bs and keeps no address.
		switch bs := bs.(type) {
		case *cudabackend.Stream:
			return cudaFFT(bs, p[0], p[1], n, batch, inverse)
		case *host.Stream:
			return hostFFT(bs, p[0], p[1], n, batch, inverse)
		}
		return fmt.Errorf("fft: no FFT for streams of type %T", bs)
	}, cuarray.Out(dst), cuarray.In(src))
}

// hostFFT queues the transforms on the host stream bs, with gonum's FFT on
// the arrays' memory, which on the host backend is ordinary host memory.
func hostFFT(bs *host.Stream, dst, src backend.Ptr, n, batch int, inverse bool) error {
	return bs.Enqueue(func() {
		in, out := hostSlice(src, n*batch), hostSlice(dst, n*batch)
		t := fourier.NewCmplxFFT(n) // not safe for concurrent use: one per call
		row := make([]complex128, n)
		for b := range batch {
			for j, v := range in[b*n : (b+1)*n] {
				row[j] = complex128(v)
			}
			if inverse {
				t.Sequence(row, row)
			} else {
				t.Coefficients(row, row)
			}
			for j, v := range row {
				out[b*n+j] = complex64(v)
			}
		}
	})
}

// hostSlice is the n complex64 at host backend address p. That memory is
// outside the Go heap; reading p's bits as a pointer (rather than
// converting a uintptr) keeps vet's unsafe.Pointer check quiet for this
// deliberate conversion.
func hostSlice(p backend.Ptr, n int) []complex64 {
	return unsafe.Slice((*complex64)(*(*unsafe.Pointer)(unsafe.Pointer(&p))), n)
}

// library names the FFT that runs on s's backend.
func library(s *cuarray.Stream) (string, error) {
	if _, ok := s.Backend().(*cudabackend.Stream); !ok {
		return "gonum.org/v1/gonum/dsp/fourier", nil
	}
	if err := loadCUFFT(); err != nil {
		return "", err
	}
	return fmt.Sprintf("cuFFT %d (%s)", lib.version, lib.path), nil
}
