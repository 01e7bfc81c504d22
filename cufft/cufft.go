package cufft

import (
	"fmt"
	"slices"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/internal/devstream"
)

// FFT sets dst to the discrete Fourier transform of src along its last
// dimension, for every index of the leading ones (a batch):
// X[k] = Σⱼ x[j]·exp(−2πi·jk/n). dst has src's shape, and may be src itself
// (in place), but may not otherwise share its memory.
func FFT(s *cuarray.Stream, dst, src *cuarray.Array[complex64]) error {
	return transform(spec{"FFT", c2c, 1, false}, s, dst, src)
}

// IFFT is FFT's inverse: x[j] = (1/n)·Σₖ X[k]·exp(+2πi·jk/n), divided by n
// as torch.fft.ifft's default ("backward") normalisation is.
func IFFT(s *cuarray.Stream, dst, src *cuarray.Array[complex64]) error {
	return transform(spec{"IFFT", c2c, 1, true}, s, dst, src)
}

// RFFT is FFT of a real src: dst holds the n/2+1 non-negative frequencies
// of each row of n (the others are their complex conjugates), so dst's
// last dimension is src's n/2+1 and the leading ones are src's.
func RFFT(s *cuarray.Stream, dst *cuarray.Array[complex64], src *cuarray.Array[float32]) error {
	return transform(spec{"RFFT", r2c, 1, false}, s, dst, src)
}

// IRFFT is RFFT's inverse: from the n/2+1 non-negative frequencies in src
// it sets the n real values of each row of dst, divided by n. dst's last
// dimension says n (both n = 2m and 2m+1 have m+1 frequencies), and src's
// must be n/2+1. src is taken as the half of a Hermitian spectrum, as
// RFFT makes it: the imaginary parts of its zero frequency and, for even
// n, of its n/2 term are ignored on the host backend and undefined in
// cuFFT, as in torch.fft.irfft. src is not modified (cuFFT overwrites its
// input; the GPU path transforms a copy, as PyTorch does).
func IRFFT(s *cuarray.Stream, dst *cuarray.Array[float32], src *cuarray.Array[complex64]) error {
	return transform(spec{"IRFFT", c2r, 1, true}, s, dst, src)
}

// FFT2 is the 2-D FFT over src's last two dimensions (n0 × n1), for every
// index of the leading ones: X[k0,k1] = Σ x[j0,j1]·exp(−2πi·(j0k0/n0 +
// j1k1/n1)). dst has src's shape, and may be src itself.
func FFT2(s *cuarray.Stream, dst, src *cuarray.Array[complex64]) error {
	return transform(spec{"FFT2", c2c, 2, false}, s, dst, src)
}

// IFFT2 is FFT2's inverse, divided by n0·n1.
func IFFT2(s *cuarray.Stream, dst, src *cuarray.Array[complex64]) error {
	return transform(spec{"IFFT2", c2c, 2, true}, s, dst, src)
}

// RFFT2 is FFT2 of a real src of n0 × n1: dst is n0 × (n1/2+1), the last
// dimension halved as in RFFT.
func RFFT2(s *cuarray.Stream, dst *cuarray.Array[complex64], src *cuarray.Array[float32]) error {
	return transform(spec{"RFFT2", r2c, 2, false}, s, dst, src)
}

// IRFFT2 is RFFT2's inverse: src is n0 × (n1/2+1), dst n0 × n1, divided by
// n0·n1, with IRFFT's rules for the last dimension.
func IRFFT2(s *cuarray.Stream, dst *cuarray.Array[float32], src *cuarray.Array[complex64]) error {
	return transform(spec{"IRFFT2", c2r, 2, true}, s, dst, src)
}

// kind is a transform's cufftType (cufft.h's values).
type kind int

const (
	c2c kind = 0x29 // complex64 to complex64
	r2c kind = 0x2a // float32 to complex64
	c2r kind = 0x2c // complex64 to float32
)

// spec is one of the eight operations.
type spec struct {
	op      string
	kind    kind
	rank    int  // transformed dimensions: the last 1 or 2
	inverse bool // scaled by 1/n, and exp(+2πi…)
}

// shape is what a call transforms: the logical sizes of the transformed
// dimensions (the real side's for r2c and c2r) and how many of them.
type shape struct {
	n     [2]int // n[1] is 1 for rank 1
	batch int
}

// elems is the product of the logical sizes: the n the inverse divides by.
func (sh shape) elems() int { return sh.n[0] * sh.n[1] }

// array is what transform needs of an *cuarray.Array whatever its T.
type array interface {
	Shape() []int
	Len() int
	Device() backend.Device
	Freed() bool
	String() string
}

// transform checks the arguments, picks s, and runs the transform on the
// backend of the arrays' device: the one place this package dispatches.
func transform[In, Out cuarray.Elem](sp spec, s *cuarray.Stream, dst *cuarray.Array[Out], src *cuarray.Array[In]) error {
	if dst == nil || src == nil {
		return fmt.Errorf("cufft: %s: dst is %s and src %s: both must be arrays: %w", sp.op, dst, src, backend.ErrInvalidValue)
	}
	sh, err := check(sp, dst, src)
	if err != nil {
		return err
	}
	if s == nil {
		if s, err = cuarray.DefaultStream(dst.Device().Ordinal()); err != nil {
			return fmt.Errorf("cufft: %s: %w", sp.op, err)
		}
	}
	if s.Device() != dst.Device() {
		// A nil s finds the process's backend; arrays of a backend made
		// apart from it need their own stream.
		return fmt.Errorf("cufft: %s: the arrays are on device %d (%s), the stream on device %d (%s); pass a stream of the arrays' device: %w",
			sp.op, dst.Device().Ordinal(), dst.Device().Info().Name, s.Device().Ordinal(), s.Device().Info().Name, cuarray.ErrDevice)
	}
	if sh.batch == 0 {
		return nil // an empty batch: nothing to transform
	}
	on, err := devstream.Device(dst.Device())
	if err != nil {
		return fmt.Errorf("cufft: %s: %w", sp.op, err)
	}
	if on.GPU != nil {
		return gpuTransform(sp, sh, on.GPU, s, dst, src)
	}
	return hostTransform(sp, sh, on.Host, s, dst, src)
}

// check validates the shapes for sp and returns what they transform. The
// errors wrap cuarray.ErrShape (cuarray.ErrFreed for a freed array) and
// name the operation and both arrays.
func check(sp spec, dst, src array) (shape, error) {
	bad := func(format string, args ...any) (shape, error) {
		return shape{}, fmt.Errorf("cufft: %s: dst is %s, src %s: "+format+": %w",
			append([]any{sp.op, dst, src}, append(args, cuarray.ErrShape)...)...)
	}
	for _, a := range [...]struct {
		role string
		a    array
	}{{"dst", dst}, {"src", src}} {
		if a.a.Freed() {
			return shape{}, fmt.Errorf("cufft: %s: %s %s was freed: %w", sp.op, a.role, a.a, cuarray.ErrFreed)
		}
	}
	if dst.Device() != src.Device() {
		return shape{}, fmt.Errorf("cufft: %s: dst is on device %d, src on device %d; copy one first: %w",
			sp.op, dst.Device().Ordinal(), src.Device().Ordinal(), cuarray.ErrDevice)
	}
	ds, ss := dst.Shape(), src.Shape()
	if len(ss) < sp.rank || len(ds) != len(ss) {
		return bad("%s needs arrays of at least %d dimensions, both of the same number", sp.op, sp.rank)
	}
	lead := len(ss) - sp.rank
	if !slices.Equal(ds[:lead], ss[:lead]) {
		return bad("the leading (batch) dimensions %v and %v differ", ds[:lead], ss[:lead])
	}
	// full is the transformed dimensions of the real side (either side
	// of c2c), half the complex side's, whose last must be full's n/2+1.
	full, half := ss[lead:], ds[lead:]
	switch sp.kind {
	case c2c:
		if !slices.Equal(ds, ss) {
			return bad("the shapes differ; %s keeps the shape", sp.op)
		}
	case c2r:
		full, half = ds[lead:], ss[lead:]
	}
	sh := shape{n: [2]int{1, 1}, batch: 1}
	for i, n := range full {
		if n < 1 {
			return bad("transformed dimension %d is n = %d; each must be at least 1", lead+i, n)
		}
		sh.n[i] = n
	}
	if sp.kind != c2c {
		last := len(full) - 1
		if want := full[last]/2 + 1; half[last] != want || (sp.rank == 2 && half[0] != full[0]) {
			if sp.kind == r2c {
				return bad("src's last dimension n = %d gives n/2+1 = %d frequencies: dst must be %v", full[last], want, halfShape(ss, want))
			}
			return bad("dst's last dimension n = %d needs n/2+1 = %d frequencies: src must be %v", full[last], want, halfShape(ds, want))
		}
	}
	for _, d := range ss[:lead] {
		sh.batch *= d
	}
	return sh, nil
}

// halfShape is shape with its last dimension set to h.
func halfShape(shape []int, h int) []int {
	out := slices.Clone(shape)
	out[len(out)-1] = h
	return out
}

// overlap says whether dst's and src's memory, at d and s, overlap
// without being the same (an in-place transform is fine).
func overlap(d, s backend.Ptr, dBytes, sBytes uint64) bool {
	if d == s || dBytes == 0 || sBytes == 0 {
		return false
	}
	return d < s+backend.Ptr(sBytes) && s < d+backend.Ptr(dBytes)
}

func overlapError(sp spec, dst, src array) error {
	return fmt.Errorf("cufft: %s: dst %s shares part of src %s's memory; write in place (dst = src) or into another array: %w",
		sp.op, dst, src, cuarray.ErrShape)
}
