package cuarray

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/pool"
)

// Errors callers can match with errors.Is.
var (
	// ErrFreed: an array was used after UnsafeFree. The message names the
	// array by element type and shape.
	ErrFreed = errors.New("used after UnsafeFree")
	// ErrShape: a shape, length, range or pair of shapes that cannot be
	// right. The message says what was wrong and what is accepted.
	ErrShape = errors.New("bad shape")
	// ErrDevice: arrays or a stream of different devices in one operation.
	ErrDevice = errors.New("arrays and stream of different devices")
)

// Stream is an ordered queue of work on one device, and the pool that
// arrays made on it take their memory from. Operations run on a stream
// through On; package-level functions use the device's default stream.
// A Stream is safe for concurrent use, but work from several goroutines on
// one stream runs one item at a time: give each goroutine its own stream
// for concurrency.
//
// A stream has a life: Close ends it (and a stream the program no longer
// references is closed when the collector finds it, as an array is
// freed). The host never waits for Close: the driver's stream is
// destroyed in the background once its queued work is done, and the
// memory its pools cached for it goes back. Arrays last used on a closed
// stream stay valid and usable on any other stream, ordered after the
// closed stream's work. Operations on a closed stream fail with ErrClosed.
//
// Which stream to use: a long-lived worker goroutine makes its own with
// NewStream and closes it when it stops; a short-lived goroutine (a
// request handler) borrows one with BorrowStream and closes it to give
// it back, so that streams and their cached memory are reused rather than
// made and given back per request.
type Stream struct {
	*home
	bs   backend.Stream
	life *life
	// kinds holds the siblings for Unified and Pinned (same device and
	// backend stream, that kind's pool), made on first use by NewKind.
	kinds [2]atomic.Pointer[Stream]
	// root is the stream a sibling was made from, kept reachable by it:
	// the root's collection ends the backend stream they share.
	root *Stream
	// lent is the borrowing of a stream from BorrowStream, nil if it was
	// not borrowed.
	lent *lease
	// closed is this handle's Close (a borrowed stream's life goes on).
	closed atomic.Bool
}

// home is what an array keeps of the stream it was made on: its device,
// pool and memory kind. Not the Stream itself, which the collector may
// take (and close) while the array lives on.
type home struct {
	dev  backend.Device
	pool pool.Pool
	kind Kind
}

// NewStream makes a stream on device ordinal of the process's backend
// (gocuda.Device), whose arrays come from that device's pool
// (gocuda.Pool). Close it when done; see Stream for the alternative for
// short-lived goroutines.
func NewStream(device int) (*Stream, error) {
	p, err := gocuda.Pool(device)
	if err != nil {
		return nil, fmt.Errorf("cuarray: NewStream(%d): %w", device, err)
	}
	return NewStreamPool(p)
}

// NewStreamPool makes a stream on p's device whose arrays come from p.
func NewStreamPool(p pool.Pool) (*Stream, error) {
	if p == nil {
		return nil, fmt.Errorf("cuarray: NewStreamPool: nil pool: %w", backend.ErrInvalidValue)
	}
	dev := p.Device()
	l, err := newLife(dev)
	if err != nil {
		return nil, fmt.Errorf("cuarray: NewStreamPool: device %d: %w", dev.Ordinal(), err)
	}
	l.note(p)
	return ownStream(&home{dev: dev, pool: p}, l), nil
}

// ownStream makes the handle that owns l: closing it, or its collection,
// ends l.
func ownStream(h *home, l *life) *Stream {
	s := &Stream{home: h, bs: l.bs, life: l}
	runtime.AddCleanup(s, func(l *life) { _, _ = l.end() }, l)
	return s
}

// Close ends the stream: operations on it afterwards fail with ErrClosed,
// work already queued runs to its end, and then the driver's stream is
// destroyed and what the pools cached for it is given back, all without
// the host waiting. Arrays last used on it stay usable on other streams.
// A borrowed stream goes back to its set instead, for another goroutine.
// Closing twice does nothing; a default stream cannot be closed.
//
// Close must not race with operations on the stream (as UnsafeFree must
// not race with uses of an array); an operation that loses such a race
// fails with ErrClosed or is ordered before the end.
func (s *Stream) Close() error {
	if s.root != nil {
		return s.root.Close()
	}
	if s.life.permanent {
		return fmt.Errorf("cuarray: Close of a default stream of device %d: default streams live as long as the process: %w",
			s.dev.Ordinal(), backend.ErrInvalidValue)
	}
	if s.life.capture.Load() != nil {
		return fmt.Errorf("cuarray: Close of stream %d during a capture on it: end the capture first: %w", s.bs.ID(), ErrCapturing)
	}
	if !s.closed.CompareAndSwap(false, true) {
		return nil
	}
	if s.lent != nil {
		s.lent.giveBack()
		return nil
	}
	if _, err := s.life.end(); err != nil {
		return fmt.Errorf("cuarray: Close of stream %d: %w", s.bs.ID(), err)
	}
	return nil
}

// Closed reports whether Close was called on s (or on the stream s is a
// sibling of).
func (s *Stream) Closed() bool {
	if s.root != nil {
		return s.root.Closed()
	}
	return s.closed.Load()
}

// DefaultStream returns device ordinal's default stream: the one that
// package-level functions (New, Add, ...) use for arrays of that device.
// Its arrays come from gocuda.Pool(ordinal).
func DefaultStream(device int) (*Stream, error) {
	if device == 0 {
		// Every package-level New asks for device 0's: an atomic load
		// instead of a sync.Map lookup (interface hash and compare).
		if s := defaults.stream0.Load(); s != nil {
			return s, nil
		}
	}
	if v, ok := defaults.byOrdinal.Load(device); ok {
		return v.(*Stream), nil
	}
	p, err := gocuda.Pool(device)
	if err != nil {
		return nil, fmt.Errorf("cuarray: default stream of device %d: %w", device, err)
	}
	l, err := defaultLife(p.Device())
	if err != nil {
		return nil, err
	}
	v, _ := defaults.byOrdinal.LoadOrStore(device, &Stream{home: &home{dev: p.Device(), pool: p}, bs: l.bs, life: l})
	s := v.(*Stream)
	if device == 0 {
		defaults.stream0.Store(s) // the stored one: every caller sees one stream
	}
	return s, nil
}

// Device is the stream's device.
func (s *Stream) Device() backend.Device { return s.dev }

// Pool is the pool arrays made on s come from.
func (s *Stream) Pool() pool.Pool { return s.pool }

// Backend is the backend's stream under s, for code that mixes cuarray
// with kernels or the backend directly. Work queued on it directly is not
// tracked by arrays, and must not be queued after Close.
func (s *Stream) Backend() backend.Stream { return s.bs }

// Synchronize blocks until all work queued on s so far has finished.
// Nothing in cuarray needs it: reads to the host wait by themselves.
func (s *Stream) Synchronize() error {
	if s.Closed() || !s.life.acquire() {
		return closedError("Synchronize", s)
	}
	if err := s.notCapturing("Synchronize"); err != nil {
		s.life.release()
		return err
	}
	defer s.life.release()
	return s.bs.Synchronize()
}

var defaults struct {
	mu        sync.Mutex
	byDevice  sync.Map               // backend.Device → *life (default backend stream)
	ops       sync.Map               // backend.Device → *Stream (default stream for operations, no pool)
	byOrdinal sync.Map               // int → *Stream (default stream with gocuda's pool)
	stream0   atomic.Pointer[Stream] // byOrdinal[0] once stored
	lastOps   atomic.Pointer[Stream] // the ops stream opsStream returned last
}

// defaultLife is the default backend stream of dev, made on first use.
// Every default Stream of dev (whatever its pool) shares it.
func defaultLife(dev backend.Device) (*life, error) {
	if v, ok := defaults.byDevice.Load(dev); ok {
		return v.(*life), nil
	}
	defaults.mu.Lock()
	defer defaults.mu.Unlock()
	if v, ok := defaults.byDevice.Load(dev); ok {
		return v.(*life), nil
	}
	l, err := newLife(dev)
	if err != nil {
		return nil, fmt.Errorf("cuarray: default stream of device %d: %w", dev.Ordinal(), err)
	}
	l.permanent = true
	defaults.byDevice.Store(dev, l)
	return l, nil
}

// orderOn makes work queued on s from now on run after all the work
// queued so far on the buffer's last stream, without blocking the host,
// and makes s the buffer's last stream. The caller holds b.mu and s's life.
func (b *buffer) orderOn(s *life) error {
	if b.life == s && b.others == nil {
		if c := s.capture.Load(); c != nil {
			c.use(b)
		}
		return nil
	}
	if c := s.capture.Load(); c != nil {
		return b.orderIntoCapture(s, c)
	}
	if b.life.capture.Load() != nil {
		return fmt.Errorf("the array is in use by the capture in progress on stream %d: use it on that stream until the capture ends: %w",
			b.life.bs.ID(), ErrCapturing)
	}
	if b.unordered {
		// The program orders the uses itself; only the free needs to know
		// every stream that used the buffer.
		if b.life != s {
			b.noteOther(b.life)
			b.life = s
			s.note(b.origin.pool) // the free will be on s
		}
		return nil
	}
	if b.others != nil {
		// Ordering is back on: this use waits for every stream used
		// without it, as the free would have.
		if err := orderAfterAll(b.dev(), s.bs, *b.others); err != nil {
			return err
		}
		b.others = nil
		if b.life == s {
			return nil
		}
	}
	if b.event == nil {
		ev, err := backend.NewEvent(b.dev())
		if err != nil {
			return err
		}
		b.event = ev
	}
	if err := b.life.orderAfter(s.bs, b.event); err != nil {
		return err
	}
	b.life = s
	s.note(b.origin.pool) // the free will be on s
	return nil
}

// maxOperands is the most arrays one operation takes.
const maxOperands = 3

// do runs one operation on arrays (arrs[0] is the one written, if any;
// write says whether there is one; names lists the arrays' parameter names
// for messages, "dst,a,b"). It checks every array for use after
// free and for devices, resolves the stream, locks each distinct buffer
// (in address order, so that concurrent operations never deadlock), orders
// the stream after each buffer's last stream, calls fn with the arrays'
// device pointers, and leaves each buffer's last stream as the stream.
//
// The locks are held until fn has queued its work, so a buffer's last
// stream always has the newest work on it queued: an operation on another
// stream, or a free, that comes later is ordered after it.
//
// Operands that are not contiguous (views.go) go through doViews, which
// packs them into contiguous temporaries and calls doRaw: fn always sees
// contiguous operands.
func (o Ops[T]) do(op, names string, write bool, fn func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr) error, arrs ...*Array[T]) error {
	for _, a := range arrs {
		if a != nil && !a.contiguous() {
			return o.doViews(op, names, write, fn, arrs...)
		}
	}
	return o.doRaw(op, names, write, fn, arrs...)
}

// doRaw is do with the operands as they are: fn gets each one's element 0
// and must read strided ones through their strides itself (copyStrided,
// the binary operations' strided kernels).
func (o Ops[T]) doRaw(op, names string, write bool, fn func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr) error, arrs ...*Array[T]) error {
	for i, a := range arrs {
		if a == nil || a.freed.Load() { // the role's name only on the error path
			return a.check(op, role(names, i))
		}
	}
	dev := arrs[0].origin.dev
	for i, a := range arrs[1:] {
		if a.origin.dev != dev {
			return fmt.Errorf("cuarray: %s: %s is on device %d, %s on device %d; copy one first: %w",
				op, role(names, 0), dev.Ordinal(), role(names, i+1), a.origin.dev.Ordinal(), ErrDevice)
		}
	}
	if write {
		if err := checkOverlap(op, names, arrs); err != nil {
			return err
		}
	}
	s, err := o.streamFor(op, dev)
	if err != nil {
		return err
	}
	return queueOn(op, names, s, dev, fn, arrs)
}

// queueOn orders arrs' buffers on s and queues fn there, under s's life and
// the buffers' locks. It is doRaw's second half, apart so that its two
// defers stay open-coded (Go open-codes a function's defers only when its
// returns times its defers are at most 15; doRaw with them was 18, and
// the deferred calls then cost a record and a runtime call each on every
// operation).
func queueOn[T Elem](op, names string, s *Stream, dev backend.Device, fn func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr) error, arrs []*Array[T]) error {
	// The stream's life is read-held until the work is queued: Close
	// cannot end it in between.
	if s.closed.Load() || !s.life.acquire() {
		return closedError(op, s)
	}
	defer s.life.release()

	var bufs [maxOperands]*buffer
	nb := 0
	for _, a := range arrs {
		if a.buf.size == 0 {
			continue // empty: nothing queued reads or writes it
		}
		dup := false
		for _, b := range bufs[:nb] {
			dup = dup || b == a.buf
		}
		if !dup {
			bufs[nb] = a.buf
			nb++
		}
	}
	for i := 1; i < nb; i++ { // insertion sort by address
		for j := i; j > 0 && uintptr(unsafe.Pointer(bufs[j])) < uintptr(unsafe.Pointer(bufs[j-1])); j-- {
			bufs[j], bufs[j-1] = bufs[j-1], bufs[j]
		}
	}
	for _, b := range bufs[:nb] {
		b.mu.Lock()
	}
	defer unlockAll(bufs[:nb])
	var p [maxOperands]backend.Ptr
	for i, a := range arrs {
		if a.buf.size > 0 && a.buf.block == nil {
			// Only reachable when UnsafeFree races with this operation.
			return fmt.Errorf("cuarray: %s: %s %s: its buffer was freed: %w", op, role(names, i), a, ErrFreed)
		}
		p[i] = a.ptr()
	}
	for _, b := range bufs[:nb] {
		if err := b.orderOn(s.life); err != nil {
			return fmt.Errorf("cuarray: %s: ordering stream %d after stream %d: %w", op, s.bs.ID(), b.life.bs.ID(), err)
		}
	}
	// The arrays, and so their buffers, stay reachable until the work is
	// queued; after that a cleanup frees on the buffer's last stream, which
	// is ordered after the work.
	err := fn(dev, s.bs, p)
	runtime.KeepAlive(arrs)
	if err != nil {
		return fmt.Errorf("cuarray: %w", err)
	}
	return nil
}

// unlockAll unlocks bufs, which queueOn locked.
func unlockAll(bufs []*buffer) {
	for _, b := range bufs {
		b.mu.Unlock()
	}
}

// streamFor is the stream an operation on dev runs on: o's, or dev's
// default stream.
func (o Ops[T]) streamFor(op string, dev backend.Device) (*Stream, error) {
	if o.s != nil {
		if o.s.dev != dev {
			return nil, fmt.Errorf("cuarray: %s: the arrays are on device %d, the stream on device %d: %w",
				op, dev.Ordinal(), o.s.dev.Ordinal(), ErrDevice)
		}
		return o.s, nil
	}
	return opsStream(dev)
}

// opsStream is dev's default stream for operations that make no arrays
// (so it needs no pool), made once per device.
func opsStream(dev backend.Device) (*Stream, error) {
	// Every package-level operation asks: the device last asked for is
	// an atomic load and an interface compare away, where the sync.Map
	// hashes the interface (issue 28's launch path).
	if s := defaults.lastOps.Load(); s != nil && s.dev == dev {
		return s, nil
	}
	v, ok := defaults.ops.Load(dev)
	if !ok {
		l, err := defaultLife(dev)
		if err != nil {
			return nil, err
		}
		v, _ = defaults.ops.LoadOrStore(dev, &Stream{home: &home{dev: dev}, bs: l.bs, life: l})
	}
	s := v.(*Stream)
	defaults.lastOps.Store(s) // the stored one: every caller sees one stream a device
	return s, nil
}

// checkOverlap rejects a destination that shares memory with an input
// without being exactly that input: kernels may run in place but not on
// partly overlapping ranges.
func checkOverlap[T Elem](op, names string, arrs []*Array[T]) error {
	d := arrs[0]
	var z T
	size := uint64(unsafe.Sizeof(z))
	for i, a := range arrs[1:] {
		if a.buf != d.buf || a.n == 0 || d.n == 0 {
			continue
		}
		if a.off == d.off && a.n == d.n && (a.contiguous() && d.contiguous() || sameLayout(a, d)) {
			continue // in place
		}
		// Views are taken to cover every element from their element 0 to
		// their last (extent): two that interleave count as overlapping.
		if a.off < d.off+uint64(d.extent())*size && d.off < a.off+uint64(a.extent())*size {
			return fmt.Errorf("cuarray: %s: %s %s and %s %s overlap in memory without being the same elements; use a copy or the same array: %w",
				op, role(names, 0), d, role(names, i+1), a, ErrShape)
		}
	}
	return nil
}

// sameLayout reports whether a and b have the same shape and strides.
func sameLayout[T Elem](a, b *Array[T]) bool {
	return slices.Equal(a.shape(), b.shape()) && slices.Equal(a.strides(), b.strides())
}

// role names operand i in messages: the i'th of the comma-separated names.
// It allocates nothing for a name in names: the checks before a nil dst's
// result is made call it for every operand of every operation.
func role(names string, i int) string {
	rest := names
	for k := 0; k < i; k++ {
		c := strings.IndexByte(rest, ',')
		if c < 0 {
			return fmt.Sprintf("operand %d", i)
		}
		rest = rest[c+1:]
	}
	if c := strings.IndexByte(rest, ','); c >= 0 {
		return rest[:c]
	}
	return rest
}
