package kernels

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/host"
	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/internal/devstream"
)

// Errors callers can match with errors.Is. Errors for bad arguments (a
// negative length, a nil or misaligned pointer, a stream of another
// device) wrap backend.ErrInvalidValue; a device of a backend kernels does
// not know wraps backend.ErrNotSupported.
var (
	// ErrUnsupportedDType: the operation does not take this element type
	// (Exp on int32). The message names the types it takes.
	ErrUnsupportedDType = errors.New("unsupported dtype")
	// ErrEmpty: Max or Min of no elements, which has no value.
	ErrEmpty = errors.New("reduction of an empty array")
	// ErrNoPTX: the PTX embedded in the package is the placeholder, so no
	// kernel can run on a GPU.
	ErrNoPTX = errors.New("kernels: the embedded PTX is missing; run scripts/gen-ptx.sh on a machine with nvcc")
)

// target is where one operation runs: a CUDA stream or a host stream,
// checked against the device, with what the error messages need.
type target struct {
	op string // the API name, "Add"
	dt DType
	s  backend.Stream

	cu  devstream.GPU // the CUDA backend, or
	cs  *cuda.Stream
	sms int
	hs  hostStream // the host backend (hs.Stream is nil on CUDA)
}

func (t *target) errorf(format string, args ...any) error {
	return opErrorf(t.op, t.dt, format, args...)
}

func opErrorf(op string, dt DType, format string, args ...any) error {
	if dt == 0 {
		return fmt.Errorf("kernels: "+op+": "+format, args...)
	}
	return fmt.Errorf("kernels: "+op+" "+dt.String()+": "+format, args...)
}

// ptrArg is a pointer argument and its name, for messages and for the
// host backend's stream checker, which learns from the name whether the
// operation writes the memory (see writes).
type ptrArg struct {
	name string
	p    backend.Ptr
}

// writes reports whether operation op writes its pointer argument called
// name. Every host launch declares its pointer arguments to the stream
// checker through prepare and checkPtr, so a new kernel is checked with no
// extra code as long as it names what it writes dst (or dst…, dx, loss,
// out), or is listed in inOut. A written argument declared as read would
// hide races; a read one declared as written would report reads on two
// streams, which are fine, as races.
func writes(op, name string) bool {
	switch name {
	case "dst", "dx", "loss", "out":
		return true
	}
	return strings.HasPrefix(name, "dst") || inOut[op] == name
}

// inOut names the argument an operation updates in place when it is not
// called dst: y = alpha*x + y.
var inOut = map[string]string{"Axpy": "y"}

// prepare checks an operation's arguments and resolves its device and
// stream. Pointers are checked only when n > 0: an empty array may have a
// nil pointer.
func prepare(op string, types dtypeSet, dt DType, dev backend.Device, s backend.Stream, n int, ptrs ...ptrArg) (target, error) {
	t := target{op: op, dt: dt, s: s}
	if !types.has(dt) {
		return t, fmt.Errorf("kernels: %s does not take %s; it takes %s: %w", op, dt, types, ErrUnsupportedDType)
	}
	if n < 0 {
		return t, t.errorf("length n = %d is negative: %w", n, backend.ErrInvalidValue)
	}
	if size := dt.Size(); n > maxBytes/size {
		return t, t.errorf("length n = %d is more than any device holds: %w", n, backend.ErrInvalidValue)
	}
	if err := t.resolve(dev, s); err != nil {
		return t, err
	}
	if n == 0 {
		return t, nil
	}
	if t.hs.checking {
		t.hs.n = uint64(n) * uint64(dt.Size()) // what checkPtr declares
	}
	for _, a := range ptrs {
		if err := t.checkPtr(a); err != nil {
			return t, err
		}
	}
	return t, nil
}

// maxBytes bounds an operation's bytes so that n*size never overflows.
const maxBytes = 1 << 62

// checkPtr checks that a pointer argument is not nil and is aligned, and
// declares it to the stream checker as prepare's n elements: exact for
// elementwise operations. An argument of another length (a row vector, one
// value a row, the whole matrix of an operation whose n is its row count)
// goes through checkSpan with its own.
func (t *target) checkPtr(a ptrArg) error { return t.checkSpan(a, t.hs.n) }

// checkSpan is checkPtr for an argument that spans bytes bytes.
func (t *target) checkSpan(a ptrArg, bytes uint64) error {
	t.declare(a.name, a.p, bytes)
	if a.p == 0 {
		return t.errorf("pointer %s is nil: %w", a.name, backend.ErrInvalidValue)
	}
	if size := t.dt.Size(); uintptr(a.p)%uintptr(size) != 0 {
		return t.errorf("pointer %s = %#x is not %d-byte aligned, as %s elements must be: %w",
			a.name, uintptr(a.p), size, t.dt, backend.ErrInvalidValue)
	}
	return nil
}

// declare tells the stream checker, when it is on, that the argument named
// name spans bytes bytes at p (written or read, as writes says). Arguments
// that share memory (dst = x in place) are declared each with its own
// extent.
func (t *target) declare(name string, p backend.Ptr, bytes uint64) {
	if t.hs.checking {
		t.hs.declare(host.Access{Ptr: p, Bytes: bytes, Write: writes(t.op, name)})
	}
}

// resolvedGPU is what resolve found for a GPU stream.
type resolvedGPU struct {
	dev backend.Device
	s   backend.Stream
	cu  devstream.GPU
	cs  *cuda.Stream
	sms int
	// mod is the context's kernels once loaded (nil before): the
	// elementwise operations' short path (quick) needs it.
	mod *module
}

// quick is the stream resolved last when s on dev is it and its kernels
// are loaded, else nil. An elementwise operation there skips prepare's
// general path (a target built and copied, each pointer checked through
// calls, the module looked up through the context): on the GPU a small
// operation's host time is its cost, and this is most of them.
func quick(dev backend.Device, s backend.Stream) *resolvedGPU {
	if g := lastGPU.Load(); g != nil && g.s == s && g.dev == dev && g.mod != nil {
		return g
	}
	return nil
}

// quickFn is the short path's guard, for an elementwise operation of n
// elements of dt on stream s of dev: the stream resolved last (quick), n
// within bounds, dt among the kernels' types, the pointers non-nil and
// aligned (quickPtrs), and the kernel id already loaded on the context. It
// returns the stream and the kernel, or a nil kernel where the operation
// takes prepare's general path, which words any error.
func quickFn(dev backend.Device, s backend.Stream, types dtypeSet, dt DType, n, id int, ptrs ...backend.Ptr) (*resolvedGPU, *cuda.Function) {
	g := quick(dev, s)
	if g == nil || n <= 0 || n > maxBytes/dt.Size() || !types.has(dt) || !quickPtrs(dt, ptrs...) {
		return nil, nil
	}
	return g, g.mod.fns[id].Load()
}

// quickPtrs reports whether ptrs are all non-nil and aligned for dt: the
// checks prepare makes of an elementwise operation's pointers, which the
// short path makes at once (any failure takes the general path, which
// words the error).
func quickPtrs(dt DType, ptrs ...backend.Ptr) bool {
	var or uintptr
	for _, p := range ptrs {
		if p == 0 {
			return false
		}
		or |= uintptr(p)
	}
	return or%uintptr(dt.Size()) == 0
}

// launch queues kernel f of op on g's stream over grid blocks of the
// package's threads.
func (g *resolvedGPU) launch(op string, dt DType, f *cuda.Function, grid uint32, words ...uint64) error {
	if err := g.cs.LaunchWords(f, cuda.Dim3{X: grid, Y: 1, Z: 1}, cuda.Dim3{X: threads, Y: 1, Z: 1}, 0, words...); err != nil {
		return opErrorf(op, dt, "%w", err)
	}
	return nil
}

// lastGPU is the GPU stream resolved last. It holds the stream, so the
// pointer compare cannot match a new stream at a collected one's address;
// a stream's handle and device never change, so the entry never goes
// stale. Only types whose == cannot panic are stored (every GPU stream is
// a pointer).
var lastGPU atomic.Pointer[resolvedGPU]

// resolve finds the backend of dev and checks that s is one of its streams.
func (t *target) resolve(dev backend.Device, s backend.Stream) error {
	// A program queues most of its operations on one stream: the last GPU
	// stream resolved answers them with one atomic load and two pointer
	// compares, where Resolve makes two reflect nil checks, two interface
	// assertions and three interface calls (one copying the device's Info).
	if g := lastGPU.Load(); g != nil && g.s == s && g.dev == dev {
		t.cu, t.cs, t.sms = g.cu, g.cs, g.sms
		return nil
	}
	on, err := devstream.Resolve(dev, s)
	if err != nil {
		return t.errorf("%w", err)
	}
	if d := on.GPU; d != nil {
		t.cu, t.cs, t.sms = d, on.GPUStream.CUDA(), max(d.Info().MultiProcessors, 1)
		if reflect.TypeOf(s).Comparable() && reflect.TypeOf(dev).Comparable() {
			g := &resolvedGPU{dev: dev, s: s, cu: t.cu, cs: t.cs, sms: t.sms}
			if m := lastModule.Load(); m != nil && m.ctx == d.Context() {
				g.mod = m
			}
			lastGPU.Store(g)
		}
		return nil
	}
	hs := on.HostStream
	t.hs = hostStream{HostStream: hs, checking: hs.Checking()}
	if t.hs.checking {
		t.hs.name = t.op
		if t.dt != 0 {
			t.hs.name += " " + t.dt.String()
		}
	}
	return nil
}
