package blas

import (
	"fmt"
	"regexp"
	"sync"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/config"
	"github.com/gocuda/gocuda/internal/devstream"
	"github.com/gocuda/gocuda/internal/libload"
)

// library is cuBLAS as package libload binds it: the file
// GOCUDA_CUBLAS_LIBRARY names, alone, when set; else libcublas.so.13, .12,
// .11 and libcublas.so no newer than the driver (a newer cuBLAS loads but
// fails at cublasCreate, and an older one beside it would have worked),
// the toolkit's folders, and the folders of cuBLAS's Python wheels
// (PyTorch installs them): nvidia-cublas-cu12 in nvidia/cublas/lib, CUDA
// 13's nvidia-cublas in nvidia/cu13/lib. Its symbol table is in
// cublas_cgo.go.
var library = libload.Binding{
	Library: libload.Library{
		Pkg: "blas", Name: "cuBLAS", Knob: config.EnvCUBLASLibrary,
		Sonames: []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so"},
		// libcublas.so.12.8.4.1 and its links; not libcublasLt.so.12.
		File:          regexp.MustCompile(`^libcublas\.so(\.[0-9]+)*$`),
		WheelDirs:     []string{"nvidia/cu13/lib", "nvidia/cublas/lib"},
		Toolkit:       true,
		CUDAVersioned: true,
		Install:       "the CUDA toolkit's cuBLAS (libcublas: the cuda-libraries or libcublas package, or pip's nvidia-cublas-cu12)",
		HostBackend:   true,
		Need:          "cuBLAS from CUDA 11 or newer",
		Sentinel:      ErrNoCUBLAS,
	},
	SetStream: "cublasSetStream_v2",
	Resolve:   cInstall,
}

// load opens cuBLAS once per process and resolves its entry points; the
// result is kept.
func load() error {
	_, err := library.Load()
	return err
}

// Library is the cuBLAS library loaded ("libcublas.so.12"), or the error
// that loading gave: an error wrapping ErrNoCUBLAS when there is none.
func Library() (string, error) { return library.Load() }

// handle is a device's cuBLAS handle. cuBLAS handles are costly to create
// (cublasCreate allocates workspace on the device and takes on the order
// of a millisecond), so each device has one for the life of the process,
// made on first use. Its stream is set under mu for each call; stream
// remembers the last one set so that work on one stream, the common case,
// skips cublasSetStream.
type handle struct {
	dev     devstream.GPU
	ctx     uintptr
	h       uintptr
	version int

	mu     sync.Mutex
	stream uintptr // the CUstream h was last set to; 0 (the legacy default stream) until then
}

var handles sync.Map // devstream.GPU → *handle

// handleCreate serializes creation so that a device never gets two.
var handleCreate sync.Mutex

// handleFor returns dev's handle, loading cuBLAS and creating the handle on
// first use.
func handleFor(op string, dev devstream.GPU) (*handle, error) {
	if v, ok := handles.Load(dev); ok {
		return v.(*handle), nil
	}
	if err := load(); err != nil {
		return nil, fmt.Errorf("blas: %s on device %d: %w", op, dev.Ordinal(), err)
	}
	handleCreate.Lock()
	defer handleCreate.Unlock()
	if v, ok := handles.Load(dev); ok {
		return v.(*handle), nil
	}
	ctx := dev.Context().Handle()
	h, version, r := cCreate(ctx)
	if err := r.err("cublasCreate_v2", dev.Ordinal()); err != nil {
		return nil, err
	}
	hd := &handle{dev: dev, ctx: ctx, h: h, version: version}
	handles.Store(dev, hd)
	return hd, nil
}

// Version is the cuBLAS version on dev as cuBLAS encodes it
// (major*10000 + minor*100 + patch for cuBLAS 11 and newer, 120904 for
// 12.9.4), creating dev's handle if it has none yet. dev must be a CUDA
// backend device: the host backend has no cuBLAS (an error wrapping
// backend.ErrNotSupported).
func Version(dev backend.Device) (int, error) {
	on, err := devstream.Device(dev)
	if err != nil {
		return 0, fmt.Errorf("blas: Version: %w", err)
	}
	if on.GPU == nil {
		return 0, fmt.Errorf("blas: Version: device %d is a host device, which runs BLAS with gonum, not cuBLAS: %w", dev.Ordinal(), backend.ErrNotSupported)
	}
	h, err := handleFor("Version", on.GPU)
	if err != nil {
		return 0, err
	}
	return h.version, nil
}

// call runs one cuBLAS operation on stream s with h's stream set to it.
func (h *handle) call(s uintptr, fn func(setStream bool) cres) cres {
	h.mu.Lock()
	set := h.stream != s
	r := fn(set)
	if set && r.Stage != libload.StageStream && r.Stage != libload.StageContext {
		h.stream = s
	}
	h.mu.Unlock()
	return r
}

// cudaGemm runs g with cuBLAS. cuBLAS is column-major, and a row-major
// matrix read column-major is its transpose; so row-major C = op(A) op(B)
// is column-major Cᵀ = op(B)ᵀ op(A)ᵀ: the operands swap places (and m and
// n with them), the transpose flags stay with their operands, and nothing
// is copied.
func cudaGemm(t *target, g *gemmArgs) error {
	h, err := handleFor(t.op, t.cu)
	if err != nil {
		return err
	}
	if g.f32 && TF32() {
		in := t.d.Info()
		if compute, _ := computeFor(f32, in.Major, in.Minor, true); compute == computeF32TF32 {
			t.cublas = "cublasGemmEx"
			return cudaGemmEx(t, &exArgs{gemmArgs: *g, batch: 1}, compute)
		}
	}
	s := t.cs.Handle()
	ta, tb := op(g.transA), op(g.transB)
	a, b, c := uintptr(g.a), uintptr(g.b), uintptr(g.c)
	var r cres
	if g.f32 {
		r = h.call(s, func(set bool) cres {
			return cSgemm(h.ctx, h.h, s, set, tb, ta, g.n, g.m, g.k, float32(g.alpha), b, g.ldb, a, g.lda, float32(g.beta), c, g.ldc)
		})
	} else {
		r = h.call(s, func(set bool) cres {
			return cDgemm(h.ctx, h.h, s, set, tb, ta, g.n, g.m, g.k, g.alpha, b, g.ldb, a, g.lda, g.beta, c, g.ldc)
		})
	}
	return r.err(t.cublasName(), t.cu.Ordinal())
}

// cudaGemv runs v with cuBLAS. The row-major m × n A is the column-major
// n × m Aᵀ, so A x is cuBLAS's transposed product of that matrix and Aᵀ x
// its plain one.
func cudaGemv(t *target, v *gemvArgs) error {
	h, err := handleFor(t.op, t.cu)
	if err != nil {
		return err
	}
	s := t.cs.Handle()
	tr := op(!v.trans)
	a, x, y := uintptr(v.a), uintptr(v.x), uintptr(v.y)
	var r cres
	if v.f32 {
		r = h.call(s, func(set bool) cres {
			return cSgemv(h.ctx, h.h, s, set, tr, v.n, v.m, float32(v.alpha), a, v.lda, x, float32(v.beta), y)
		})
	} else {
		r = h.call(s, func(set bool) cres {
			return cDgemv(h.ctx, h.h, s, set, tr, v.n, v.m, v.alpha, a, v.lda, x, v.beta, y)
		})
	}
	return r.err(t.cublasName(), t.cu.Ordinal())
}

// op is a cublasOperation_t: CUBLAS_OP_N = 0, CUBLAS_OP_T = 1.
func op(trans bool) int {
	if trans {
		return 1
	}
	return 0
}

// exCall is one cublasGemmEx or cublasGemmStridedBatchedEx as the C side
// (gb_gemm_ex) takes it: operands already swapped for column-major,
// strides in elements.
type exCall struct {
	batched                bool
	ta, tb                 int
	m, n, k                int
	alpha, beta            float64
	a, b, c                uintptr
	atype, btype, ctype    int
	lda, ldb, ldc          int
	strideA, strideB, strC int64
	batch, compute         int
}

// cudaGemmEx runs x with cuBLAS, swapped for row-major as cudaGemm is:
// column-major Cᵀ = op(B)ᵀ·op(A)ᵀ, B first, m and n exchanged.
func cudaGemmEx(t *target, x *exArgs, compute int) error {
	h, err := handleFor(t.op, t.cu)
	if err != nil {
		return err
	}
	s := t.cs.Handle()
	call := exCall{
		batched: x.strided, ta: op(x.transB), tb: op(x.transA), m: x.n, n: x.m, k: x.k,
		alpha: x.alpha, beta: x.beta,
		a: uintptr(x.b), atype: x.in.cuda(), lda: x.ldb, strideA: int64(x.strideB),
		b: uintptr(x.a), btype: x.in.cuda(), ldb: x.lda, strideB: int64(x.strideA),
		c: uintptr(x.c), ctype: x.out.cuda(), ldc: x.ldc, strC: int64(x.strideC),
		batch: x.batch, compute: compute,
	}
	if x.k == 0 {
		// No terms (a 16-bit C scaled by beta): A and B are not read and
		// may be nil, which cuBLAS might refuse; C stands in for them.
		call.a, call.b = call.c, call.c
	}
	r := h.call(s, func(set bool) cres { return cGemmEx(h.ctx, h.h, s, set, &call) })
	return r.err(t.cublasName(), t.cu.Ordinal())
}
