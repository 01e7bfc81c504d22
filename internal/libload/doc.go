// Package libload finds and opens the CUDA libraries that gocuda loads at
// run time with dlopen (cuBLAS, NVRTC, NCCL), so that each is looked for
// the same way and a failure says the same things. There is no CUDA
// toolkit at build time: a Library describes what to look for, and
// Search lists the files in order:
//
//   - the file its GOCUDA_*_LIBRARY variable names, alone, when it is set;
//   - otherwise its sonames, newest first, for the loader's own search
//     (LD_LIBRARY_PATH, ldconfig's cache), then its files in the CUDA
//     toolkit's library folders and in the folders where NVIDIA's Python
//     wheels put it (pip's nvidia-* packages, which PyTorch installs),
//     newest major version first.
//
// Where the number after ".so." is a CUDA major version, files newer than
// the driver are skipped: they load, and then fail at their first call.
//
//	var cublas = libload.Library{Pkg: "blas", Name: "cuBLAS", Knob: "GOCUDA_CUBLAS_LIBRARY", ...}
//	h, file, err := cublas.Search().Open()
//	// h is a dlopen handle for the package's own dlsym; err names every
//	// file tried with the loader's reason, every folder searched, what to
//	// install and the variable to set.
package libload
