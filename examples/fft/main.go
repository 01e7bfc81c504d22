package main

import (
	"fmt"
	"io"
	"log"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"os"

	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/cufft"
)

func main() {
	produce, err := cuarray.NewStream(0)
	if err != nil {
		log.Fatal(err)
	}
	transform, err := cuarray.NewStream(0)
	if err != nil {
		log.Fatal(err)
	}
	err = run(os.Stdout, produce, transform)
	if cerr := cufft.ClearPlans(); err == nil {
		err = cerr
	}
	if err != nil {
		log.Fatal(err)
	}
}

// The signals: batch rows of n samples, row b a tone at frequency freqs[b]
// plus noise.
const n, batch = 1000, 4

var freqs = [batch]int{3, 50, 123, 499}

// tol bounds the relative error (2-norm) of a float32 FFT: float32's
// epsilon (1.2e-7) times log2 n (10), with a margin of 8.
const tol = 1e-5

// run makes the signals on stream produce, transforms them on stream
// transform, checks and prints the results.
func run(w io.Writer, produce, transform *cuarray.Stream) error {
	lib, err := library(transform)
	if err != nil {
		return err
	}
	tones, noise := make([]complex64, n*batch), make([]complex64, n*batch)
	rng := rand.New(rand.NewPCG(1, 2))
	for b, f := range freqs {
		for j := range n {
			tones[b*n+j] = complex64(cmplx.Exp(complex(0, 2*math.Pi*float64(f*j%n)/n)))
			noise[b*n+j] = complex(rng.Float32()-0.5, rng.Float32()-0.5)
		}
	}

	// The input, written by cuarray operations queued on stream produce.
	p := cuarray.On[complex64](produce)
	x, err := p.FromSlice(tones, batch, n)
	if err != nil {
		return err
	}
	z, err := p.FromSlice(noise, batch, n)
	if err != nil {
		return err
	}
	if _, err := p.Axpy(x, 0.5, z, x); err != nil { // x = tone + noise/2
		return err
	}

	// The transforms of each row, on stream transform. No synchronization
	// is written: the FFT waits for the Axpy on produce because x was last
	// written there.
	t := cuarray.On[complex64](transform)
	spectrum, err := t.New(batch, n)
	if err != nil {
		return err
	}
	if err := cufft.FFT(transform, spectrum, x); err != nil {
		return err
	}
	back, err := t.New(batch, n)
	if err != nil {
		return err
	}
	if err := cufft.IFFT(transform, back, spectrum); err != nil { // divided by n
		return err
	}

	// Each read waits for the work that wrote its array.
	xs, err := x.ToSlice()
	if err != nil {
		return err
	}
	got, err := spectrum.ToSlice()
	if err != nil {
		return err
	}
	round, err := back.ToSlice()
	if err != nil {
		return err
	}

	fmt.Fprintf(w, "%d signals of %d complex64 on %s, made on stream %d, transformed on stream %d by %s\n",
		batch, n, produce.Device().Info().Name, produce.Backend().ID(), transform.Backend().ID(), lib)
	for b, f := range freqs {
		fmt.Fprintf(w, "signal %d: tone at %d, spectrum peaks at %d\n", b, f, peak(got[b*n:(b+1)*n]))
	}
	eFwd, eInv := relErr(got, dft(xs, n)), relErr(round, xs)
	fmt.Fprintf(w, "FFT against a direct DFT in float64: relative error %.1e (bound %.0e)\n", eFwd, tol)
	fmt.Fprintf(w, "inverse FFT against the input:       relative error %.1e (bound %.0e)\n", eInv, tol)
	if !(eFwd <= tol && eInv <= tol) { // NaN fails too
		return fmt.Errorf("fft: relative error %.1e (forward) and %.1e (round trip); the bound is %.0e", eFwd, eInv, tol)
	}
	for b, f := range freqs {
		if k := peak(got[b*n : (b+1)*n]); k != f {
			return fmt.Errorf("fft: signal %d's spectrum peaks at %d, not at its tone %d", b, k, f)
		}
	}
	return nil
}

// dft is the direct discrete Fourier transform of each row of n in x,
// in float64: O(n²), the reference the FFT is checked against.
func dft(x []complex64, n int) []complex128 {
	out := make([]complex128, len(x))
	for r := 0; r < len(x); r += n {
		for k := range n {
			var sum complex128
			for j := range n {
				s, c := math.Sincos(-2 * math.Pi * float64(j*k%n) / float64(n))
				sum += complex128(x[r+j]) * complex(c, s)
			}
			out[r+k] = sum
		}
	}
	return out
}

// library names the FFT that runs on s's device: gonum's on the host
// backend (compute capability 0.0), else the cuFFT loaded.
func library(s *cuarray.Stream) (string, error) {
	if s.Device().Info().Major == 0 {
		return "gonum.org/v1/gonum/dsp/fourier", nil
	}
	file, err := cufft.Library()
	if err != nil {
		return "", err
	}
	v, err := cufft.Version()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("cuFFT %d (%s)", v, file), nil
}

// relErr is ‖got − want‖₂ / ‖want‖₂.
func relErr[W complex64 | complex128](got []complex64, want []W) float64 {
	var diff, norm float64
	for i, g := range got {
		w := complex128(want[i])
		d := complex128(g) - w
		diff += real(d)*real(d) + imag(d)*imag(d)
		norm += real(w)*real(w) + imag(w)*imag(w)
	}
	return math.Sqrt(diff / norm)
}

// peak is the index of the largest magnitude in x.
func peak(x []complex64) int {
	best := 0
	for i, v := range x {
		if cmplx.Abs(complex128(v)) > cmplx.Abs(complex128(x[best])) {
			best = i
		}
	}
	return best
}
