package curand

import (
	"regexp"

	"github.com/gocuda/gocuda/config"
	"github.com/gocuda/gocuda/internal/libload"
)

// library is cuRAND as package libload binds it: the file
// GOCUDA_CURAND_LIBRARY names, alone, when set; else libcurand.so.10 (the
// soname of every cuRAND since CUDA 11: its 10 is cuRAND's own version)
// and libcurand.so through the loader's search, then the toolkit's
// folders and the folders of cuRAND's Python wheels: nvidia-curand-cu12
// in nvidia/curand/lib, CUDA 13's nvidia-curand in nvidia/cu13/lib. Its
// symbol table is in curand_cgo.go; loading reads the version.
var library = libload.Binding{
	Library: libload.Library{
		Pkg: "curand", Name: "cuRAND", Knob: config.EnvCURANDLibrary,
		Sonames:     []string{"libcurand.so.10", "libcurand.so"},
		File:        regexp.MustCompile(`^libcurand\.so(\.[0-9]+)*$`),
		WheelDirs:   []string{"nvidia/cu13/lib", "nvidia/curand/lib"},
		Toolkit:     true,
		Install:     "the CUDA toolkit's cuRAND (libcurand: the cuda-libraries or libcurand package, or pip's nvidia-curand-cu12)",
		HostBackend: true,
		Need:        "cuRAND from CUDA 11 or newer",
		Sentinel:    ErrNoCURAND,
	},
	SetStream: "curandSetStream",
	Resolve:   cInstall,
}

// Ready is set here, not in library's declaration: it words its error
// through library.
func init() { library.Ready = readVersion }

// version is the loaded cuRAND's, set once by readVersion.
var version int

func readVersion(string) error {
	v, r := cVersion()
	version = v
	return r.err("curandGetVersion", -1)
}

// load opens cuRAND once per process and resolves its entry points; the
// result is kept.
func load() error {
	_, err := library.Load()
	return err
}

// Library is the cuRAND library loaded (a soname such as
// "libcurand.so.10", or the path of the file found), loading it on first
// use, or the error loading gave: one wrapping ErrNoCURAND when there is
// none.
func Library() (string, error) { return library.Load() }

// Version is the loaded cuRAND's version as curandGetVersion gives it
// (major*1000 + minor*100 + patch: 10400 for cuRAND 10.4.0).
func Version() (int, error) {
	if err := load(); err != nil {
		return 0, err
	}
	return version, nil
}
