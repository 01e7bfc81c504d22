package nvrtc

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/gocuda/gocuda/config"
	"github.com/gocuda/gocuda/cuda"
)

// sonames are the NVRTC names the loader's own search is asked for, the
// newest major version first, then the unversioned development link.
var sonames = []string{"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}

// pipDirs are where NVRTC's Python wheels put the library, under a
// site-packages or dist-packages folder: nvidia-cuda-nvrtc-cu12 in
// nvidia/cuda_nvrtc/lib, CUDA 13's nvidia-cuda-nvrtc in nvidia/cu13/lib.
var pipDirs = []string{"nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib"}

// toolkitDirs are a CUDA toolkit's library folders, which the loader's
// search does not include unless ldconfig or LD_LIBRARY_PATH names them.
var toolkitDirs = []string{"/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib", "/usr/local/cuda/targets/sbsa-linux/lib"}

// pythonRoots are the folders holding python3.*/{site,dist}-packages: the
// system's, pip's --user folder, and the active virtual or conda
// environment's.
func pythonRoots() []string {
	roots := []string{"/usr/local/lib", "/usr/lib", "/usr/local/lib64", "/usr/lib64", "/opt/conda/lib"}
	if h, err := os.UserHomeDir(); err == nil {
		roots = append(roots, filepath.Join(h, ".local/lib"))
	}
	for _, v := range []string{"VIRTUAL_ENV", "CONDA_PREFIX"} {
		if p := os.Getenv(v); p != "" {
			roots = append(roots, filepath.Join(p, "lib"))
		}
	}
	return roots
}

// libName matches the library files worth trying in a folder:
// libnvrtc.so, libnvrtc.so.13, libnvrtc.so.13.0.48, not
// libnvrtc-builtins.so.13 (NVRTC's own helper) nor libnvrtc.alt.so.
var libName = regexp.MustCompile(`^libnvrtc\.so(\.[0-9]+)*$`)

// search is where open looks: the names to hand the loader as they are,
// then the folders to list for library files.
type search struct {
	knob  string   // GOCUDA_NVRTC_LIBRARY's value: the only file tried when set
	names []string // sonames for the loader's own search
	dirs  []string // folders whose libnvrtc.so* files are tried by path
	globs []string // the patterns dirs came from, for the error message
	// driverMajor is the driver's CUDA major version (0: unknown); files
	// of a newer NVRTC found in dirs are skipped.
	driverMajor int
}

// defaultSearch is the search for this process: the knob if set, else the
// sonames no newer than the driver (a newer NVRTC's output would not load),
// the toolkit folders and the wheels' folders.
func defaultSearch() search {
	if v, ok := os.LookupEnv(config.EnvNVRTCLibrary); ok && strings.TrimSpace(v) != "" {
		return search{knob: strings.TrimSpace(v)}
	}
	driverMajor := 0
	if v, err := cuda.DriverVersion(); err == nil {
		driverMajor = v / 1000
	}
	return newSearch(driverMajor, pythonRoots())
}

// newSearch builds the search over roots (folders holding python3.*),
// dropping versioned names newer than driverMajor when it is above 0.
func newSearch(driverMajor int, roots []string) search {
	s := search{names: forDriver(sonames, driverMajor), driverMajor: driverMajor}
	s.dirs = append(s.dirs, toolkitDirs...)
	s.globs = append(s.globs, toolkitDirs...)
	for _, r := range roots {
		s.globs = append(s.globs, filepath.Join(r, "python3.*/{site,dist}-packages/nvidia/{cu13,cuda_nvrtc}/lib"))
		for _, pkgs := range []string{"site-packages", "dist-packages"} {
			for _, d := range pipDirs {
				m, _ := filepath.Glob(filepath.Join(r, "python3.*", pkgs, d)) // the pattern is well formed
				slices.Sort(m)
				slices.Reverse(m) // python3.13 before python3.12: newest first
				s.dirs = append(s.dirs, m...)
			}
		}
	}
	return s
}

// majorOf is the major version in a library file name (13 for
// libnvrtc.so.13.0.48), or 0 for the unversioned name.
func majorOf(name string) int {
	rest, ok := strings.CutPrefix(filepath.Base(name), "libnvrtc.so.")
	if !ok {
		return 0
	}
	m, _, _ := strings.Cut(rest, ".")
	v, _ := strconv.Atoi(m)
	return v
}

// forDriver drops the names of an NVRTC newer than the driver: its PTX
// and cubins name a version the driver does not know, and fail to load.
func forDriver(names []string, driverMajor int) []string {
	if driverMajor <= 0 {
		return names
	}
	var out []string
	for _, n := range names {
		if majorOf(n) <= driverMajor {
			out = append(out, n)
		}
	}
	return out
}

// candidates lists what open tries, in order: the knob's file alone, or
// the sonames, then every library file in the folders, newest major
// version first within a folder.
func (s search) candidates() []string {
	if s.knob != "" {
		return []string{s.knob}
	}
	out := slices.Clone(s.names)
	for _, d := range s.dirs {
		ents, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		var files []string
		for _, e := range ents {
			if libName.MatchString(e.Name()) {
				files = append(files, filepath.Join(d, e.Name()))
			}
		}
		files = forDriver(files, s.driverMajor)
		// Newest major first; within one, the shorter (the soname link)
		// first: it is what the library calls itself.
		slices.SortFunc(files, func(a, b string) int {
			if ma, mb := majorOf(a), majorOf(b); ma != mb {
				return mb - ma
			}
			return len(a) - len(b)
		})
		out = append(out, files...)
	}
	return out
}

// open tries each candidate in order and returns the first that loads.
// It installs nothing, so tests can try names that do not exist.
func open(s search) (uintptr, string, error) {
	if !cgoAvailable() {
		return 0, "", fmt.Errorf("nvrtc: NVRTC cannot be loaded: this program was built with CGO_ENABLED=0 (or for an OS without dlopen); rebuild with cgo: %w", ErrNoNVRTC)
	}
	var tried []string
	for _, n := range s.candidates() {
		h, why := cOpen(n)
		if h != 0 {
			return h, n, nil
		}
		tried = append(tried, fmt.Sprintf("%s (%s)", n, why))
	}
	if s.knob != "" {
		return 0, "", fmt.Errorf("nvrtc: %s=%s cannot be loaded: %s; name an NVRTC library file (libnvrtc.so.13 of CUDA 13, or libnvrtc.so.12), or unset it to search the usual places: %w",
			config.EnvNVRTCLibrary, s.knob, strings.Join(tried, ", "), ErrNoNVRTC)
	}
	return 0, "", fmt.Errorf("nvrtc: no NVRTC library could be loaded; tried %s; found no libnvrtc.so* in %s. "+
		"Install CUDA's NVRTC (the cuda-nvrtc package of the toolkit, or pip's nvidia-cuda-nvrtc), put its folder on LD_LIBRARY_PATH, or name the file with %s: %w",
		strings.Join(tried, ", "), strings.Join(s.globs, ", "), config.EnvNVRTCLibrary, ErrNoNVRTC)
}

var lib struct {
	once sync.Once
	path string
	err  error
}

// load opens NVRTC once per process and resolves its entry points; the
// result is kept.
func load() error {
	lib.once.Do(func() {
		h, name, err := open(defaultSearch())
		if err != nil {
			lib.err = err
			return
		}
		if sym := cInstall(h); sym != "" {
			lib.err = fmt.Errorf("nvrtc: %s does not export %s; NVRTC from CUDA 11.2 or newer is needed: %w", name, sym, ErrNoNVRTC)
			return
		}
		lib.path = name
	})
	return lib.err
}

// Library is the NVRTC library loaded (a soname such as "libnvrtc.so.13",
// or the path of the file found), loading it on first use, or the error
// that loading gave: one wrapping ErrNoNVRTC when there is none.
func Library() (string, error) {
	if err := load(); err != nil {
		return "", err
	}
	return lib.path, nil
}
