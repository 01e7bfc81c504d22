package libload

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/gocuda/gocuda/cuda"
)

// Library says what to look for and how to word a failure.
type Library struct {
	// Pkg begins every error ("blas"); Name is the library as users know
	// it ("cuBLAS").
	Pkg, Name string
	// Knob is the variable that names a file to load instead of searching
	// (GOCUDA_CUBLAS_LIBRARY).
	Knob string
	// Sonames are tried first, newest first, through the loader's own
	// search; the last is the unversioned development link.
	Sonames []string
	// File matches the library's files in a folder (libcublas.so,
	// libcublas.so.12, libcublas.so.12.8.4.1 and not libcublasLt.so.12).
	File *regexp.Regexp
	// WheelDirs are the folders below a site-packages or dist-packages
	// folder where the library's Python wheels put it: nvidia/cublas/lib
	// for CUDA 12's nvidia-cublas-cu12, nvidia/cu13/lib for CUDA 13's.
	WheelDirs []string
	// Toolkit says the CUDA toolkit's library folders are searched too.
	Toolkit bool
	// CUDAVersioned says the number after ".so." follows CUDA's major
	// version (cuBLAS, NVRTC, cuFFT), so that files newer than the driver
	// are skipped; NCCL's is its own.
	CUDAVersioned bool
	// MajorBehindCUDA is how far a CUDAVersioned library's number lags
	// CUDA's: 1 for cuFFT (libcufft.so.12 is CUDA 13's), 0 for cuBLAS and
	// NVRTC, whose number is CUDA's.
	MajorBehindCUDA int
	// Install is what to install, for the error: "CUDA's NVRTC (the
	// cuda-nvrtc package of the toolkit, or pip's nvidia-cuda-nvrtc)".
	Install string
	// HostBackend says GOCUDA_BACKEND=host does without the library, and
	// the error says so.
	HostBackend bool
	// Need says which versions have every entry point the package
	// resolves, for Installed's error: "cuBLAS from CUDA 11 or newer".
	Need string
	// Sentinel is wrapped by every error (ErrNoCUBLAS).
	Sentinel error
}

// Installed is the error for what a package's install step returned for
// file: the first symbol it could not resolve, "libcuda.so.1" when the
// driver itself would not open for the context calls, "" (nil error) when
// everything resolved.
func (l *Library) Installed(file, missing string) error {
	switch missing {
	case "":
		return nil
	case "libcuda.so.1":
		return fmt.Errorf("%s: %s loaded, but the CUDA driver (libcuda.so.1) could not be opened for its context calls: %w", l.Pkg, file, l.Sentinel)
	}
	return fmt.Errorf("%s: %s does not export %s; %s is needed: %w", l.Pkg, file, missing, l.Need, l.Sentinel)
}

// ToolkitDirs are a CUDA toolkit's library folders, which the loader's
// search does not include unless ldconfig or LD_LIBRARY_PATH names them.
var ToolkitDirs = []string{"/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib", "/usr/local/cuda/targets/sbsa-linux/lib"}

// debianDist is where Debian and Ubuntu install Python packages of the
// system: no python3.N level.
const debianDist = "/usr/lib/python3/dist-packages"

// PythonRoots are the folders holding python3.*/{site,dist}-packages: the
// active virtual or conda environment's first, then pip's --user folder
// and the system's. lookup reads the environment (os.LookupEnv).
func PythonRoots(lookup func(string) (string, bool)) []string {
	var roots []string
	for _, v := range []string{"VIRTUAL_ENV", "CONDA_PREFIX"} {
		if p, ok := lookup(v); ok && p != "" {
			roots = append(roots, filepath.Join(p, "lib"))
		}
	}
	if h, ok := lookup("HOME"); ok && h != "" {
		roots = append(roots, filepath.Join(h, ".local/lib"))
	}
	return append(roots, "/usr/local/lib", "/usr/lib", "/usr/local/lib64", "/usr/lib64", "/opt/conda/lib")
}

// Search is where one load looks, in order: Knob's file alone when set,
// else Names through the loader, then the library's files in Dirs.
type Search struct {
	lib *Library
	// Knob is the variable's value (trimmed); Names the sonames left
	// after the driver's version; Dirs the folders to list.
	Knob  string
	Names []string
	Dirs  []string
	// Patterns are the folders as searched, globs included, for the
	// error.
	Patterns []string
	// DriverMajor is the driver's CUDA major version, 0 when unknown.
	DriverMajor int
}

// Search is the search for this process: the file l.Knob names when it
// is set; else the sonames and folders, the wheels looked for under
// PythonRoots, and for a CUDA-versioned library without the versions
// newer than the driver's.
func (l *Library) Search() Search {
	major := 0
	if l.CUDAVersioned {
		major = driverMajor()
	}
	return l.SearchIn(os.Getenv(l.Knob), major, PythonRoots(os.LookupEnv))
}

// SearchIn is Search with the knob's value ("" when unset), the driver's
// CUDA major version (0 when unknown) and the Python roots given.
func (l *Library) SearchIn(knob string, driverMajor int, roots []string) Search {
	if k := strings.TrimSpace(knob); k != "" {
		return Search{lib: l, Knob: k}
	}
	s := Search{lib: l, Names: l.forDriver(l.Sonames, driverMajor), DriverMajor: driverMajor}
	if l.Toolkit {
		s.Dirs = append(s.Dirs, ToolkitDirs...)
		s.Patterns = append(s.Patterns, ToolkitDirs...)
	}
	wheels := l.WheelDirs[0]
	if len(l.WheelDirs) > 1 {
		wheels = "{" + strings.Join(l.WheelDirs, ",") + "}"
	}
	seen := map[string]bool{}
	add := func(dirs ...string) {
		for _, d := range dirs {
			if !seen[d] {
				seen[d] = true
				s.Dirs = append(s.Dirs, d)
			}
		}
	}
	for _, r := range roots {
		s.Patterns = append(s.Patterns, filepath.Join(r, "python3.*/{site,dist}-packages", wheels))
		for _, pkgs := range []string{"site-packages", "dist-packages"} {
			for _, d := range l.WheelDirs {
				m, _ := filepath.Glob(filepath.Join(r, "python3.*", pkgs, d)) // the pattern is well formed
				slices.Sort(m)
				slices.Reverse(m) // python3.13 before python3.12: newest first
				add(m...)
			}
		}
	}
	s.Patterns = append(s.Patterns, filepath.Join(debianDist, wheels))
	for _, d := range l.WheelDirs {
		add(filepath.Join(debianDist, d))
	}
	return s
}

// MajorOf is the major version in a library file's name (13 for
// libnvrtc.so.13.0.48), or 0 for the unversioned name.
func MajorOf(name string) int {
	_, rest, ok := strings.Cut(filepath.Base(name), ".so.")
	if !ok {
		return 0
	}
	m, _, _ := strings.Cut(rest, ".")
	v, _ := strconv.Atoi(m)
	return v
}

// forDriver drops the names of a CUDA major version newer than the
// driver's, for a CUDA-versioned library with the driver's version known.
func (l *Library) forDriver(names []string, driverMajor int) []string {
	if !l.CUDAVersioned || driverMajor <= 0 {
		return slices.Clone(names)
	}
	var out []string
	for _, n := range names {
		if MajorOf(n)+l.MajorBehindCUDA <= driverMajor {
			out = append(out, n)
		}
	}
	return out
}

// Candidates lists what Open tries, in order: the knob's file alone, or
// the sonames, then the library's files in each folder, newest major
// version first and, within one, the shortest name (the soname link,
// what the library calls itself).
func (s Search) Candidates() []string {
	if s.Knob != "" {
		return []string{s.Knob}
	}
	out := slices.Clone(s.Names)
	for _, d := range s.Dirs {
		ents, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		var files []string
		for _, e := range ents {
			if s.lib.File.MatchString(e.Name()) {
				files = append(files, filepath.Join(d, e.Name()))
			}
		}
		files = s.lib.forDriver(files, s.DriverMajor)
		slices.SortFunc(files, func(a, b string) int {
			if ma, mb := MajorOf(a), MajorOf(b); ma != mb {
				return mb - ma
			}
			return len(a) - len(b)
		})
		out = append(out, files...)
	}
	return out
}

// Open tries each candidate in order and returns the dlopen handle of the
// first that loads and its name as tried. It resolves nothing: the
// package that asked looks up its entry points in the handle. The error,
// wrapping the library's Sentinel, names every file tried with the
// loader's reason and every folder searched, and says what to do.
func (s Search) Open() (uintptr, string, error) {
	l := s.lib
	host := ""
	if l.HostBackend {
		host = ", or use GOCUDA_BACKEND=host"
	}
	if !Available() {
		return 0, "", fmt.Errorf("%s: %s cannot be loaded: this program was built with CGO_ENABLED=0 (or for an OS without dlopen); rebuild with cgo%s: %w",
			l.Pkg, l.Name, host, l.Sentinel)
	}
	cands := s.Candidates()
	var tried []string
	for _, c := range cands {
		h, why := open(c)
		if h != 0 {
			return h, c, nil
		}
		tried = append(tried, fmt.Sprintf("%s (%s)", c, why))
	}
	if s.Knob != "" {
		return 0, "", fmt.Errorf("%s: %s=%q cannot be loaded: %s; name a %s library file (such as %s), or unset %s to search the usual places: %w",
			l.Pkg, l.Knob, s.Knob, tried[0], l.Name, l.Sonames[0], l.Knob, l.Sentinel)
	}
	return 0, "", fmt.Errorf("%s: no %s library could be loaded; tried %s; found no %s* in %s. Install %s, put its folder on LD_LIBRARY_PATH, or name the file with %s%s: %w",
		l.Pkg, l.Name, strings.Join(tried, ", "), l.Sonames[len(l.Sonames)-1], strings.Join(s.Patterns, ", "), l.Install, l.Knob, host, l.Sentinel)
}

// driverMajor is the CUDA major version of the installed driver (13 for
// a driver of CUDA 13.0), or 0 when there is no driver to ask.
func driverMajor() int {
	v, err := cuda.DriverVersion()
	if err != nil {
		return 0
	}
	return v / 1000
}
