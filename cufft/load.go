package cufft

import (
	"os"
	"regexp"
	"sync"

	"github.com/gocuda/gocuda/config"
	"github.com/gocuda/gocuda/cuda"
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
		Sonames:     []string{"libcufft.so.12", "libcufft.so.11", "libcufft.so.10", "libcufft.so"},
		File:        regexp.MustCompile(`^libcufft\.so(\.[0-9]+)*$`), // not libcufftw
		WheelDirs:   []string{"nvidia/cu13/lib", "nvidia/cufft/lib"},
		Toolkit:     true,
		Install:     "the CUDA toolkit's cuFFT (libcufft: the cuda-libraries or libcufft package, or pip's nvidia-cufft-cu12)",
		HostBackend: true,
		Need:        "cuFFT from CUDA 11 or newer",
		Sentinel:    ErrNoCUFFT,
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

// search is library's search for this process. cuFFT's major version is
// CUDA's less one (cuFFT 12 is CUDA 13's), so libload cannot drop the
// versions too new for the driver by the number alone; this does: a
// libcufft.so.12 beside a CUDA 12 driver loads, then fails its first
// plan. With the knob set, or no driver to ask, nothing is dropped.
func search() libload.Search {
	s := library.SearchIn(os.Getenv(library.Knob), 0, libload.PythonRoots(os.LookupEnv))
	v, err := cuda.DriverVersion()
	if s.Knob != "" || err != nil {
		return s
	}
	return forDriver(s, v/1000)
}

// forDriver keeps the candidates of s that a driver of CUDA driverMajor
// runs (the unversioned name always), in order, as the names to try.
func forDriver(s libload.Search, driverMajor int) libload.Search {
	var keep []string
	for _, c := range s.Candidates() {
		if m := libload.MajorOf(c); m == 0 || m+1 <= driverMajor {
			keep = append(keep, c)
		}
	}
	s.Names, s.Dirs, s.DriverMajor = keep, nil, driverMajor
	return s
}

// loaded is load's result. Binding.Load searches with the Library's own
// Search, which knows only soname majors equal to CUDA's; so cuFFT opens
// through search and then installs and reads its version as Load would.
var loaded struct {
	once sync.Once
	file string
	err  error
}

// load opens cuFFT once per process and resolves its entry points; the
// result is kept.
func load() error {
	loaded.once.Do(func() {
		h, file, err := search().Open()
		if err == nil {
			err = library.Installed(file, library.Resolve(h))
		}
		if err == nil {
			err = library.Ready(file)
		}
		if loaded.err = err; err == nil {
			loaded.file = file
		}
	})
	return loaded.err
}

// Library is the cuFFT library loaded (a soname such as "libcufft.so.12",
// or the path of the file found), loading it on first use, or the error
// loading gave: one wrapping ErrNoCUFFT when there is none.
func Library() (string, error) {
	err := load()
	return loaded.file, err
}

// Version is the loaded cuFFT's version as cufftGetVersion gives it
// (major*1000 + minor*100 + patch: 12000 for cuFFT 12.0.0).
func Version() (int, error) {
	if err := load(); err != nil {
		return 0, err
	}
	return version, nil
}
