package cufft

import (
	"regexp"

	"github.com/gocuda/gocuda/config"
	"github.com/gocuda/gocuda/internal/libload"
)

// library is cuFFT as package libload binds it: the file
// GOCUDA_CUFFT_LIBRARY names, alone, when set; else libcufft.so.12 (cuFFT
// 12, CUDA 13), libcufft.so.11 (CUDA 12), libcufft.so.10 (CUDA 11) and
// libcufft.so through the loader's search, then the toolkit's folders and
// the folders of cuFFT's Python wheels: CUDA 13's nvidia-cufft in
// nvidia/cu13/lib, nvidia-cufft-cu12 and -cu11 in nvidia/cufft/lib. Its
// symbol table is in cufft_cgo.go; loading reads the version.
var library = libload.Binding{
	Library: libload.Library{
		Pkg: "cufft", Name: "cuFFT", Knob: config.EnvCUFFTLibrary,
		Sonames:   []string{"libcufft.so.12", "libcufft.so.11", "libcufft.so.10", "libcufft.so"},
		File:      regexp.MustCompile(`^libcufft\.so(\.[0-9]+)*$`), // not libcufftw
		WheelDirs: []string{"nvidia/cu13/lib", "nvidia/cufft/lib"},
		Toolkit:   true,
		// cuFFT's number is CUDA's less one: beside a CUDA 12 driver,
		// libcufft.so.12 (CUDA 13's) would load, then fail its first plan.
		CUDAVersioned:   true,
		MajorBehindCUDA: 1,
		Install:         "the CUDA toolkit's cuFFT (libcufft: the cuda-libraries or libcufft package, or pip's nvidia-cufft-cu12)",
		HostBackend:     true,
		Need:            "cuFFT from CUDA 11 or newer",
		Sentinel:        ErrNoCUFFT,
	},
	SetStream: "cufftSetStream",
	Resolve:   cInstall,
}

// Ready is set here, not in library's declaration: it words its error
// through library.
func init() { library.Ready = readVersion }

// version is the loaded cuFFT's, set once by readVersion.
var version int

func readVersion(string) error {
	v, r := cVersion()
	version = v
	return r.err("cufftGetVersion", -1)
}

// Library is the cuFFT library loaded (a soname such as "libcufft.so.12",
// or the path of the file found), loading it on first use, or the error
// loading gave: one wrapping ErrNoCUFFT when there is none.
func Library() (string, error) { return library.Load() }

// Version is the loaded cuFFT's version as cufftGetVersion gives it
// (major*1000 + minor*100 + patch: 12000 for cuFFT 12.0.0).
func Version() (int, error) {
	if _, err := library.Load(); err != nil {
		return 0, err
	}
	return version, nil
}
