// Fft calls a CUDA library gocuda does not wrap, cuFFT, on cuarray arrays,
// through cuarray.WithPointers: the library gets the arrays' device
// addresses and the stream to queue its work on, and gocuda keeps its
// guarantees around that work (ordering across streams, memory kept alive,
// last use recorded). On the host backend the same program transforms the
// arrays' host memory with gonum's FFT, so it runs without a GPU.
//
// The input is made by cuarray operations on one stream and transformed on
// another, with no synchronization written. The result is checked against
// a direct DFT in float64, and transformed back.
//
//	go run ./examples/fft
//	GOCUDA_BACKEND=cuda go run ./examples/fft   # the GPU, or an error
//
// cuFFT is loaded with dlopen (cufft.go, cufft_cgo.go): no CUDA toolkit at
// build time. docs/interop.md walks through it.
package main
