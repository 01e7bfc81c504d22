package cuarray

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"unsafe"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/host"
	"github.com/gocuda/gocuda/internal/devstream"
	"github.com/gocuda/gocuda/kernels"
)

// Access says how code that cuarray did not write (a user kernel, a
// foreign library) uses an array: reads it, writes it, or both. The host
// backend's stream checker judges each use by it.
type Access uint8

const (
	Read      Access         = 1 << iota // the array is only read
	Write                                // the array is only written
	ReadWrite = Read | Write             // the array is read and written
)

// String is "read", "write" or "read-write".
func (a Access) String() string {
	switch a {
	case Read:
		return "read"
	case Write:
		return "write"
	case ReadWrite:
		return "read-write"
	}
	return fmt.Sprintf("Access(%d)", uint8(a))
}

// Arg is an array handed to code cuarray did not write, with how that code
// uses it. Make one with In, Out or InOut.
type Arg struct {
	op  operand
	acc Access
}

// In declares that the code only reads a.
func In[T Elem](a *Array[T]) Arg { return Arg{op: a, acc: Read} }

// Out declares that the code only writes a (its elements on entry are
// not read).
func Out[T Elem](a *Array[T]) Arg { return Arg{op: a, acc: Write} }

// InOut declares that the code reads and writes a.
func InOut[T Elem](a *Array[T]) Arg { return Arg{op: a, acc: ReadWrite} }

// Access is how the argument is used.
func (g Arg) Access() Access { return g.acc }

// Len is the array's length in elements (0 for the zero Arg).
func (g Arg) Len() int {
	if g.op == nil {
		return 0
	}
	return g.op.elems()
}

// Shape is the array's shape (nil for the zero Arg).
func (g Arg) Shape() []int {
	if g.op == nil {
		return nil
	}
	return slices.Clone(g.op.shapeOf())
}

// DType is the array's element type (0, invalid, for the zero Arg).
func (g Arg) DType() kernels.DType {
	if g.op == nil {
		return 0
	}
	return g.op.dtype()
}

// Device is the device whose memory holds the array (nil for the zero Arg
// or a nil array): where a launcher runs the code it hands the array to.
func (g Arg) Device() backend.Device {
	if g.op == nil || g.op.isNil() {
		return nil
	}
	return g.op.device()
}

// Err is why the argument cannot be handed to code, or nil if it can: the
// zero Arg or a nil array (wrapping backend.ErrInvalidValue), or a freed
// array (wrapping ErrFreed, with where it was made and freed). WithPointers
// refuses such an argument with the same error; a launcher checks with Err
// first to refuse before its own costly work (a plan, a compile).
func (g Arg) Err() error {
	switch {
	case g.op == nil || g.acc&ReadWrite == 0:
		return fmt.Errorf("cuarray: %v: make array arguments with In, Out or InOut: %w", g, backend.ErrInvalidValue)
	case g.op.isNil():
		return fmt.Errorf("cuarray: a nil array: %w", backend.ErrInvalidValue)
	}
	return g.op.freedError(g.verb())
}

// verb is how g is used, as In, Out and InOut say it.
func (g Arg) verb() string {
	return map[Access]string{Read: "in", Write: "out", ReadWrite: "inout"}[g.acc]
}

// Overlaps reports whether g and h share any memory (NumPy's
// shares_memory): an array and a view of it, two overlapping views, one
// array twice. Arrays of no elements share none. A launcher that writes h
// while reading g must not let them overlap unless they are the same
// memory (SameMemory), where an element is read before it is written.
func (g Arg) Overlaps(h Arg) bool {
	if g.op == nil || h.op == nil || g.op.isNil() || h.op.isNil() || g.op.buffer() != h.op.buffer() {
		return false
	}
	gf, gt := g.op.byteSpan()
	hf, ht := h.op.byteSpan()
	return gf < gt && hf < ht && gf < ht && hf < gt
}

// SameMemory reports whether g and h are exactly the same memory: the
// same bytes of one buffer (one array twice, an array and its reshape).
// An operation may write such an output in place over its input.
func (g Arg) SameMemory(h Arg) bool {
	if !g.Overlaps(h) {
		return false
	}
	gf, gt := g.op.byteSpan()
	hf, ht := h.op.byteSpan()
	return gf == hf && gt == ht
}

// String describes the argument: "in float32[2 3]".
func (g Arg) String() string {
	if g.op == nil {
		return "Arg{}"
	}
	return g.verb() + " " + g.op.String()
}

// operand is what borrowing needs of an *Array[T] whatever its T.
type operand interface {
	isNil() bool
	check(op, role string) error
	// freedError is Err's error for a freed array, used as verb says.
	freedError(verb string) error
	buffer() *buffer
	ptr() backend.Ptr
	elems() int
	shapeOf() []int
	dtype() kernels.DType
	device() backend.Device
	// contiguous and stridesOf are the array's layout (views.go).
	contiguous() bool
	stridesOf() []int
	// home is the device, pool and memory kind the array was made with.
	home() *home
	// byteSpan is the array's bytes in its buffer's block: [from, to).
	byteSpan() (from, to uint64)
	String() string
}

func (a *Array[T]) isNil() bool            { return a == nil }
func (a *Array[T]) buffer() *buffer        { return a.buf }
func (a *Array[T]) elems() int             { return a.n }
func (a *Array[T]) stridesOf() []int       { return a.strides() }
func (a *Array[T]) shapeOf() []int         { return a.shape() }
func (a *Array[T]) dtype() kernels.DType   { return kernels.DTypeOf[T]() }
func (a *Array[T]) device() backend.Device { return a.origin.dev }
func (a *Array[T]) home() *home            { return a.origin }

func (a *Array[T]) byteSpan() (from, to uint64) {
	var z T
	return a.off, a.off + uint64(a.extent())*uint64(unsafe.Sizeof(z))
}

func (a *Array[T]) freedError(verb string) error {
	if a.freed.Load() {
		return fmt.Errorf("cuarray: %s %s%s: %w", verb, a, a.sites(), ErrFreed)
	}
	return nil
}

// WithPointers hands fn the device addresses of the arrays of args, in
// order, for fn to queue work on them on stream s that cuarray did not
// write: a foreign library's call (cuFFT, cuRAND, cuDNN through bindings
// of their own), a kernel launched through the driver. It gives that work
// the guarantees of cuarray's own operations:
//
//   - ordered before: work fn queues on bs (s's backend stream) runs after
//     all work already queued on the arrays on any stream;
//   - kept alive during: no array's memory is freed or reused until fn has
//     returned, and, being ordered on s, until the work it queued has run;
//   - marked as last used after: later operations on the arrays on other
//     streams, their reads back to the host, and their frees wait for s.
//
// fn must queue all its work on bs, and must not keep the addresses past
// its return. The arrays stay locked while fn runs: fn must not call
// cuarray on them (that would wait forever) nor block for long. A nil s is
// the device's default stream. On the host backend the addresses are host
// memory, and with the stream checker on (GOCUDA_STREAM_CHECK) the
// declared reads and writes are checked at the point fn's work is queued,
// so a misdeclared argument or a missing order is reported there.
//
//	err := cuarray.WithPointers(s, func(bs backend.Stream, p []backend.Ptr) error {
//		return myfft.Exec(bs, p[0], p[1], n) // queued on bs, returns at once
//	}, cuarray.In(x), cuarray.Out(y))
//
// An error from fn is returned as it is, wrapped; the arrays are still
// marked as last used on s, since fn may have queued work before failing.
func WithPointers(s *Stream, fn func(bs backend.Stream, ptrs []backend.Ptr) error, args ...Arg) error {
	return borrow("WithPointers", s, fn, args)
}

// WithPointersAs is WithPointers for work that has a name of its own, op
// ("kernel saxpy", "myfft.Exec"): the errors and the host stream checker's
// reports name op instead of WithPointers, as they name cuarray's own
// operations. Launchers built on WithPointers (package rtc's kernels)
// name their work this way.
func WithPointersAs(op string, s *Stream, fn func(bs backend.Stream, ptrs []backend.Ptr) error, args ...Arg) error {
	if strings.TrimSpace(op) == "" {
		return fmt.Errorf("cuarray: WithPointersAs: empty operation name; name the work, as in \"myfft.Exec\": %w", backend.ErrInvalidValue)
	}
	return borrow(op, s, fn, args)
}

// maxBorrowed is how many distinct buffers borrow locks without
// allocating.
const maxBorrowed = 8

// borrow is WithPointers under the name op.
func borrow(op string, s *Stream, fn func(bs backend.Stream, ptrs []backend.Ptr) error, args []Arg) error {
	if fn == nil {
		return fmt.Errorf("cuarray: %s: nil func: %w", op, backend.ErrInvalidValue)
	}
	var dev backend.Device
	for i, g := range args {
		if g.op == nil || g.acc&ReadWrite == 0 {
			return fmt.Errorf("cuarray: %s: argument %d is %v; make array arguments with In, Out or InOut: %w", op, i, g, backend.ErrInvalidValue)
		}
		if err := g.op.check(op, fmt.Sprintf("argument %d", i)); err != nil {
			return err
		}
		if !g.op.contiguous() {
			return fmt.Errorf("cuarray: %s: argument %d %s is a strided view (strides %v): raw pointers address contiguous arrays only; pass Contiguous(view) (and Copy results back into the view): %w",
				op, i, g.op, g.op.stridesOf(), ErrShape)
		}
		if dev == nil {
			dev = g.op.device()
		} else if d := g.op.device(); d != dev {
			return fmt.Errorf("cuarray: %s: argument 0 is on device %d, argument %d on device %d; copy one first: %w",
				op, dev.Ordinal(), i, d.Ordinal(), ErrDevice)
		}
	}
	if s == nil {
		if dev == nil {
			return fmt.Errorf("cuarray: %s: no stream and no array to find a device by: %w", op, backend.ErrInvalidValue)
		}
		var err error
		if s, err = opsStream(dev); err != nil {
			return fmt.Errorf("cuarray: %s: %w", op, err)
		}
	} else if dev != nil && s.dev != dev {
		return fmt.Errorf("cuarray: %s: the arrays are on device %d, the stream on device %d: %w",
			op, dev.Ordinal(), s.dev.Ordinal(), ErrDevice)
	}
	if s.closed.Load() || !s.life.acquire() {
		return closedError(op, s)
	}
	defer s.life.release()

	// Lock each distinct buffer once, in (element type, address) order:
	// do locks one type's buffers by address, and the operations that mix
	// types (SoftmaxCrossEntropy's int32 labels) lock the float ones first,
	// so this order never waits on them in the opposite order.
	var stack [maxBorrowed]*buffer
	bufs := stack[:0]
	for _, g := range args {
		if b := g.op.buffer(); b.size > 0 && !slices.Contains(bufs, b) {
			bufs = append(bufs, b)
		}
	}
	dtypeOf := func(b *buffer) kernels.DType {
		for _, g := range args {
			if g.op.buffer() == b {
				return g.op.dtype()
			}
		}
		return 0
	}
	slices.SortFunc(bufs, func(x, y *buffer) int {
		if dx, dy := dtypeOf(x), dtypeOf(y); dx != dy {
			return int(dx) - int(dy)
		}
		px, py := uintptr(unsafe.Pointer(x)), uintptr(unsafe.Pointer(y))
		switch {
		case px < py:
			return -1
		case px > py:
			return 1
		}
		return 0
	})
	for _, b := range bufs {
		b.mu.Lock()
	}
	defer func() {
		for _, b := range bufs {
			b.mu.Unlock()
		}
	}()
	for i, g := range args {
		if b := g.op.buffer(); b.size > 0 && b.block == nil {
			// Only reachable when UnsafeFree races with this call.
			return fmt.Errorf("cuarray: %s: argument %d %s: its buffer was freed: %w", op, i, g.op, ErrFreed)
		}
	}
	for _, b := range bufs {
		if err := b.orderOn(s.life); err != nil {
			return fmt.Errorf("cuarray: %s: ordering stream %d after stream %d: %w", op, s.bs.ID(), b.life.bs.ID(), err)
		}
	}
	ptrs := make([]backend.Ptr, len(args))
	for i, g := range args {
		ptrs[i] = g.op.ptr()
	}
	if err := markAccesses(op, s.bs, args, ptrs); err != nil {
		return fmt.Errorf("cuarray: %s: %w", op, err)
	}
	err := fn(s.bs, ptrs)
	// The arrays, and so their buffers, stay reachable until fn has queued
	// its work; a later free is ordered after it on s.
	runtime.KeepAlive(args)
	if err != nil {
		return fmt.Errorf("cuarray: %s: %w", op, err)
	}
	return nil
}

// hostAccesses is the stream checker's view of args at ptrs.
func hostAccesses(args []Arg, ptrs []backend.Ptr) []host.Access {
	acc := make([]host.Access, 0, len(args))
	for i, g := range args {
		n := uint64(g.op.elems()) * uint64(g.op.dtype().Size())
		if n == 0 {
			continue
		}
		if g.acc&Read != 0 {
			acc = append(acc, host.Access{Ptr: ptrs[i], Bytes: n})
		}
		if g.acc&Write != 0 {
			acc = append(acc, host.Access{Ptr: ptrs[i], Bytes: n, Write: true})
		}
	}
	return acc
}

// markAccesses tells the host stream checker, when it is on, that work on
// bs reads and writes what args declare: an empty task queued where fn's
// work will follow, in the same stream order, so the checker judges the
// declared uses against other streams' work as it would a kernel's.
func markAccesses(op string, bs backend.Stream, args []Arg, ptrs []backend.Ptr) error {
	// A stream of the host backend, through the compute seam's capability:
	// only it has a checker.
	hs, ok := bs.(devstream.HostStream)
	if !ok || !hs.Checking() {
		return nil
	}
	return hs.EnqueueAccess(op, hostAccesses(args, ptrs), false, func() {})
}

// SetAutoOrdering turns automatic ordering of a's memory off (false) or
// back on (true), like CUDA.jl's enable_synchronization!. It applies to
// a's buffer: every view and reshape of a shares the setting.
//
// With ordering off, an operation on a on another stream than the last
// one that used it does not wait for that stream: the program orders its
// streams itself (with events, Synchronize), as it must when it overlaps
// communication and computation on the same memory on purpose. Everything
// else still holds: a is kept alive while work is queued on it, and its
// memory is freed only after the work of every stream that used it. Reads
// back to the host (ToSlice) wait for the last stream only. On the host
// backend the stream checker (GOCUDA_STREAM_CHECK) still reports uses
// that nothing ordered. Turning ordering back on makes the next use wait
// for every stream used meanwhile.
//
// It returns an error only for a freed array.
func (a *Array[T]) SetAutoOrdering(on bool) error {
	if err := a.check("SetAutoOrdering", "array"); err != nil {
		return err
	}
	b := a.buf
	b.mu.Lock()
	b.unordered = !on
	b.mu.Unlock()
	return nil
}

// AutoOrdering reports whether a's memory is ordered across streams
// automatically (the default; see SetAutoOrdering). A freed array
// reports true.
func (a *Array[T]) AutoOrdering() bool {
	if a.freed.Load() {
		return true
	}
	b := a.buf
	b.mu.Lock()
	defer b.mu.Unlock()
	return !b.unordered
}

// noteOther records that the buffer was used on l without ordering, for
// the free. The caller holds b.mu.
func (b *buffer) noteOther(l *life) {
	if b.others == nil {
		b.others = new([]*life)
	}
	if !slices.Contains(*b.others, l) {
		*b.others = append(*b.others, l)
	}
}

// orderAfterAll makes later work on waiter wait for all the work queued
// so far on each of lives (those that are waiter itself excepted).
func orderAfterAll(dev backend.Device, waiter backend.Stream, lives []*life) error {
	for _, l := range lives {
		if l.bs == waiter {
			continue
		}
		ev, err := backend.NewEvent(dev)
		if err != nil {
			return err
		}
		err = l.orderAfter(waiter, ev)
		// The wait is queued with the event's state as of now: it may be
		// recorded again by its next user.
		backend.RecycleEvent(dev, ev)
		if err != nil {
			return err
		}
	}
	return nil
}
