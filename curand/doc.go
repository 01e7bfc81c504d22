// Package curand fills device memory with pseudo-random numbers, uniform
// or normal, float32 or float64: through NVIDIA's cuRAND on the CUDA
// backend and a Go generator on the host backend, queued on a stream like
// any kernel. cuarray's Rand, Randn, FillRand and FillRandn are built on
// it; use it directly when you hold backend pointers rather than arrays.
//
//	g, err := curand.New(dev, 42)           // a seed: the same numbers every run
//	defer g.Close()
//	err = curand.Uniform[float32](g, s, p, n)          // (0, 1]
//	err = curand.Normal[float64](g, s, q, m, 0, 1)     // mean 0, deviation 1
//
// A Generator's numbers follow the order of its calls, whatever streams
// they are queued on. On the CUDA backend it is cuRAND's Philox4x32-10; on
// the host backend each call draws from a PCG stream (math/rand/v2) keyed
// by the seed and the call's number. The two backends give different
// numbers for one seed, as CUDA.jl's CPU and GPU generators do.
//
// # Finding cuRAND
//
// cuRAND is loaded at first use with dlopen, as package cuda loads the
// driver: no CUDA toolkit is needed to build. GOCUDA_CURAND_LIBRARY names
// the file to load; unset, the loader's search is asked for
// libcurand.so.10 and libcurand.so, then the CUDA toolkit's folders and
// the folders of pip's wheels (nvidia/curand/lib of nvidia-curand-cu12,
// nvidia/cu13/lib of CUDA 13's, which PyTorch installs) are searched.
// When none loads, New on a GPU returns an error wrapping ErrNoCURAND that
// lists each file tried with the loader's reason and each folder searched;
// the host backend needs no cuRAND. Library and Version say what was
// loaded.
package curand
