// Package libload is the one binding through which gocuda calls the CUDA
// libraries it loads at run time with dlopen (cuBLAS, cuRAND, NCCL,
// NVRTC): it finds and opens a library, fills the calling package's symbol
// table, makes a device's context current around each call, and words the
// failures, so that every library is looked for the same way, fails with
// the same kind of message, and a new one is one small package.
//
// It has two halves. The Go half: a Library says what to look for and how
// to word a failure; a Binding adds the package's symbol table (Resolve),
// what must hold before first use (Ready) and the call stages' errors
// (Err, Res, Stage). The C half is cudalib.h, which each binding package
// includes from its one cgo file: from the package's list of entry points
// it declares one pointer per entry point, resolves them all (cl_install,
// naming the first one missing), and brackets each call with the device's
// context (cl_enter and cl_leave, CL_IN_CONTEXT) inside the same C call,
// since a goroutine may change threads between two Go statements.
//
// The binding lives here, beside the search, rather than in a package of
// its own: every binding package needs both halves, a Binding is a Library
// with three more fields, and the header sits in the one folder the
// packages put on their include path.
//
// # Search
//
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
// When nothing loads, the error names every file tried with the loader's
// reason, every folder searched, what to install and the variable to set.
//
// # A new library package
//
// A package binding a CUDA library (here cuFFT) is these files: errors.go,
// load.go, cufft_cgo.go, cufft_nocgo.go, doc.go and the package's API
// (cufft.go, and host.go where the host backend has an implementation).
// The package's API reaches its backend through internal/devstream, in
// one place.
//
// cufft_cgo.go (//go:build cgo && linux) is the symbol table and the
// calls. Each call that needs the device's context enters it inside the C
// call; its result is a cl_res (the stage that failed and its code):
//
//	/*
//	#cgo linux LDFLAGS: -ldl
//	#cgo CFLAGS: -I${SRCDIR}/../internal/libload
//	typedef int cufftResult;   // the library's own types: no CUDA headers
//	typedef int cufftHandle;
//	#define CL_SYMBOLS(FN) \
//	FN(cufftResult, cufftPlan1d, (cufftHandle*, int, int, int)) \
//	FN(cufftResult, cufftSetStream, (cufftHandle, CUstream)) \
//	FN(cufftResult, cufftExecC2C, (cufftHandle, void*, void*, int)) \
//	FN(cufftResult, cufftDestroy, (cufftHandle))
//	#define CL_CONTEXT         // its calls run in a device's context
//	#include "cudalib.h"
//
//	static cl_res cf_plan1d(uintptr_t ctx, int *plan, int n, int type, int batch) {
//		CL_IN_CONTEXT(ctx, p_cufftPlan1d(plan, n, type, batch))
//	}
//	static cl_res cf_exec_c2c(uintptr_t ctx, int plan, uintptr_t stream, uintptr_t in, uintptr_t out, int dir) {
//		cl_ctx st;
//		CL_ENTER(ctx, &st);
//		cl_res o = cl_res_of(CL_STREAM, p_cufftSetStream(plan, (CUstream)stream));
//		if (o.stage == CL_OK) o = cl_res_of(CL_CALL, p_cufftExecC2C(plan, (void*)in, (void*)out, dir));
//		return cl_leave(&st, o);
//	}
//	*/
//	import "C"
//
//	func cInstall(lib uintptr) string { return C.GoString(C.cl_install(C.uintptr_t(lib))) }
//
//	func res(o C.cl_res) cres { return cres{Stage: libload.Stage(o.stage), Code: int(o.code)} }
//
//	func cPlan1d(ctx uintptr, n, typ, batch int) (int, cres) {
//		var plan C.int
//		o := C.cf_plan1d(C.uintptr_t(ctx), &plan, C.int(n), C.int(typ), C.int(batch))
//		return int(plan), res(o)
//	}
//
// cufft_nocgo.go (//go:build !cgo || !linux) has a stand-in for each c
// function, returning a failed cres; none is reached, since without cgo
// the library does not open:
//
//	func cInstall(lib uintptr) string { return "dlopen" }
//	func cPlan1d(ctx uintptr, n, typ, batch int) (int, cres) {
//		return 0, cres{Stage: libload.StageCall, Code: int(StatusSetupFailed)}
//	}
//
// load.go is where to look and the symbol table to fill:
//
//	var library = libload.Binding{
//		Library: libload.Library{
//			Pkg: "cufft", Name: "cuFFT", Knob: config.EnvCUFFTLibrary,
//			Sonames:  []string{"libcufft.so.12", "libcufft.so.11", "libcufft.so"},
//			File:     regexp.MustCompile(`^libcufft\.so(\.[0-9]+)*$`),
//			WheelDirs: []string{"nvidia/cu13/lib", "nvidia/cufft/lib"},
//			Toolkit:  true, HostBackend: true,
//			CUDAVersioned: true, MajorBehindCUDA: 1, // libcufft.so.12 is CUDA 13's
//			Install:  "the CUDA toolkit's cuFFT (libcufft, or pip's nvidia-cufft-cu12)",
//			Need:     "cuFFT from CUDA 11 or newer",
//			Sentinel: ErrNoCUFFT,
//		},
//		SetStream: "cufftSetStream",
//		Resolve:   cInstall,
//	}
//
//	// Library is the cuFFT loaded, or why none could be.
//	func Library() (string, error) { return library.Load() }
//
// errors.go is the sentinel, the status names and the error of a call:
//
//	var ErrNoCUFFT = errors.New("cuFFT not found")
//
//	type Status int // a cufftResult
//	var statusNames = libload.Names{1: "CUFFT_INVALID_PLAN", 2: "CUFFT_ALLOC_FAILED" ...}
//	func (s Status) Error() string { return fmt.Sprintf("cuFFT status %d (%s)", int(s), statusNames.Name(int(s))) }
//
//	type Error struct { Op string; Device int; Status Status }   // with Error() and Is
//
//	type cres libload.Res
//
//	func (r cres) err(op string, device int) error {
//		return library.Err(libload.Res(r), op, device, func(op string, code int) error {
//			return &Error{Op: op, Device: device, Status: Status(code)}
//		})
//	}
//
// A call is then library.Load(), the C call, and r.err(op, device): nil,
// or "cufft: cufftExecC2C on device 0: making the device's context
// current: ..." at the context stages, or the package's Error naming
// cufftSetStream or the call itself.
package libload
