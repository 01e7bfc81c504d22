// Package nvrtc compiles CUDA C++ source to PTX or a cubin at run time
// with NVIDIA's NVRTC, for kernels a program writes or generates itself
// (rtc.NewKernel compiles, caches and launches them; use this package
// directly to compile without launching).
//
//	res, err := nvrtc.Compile(src, "saxpy.cu", "-arch=sm_90")
//	var ce *nvrtc.CompileError
//	if errors.As(err, &ce) {
//		fmt.Println(ce.Log) // the compiler's messages, with line numbers
//	}
//
// # Finding NVRTC
//
// NVRTC is loaded at first use with dlopen, as package cuda loads the
// driver: no CUDA toolkit is needed to build, and a program that compiles
// nothing never loads it. When GOCUDA_NVRTC_LIBRARY names a file, that
// file alone is tried. Otherwise the loader's own search (ldconfig's
// cache, LD_LIBRARY_PATH) is asked for libnvrtc.so.13, libnvrtc.so.12 and
// libnvrtc.so, skipping versions newer than the driver (whose output it
// could not load); then the toolkit's /usr/local/cuda/lib64; then the
// folders pip's wheels install to: nvidia/cu13/lib (CUDA 13's
// nvidia-cuda-nvrtc) and nvidia/cuda_nvrtc/lib (nvidia-cuda-nvrtc-cu12)
// under python3.*/site-packages or dist-packages in /usr/local/lib,
// /usr/lib, ~/.local/lib and the active virtual or conda environment.
// When none loads, every call returns an error wrapping ErrNoNVRTC that
// lists each file tried with the loader's reason and each folder
// searched. Library says which file was loaded, Version its version.
package nvrtc
