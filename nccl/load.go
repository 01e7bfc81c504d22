package nccl

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/gocuda/gocuda/config"
	"github.com/gocuda/gocuda/cuda"
)

// systemLibrary is NCCL's soname, found by the loader's usual search
// (LD_LIBRARY_PATH, ldconfig's cache).
const systemLibrary = "libnccl.so.2"

// pipLibrary is where pip's nvidia-nccl-cu12 (and -cu13) package puts the
// library, below a site-packages or dist-packages directory.
const pipLibrary = "nvidia/nccl/lib/libnccl.so.2"

// minVersion is the oldest NCCL with what this package calls
// (ncclCommInitRankConfig with nonblocking communicators, ncclCommFinalize,
// ncclGetLastError).
const minVersion = 21400

var lib struct {
	once    sync.Once
	path    string
	version int
	err     error
}

// load opens NCCL once per process and resolves its entry points; the
// result is kept.
func load() error {
	lib.once.Do(func() {
		cfg, err := config.FromEnv()
		if err != nil {
			lib.err = fmt.Errorf("nccl: %w", err)
			return
		}
		cands, searched := candidates(cfg.NCCLLibrary, os.LookupEnv, filepath.Glob)
		h, path, err := open(cands, searched, cfg.NCCLLibrary != "")
		if err != nil {
			lib.err = err
			return
		}
		switch sym := cInstall(h); sym {
		case "":
		case "libcuda.so.1":
			lib.err = fmt.Errorf("nccl: %s loaded, but the CUDA driver (libcuda.so.1) could not be opened: %w", path, ErrNoNCCL)
			return
		default:
			lib.err = fmt.Errorf("nccl: %s does not export %s; NCCL 2.14 or newer is needed: %w", path, sym, ErrNoNCCL)
			return
		}
		v, r := cVersion()
		if err := r.err("ncclGetVersion", nil); err != nil {
			lib.err = err
			return
		}
		if v < minVersion {
			lib.err = fmt.Errorf("nccl: %s is NCCL %s; 2.14 or newer is needed: %w", path, versionString(v), ErrNoNCCL)
			return
		}
		lib.path, lib.version = path, v
	})
	return lib.err
}

// candidates lists the files to try, in order: the one GOCUDA_NCCL_LIBRARY
// names, alone, when it is set; otherwise the system's libnccl.so.2, then
// every pip-installed copy found. searched is the pip patterns looked at,
// for the error when nothing loads.
func candidates(knob string, lookup func(string) (string, bool), glob func(string) ([]string, error)) (files, searched []string) {
	if knob != "" {
		return []string{knob}, nil
	}
	files = []string{systemLibrary}
	seen := map[string]bool{}
	for _, dir := range pythonDirs(lookup) {
		pattern := filepath.Join(dir, pipLibrary)
		searched = append(searched, pattern)
		matches, _ := glob(pattern)                        // only a malformed pattern errs, and ours are not
		sort.Sort(sort.Reverse(sort.StringSlice(matches))) // newest python3.N first, roughly
		for _, m := range matches {
			if !seen[m] {
				seen[m] = true
				files = append(files, m)
			}
		}
	}
	return files, searched
}

// pythonDirs are the site-packages and dist-packages directories of
// python3.* in the usual places: the active virtual environment or conda
// environment, the user's ~/.local, /usr/local/lib and /usr/lib (Debian's
// system packages sit in /usr/lib/python3/dist-packages).
func pythonDirs(lookup func(string) (string, bool)) []string {
	var roots []string
	for _, v := range []string{"VIRTUAL_ENV", "CONDA_PREFIX"} {
		if p, ok := lookup(v); ok && p != "" {
			roots = append(roots, filepath.Join(p, "lib"))
		}
	}
	if home, ok := lookup("HOME"); ok && home != "" {
		roots = append(roots, filepath.Join(home, ".local", "lib"))
	}
	roots = append(roots, "/usr/local/lib", "/usr/lib")
	var dirs []string
	for _, r := range roots {
		dirs = append(dirs, filepath.Join(r, "python3.*", "site-packages"), filepath.Join(r, "python3.*", "dist-packages"))
	}
	return append(dirs, "/usr/lib/python3/dist-packages")
}

// open tries files in order and returns the first that loads. It installs
// nothing, so tests can try files that do not exist. fromKnob says the one
// file came from GOCUDA_NCCL_LIBRARY.
func open(files, searched []string, fromKnob bool) (uintptr, string, error) {
	if !cgoAvailable() {
		return 0, "", fmt.Errorf("nccl: NCCL cannot be loaded: this program was built with CGO_ENABLED=0 (or for an OS without dlopen); rebuild with cgo, or use GOCUDA_BACKEND=host: %w", ErrNoNCCL)
	}
	var tried []string
	for _, f := range files {
		h, why := cOpen(f)
		if h != 0 {
			return h, f, nil
		}
		tried = append(tried, fmt.Sprintf("%s (%s)", f, why))
	}
	if fromKnob {
		return 0, "", fmt.Errorf("nccl: %s=%q names a library that does not load: %s; point it at a libnccl.so.2, or unset it to search the system and pip's nvidia-nccl: %w",
			config.EnvNCCL, files[0], tried[0], ErrNoNCCL)
	}
	msg := "tried " + strings.Join(tried, ", ")
	if len(searched) > 0 {
		msg += "; pip's NCCL was looked for as " + strings.Join(searched, ", ")
	}
	return 0, "", fmt.Errorf("nccl: no NCCL library could be loaded; %s. Install NCCL (the libnccl2 package, or pip install nvidia-nccl-cu12), or name the library with %s, or use GOCUDA_BACKEND=host: %w",
		msg, config.EnvNCCL, ErrNoNCCL)
}

// Library is the NCCL library loaded (its name or path, as it was
// found), or the error loading gave: an error wrapping ErrNoNCCL when
// there is none.
func Library() (string, error) {
	if err := load(); err != nil {
		return "", err
	}
	return lib.path, nil
}

// Version is the loaded NCCL's version.
func Version() (major, minor, patch int, err error) {
	if err := load(); err != nil {
		return 0, 0, 0, err
	}
	major, minor, patch = splitVersion(lib.version)
	return major, minor, patch, nil
}

// splitVersion reads NCCL_VERSION_CODE: major*10000 + minor*100 + patch
// from 2.9 on (major*1000 + minor*100 + patch before).
func splitVersion(v int) (major, minor, patch int) {
	if v < 10000 {
		return v / 1000, v % 1000 / 100, v % 100
	}
	return v / 10000, v % 10000 / 100, v % 100
}

func versionString(v int) string {
	a, b, c := splitVersion(v)
	return fmt.Sprintf("%d.%d.%d", a, b, c)
}

// NVLSVariable is NCCL's switch for NVLink SHARP (multicast). gocuda
// keeps it off: NewComm and NewComms set it to 0 in the process's
// environment before NCCL first reads it, unless it is already set, and
// Environ puts it in environments built for child processes.
const NVLSVariable = "NCCL_NVLS_ENABLE"

// keepNVLSOff sets NCCL_NVLS_ENABLE=0 where nobody set it. With cgo,
// os.Setenv also sets the C environment, which is where NCCL reads it.
func keepNVLSOff() {
	if _, ok := os.LookupEnv(NVLSVariable); !ok {
		_ = os.Setenv(NVLSVariable, "0") // fails only for a malformed name
	}
}

// Environ returns env (in os.Environ's form) with NCCL_NVLS_ENABLE=0
// added when env does not set it: the environment for a rank's process,
// so that NVLink multicast stays off there too. env itself is not changed.
func Environ(env []string) []string {
	out := append([]string(nil), env...)
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k == NVLSVariable {
			return out
		}
	}
	return append(out, NVLSVariable+"=0")
}

// cres is where a C call failed, if it did: the stage (the GN_ enum in
// the C preamble) and its code, a CUresult for the context stages and an
// ncclResult_t for the others.
type cres struct{ stage, code int }

const (
	stageOK = iota
	stageCtx
	stageCall
	stageRestore
	stageUngrouped
)

// where names the communicator a call was made on, for errors; nil
// before there is one.
type where struct {
	rank, device int
	comm         uintptr
}

// err turns a C call's result into nil or an error naming op.
func (r cres) err(op string, w *where) error {
	rank, dev, comm := -1, -1, uintptr(0)
	if w != nil {
		rank, dev, comm = w.rank, w.device, w.comm
	}
	switch r.stage {
	case stageOK:
		return nil
	case stageCtx:
		return fmt.Errorf("nccl: %s on device %d: making the device's context current: %w", op, dev, cuda.Result(r.code))
	case stageRestore:
		return fmt.Errorf("nccl: %s on device %d: restoring the thread's previous context: %w", op, dev, cuda.Result(r.code))
	case stageUngrouped:
		return fmt.Errorf("nccl: %s on rank %d: the communicator's group and this thread's disagree: inside Group, call the operations of the communicators it names from the goroutine that called Group, and no others: %w",
			op, rank, errInvalid)
	}
	res := Result(r.code)
	return &Error{Op: op, Rank: rank, Device: dev, Result: res, Text: cErrorString(res), Last: cLastError(comm)}
}
