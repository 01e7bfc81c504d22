package libload

import (
	"fmt"
	"sync"

	"github.com/gocuda/gocuda/cuda"
)

// Binding is one dlopen'd library as the package that calls it holds it:
// where to look (Library), how to fill the package's symbol table
// (Resolve, the cgo file's cl_install), what else must hold before the
// library is used (Ready), and how its failures are worded (Err). A
// package declares one, as a package variable, and calls Load before
// its first call into the library.
type Binding struct {
	Library
	// SetStream is the library's call that sets a handle's stream
	// ("cublasSetStream_v2"), named by the errors of StageStream; "" for
	// a library without one.
	SetStream string
	// Resolve fills the package's symbol table from the opened handle and
	// returns the first symbol it could not resolve, "" when all did (the
	// C side's cl_install; a stand-in without cgo, never called since
	// nothing opens there).
	Resolve func(handle uintptr) (missing string)
	// Ready, when set, runs once after Install succeeded, with the file
	// loaded: reading the library's version, refusing one too old. Its
	// error is every Load's.
	Ready func(file string) error

	once sync.Once
	file string
	err  error
}

// Load opens the library once per process (Search().Open()), fills the
// symbol table and runs Ready; it returns the file loaded (as tried: a
// soname or a path), or the error, the same on every call. The errors
// wrap the library's Sentinel (Open's and Installed's) or are Ready's.
func (b *Binding) Load() (string, error) {
	b.once.Do(func() {
		h, file, err := b.Search().Open()
		if err != nil {
			b.err = err
			return
		}
		if b.err = b.Installed(file, b.Resolve(h)); b.err != nil {
			return
		}
		if b.Ready != nil {
			if b.err = b.Ready(file); b.err != nil {
				return
			}
		}
		b.file = file
	})
	return b.file, b.err
}

// Stage is where a call through the binding failed: the stages of
// cudalib.h's cl_res, which the C side of every package's calls returns.
type Stage int

// The stages every library shares, numbered as cudalib.h's CL_ enum.
const (
	StageOK      Stage = iota
	StageContext       // making the device's context current (Code: a CUresult)
	StageStream        // setting the handle's stream (Code: the library's status)
	StageCall          // the library call itself (Code: the library's status)
	StageRestore       // putting the thread's context back (Code: a CUresult)
	// StageOwn is the first stage a package defines for itself (nccl's
	// check that a call is made inside the right group); the package
	// words those before calling Err.
	StageOwn
)

// Res is a C call's result: the stage that failed (StageOK for none) and
// its code there.
type Res struct {
	Stage Stage
	Code  int
}

// Err turns r into nil or the error of op on device: at the context
// stages an error naming the package, op and device and wrapping the
// driver's result (cuda.Result); at the others status's error for the
// library's code, named after SetStream at StageStream and after op
// otherwise.
func (b *Binding) Err(r Res, op string, device int, status func(op string, code int) error) error {
	switch r.Stage {
	case StageOK:
		return nil
	case StageContext:
		return fmt.Errorf("%s: %s on device %d: making the device's context current: %w", b.Pkg, op, device, cuda.Result(r.Code))
	case StageRestore:
		return fmt.Errorf("%s: %s on device %d: restoring the thread's previous context: %w", b.Pkg, op, device, cuda.Result(r.Code))
	case StageStream:
		return status(b.SetStream, r.Code)
	}
	return status(op, r.Code)
}

// Names are a library's status names, for its errors' texts.
type Names map[int]string

// Name is code's name, or "unknown".
func (n Names) Name(code int) string {
	if s, ok := n[code]; ok {
		return s
	}
	return "unknown"
}
