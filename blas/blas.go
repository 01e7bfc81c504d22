package blas

import (
	"fmt"
	"math"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/internal/devstream"
	"github.com/gocuda/gocuda/kernels"
)

// Float is the element types BLAS runs on.
type Float interface{ float32 | float64 }

// errInvalid is what argument errors wrap.
var errInvalid = backend.ErrInvalidValue

// Gemm queues C = alpha·op(A)·op(B) + beta·C on stream s of dev, for
// row-major matrices: op(A) is m × k, op(B) is k × n, C is m × n.
//
// A is stored as an m × k matrix (k × m when transA) whose rows are lda
// elements apart, so lda ≥ max(1, its columns); likewise B (k × n, or
// n × k when transB) with ldb, and C (m × n) with ldc ≥ max(1, n). A
// pointer may be 0 only when its matrix has no elements. C must not share
// memory with A or B. With beta = 0, C is written without being read (NaN
// in C does not propagate); with k = 0, C becomes beta·C.
//
// It returns once the work is queued; the result is there when the stream
// reaches it, as for any kernel.
func Gemm[T Float](dev backend.Device, s backend.Stream, transA, transB bool, m, n, k int,
	alpha T, a backend.Ptr, lda int, b backend.Ptr, ldb int, beta T, c backend.Ptr, ldc int) error {
	g := gemmArgs{
		f32: isF32[T](), in: dtypeOf[T](), out: dtypeOf[T](), transA: transA, transB: transB, m: m, n: n, k: k,
		alpha: float64(alpha), a: a, lda: lda, b: b, ldb: ldb, beta: float64(beta), c: c, ldc: ldc,
	}
	t := target{op: "Gemm", in: g.in, out: g.out}
	if err := g.check(&t); err != nil {
		return err
	}
	if err := t.resolve(dev, s); err != nil {
		return err
	}
	if m == 0 || n == 0 {
		return nil
	}
	if k == 0 {
		return scaleRows(&t, c, m, n, ldc, g.beta)
	}
	if t.cu != nil {
		return cudaGemm(&t, &g)
	}
	return hostGemm(&t, &g)
}

// Gemv queues y = alpha·op(A)·x + beta·y on stream s of dev, for a
// row-major m × n matrix A whose rows are lda ≥ max(1, n) elements apart:
// op(A) is A, x has n elements and y m; with trans op(A) is Aᵀ, x has m
// elements and y n. x and y are contiguous. A pointer may be 0 only when
// its operand has no elements; y must not share memory with A or x. With
// an empty x, y becomes beta·y.
func Gemv[T Float](dev backend.Device, s backend.Stream, trans bool, m, n int,
	alpha T, a backend.Ptr, lda int, x backend.Ptr, beta T, y backend.Ptr) error {
	v := gemvArgs{
		f32: isF32[T](), trans: trans, m: m, n: n,
		alpha: float64(alpha), a: a, lda: lda, x: x, beta: float64(beta), y: y,
	}
	t := target{op: "Gemv", in: dtypeOf[T](), out: dtypeOf[T]()}
	if err := v.check(&t); err != nil {
		return err
	}
	if err := t.resolve(dev, s); err != nil {
		return err
	}
	lenX, lenY := v.lens()
	if lenY == 0 {
		return nil
	}
	if lenX == 0 {
		return scaleRows(&t, y, 1, lenY, lenY, v.beta)
	}
	if t.cu != nil {
		return cudaGemv(&t, &v)
	}
	return hostGemv(&t, &v)
}

// isF32 tells the two element types apart. The switch is on a zero value,
// which converts to an interface without allocating.
func isF32[T Float]() bool {
	var z T
	_, ok := any(z).(float32)
	return ok
}

// gemmArgs is one Gemm with its scalars widened to float64 (exact for
// float32), so that one code path serves both types.
type gemmArgs struct {
	f32            bool  // a Gemm of float32, rather than float64
	in, out        dtype // A's and B's type, C's
	transA, transB bool
	m, n, k        int
	alpha, beta    float64
	a, b, c        backend.Ptr
	lda, ldb, ldc  int
}

// gemvArgs is one Gemv, as gemmArgs is one Gemm.
type gemvArgs struct {
	f32         bool
	trans       bool
	m, n        int
	alpha, beta float64
	a, x, y     backend.Ptr
	lda         int
}

// lens is the lengths of x and y.
func (v *gemvArgs) lens() (lenX, lenY int) {
	if v.trans {
		return v.m, v.n
	}
	return v.n, v.m
}

// cuBLAS takes sizes and leading dimensions as C ints.
const maxDim = math.MaxInt32

// matrix is one operand as stored: rows × cols with rows ld apart.
type matrix struct {
	name       string
	p          backend.Ptr
	rows, cols int
	ld         int
	ldName     string
	dt         dtype
}

// elems is how many elements the matrix spans in memory.
func (mt matrix) elems() int {
	if mt.rows == 0 || mt.cols == 0 {
		return 0
	}
	return (mt.rows-1)*mt.ld + mt.cols
}

func (g *gemmArgs) matrices() [3]matrix {
	ar, ac := g.m, g.k
	if g.transA {
		ar, ac = g.k, g.m
	}
	br, bc := g.k, g.n
	if g.transB {
		br, bc = g.n, g.k
	}
	return [3]matrix{
		{"A", g.a, ar, ac, g.lda, "lda", g.in},
		{"B", g.b, br, bc, g.ldb, "ldb", g.in},
		{"C", g.c, g.m, g.n, g.ldc, "ldc", g.out},
	}
}

func (g *gemmArgs) check(t *target) error {
	if err := g.checkShapes(t); err != nil {
		return err
	}
	return g.checkPointers(t)
}

// checkShapes checks the sizes and leading dimensions.
func (g *gemmArgs) checkShapes(t *target) error {
	for _, d := range [...]struct {
		name string
		v    int
	}{{"m", g.m}, {"n", g.n}, {"k", g.k}} {
		if d.v < 0 || d.v > maxDim {
			return t.errorf("%s = %d: sizes must be between 0 and %d: %w", d.name, d.v, maxDim, errInvalid)
		}
	}
	for _, mt := range g.matrices() {
		if err := t.checkMatrix(mt); err != nil {
			return err
		}
	}
	return nil
}

// checkPointers checks the pointers of the operands that are read or
// written.
func (g *gemmArgs) checkPointers(t *target) error {
	mats := g.matrices()
	if g.m == 0 || g.n == 0 {
		return nil
	}
	// A and B are read only when the product has terms; C always.
	for _, mt := range mats[:2] {
		if g.k > 0 {
			if err := t.checkPtr(mt.name, mt.p, mt.dt); err != nil {
				return err
			}
		}
	}
	return t.checkPtr("C", g.c, g.out)
}

func (v *gemvArgs) check(t *target) error {
	if v.m < 0 || v.m > maxDim || v.n < 0 || v.n > maxDim {
		return t.errorf("m = %d, n = %d: sizes must be between 0 and %d: %w", v.m, v.n, maxDim, errInvalid)
	}
	if err := t.checkMatrix(matrix{"A", v.a, v.m, v.n, v.lda, "lda", t.in}); err != nil {
		return err
	}
	lenX, lenY := v.lens()
	if lenY == 0 {
		return nil
	}
	if lenX > 0 {
		if err := t.checkPtr("A", v.a, t.in); err != nil {
			return err
		}
		if err := t.checkPtr("x", v.x, t.in); err != nil {
			return err
		}
	}
	return t.checkPtr("y", v.y, t.out)
}

func (t *target) checkMatrix(mt matrix) error {
	if mt.ld < max(1, mt.cols) || mt.ld > maxDim {
		return t.errorf("%s = %d for %s, stored as %d × %d: it must be at least max(1, %d) (the stored columns) and at most %d: %w",
			mt.ldName, mt.ld, mt.name, mt.rows, mt.cols, mt.cols, maxDim, errInvalid)
	}
	if size := mt.dt.size(); uint64(mt.elems()) > maxBytes/size {
		return t.errorf("%s spans %d elements, more than any device holds: %w", mt.name, mt.elems(), errInvalid)
	}
	return nil
}

// maxBytes bounds an operand's bytes so that sizes never overflow.
const maxBytes = 1 << 62

func (t *target) checkPtr(name string, p backend.Ptr, dt dtype) error {
	if p == 0 {
		return t.errorf("pointer %s is nil: %w", name, errInvalid)
	}
	if size := dt.size(); uint64(p)%size != 0 {
		return t.errorf("pointer %s = %#x is not %d-byte aligned, as %s elements must be: %w",
			name, uintptr(p), size, dt, errInvalid)
	}
	return nil
}

// target is where one operation runs: a CUDA stream or a host stream.
type target struct {
	op      string // "Gemm"
	in, out dtype  // the inputs' element type, the output's
	cublas  string // the cuBLAS function called, for errors; "" for the one cublasName derives

	cu devstream.GPU // the CUDA backend, or
	cs *cuda.Stream
	hs devstream.HostStream // the host backend
	s  backend.Stream
	d  backend.Device
}

// size is the output's element size.
func (t *target) size() uint64 { return t.out.size() }

// dtype is "float32", or "bfloat16 to float32" where the output's type
// is not the inputs'.
func (t *target) dtype() string {
	if t.in == t.out {
		return t.in.String()
	}
	return t.in.String() + " to " + t.out.String()
}

// cublasName is the cuBLAS function t's operation calls, for errors.
func (t *target) cublasName() string {
	if t.cublas != "" {
		return t.cublas
	}
	p := "cublasD"
	if t.in == f32 {
		p = "cublasS"
	}
	if t.op == "Gemm" {
		return p + "gemm_v2"
	}
	return p + "gemv_v2"
}

func (t *target) errorf(format string, args ...any) error {
	return fmt.Errorf("blas: "+t.op+" "+t.dtype()+": "+format, args...)
}

// resolve finds the backend of dev and checks that s is one of its
// streams.
func (t *target) resolve(dev backend.Device, s backend.Stream) error {
	on, err := devstream.Resolve(dev, s)
	if err != nil {
		return t.errorf("%w", err)
	}
	t.d, t.s = dev, s
	if on.GPU != nil {
		t.cu, t.cs = on.GPU, on.GPUStream.CUDA()
	} else {
		t.hs = on.HostStream
	}
	return nil
}

// scaleRows sets each of rows rows of cols elements, ld apart, at p to
// beta times itself: what a product with no terms leaves. It uses the
// kernels package rather than BLAS because reference BLAS (and so, by
// contract, cuBLAS) returns early from gemv when the product is empty
// without scaling y, and gonum rejects the nil operands such a product may
// have. beta = 0 writes zeros, so NaN in C does not survive.
func scaleRows(t *target, p backend.Ptr, rows, cols, ld int, beta float64) error {
	if beta == 1 {
		return nil
	}
	if ld == cols { // contiguous: one kernel
		cols, rows = rows*cols, 1
	}
	for r := range rows {
		q := p + backend.Ptr(uint64(r)*uint64(ld)*t.size())
		var err error
		switch {
		case t.out == f32 && beta == 0:
			err = kernels.Fill[float32](t.d, t.s, q, 0, cols)
		case t.out == f32:
			err = kernels.Scale(t.d, t.s, float32(beta), q, cols)
		case beta == 0:
			err = kernels.Fill[float64](t.d, t.s, q, 0, cols)
		default:
			err = kernels.Scale(t.d, t.s, beta, q, cols)
		}
		if err != nil {
			return fmt.Errorf("blas: %s: scaling by beta: %w", t.op, err)
		}
	}
	return nil
}
