package memprof

import (
	"runtime"
	"sync"
)

// Allocation is what Allocated counted.
type Allocation struct {
	// Allocs is how many device allocations succeeded.
	Allocs uint64
	// Bytes is what those allocations asked for (before the pool's
	// rounding), freed since or not, as CUDA.jl's @allocated counts.
	Bytes uint64
}

// Allocated runs f and returns the device allocations it made through the
// wrapped pools (every gocuda.Pool): on every device, from cache or from
// the driver alike.
//
// It does not need leak tracing. It counts only allocations made on the
// goroutine that called Allocated, so goroutines allocating at the same
// time elsewhere do not inflate the figure; by the same rule, allocations
// made by goroutines that f starts are not counted either. While any
// Allocated call is running, every allocation in the process pays a walk
// of its goroutine's stack (a few hundred nanoseconds; several
// microseconds while Allocated runs on two goroutines at once) to find out
// whether it is inside f; afterwards, nothing.
// Calls nest: an inner call's allocations count towards the outer call too.
func Allocated(f func()) Allocation {
	m := &measurement{}
	id := goid()
	measuring.Lock()
	if measuring.by == nil {
		measuring.by = map[uint64][]*measurement{}
	}
	measuring.by[id] = append(measuring.by[id], m)
	measuring.n++
	if measuring.n == 1 {
		setMode(modeMeasure, true)
	}
	measuring.Unlock()

	defer func() {
		measuring.Lock()
		l := measuring.by[id]
		l = l[:len(l)-1] // calls on one goroutine nest, so m is last
		if len(l) == 0 {
			delete(measuring.by, id)
		} else {
			measuring.by[id] = l
		}
		measuring.n--
		if measuring.n == 0 {
			setMode(modeMeasure, false)
		}
		measuring.Unlock()
	}()
	runMeasured(f)
	measuring.Lock()
	defer measuring.Unlock()
	return m.got
}

// runMeasured is the one frame every allocation inside an Allocated call
// has on its stack: measure finds it by its return address, which is one
// comparison per frame and needs no symbols. It must stay a frame of its
// own with a single call of f.
//
//go:noinline
func runMeasured(f func()) { f() }

// measuredPC is runMeasured's return address from f.
var measuredPC = func() uintptr {
	var pc [1]uintptr
	runMeasured(func() { runtime.Callers(2, pc[:]) })
	return pc[0]
}()

// insideMeasured reports whether the calling goroutine is inside f of an
// Allocated call.
func insideMeasured() bool {
	var buf [64]uintptr
	pcs := buf[:]
	for skip := 2; ; {
		n := runtime.Callers(skip, pcs)
		for _, pc := range pcs[:n] {
			if pc == measuredPC {
				return true
			}
		}
		if n < len(pcs) {
			return false
		}
		skip += n // a deep stack: look further up
	}
}

type measurement struct{ got Allocation }

var measuring struct {
	sync.Mutex
	n  int
	by map[uint64][]*measurement // goroutine id -> open Allocated calls, outermost first
}

// measure counts one allocation of req bytes towards the calling
// goroutine's open Allocated calls.
func measure(req uint64) {
	if !insideMeasured() {
		return
	}
	measuring.Lock()
	if len(measuring.by) == 1 {
		// We are inside an Allocated call, so we are in the table; being
		// its only goroutine, the entry is ours without asking who we are.
		for _, l := range measuring.by {
			count(l, req)
		}
		measuring.Unlock()
		return
	}
	measuring.Unlock()
	// Several goroutines measure at once: tell them apart the slow way.
	id := goid()
	measuring.Lock()
	count(measuring.by[id], req)
	measuring.Unlock()
}

func count(l []*measurement, req uint64) {
	for _, m := range l {
		m.got.Allocs++
		m.got.Bytes += req
	}
}

// goid returns the calling goroutine's id. Go offers no cheaper public way
// than the first line of its stack trace ("goroutine 42 [running]:"); it
// is paid only while an Allocated call is open.
func goid() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	const prefix = "goroutine "
	if len(b) < len(prefix) {
		return 0
	}
	var id uint64
	for _, c := range b[len(prefix):] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	return id
}
