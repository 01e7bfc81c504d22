package cufft

import (
	"unsafe"

	"gonum.org/v1/gonum/dsp/fourier"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/internal/devstream"
)

// hostTransform queues sp on s's host stream: gonum's FFTs (FFTPACK) over
// the arrays' memory, computed in float64 and complex128 and rounded to
// float32 once at the end, scaled by 1/n in the same pass for an inverse.
func hostTransform[In, Out cuarray.Elem](sp spec, sh shape, host devstream.Host, s *cuarray.Stream, dst *cuarray.Array[Out], src *cuarray.Array[In]) error {
	dBytes, sBytes := bytesOf(dst), bytesOf(src)
	return cuarray.WithPointers(s, func(bs backend.Stream, ptrs []backend.Ptr) error {
		on, err := devstream.Resolve(host, bs)
		if err != nil {
			return err
		}
		if sp.kind == c2c && overlap(ptrs[0], ptrs[1], dBytes, sBytes) {
			return overlapError(sp, dst, src)
		}
		out, in := ptrs[0], ptrs[1]
		return on.HostStream.Enqueue(func() { hostRun(sp, sh, out, in) })
	}, cuarray.Out(dst), cuarray.In(src))
}

// hostRun transforms every batch of in into out. It runs on the host
// stream's goroutine, in stream order; gonum's transforms are made here,
// one set per call, as they are not safe for concurrent use.
func hostRun(sp spec, sh shape, out, in backend.Ptr) {
	n0, n1 := sh.n[0], sh.n[1]
	if sp.rank == 1 {
		n0, n1 = 1, sh.n[0] // a row of n: one 1 × n plane, no column pass
	}
	h1 := n1/2 + 1 // the complex side's last dimension, for r2c and c2r
	scale := 1.0
	if sp.inverse {
		scale = 1 / float64(n0*n1)
	}
	rows, cols := fourier.NewCmplxFFT(n1), fourier.NewCmplxFFT(n0)
	var rfft *fourier.FFT
	if sp.kind != c2c {
		rfft = fourier.NewFFT(n1)
	}
	w := n1 // the width of the complex plane
	if sp.kind != c2c {
		w = h1
	}
	plane := make([]complex128, n0*w)
	col := make([]complex128, n0)
	// columns runs the n0-long transforms down each column of plane.
	columns := func(inverse bool) {
		if n0 == 1 {
			return
		}
		for c := range w {
			for r := range n0 {
				col[r] = plane[r*w+c]
			}
			if inverse {
				cols.Sequence(col, col)
			} else {
				cols.Coefficients(col, col)
			}
			for r := range n0 {
				plane[r*w+c] = col[r]
			}
		}
	}
	per := n0 * n1 // real or c2c elements per batch
	for b := range sh.batch {
		switch sp.kind {
		case c2c:
			x, y := complexes(in, b*per, per), complexes(out, b*per, per)
			for i, v := range x {
				plane[i] = complex128(v)
			}
			for r := range n0 {
				row := plane[r*n1 : (r+1)*n1]
				if sp.inverse {
					rows.Sequence(row, row)
				} else {
					rows.Coefficients(row, row)
				}
			}
			columns(sp.inverse)
			for i, v := range plane {
				y[i] = complex64(v * complex(scale, 0))
			}
		case r2c:
			x, y := floats(in, b*per, per), complexes(out, b*n0*h1, n0*h1)
			seq := make([]float64, n1)
			for r := range n0 {
				for j, v := range x[r*n1 : (r+1)*n1] {
					seq[j] = float64(v)
				}
				rfft.Coefficients(plane[r*h1:(r+1)*h1], seq)
			}
			columns(false)
			for i, v := range plane {
				y[i] = complex64(v)
			}
		case c2r:
			x, y := complexes(in, b*n0*h1, n0*h1), floats(out, b*per, per)
			for i, v := range x {
				plane[i] = complex128(v)
			}
			columns(true)
			seq := make([]float64, n1)
			for r := range n0 {
				rfft.Sequence(seq, plane[r*h1:(r+1)*h1])
				for j, v := range seq {
					y[r*n1+j] = float32(v * scale)
				}
			}
		}
	}
}

// complexes and floats are n elements from element off at host-backend
// address p. The memory is mapped from the OS, outside the Go heap, so the
// collector never looks at it; reading p's bits as a pointer (rather than
// converting a uintptr) keeps vet's check quiet for this deliberate
// conversion, as kernels, blas and curand do.
func complexes(p backend.Ptr, off, n int) []complex64 {
	return unsafe.Slice((*complex64)(*(*unsafe.Pointer)(unsafe.Pointer(&p))), off+n)[off:]
}

func floats(p backend.Ptr, off, n int) []float32 {
	return unsafe.Slice((*float32)(*(*unsafe.Pointer)(unsafe.Pointer(&p))), off+n)[off:]
}
