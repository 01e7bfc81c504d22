package host

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"

	"github.com/gocuda/gocuda/backend"
)

// Fault injection.
//
// A test tells the backend which driver calls to fail (SetFaults): each
// kind of call at a rate, from a seeded generator, or at its Nth call, or
// both. A failed call does nothing (no memory taken, none given back,
// nothing queued) and returns a *FaultError, which matches ErrInjected
// and, when the rule says so, another sentinel such as
// backend.ErrOutOfMemory. Code above the backend must return such an error
// to its caller or recover from it, never panic or lose memory: that is
// what the fuzz tests of cuarray and the pools check with it.
//
// Off (the default) it costs each call one atomic load.

// ErrInjected is matched (errors.Is) by every error fault injection makes.
var ErrInjected = errors.New("injected fault")

// FaultOp is a kind of driver call that faults can be injected into.
type FaultOp int

// The kinds of call. Each covers every call that does that job.
const (
	// FaultAlloc: Alloc, AllocUnified, AllocPinned and CreatePhysical.
	FaultAlloc FaultOp = iota
	// FaultFree: Free, FreeUnified, FreePinned, ReleasePhysical and
	// ReleaseAddress. The memory stays allocated.
	FaultFree
	// FaultReserve: Reserve (virtual address space).
	FaultReserve
	// FaultMap: Map.
	FaultMap
	// FaultUnmap: Unmap. The range stays mapped.
	FaultUnmap
	// FaultStream: NewStream.
	FaultStream
	// FaultEvent: NewEvent.
	FaultEvent
	// FaultRecord: Event.Record.
	FaultRecord
	// FaultWait: Stream.WaitEvent.
	FaultWait
	// FaultSync: Stream.Synchronize, Event.Synchronize and
	// Device.Synchronize, which then return at once without waiting.
	FaultSync
	// FaultCopy: CopyHtoD, CopyDtoH, CopyDtoD and CopyPeer.
	FaultCopy
	// FaultMemset: Memset8 and Memset32.
	FaultMemset
	// FaultLaunch: Stream.Enqueue and Stream.EnqueueAccess, the host's
	// kernel launches.
	FaultLaunch

	numFaultOps
)

var faultOpNames = [numFaultOps]string{
	FaultAlloc: "alloc", FaultFree: "free", FaultReserve: "reserve", FaultMap: "map", FaultUnmap: "unmap",
	FaultStream: "stream", FaultEvent: "event", FaultRecord: "record", FaultWait: "wait", FaultSync: "sync",
	FaultCopy: "copy", FaultMemset: "memset", FaultLaunch: "launch",
}

func (o FaultOp) String() string {
	if o >= 0 && o < numFaultOps {
		return faultOpNames[o]
	}
	return fmt.Sprintf("FaultOp(%d)", int(o))
}

// FaultOps lists every kind of call, for tests that inject into all.
func FaultOps() []FaultOp {
	ops := make([]FaultOp, numFaultOps)
	for i := range ops {
		ops[i] = FaultOp(i)
	}
	return ops
}

// FaultRule says how calls of one kind fail.
type FaultRule struct {
	Op FaultOp
	// Rate is the share of calls that fail, from 0 to 1, drawn from the
	// generator seeded by Faults.Seed (one generator per kind, so that
	// one kind's draws do not shift another's).
	Rate float64
	// Nth makes the Nth call of this kind (counting from 1, since
	// SetFaults) fail; 0 for none.
	Nth uint64
	// As is a sentinel the error matches besides ErrInjected, for a fault
	// that should look like a particular failure (backend.ErrOutOfMemory
	// for an allocation); nil for none.
	As error
}

// Faults is what SetFaults injects: one rule per kind at most.
type Faults struct {
	Seed  uint64
	Rules []FaultRule
}

// FaultCount is how many calls of one kind were made since SetFaults and
// how many of them were made to fail.
type FaultCount struct {
	Calls, Injected uint64
}

// FaultError is the error of a call made to fail.
type FaultError struct {
	Op FaultOp
	// Call is which call of its kind it was, counting from 1.
	Call uint64
	As   error
}

func (e *FaultError) Error() string {
	msg := fmt.Sprintf("injected fault: %s call %d fails", e.Op, e.Call)
	if e.As != nil {
		msg += " as " + e.As.Error()
	}
	return msg
}

// Is makes errors.Is(err, ErrInjected) true.
func (e *FaultError) Is(target error) bool { return target == ErrInjected }

// Unwrap returns As.
func (e *FaultError) Unwrap() error { return e.As }

// faults is the injector in force; the backend holds it by an atomic
// pointer, nil when off.
type faults struct {
	mu     sync.Mutex
	rules  [numFaultOps]*FaultRule
	rngs   [numFaultOps]*rand.Rand
	counts [numFaultOps]FaultCount
}

// SetFaults replaces the faults injected into this backend's calls, and
// starts counting calls afresh; a zero Faults (no rules) turns injection
// off. A rule naming an unknown kind, a kind twice, or a rate outside 0 to
// 1 is an error, and the faults in force are left as they were.
func (b *Backend) SetFaults(f Faults) error {
	if len(f.Rules) == 0 {
		b.faults.Store(nil)
		return nil
	}
	in := &faults{}
	for i := range f.Rules {
		r := f.Rules[i]
		switch {
		case r.Op < 0 || r.Op >= numFaultOps:
			return fmt.Errorf("host: SetFaults: rule %d: kind %d is not a FaultOp (accepted: %s): %w", i, int(r.Op), faultOpList(), backend.ErrInvalidValue)
		case in.rules[r.Op] != nil:
			return fmt.Errorf("host: SetFaults: rule %d: a second rule for %s; give each kind one rule: %w", i, r.Op, backend.ErrInvalidValue)
		case !(r.Rate >= 0 && r.Rate <= 1):
			return fmt.Errorf("host: SetFaults: rule %d (%s): rate %v is not between 0 and 1: %w", i, r.Op, r.Rate, backend.ErrInvalidValue)
		}
		in.rules[r.Op] = &r
		in.rngs[r.Op] = rand.New(rand.NewPCG(f.Seed, uint64(r.Op)+1))
	}
	b.faults.Store(in)
	return nil
}

func faultOpList() string {
	names := make([]string, numFaultOps)
	for i := range names {
		names[i] = FaultOp(i).String()
	}
	return strings.Join(names, ", ")
}

// FaultCounts returns, for each kind with a rule, the calls made and the
// faults injected since SetFaults; nil when injection is off.
func (b *Backend) FaultCounts() map[FaultOp]FaultCount {
	in := b.faults.Load()
	if in == nil {
		return nil
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	out := make(map[FaultOp]FaultCount)
	for op, r := range in.rules {
		if r != nil {
			out[FaultOp(op)] = in.counts[op]
		}
	}
	return out
}

// fault is called by every call of kind op before it does anything: nil
// to go on, or the injected error to return.
func (b *Backend) fault(op FaultOp) error {
	in := b.faults.Load()
	if in == nil {
		return nil
	}
	r := in.rules[op]
	if r == nil {
		return nil
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	c := &in.counts[op]
	c.Calls++
	fail := c.Calls == r.Nth
	if r.Rate > 0 && in.rngs[op].Float64() < r.Rate {
		fail = true
	}
	if !fail {
		return nil
	}
	c.Injected++
	return &FaultError{Op: op, Call: c.Calls, As: r.As}
}

// faulted names the call that err, an injected fault, failed, as the
// backend's other errors do. Callers test fault's result first, so that
// no argument is boxed while injection is off.
func (d *Device) faulted(err error, format string, args ...any) error {
	return fmt.Errorf("host: device %d: %s: %w", d.ordinal, fmt.Sprintf(format, args...), err)
}
