// Fft takes batched FFTs of cuarray arrays with package cufft: cuFFT on a
// GPU, gonum's FFT on the host backend, so that the same program runs
// anywhere.
//
// The input is made by cuarray operations on one stream and transformed on
// another, with no synchronization written: the transform waits for the
// input's writes as any cuarray operation does. The result is checked
// against a direct DFT in float64, and transformed back.
//
//	go run ./examples/fft
//	GOCUDA_BACKEND=cuda go run ./examples/fft   # the GPU, or an error
//
// docs/fft.md describes package cufft; docs/interop.md how it borrows the
// arrays' pointers for cuFFT.
package main
