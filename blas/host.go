package blas

import (
	"slices"
	"unsafe"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/host"
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
	return t.enqueue(fn, access(t, mats[0], false), access(t, mats[1], false), access(t, mats[2], true))
}

func hostGemv(t *target, vp *gemvArgs) error {
	v := *vp // as in hostGemm
	lenX, lenY := v.lens()
	a := matrix{p: v.a, rows: v.m, cols: v.n, ld: v.lda}
	tr := trans(v.trans)
	var fn func()
	if v.f32 {
		av, x, y := view[float32](a), view[float32](matrix{p: v.x, rows: 1, cols: lenX, ld: lenX}), view[float32](matrix{p: v.y, rows: 1, cols: lenY, ld: lenY})
		alpha, beta := float32(v.alpha), float32(v.beta)
		fn = func() { impl.Sgemv(tr, v.m, v.n, alpha, av, v.lda, x, 1, beta, y, 1) }
	} else {
		av, x, y := view[float64](a), view[float64](matrix{p: v.x, rows: 1, cols: lenX, ld: lenX}), view[float64](matrix{p: v.y, rows: 1, cols: lenY, ld: lenY})
		fn = func() { impl.Dgemv(tr, v.m, v.n, v.alpha, av, v.lda, x, 1, v.beta, y, 1) }
	}
	return t.enqueue(fn, access(t, a, false),
		access(t, matrix{p: v.x, rows: 1, cols: lenX, ld: lenX}, false),
		access(t, matrix{p: v.y, rows: 1, cols: lenY, ld: lenY}, true))
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
func access(t *target, mt matrix, write bool) host.Access {
	return host.Access{Ptr: mt.p, Bytes: uint64(mt.elems()) * t.size(), Write: write}
}

// view is the elements mt spans at its host-backend address.
func view[T Float](mt matrix) []T {
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
