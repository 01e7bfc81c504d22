// Package cufft takes discrete Fourier transforms of cuarray arrays: 1-D
// and 2-D, batched over the leading dimensions, complex64 to complex64
// and float32 to complex64 and back. On the CUDA backend they run through
// NVIDIA's cuFFT, queued on a stream like any cuarray operation; on the
// host backend through gonum's FFT (gonum.org/v1/gonum/dsp/fourier), so
// that the same program runs without a GPU.
//
//	x, _ := cuarray.FromSlice(signal, batch, n)        // complex64
//	spec, _ := cuarray.New[complex64](batch, n)
//	err := cufft.FFT(s, spec, x)                        // each row of n
//	err = cufft.IFFT(s, x, spec)                        // back, divided by n
//	half, _ := cuarray.New[complex64](batch, n/2+1)
//	err = cufft.RFFT(s, half, realRows)                 // float32 rows of n
//
// The operations are torch.fft's: FFT, IFFT, RFFT, IRFFT over the last
// dimension, FFT2, IFFT2, RFFT2, IRFFT2 over the last two. The element
// types are in the signatures, so a wrong one does not compile; shapes
// are checked, and one that does not fit is an error wrapping
// cuarray.ErrShape that names the operation and both shapes.
//
// # Normalisation
//
// torch.fft's default, "backward": the forward transforms are not scaled,
// X[k] = Σⱼ x[j]·exp(−2πi·jk/n), and the inverse ones divide by n (n0·n1
// in 2-D), so that an inverse undoes its forward. cuFFT itself does not
// scale; on a GPU the division is a Scale of the result on the same
// stream, as in PyTorch. Both backends give the same numbers to float32
// rounding.
//
// # Accuracy
//
// The host backend computes in float64 and complex128 and rounds to
// float32 once, so its relative error (2-norm) is about float32's
// epsilon, 6e-8. cuFFT computes in float32: about 1e-7·log2 n. The tests
// hold both to 1e-5 against a direct DFT in float64.
//
// # Streams and ordering
//
// s is the stream the transform is queued on; nil is the arrays' device's
// default stream (cuarray.DefaultStream of its ordinal). The transform
// waits for the work on any stream that last wrote src or still uses dst,
// neither array is freed under it, and later uses of either wait for it:
// it is built on cuarray.WithPointers. Calls return without waiting.
//
// # Plans and memory
//
// cuFFT plans are made on first use of each (device, kind, sizes, batch)
// and cached, at most MaxPlans of them; the least recently used beyond
// that is destroyed once its device's queued work is done, and
// ClearPlans destroys all of them. A plan holds no work area: cuFFT's own
// allocation is turned off (cufftSetAutoAllocation(0)) and each call
// takes the work area it needs from s's pool and frees it in stream
// order, as CuPy and PyTorch do, so that pool limits and statistics count
// it. IRFFT and IRFFT2 also take a copy of src from the pool, since
// cuFFT's complex-to-real transforms overwrite their input, and a float32
// view at an odd offset goes through an aligned copy, as cuFFT needs its
// real data aligned as complex data. Only cuFFT's plan tables themselves
// are outside the pools.
//
// # Finding cuFFT
//
// cuFFT is loaded at first GPU use with dlopen, as package cuda loads the
// driver: no CUDA toolkit is needed to build. GOCUDA_CUFFT_LIBRARY names
// the file to load; unset, libcufft.so.12 (CUDA 13), .11 (CUDA 12), .10
// (CUDA 11) and libcufft.so are asked of the loader, then the CUDA
// toolkit's folders and pip's wheels (nvidia/cu13/lib, nvidia/cufft/lib)
// are searched, leaving out versions newer than the driver (cuFFT's major
// version is CUDA's less one). When none loads, a transform on a GPU
// returns an error wrapping ErrNoCUFFT that lists each file tried with the
// loader's reason and each folder searched; the host backend needs no
// cuFFT. Library and Version say what was loaded.
package cufft
