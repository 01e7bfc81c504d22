package cuarray

import (
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/kernels"
	"github.com/gocuda/gocuda/memprof"
	"github.com/gocuda/gocuda/pool"
)

// Elem is the set of element types an Array may hold: float32, float64,
// int8, int16, int32, int64, uint8, uint32, complex64, bool, and package
// half's Float16 and BFloat16 (the kernels' Elem). docs/half.md says which operations take
// the 16-bit floats and how they compute (in float32, rounded once).
type Elem = kernels.Elem

// Array is an N-dimensional, row-major, contiguous array of T in one
// device's memory. Arrays made by Reshape, View and Slice share their
// parent's buffer: a write through one is seen through the others.
//
// An *Array is safe to use from several goroutines at once for reading (as
// an operand of operations, ToSlice, CopyTo); writing it (as the
// destination of an operation) while another goroutine uses it is a data
// race, as it is for a Go slice. UnsafeFree must not race with any use.
type Array[T Elem] struct {
	buf  *buffer
	off  uint64 // byte offset of element 0 in the buffer's block
	n    int    // elements
	dims [4]int // the shape, when it has at most 4 dimensions (no allocation)
	// long is the shape's first element when it has more than 4
	// dimensions, else nil. A pointer rather than a slice, and no slice
	// of dims: the Array stays in the 96-byte size class (see shape),
	// against 112 for a slice.
	long *int
	// origin is what the array keeps of the stream the buffer was made on,
	// for Device: a freed array must not read its buffer, which may be
	// recycled (see drop).
	origin *home
	// anchor keeps the buffer's cleanup from running while a is reachable
	// (see buffer); nil once a is freed, so that a freed array the program
	// still holds does not keep a recycled buffer's memory alive.
	anchor *anchor
	// x is what only some arrays need, nil for the rest: the strides of a
	// non-contiguous view (views.go), and where a freed array was allocated
	// and freed. One pointer for both keeps the Array in its size class.
	x     *extra
	ndim  int32
	freed atomic.Bool
}

// extra is the part of an Array that only some arrays need.
type extra struct {
	// strides are a non-contiguous view's, in elements, one for each
	// dimension (views.go); nil for a contiguous array.
	strides []int
	// sites is where a was allocated and freed, recorded by UnsafeFree
	// only while leak tracing is on (memprof), for use-after-free errors.
	sites *sites
}

// sites is where an array's memory was allocated and where it was freed.
type sites struct{ alloc, free runtime.Frame }

// sites is where a was allocated and freed, nil unless recorded.
func (a *Array[T]) sites() *sites {
	if a.x == nil {
		return nil
	}
	return a.x.sites
}

func (s *sites) String() string {
	if s == nil {
		return ""
	}
	at := func(f runtime.Frame) string {
		if f.File == "" {
			return "an untraced site"
		}
		return fmt.Sprintf("%s:%d", f.File, f.Line)
	}
	return fmt.Sprintf(" (allocated at %s, freed at %s)", at(s.alloc), at(s.free))
}

// shape is the array's dimensions, outermost first; callers must not
// modify it.
func (a *Array[T]) shape() []int {
	if a.long != nil {
		return unsafe.Slice(a.long, a.ndim)
	}
	return a.dims[:a.ndim:a.ndim]
}

// setShape stores a copy of shape in a.
func (a *Array[T]) setShape(shape []int) {
	a.ndim = int32(len(shape))
	if len(shape) <= len(a.dims) {
		copy(a.dims[:], shape)
		return
	}
	a.long = &append([]int(nil), shape...)[0]
}

// buffer is the device memory behind one or more arrays: one pool block,
// shared by the arrays made from one New (views and reshapes included).
//
// Two things give the block back, whichever comes first:
//
//   - UnsafeFree of every array that shares it: refs counts the arrays that
//     have not been UnsafeFree'd, and the last UnsafeFree frees the block
//     at once;
//   - the collector finding every array that shares it unreachable: the
//     arrays all point to one anchor, and the anchor's cleanup frees the
//     block. An array that becomes unreachable without UnsafeFree leaves
//     refs as it was; that is why the cleanup frees whatever refs says.
//
// The two never both free: UnsafeFree runs on a reachable array, which
// keeps the anchor reachable, so the cleanup cannot be queued then; and
// after the last UnsafeFree the block is gone (block == nil), so a later
// cleanup finds nothing to free.
//
// It is kept to 80 bytes (one size class): the device and pool are
// reached through the home of the stream it was made on instead of being
// copied here as two interfaces.
type buffer struct {
	// mu orders operations on the buffer: it is held from the moment an
	// operation orders its stream after the buffer's last stream until the
	// operation is queued and the buffer's last stream is the operation's.
	mu sync.Mutex
	// refs is the number of arrays holding a reference, read and written
	// only with sync/atomic once the buffer is shared. A plain int32 so
	// that newArray can set the first reference without an atomic
	// instruction, before any other goroutine can see the buffer.
	refs int32
	// unordered says that automatic ordering is off (SetAutoOrdering):
	// orderOn moves the buffer between streams without waiting.
	unordered bool
	origin    *home         // of the stream it was made on: its device and pool
	size      uint64        // bytes asked for
	block     *pool.Block   // nil once freed, and for empty arrays
	ptr       backend.Ptr   // block.Ptr, 0 for empty arrays
	life      *life         // of the stream the buffer was last used on
	event     backend.Event // made on first use on another stream, reused
	// others are the streams the buffer was used on since automatic
	// ordering was turned off, besides life; nil while it is on and
	// every earlier use is behind life. The free waits for all of them,
	// and so does the first use after ordering is turned back on.
	others *[]*life
}

// anchor is what the collector watches for a buffer: every array of the
// buffer points to it, and its cleanup frees the buffer's block once none
// of them is reachable.
//
// One cleanup per buffer rather than per array, set once and kept for the
// anchor's whole life: an anchor and its buffer are recycled together
// (anchors) after the last UnsafeFree, cleanup and all, so New pays for
// neither runtime.AddCleanup nor Cleanup.Stop (together about 60 % of a
// New+UnsafeFree pair when each array had its own). The cleanup's argument
// is the buffer, which never points back to the anchor: an argument that
// reaches the anchor would keep it reachable forever.
type anchor struct{ buf *buffer }

// anchors holds anchors (with their buffers) whose arrays were all freed
// by UnsafeFree, for newArray to reuse. An anchor the sync.Pool drops at
// a collection becomes unreachable and its cleanup runs, finding no block.
var anchors = sync.Pool{New: func() any {
	b := new(buffer)
	an := &anchor{buf: b}
	runtime.AddCleanup(an, (*buffer).release, b)
	return an
}}

// dev is the device whose memory the buffer is.
func (b *buffer) dev() backend.Device { return b.origin.dev }

// release is the anchor's cleanup, run on a runtime cleanup goroutine once
// no array of the buffer is reachable: it frees the block if UnsafeFree
// has not.
//
// Freeing while work is still queued is safe: pool.Free(block, s) with s
// the buffer's last stream is itself ordered on s. The pool hands the block
// out again at once only to work queued later on s (which runs after
// everything already queued there), and to another stream only after
// ordering that stream after s. Every operation that touched the buffer
// on another stream was ordered before s's later work when the buffer moved
// to s (an event wait), so all of them precede any reuse.
func (b *buffer) release() { b.free(false) }

// drop is UnsafeFree's: it drops one array's reference, and the last one
// frees the block and recycles the anchor an (with b) for newArray.
//
// Recycling is safe because refs is 0: every array of b was UnsafeFree'd,
// and UnsafeFree clears the array's anchor pointer before calling drop, so
// nothing but the caller's an reaches the anchor, and its cleanup has not
// run (the anchor was reachable until now). Freed arrays still point to b,
// but every method checks freed before using buf (Device uses
// Array.origin), and UnsafeFree must not race with any use.
func (b *buffer) drop(an *anchor) {
	if atomic.AddInt32(&b.refs, -1) != 0 {
		return
	}
	if b.free(true) {
		// A graph holds the buffer (graph.go): it is freed when the graph
		// lets it go, so neither it nor its anchor may be reused now.
		return
	}
	anchors.Put(an)
}

// free gives the block back to the pool if it has not been, on the
// buffer's last stream (or, once that has ended, on the device's default
// stream after its tail). byUser says that UnsafeFree freed it, not the
// collector. It reports whether the free was deferred: a live graph uses
// the buffer, or its last stream is capturing (graph.go).
func (b *buffer) free(byUser bool) (deferred bool) {
	// The lock orders this after the last operation on the buffer (which
	// may have run on another goroutine) and makes an operation that races
	// with UnsafeFree (a misuse) likelier to see block == nil and fail.
	b.mu.Lock()
	blk, l, ev, origin, others := b.block, b.life, b.event, b.origin, b.others
	b.block, b.ptr, b.event, b.others, b.unordered = nil, 0, nil, nil, false
	b.mu.Unlock()
	if ev != nil { // only buffers that moved between streams have one
		backend.RecycleEvent(origin.dev, ev)
	}
	if blk != nil {
		if graphsLive.Load() > 0 && deferFree(b, l, origin, byUser, func() { freeBlock(l, origin, others, blk) }) {
			return true
		}
		freeBlock(l, origin, others, blk)
	}
	return false
}

// freeBlock gives blk back to origin's pool on l's stream (or its heir's).
func freeBlock(l *life, origin *home, others *[]*life, blk *pool.Block) {
	// A cleanup has no caller to return an error to; the pools fail Free
	// only for a block that is not theirs or already free, which taking
	// the block under the lock rules out.
	_ = l.freeOn(func(bs backend.Stream) error {
		if others != nil {
			// Uses without automatic ordering: the free waits for every
			// stream that used the buffer, not only the last. Should a
			// wait fail, the device's whole queue is waited for instead:
			// memory is never reused under running work.
			if orderAfterAll(origin.dev, bs, *others) != nil {
				_ = origin.dev.Synchronize()
			}
		}
		return origin.pool.Free(blk, bs)
	})
}

// newArray makes an array of shape on s with room for its elements,
// uninitialised.
func newArray[T Elem](op string, s *Stream, shape []int) (*Array[T], error) {
	// The element size is a constant of T; DTypeOf's type switch (a few
	// ns of an allocation's hundred) is for the error paths only.
	esize := uint64(unsafe.Sizeof(*new(T)))
	n, err := checkShape(shape)
	if err != nil {
		return nil, shapeError(op, kernels.DTypeOf[T](), shape, err)
	}
	if s == nil {
		return nil, fmt.Errorf("cuarray: %s %s: nil stream: %w", op, kernels.DTypeOf[T](), backend.ErrInvalidValue)
	}
	if uint64(n) > math.MaxInt64/esize {
		return nil, shapeError(op, kernels.DTypeOf[T](), shape, fmt.Errorf("%d elements of %d bytes do not fit in any device: %w", n, esize, ErrShape))
	}
	size := uint64(n) * esize
	var blk *pool.Block
	var ptr backend.Ptr
	origin := s.home
	if size > 0 {
		if s.closed.Load() || !s.life.acquire() {
			return nil, closedError(op, s)
		}
		if c := s.life.capture.Load(); c != nil {
			// Inside a capture: the graph's own pool (graph.go).
			if origin, err = c.homeFor(op, s); err != nil {
				s.life.release()
				return nil, err
			}
		}
		blk, err = origin.pool.Alloc(size, s.bs)
		s.life.release()
		if err != nil {
			return nil, fmt.Errorf("cuarray: %s %s%s: %w", op, kernels.DTypeOf[T](), fmtShape(shape), err)
		}
		ptr = blk.Ptr
	}
	an := anchors.Get().(*anchor)
	b := an.buf // event is nil and mu unlocked, as free left it
	// The array's reference is set with a plain store: nobody else can
	// see b yet, so it needs no atomic add (wrap's job for shared buffers).
	b.refs, b.origin, b.size, b.block, b.ptr, b.life = 1, origin, size, blk, ptr, s.life
	a := &Array[T]{buf: b, anchor: an, n: n, origin: origin}
	a.setShape(shape)
	return a, nil
}

// wrap makes an Array holding a new reference to a's buffer, of shape
// (copied). The caller holds a's reference until wrap returns.
func wrap[T Elem](a *Array[T], off uint64, n int, shape []int) *Array[T] {
	atomic.AddInt32(&a.buf.refs, 1)
	v := &Array[T]{buf: a.buf, anchor: a.anchor, off: off, n: n, origin: a.origin}
	v.setShape(shape)
	return v
}

// Shape returns a copy of the array's dimensions, outermost first.
func (a *Array[T]) Shape() []int { return append([]int(nil), a.shape()...) }

// Len is the number of elements, the product of the dimensions.
func (a *Array[T]) Len() int { return a.n }

// Ndim is the number of dimensions.
func (a *Array[T]) Ndim() int { return int(a.ndim) }

// DType is the element type.
func (a *Array[T]) DType() kernels.DType { return kernels.DTypeOf[T]() }

// Device is the device whose memory holds the array.
func (a *Array[T]) Device() backend.Device { return a.origin.dev }

// String names the array by element type and shape: "float32[2 3]".
func (a *Array[T]) String() string {
	if a == nil {
		return "<nil array>"
	}
	return kernels.DTypeOf[T]().String() + fmtShape(a.shape())
}

// UnsafeFree drops this array's reference to its buffer now instead of
// when the collector finds the array unreachable. When no other array
// (view or reshape) shares the buffer, its memory goes back to the pool at
// once, ordered after the work queued on the stream it was last used on.
// Calling it again does nothing; any other use of a afterwards is an error
// wrapping ErrFreed. It must not run while another goroutine uses a.
func (a *Array[T]) UnsafeFree() {
	if a == nil || !a.freed.CompareAndSwap(false, true) {
		return
	}
	if memprof.Enabled() {
		// Off the hot path: one atomic load when tracing is off.
		a.noteSites()
	}
	an := a.anchor
	a.anchor = nil
	a.buf.drop(an)
}

// noteSites records where a's memory was allocated (from the trace,
// before the block may be freed) and where UnsafeFree was called.
//
//go:noinline
func (a *Array[T]) noteSites() {
	st := &sites{}
	if a.buf.block != nil {
		st.alloc, _ = memprof.AllocSite(a.origin.dev.Ordinal(), a.buf.block.Ptr)
	}
	st.free, _ = memprof.CallerSite(1) // skip noteSites; UnsafeFree is gocuda's
	x := &extra{sites: st}
	if a.x != nil {
		x.strides = a.x.strides
	}
	a.x = x
}

// Freed reports whether UnsafeFree has been called on a.
func (a *Array[T]) Freed() bool { return a.freed.Load() }

// check is the use-after-free and nil check every entry point makes.
func (a *Array[T]) check(op, role string) error {
	if a == nil {
		return fmt.Errorf("cuarray: %s: %s is a nil array: %w", op, role, backend.ErrInvalidValue)
	}
	if a.freed.Load() {
		return fmt.Errorf("cuarray: %s: %s %s%s: %w", op, role, a, a.sites(), ErrFreed)
	}
	return nil
}

// Reshape returns an array of the same elements with another shape,
// sharing a's buffer (no copy). One dimension may be -1: it is inferred
// from the others. The product of the dimensions must equal a.Len().
// A view that is not contiguous (IsContiguous) cannot be reshaped without
// a copy, and Reshape never copies: that is an error wrapping ErrShape
// (NumPy copies instead); Contiguous first makes the copy explicit.
func (a *Array[T]) Reshape(shape ...int) (*Array[T], error) {
	if err := a.check("Reshape", "array"); err != nil {
		return nil, err
	}
	if !a.contiguous() {
		return nil, fmt.Errorf("cuarray: Reshape %s to %s: it is a strided view (strides %v), whose elements are not in row-major order in memory; Reshape shares the buffer and never copies: Contiguous makes a packed copy to reshape: %w",
			a, fmtShape(shape), a.x.strides, ErrShape)
	}
	shape = append([]int(nil), shape...)
	infer := -1
	known := 1
	for i, d := range shape {
		switch {
		case d == -1 && infer < 0:
			infer = i
			continue
		case d == -1:
			return nil, fmt.Errorf("cuarray: Reshape %s to %s: more than one dimension is -1; at most one may be inferred: %w", a, fmtShape(shape), ErrShape)
		case d < 0:
			return nil, fmt.Errorf("cuarray: Reshape %s to %s: dimension %d is %d; dimensions must be ≥ 0, or -1 for one inferred dimension: %w", a, fmtShape(shape), i, d, ErrShape)
		}
		if d != 0 && known > math.MaxInt/d {
			return nil, fmt.Errorf("cuarray: Reshape %s to %s: the product of the dimensions overflows int: %w", a, fmtShape(shape), ErrShape)
		}
		known *= d
	}
	if infer >= 0 {
		if known == 0 || a.n%known != 0 {
			return nil, fmt.Errorf("cuarray: Reshape %s to %s: %d elements cannot be split into dimensions of product %d: %w", a, fmtShape(shape), a.n, known, ErrShape)
		}
		shape[infer] = a.n / known
		known = a.n
	}
	if known != a.n {
		return nil, fmt.Errorf("cuarray: Reshape %s to %s: %d elements cannot take a shape of %d; the product of the dimensions must be %d: %w",
			a, fmtShape(shape), a.n, known, a.n, ErrShape)
	}
	return a.share(0, a.n, shape)
}

// View returns the length elements starting at element offset of a, in
// row-major order, as a one-dimensional array sharing a's buffer. a must
// be contiguous (IsContiguous); a strided view is an error wrapping
// ErrShape.
func (a *Array[T]) View(offset, length int) (*Array[T], error) {
	if err := a.check("View", "array"); err != nil {
		return nil, err
	}
	if !a.contiguous() {
		return nil, fmt.Errorf("cuarray: View(%d, %d) of %s: it is a strided view (strides %v), whose elements are not in row-major order in memory; Contiguous makes a packed copy: %w",
			offset, length, a, a.x.strides, ErrShape)
	}
	if offset < 0 || length < 0 || offset > a.n || length > a.n-offset {
		return nil, fmt.Errorf("cuarray: View(%d, %d) of %s: the range must lie within its %d elements (0 ≤ offset, 0 ≤ length, offset+length ≤ %d): %w",
			offset, length, a, a.n, a.n, ErrShape)
	}
	return a.share(offset, length, []int{length})
}

// Slice returns rows [i, j) along the first axis, sharing a's buffer: for
// a of shape [d0 d1 ...] the result has shape [j-i d1 ...]. The rows of a
// contiguous array are contiguous; of a strided view, a strided view
// (SliceAxis slices any axis, with a step).
func (a *Array[T]) Slice(i, j int) (*Array[T], error) {
	if err := a.check("Slice", "array"); err != nil {
		return nil, err
	}
	ashape := a.shape()
	if len(ashape) == 0 {
		return nil, fmt.Errorf("cuarray: Slice(%d, %d) of %s: a zero-dimensional array has no axis to slice: %w", i, j, a, ErrShape)
	}
	d0 := ashape[0]
	if i < 0 || j < i || j > d0 {
		return nil, fmt.Errorf("cuarray: Slice(%d, %d) of %s: need 0 ≤ i ≤ j ≤ %d (the first dimension): %w", i, j, a, d0, ErrShape)
	}
	if !a.contiguous() {
		return a.SliceAxis(0, i, j, 1)
	}
	row := 1
	for _, d := range ashape[1:] {
		row *= d
	}
	shape := append([]int{j - i}, ashape[1:]...)
	return a.share(i*row, (j-i)*row, shape)
}

// share makes an array of n elements at element offset off of a's buffer.
func (a *Array[T]) share(off, n int, shape []int) (*Array[T], error) {
	var z T
	v := wrap(a, a.off+uint64(off)*uint64(unsafe.Sizeof(z)), n, shape)
	runtime.KeepAlive(a) // a's reference keeps the buffer alive until v holds its own
	return v, nil
}

// ptr is the device address of element 0; the caller holds a.buf.mu and
// has checked that the buffer is live.
func (a *Array[T]) ptr() backend.Ptr {
	if a.n == 0 {
		return 0
	}
	return a.buf.ptr + backend.Ptr(a.off)
}

// ToSlice copies the array to a new Go slice, in row-major order. It waits
// for the work queued on the stream that last used the array (which
// includes everything that wrote it), and for nothing else.
func (a *Array[T]) ToSlice() ([]T, error) {
	if err := a.check("ToSlice", "array"); err != nil {
		return nil, err
	}
	out := make([]T, a.n)
	if err := a.copyTo("ToSlice", out); err != nil {
		return nil, err
	}
	return out, nil
}

// CopyTo copies the array into dst, which must have exactly a.Len()
// elements, waiting as ToSlice does.
func (a *Array[T]) CopyTo(dst []T) error {
	if err := a.check("CopyTo", "array"); err != nil {
		return err
	}
	if len(dst) != a.n {
		return fmt.Errorf("cuarray: CopyTo: %s has %d elements, dst has %d; they must be equal: %w", a, a.n, len(dst), ErrShape)
	}
	return a.copyTo("CopyTo", dst)
}

func (a *Array[T]) copyTo(op string, dst []T) error {
	if a.n == 0 {
		return nil
	}
	// One run of every element: CopyDtoH is ordered after the work queued
	// on the buffer's last stream, and returns when the bytes are in dst.
	all := [1]span{{0, a.n}}
	return a.copySpans(op, dst, all[:])
}

// checkShape returns the product of shape's dimensions, or an error saying
// what is wrong with them.
func checkShape(shape []int) (int, error) {
	n := 1
	for i, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("dimension %d is %d; dimensions must be ≥ 0: %w", i, d, ErrShape)
		}
		if d != 0 && n > math.MaxInt/d {
			return 0, fmt.Errorf("the product of the dimensions overflows int: %w", ErrShape)
		}
		n *= d
	}
	return n, nil
}

func shapeError(op string, dt kernels.DType, shape []int, err error) error {
	return fmt.Errorf("cuarray: %s %s: shape %s: %w", op, dt, fmtShape(shape), err)
}

// fmtShape writes shape as "[2 3]".
func fmtShape(shape []int) string {
	var sb strings.Builder
	sb.WriteByte('[')
	for i, d := range shape {
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(strconv.Itoa(d))
	}
	sb.WriteByte(']')
	return sb.String()
}
