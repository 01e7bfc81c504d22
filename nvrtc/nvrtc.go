package nvrtc

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// ErrNoNVRTC is wrapped by every error that comes from NVRTC being absent:
// no library could be loaded, or the program was built without cgo. The
// message names every file tried with the loader's reason, and the
// folders searched.
var ErrNoNVRTC = errors.New("NVRTC not found")

// Status is an nvrtcResult. Status values are errors, so the constants
// below work with errors.Is against a *CompileError.
type Status int

// The results NVRTC documents (values from nvrtc.h).
const (
	StatusOutOfMemory             Status = 1
	StatusProgramCreationFailure  Status = 2
	StatusInvalidInput            Status = 3
	StatusInvalidProgram          Status = 4
	StatusInvalidOption           Status = 5
	StatusCompilation             Status = 6
	StatusBuiltinOperationFailure Status = 7
	StatusInternalError           Status = 11
)

// statusNames are nvrtc.h's names, for messages even when the library
// (whose nvrtcGetErrorString says the same) is not loaded.
var statusNames = map[Status]string{
	StatusOutOfMemory:             "NVRTC_ERROR_OUT_OF_MEMORY",
	StatusProgramCreationFailure:  "NVRTC_ERROR_PROGRAM_CREATION_FAILURE",
	StatusInvalidInput:            "NVRTC_ERROR_INVALID_INPUT",
	StatusInvalidProgram:          "NVRTC_ERROR_INVALID_PROGRAM",
	StatusInvalidOption:           "NVRTC_ERROR_INVALID_OPTION",
	StatusCompilation:             "NVRTC_ERROR_COMPILATION",
	StatusBuiltinOperationFailure: "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE",
	8:                             "NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION",
	9:                             "NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION",
	10:                            "NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID",
	StatusInternalError:           "NVRTC_ERROR_INTERNAL_ERROR",
	12:                            "NVRTC_ERROR_TIME_FILE_WRITE_FAILED",
	missingCall:                   "not exported by this NVRTC",
}

func (s Status) Error() string {
	if n, ok := statusNames[s]; ok {
		return fmt.Sprintf("%s (%d)", n, int(s))
	}
	return fmt.Sprintf("nvrtcResult %d", int(s))
}

// CompileError is a compilation NVRTC refused: the program's name, the
// options, NVRTC's result and its log, which holds the compiler's
// messages with line numbers. It matches its Status with errors.Is.
type CompileError struct {
	Name    string
	Options []string
	Status  Status
	// Stage is the NVRTC call that failed: nvrtcCreateProgram,
	// nvrtcCompileProgram, or a call reading the output.
	Stage string
	Log   string
}

func (e *CompileError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "nvrtc: compiling %s", e.Name)
	if len(e.Options) > 0 {
		fmt.Fprintf(&b, " with %s", strings.Join(e.Options, " "))
	}
	fmt.Fprintf(&b, ": %s: %v", e.Stage, e.Status)
	if log := strings.TrimSpace(e.Log); log != "" {
		b.WriteString(":\n")
		b.WriteString(log)
	}
	return b.String()
}

func (e *CompileError) Unwrap() error { return e.Status }

// Version is the NVRTC version (12, 9 for CUDA 12.9's), loading NVRTC on
// first use.
func Version() (major, minor int, err error) {
	if err := load(); err != nil {
		return 0, 0, err
	}
	ma, mi, r := cVersion()
	if r != 0 {
		return 0, 0, fmt.Errorf("nvrtc: nvrtcVersion: %w", Status(r))
	}
	return ma, mi, nil
}

var archs = sync.OnceValues(func() ([]int, error) {
	if err := load(); err != nil {
		return nil, err
	}
	a, r := cSupportedArchs()
	if r != 0 {
		return nil, fmt.Errorf("nvrtc: nvrtcGetSupportedArchs: %w", Status(r))
	}
	return a, nil
})

// SupportedArchs lists the GPU architectures this NVRTC compiles for, as
// compute capabilities times ten (75, 80, 86, 89, 90, …), ascending.
func SupportedArchs() ([]int, error) {
	a, err := archs()
	return append([]int(nil), a...), err
}

// Result is a compiled program.
type Result struct {
	// Image is what the driver loads (cuda.Context.LoadModule): PTX text,
	// or a cubin (ELF) when the options named a real architecture
	// ("-arch=sm_90"). PTX has no terminating NUL.
	Image []byte
	// Cubin says that Image is a cubin, not PTX.
	Cubin bool
	// Log is NVRTC's log: empty, or the warnings of a program that
	// compiled.
	Log string
}

// Compile compiles CUDA C++ source with NVRTC. name is the program's name
// as messages show it ("saxpy.cu"); options are nvcc-style
// ("-arch=sm_90", "-use_fast_math", "-DN=4", "--std=c++17"). Kernels
// meant to be looked up by name must be extern "C" (else their names are
// mangled). With a virtual architecture (-arch=compute_90, or none, which
// is NVRTC's default) the result is PTX, which the driver compiles for
// the GPU at load; with a real one (-arch=sm_90) it is a cubin for that
// GPU alone, which loads with no further compilation.
//
// A program NVRTC rejects is a *CompileError carrying NVRTC's log; a
// missing NVRTC is an error wrapping ErrNoNVRTC. Compile is safe for
// concurrent use.
func Compile(source, name string, options ...string) (Result, error) {
	if err := load(); err != nil {
		return Result{}, err
	}
	if name == "" {
		name = "program.cu"
	}
	fail := func(stage string, r int, log []byte) (Result, error) {
		return Result{}, &CompileError{Name: name, Options: options, Status: Status(r), Stage: stage, Log: string(trimNUL(log))}
	}
	if strings.IndexByte(source, 0) >= 0 {
		return fail("nvrtcCreateProgram", int(StatusInvalidInput), []byte("the source holds a NUL byte, which would end it early"))
	}
	for _, o := range options {
		if strings.IndexByte(o, 0) >= 0 {
			return fail("nvrtcCompileProgram", int(StatusInvalidOption), []byte(fmt.Sprintf("option %q holds a NUL byte", o)))
		}
	}
	p, r := cCreate(source, name)
	if r != 0 {
		return fail("nvrtcCreateProgram", r, nil)
	}
	defer p.destroy()
	cr := p.compile(options)
	log, lr := p.log()
	if lr != 0 {
		log = []byte(fmt.Sprintf("(the log could not be read: %v)", Status(lr)))
	}
	if cr != 0 {
		return fail("nvrtcCompileProgram", cr, log)
	}
	res := Result{Log: string(trimNUL(log))}
	// A cubin exists when the options named a real architecture; NVRTCs
	// without the cubin calls (before 11.1) only make PTX.
	cub, r := p.cubin()
	if r != 0 && r != missingCall {
		return fail("nvrtcGetCUBIN", r, log)
	}
	if len(cub) > 0 {
		res.Image, res.Cubin = cub, true
		return res, nil
	}
	ptx, r := p.ptx()
	if r != 0 {
		return fail("nvrtcGetPTX", r, log)
	}
	res.Image = trimNUL(ptx)
	return res, nil
}

// trimNUL drops the terminating NUL NVRTC writes after text.
func trimNUL(b []byte) []byte { return bytes.TrimRight(b, "\x00") }
