package blas

import (
	"slices"
	"unsafe"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/host"
	"github.com/gocuda/gocuda/half"
)

// The host backend's BLAS is gonum's, in pure Go, over views of the host
// device's memory (real process memory at the backend.Ptr address). Each
// operation is queued with the host stream's Enqueue (devstream.HostStream),
// so it runs on the stream's goroutine after the work queued before it,
// exactly as a cuBLAS call is ordered on a GPU stream. gonum is row-major, like our API: nothing is
// swapped. The arguments were checked before queueing, so gonum's own
// checks, which panic, cannot fail on the stream's goroutine.

var impl gonum.Implementation

func trans(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}

func hostGemm(t *target, gp *gemmArgs) error {
	g := *gp // the closure captures a copy: gp stays on the caller's stack
	mats := g.matrices()
	ta, tb := trans(g.transA), trans(g.transB)
	var fn func()
	if g.f32 {
		a, b, c := view[float32](mats[0]), view[float32](mats[1]), view[float32](mats[2])
		alpha, beta := float32(g.alpha), float32(g.beta)
		fn = func() { impl.Sgemm(ta, tb, g.m, g.n, g.k, alpha, a, g.lda, b, g.ldb, beta, c, g.ldc) }
	} else {
		a, b, c := view[float64](mats[0]), view[float64](mats[1]), view[float64](mats[2])
		fn = func() { impl.Dgemm(ta, tb, g.m, g.n, g.k, g.alpha, a, g.lda, b, g.ldb, g.beta, c, g.ldc) }
	}
	return t.enqueue(fn, access(mats[0], false), access(mats[1], false), access(mats[2], true))
}

func hostGemv(t *target, vp *gemvArgs) error {
	v := *vp // as in hostGemm
	lenX, lenY := v.lens()
	a := matrix{p: v.a, rows: v.m, cols: v.n, ld: v.lda, dt: t.in}
	xm := matrix{p: v.x, rows: 1, cols: lenX, ld: lenX, dt: t.in}
	ym := matrix{p: v.y, rows: 1, cols: lenY, ld: lenY, dt: t.out}
	tr := trans(v.trans)
	var fn func()
	if v.f32 {
		av, x, y := view[float32](a), view[float32](xm), view[float32](ym)
		alpha, beta := float32(v.alpha), float32(v.beta)
		fn = func() { impl.Sgemv(tr, v.m, v.n, alpha, av, v.lda, x, 1, beta, y, 1) }
	} else {
		av, x, y := view[float64](a), view[float64](xm), view[float64](ym)
		fn = func() { impl.Dgemv(tr, v.m, v.n, v.alpha, av, v.lda, x, 1, v.beta, y, 1) }
	}
	return t.enqueue(fn, access(a, false), access(xm, false), access(ym, true))
}

// enqueue queues fn on the host stream. With the stream checker on, it
// declares the bytes fn reads and writes, so that a product racing with
// another stream's work on them is reported as a kernel's would be.
func (t *target) enqueue(fn func(), acc ...host.Access) error {
	var err error
	if t.hs.Checking() {
		acc = slices.DeleteFunc(acc, func(a host.Access) bool { return a.Bytes == 0 })
		err = t.hs.EnqueueAccess(t.op+" "+t.dtype(), acc, false, fn)
	} else {
		err = t.hs.Enqueue(fn)
	}
	if err != nil {
		return t.errorf("%w", err)
	}
	return nil
}

// access is the bytes mt spans, for the stream checker.
func access(mt matrix, write bool) host.Access {
	return host.Access{Ptr: mt.p, Bytes: uint64(mt.elems()) * mt.dt.size(), Write: write}
}

// view is the elements mt spans at its host-backend address.
func view[T Float | HalfOut](mt matrix) []T {
	n := mt.elems()
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(addrOf(mt.p)), n)
}

// addrOf turns a host-backend device address into a pointer. The memory is
// mapped from the OS, outside the Go heap, so the collector never looks at
// it; the indirection keeps vet's uintptr-to-pointer check quiet for this
// one deliberate conversion (kernels and the host backend do the same).
func addrOf(p backend.Ptr) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&p))
}

// hostGemmEx runs a GemmEx, GemmStridedBatchedEx or GemmStridedBatched on
// the host stream: each product with gonum, one after the other. 16-bit
// operands are widened to float32 exactly (package half), multiplied and
// summed in float32 (Sgemm), and a 16-bit C is rounded back once, to
// nearest even: float32 arithmetic, as cuBLAS's CUBLAS_COMPUTE_32F. TF32
// does not apply here: the host multiplies in full float32.
func hostGemmEx(t *target, xp *exArgs) error {
	x := *xp // the closure captures a copy
	mats := x.matrices()
	strides := x.strides()
	fn := func() {
		for i := range x.batch {
			var ops [3]matrix
			for j, mt := range mats {
				ops[j] = mt.at(i, strides[j])
			}
			x.hostProduct(ops)
		}
	}
	var acc [3]host.Access
	for j, mt := range mats {
		acc[j] = host.Access{Ptr: mt.p, Bytes: uint64(mt.span(x.batch, strides[j])) * mt.dt.size(), Write: j == 2}
	}
	return t.enqueue(fn, acc[:]...)
}

// hostProduct is one product of x on the operands ops (A, B, C).
func (x *exArgs) hostProduct(ops [3]matrix) {
	ta, tb := trans(x.transA), trans(x.transB)
	if x.in == f64 {
		a, b, c := view[float64](ops[0]), view[float64](ops[1]), view[float64](ops[2])
		impl.Dgemm(ta, tb, x.m, x.n, x.k, x.alpha, a, x.lda, b, x.ldb, x.beta, c, x.ldc)
		return
	}
	alpha, beta := float32(x.alpha), float32(x.beta)
	if x.in == f32 {
		a, b, c := view[float32](ops[0]), view[float32](ops[1]), view[float32](ops[2])
		impl.Sgemm(ta, tb, x.m, x.n, x.k, alpha, a, x.lda, b, x.ldb, beta, c, x.ldc)
		return
	}
	c := ops[2]
	var cv []float32 // C as float32: its own memory, or a dense copy
	ldc := x.ldc
	if c.dt == f32 {
		cv = view[float32](c)
	} else {
		cv, ldc = make([]float32, x.m*x.n), x.n
		if beta != 0 { // beta 0: C is not read, NaN in it does not survive
			widen(cv, c)
		}
	}
	if x.k == 0 {
		// gonum wants operands a k = 0 product does not have: C = beta·C.
		for r := range x.m {
			row := cv[r*ldc : r*ldc+x.n]
			for j := range row {
				if beta == 0 {
					row[j] = 0
				} else {
					row[j] *= beta
				}
			}
		}
	} else {
		a := make([]float32, ops[0].rows*ops[0].cols)
		b := make([]float32, ops[1].rows*ops[1].cols)
		widen(a, ops[0])
		widen(b, ops[1])
		impl.Sgemm(ta, tb, x.m, x.n, x.k, alpha, a, max(1, ops[0].cols), b, max(1, ops[1].cols), beta, cv, ldc)
	}
	if c.dt != f32 {
		narrow(c, cv)
	}
}

// widen copies the 16-bit matrix mt into dst, rows × cols with no
// padding, exactly.
func widen(dst []float32, mt matrix) {
	for r := range mt.rows {
		d := dst[r*mt.cols : (r+1)*mt.cols]
		if mt.dt == f16 {
			half.Float32sFromFloat16s(d, view[half.Float16](mt)[r*mt.ld:])
		} else {
			half.Float32sFromBFloat16s(d, view[half.BFloat16](mt)[r*mt.ld:])
		}
	}
}

// narrow rounds src, rows × cols with no padding, into the 16-bit matrix
// mt, leaving the padding between its rows alone.
func narrow(mt matrix, src []float32) {
	for r := range mt.rows {
		s := src[r*mt.cols : (r+1)*mt.cols]
		if mt.dt == f16 {
			half.Float16sFromFloat32s(view[half.Float16](mt)[r*mt.ld:r*mt.ld+mt.cols], s)
		} else {
			half.BFloat16sFromFloat32s(view[half.BFloat16](mt)[r*mt.ld:r*mt.ld+mt.cols], s)
		}
	}
}
