package nccl

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"

	"github.com/gocuda/gocuda/config"
	"github.com/gocuda/gocuda/internal/libload"
)

// library is NCCL as package libload binds it: the file
// GOCUDA_NCCL_LIBRARY names, alone, when set; else libnccl.so.2 through the
// loader's search (LD_LIBRARY_PATH, ldconfig's cache), then the copies
// pip's nvidia-nccl-cu12 (and -cu13) put in nvidia/nccl/lib. Its ".2" is
// NCCL's own major version, not CUDA's. Its symbol table is in
// nccl_cgo.go; loading checks the version.
var library = libload.Binding{
	Library: libload.Library{
		Pkg: "nccl", Name: "NCCL", Knob: config.EnvNCCL,
		Sonames:     []string{"libnccl.so.2"},
		File:        regexp.MustCompile(`^libnccl\.so(\.[0-9]+)*$`),
		WheelDirs:   []string{"nvidia/nccl/lib"},
		Install:     "NCCL (the libnccl2 package, or pip install nvidia-nccl-cu12)",
		HostBackend: true,
		Need:        "NCCL 2.14 or newer",
		Sentinel:    ErrNoNCCL,
	},
	Resolve: cInstall,
}

// Ready is set here, not in library's declaration: it words its error
// through library.
func init() { library.Ready = checkVersion }

// minVersion is the oldest NCCL with what this package calls
// (ncclCommInitRankConfig with nonblocking communicators, ncclCommFinalize,
// ncclGetLastError).
const minVersion = 21400

// version is the loaded NCCL's, set once by checkVersion.
var version int

func checkVersion(file string) error {
	v, r := cVersion()
	if err := r.err("ncclGetVersion", nil); err != nil {
		return err
	}
	if v < minVersion {
		return fmt.Errorf("nccl: %s is NCCL %s; 2.14 or newer is needed: %w", file, versionString(v), ErrNoNCCL)
	}
	version = v
	return nil
}

// configErr is the error of the GOCUDA_ variables, read once: one that
// does not parse stops NCCL as it stops the rest of gocuda.
var configErr = sync.OnceValue(func() error {
	if _, err := config.FromEnv(); err != nil {
		return fmt.Errorf("nccl: %w", err)
	}
	return nil
})

// load opens NCCL once per process and resolves its entry points; the
// result is kept.
func load() error {
	if err := configErr(); err != nil {
		return err
	}
	_, err := library.Load()
	return err
}

// Library is the NCCL library loaded (its name or path, as it was
// found), or the error loading gave: an error wrapping ErrNoNCCL when
// there is none.
func Library() (string, error) {
	if err := configErr(); err != nil {
		return "", err
	}
	return library.Load()
}

// Version is the loaded NCCL's version.
func Version() (major, minor, patch int, err error) {
	if err := load(); err != nil {
		return 0, 0, 0, err
	}
	major, minor, patch = splitVersion(version)
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

// cres is a C call's result (cudalib.h's cl_res): the stage that failed
// and its code, a CUresult for the context stages and an ncclResult_t for
// the others.
type cres libload.Res

// stageUngrouped is an operation refused because its communicator's group
// and the thread's disagree (the C side's GN_UNGROUPED).
const stageUngrouped = libload.StageOwn

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
	if r.Stage == stageUngrouped {
		return fmt.Errorf("nccl: %s on rank %d: the communicator's group and this thread's disagree: inside Group, call the operations of the communicators it names from the goroutine that called Group, and no others: %w",
			op, rank, errInvalid)
	}
	return library.Err(libload.Res(r), op, dev, func(op string, code int) error {
		res := Result(code)
		return &Error{Op: op, Rank: rank, Device: dev, Result: res, Text: cErrorString(res), Last: cLastError(comm)}
	})
}
