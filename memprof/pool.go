package memprof

import (
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/config"
	"github.com/gocuda/gocuda/pool"
)

// maxDepth is how many frames an allocation remembers. A fixed array keeps
// the stack out of the heap and makes it usable as a map key, so a site
// seen before costs one map lookup and no allocation.
const maxDepth = 32

type stackKey [maxDepth]uintptr

// Modes the hot path checks with one atomic load. Both are off unless asked
// for, so a pool nobody traces pays one predictable branch per call.
const (
	modeTrace   uint32 = 1 << iota // record the stack of every allocation
	modeMeasure                    // an Allocated call is counting
)

var mode atomic.Uint32

// envOnce applies GOCUDA_DEBUG=leaks once, when the first pool is wrapped
// or tracing is first switched, rather than at init: importing the
// package reads nothing, and a program may Setenv the knob before its
// first allocation. Enable and Disable apply it first so that they win.
var envOnce sync.Once

func fromEnv() {
	envOnce.Do(func() {
		// Errors are the root package's to report (it refuses to make
		// pools with a knob that does not parse); here they just mean
		// "not asked".
		if c, err := config.FromEnv(); err == nil && c.Debug["leaks"] {
			setMode(modeTrace, true)
		}
	})
}

// Enable turns leak tracing on for every wrapped pool: from now on each
// allocation remembers the stack that made it until it is freed.
// Allocations made before Enable are not in the report.
func Enable() {
	fromEnv()
	setMode(modeTrace, true)
}

// Disable turns leak tracing off. Buffers allocated while it was on stay
// in the report until they are freed, so a report taken later still
// accounts for them; new allocations are not recorded.
func Disable() {
	fromEnv()
	setMode(modeTrace, false)
}

// Enabled reports whether leak tracing is on. GOCUDA_DEBUG=leaks turns it
// on when the first pool is wrapped (Wrap), so before that Enabled says
// false. It is one atomic load: cuarray checks it on every UnsafeFree.
func Enabled() bool { return mode.Load()&modeTrace != 0 }

func setMode(bit uint32, on bool) {
	for {
		old := mode.Load()
		next := old &^ bit
		if on {
			next |= bit
		}
		if mode.CompareAndSwap(old, next) {
			return
		}
	}
}

// Pool wraps a pool.Pool so that its allocations can be traced (Enable)
// and measured (Allocated). With both off, Alloc and Free add one atomic
// load each to the wrapped pool's; see the benchmarks in docs/observability.md.
// Every other method is the wrapped pool's.
type Pool struct {
	pool.Pool
	dev int
	mem pool.Memory

	// records is how many live allocations are recorded. Free consults
	// the table only when it is non-zero: blocks allocated while tracing
	// was on must be forgotten when they are freed, even after Disable,
	// but a pool with nothing recorded must not pay a lock to find that
	// out. It is written only while tracing, so reading it is uncontended.
	records atomic.Int64

	mu    sync.Mutex
	live  map[backend.Ptr]record
	sites map[stackKey]*site
}

// record is one live traced allocation.
type record struct {
	site      *site
	size, req uint64
}

// site is one allocation stack on one device, with its figures. Guarded
// by its Pool's mu.
type site struct {
	stack                    stackKey
	live, liveBytes, liveReq uint64
	allocs, allocBytes       uint64
}

var registry struct {
	sync.Mutex
	pools []*Pool
}

// Wrap returns p traced: its live allocations appear in Sites, WriteReport,
// WriteProfile and memprofhttp.Handler while tracing is on, and in
// Allocated. The root package wraps every device's pool this way. Close the wrapper (not p) so
// that it leaves the report.
func Wrap(p pool.Pool) *Pool {
	fromEnv()
	w := &Pool{Pool: p, dev: p.Device().Ordinal(), mem: pool.MemoryOf(p), live: map[backend.Ptr]record{}, sites: map[stackKey]*site{}}
	registry.Lock()
	registry.pools = append(registry.pools, w)
	registry.Unlock()
	return w
}

// Unwrap returns the wrapped pool.
func (w *Pool) Unwrap() pool.Pool { return w.Pool }

// Alloc is the wrapped pool's Alloc, recorded when tracing or measuring.
func (w *Pool) Alloc(size uint64, s backend.Stream) (*pool.Block, error) {
	b, err := w.Pool.Alloc(size, s)
	// One load decides both modes; the common case leaves here.
	if m := mode.Load(); m != 0 && err == nil {
		w.note(m, b, size)
	}
	return b, err
}

// note is out of line so that Alloc stays small enough to inline its
// caller's fast path; the skip count below depends on it being a frame of
// its own (runtime.Callers counts inlined frames as frames too, so
// inlining would not change it either way).
//
//go:noinline
func (w *Pool) note(m uint32, b *pool.Block, req uint64) {
	if m&modeMeasure != 0 {
		measure(req)
	}
	if m&modeTrace == 0 {
		return
	}
	var k stackKey
	// Skip runtime.Callers, note and Alloc: the first frame is whoever
	// called the pool.
	runtime.Callers(3, k[:])
	w.mu.Lock()
	st := w.sites[k]
	if st == nil {
		st = &site{stack: k}
		w.sites[k] = st
	}
	st.live++
	st.liveBytes += b.Size
	st.liveReq += req
	st.allocs++
	st.allocBytes += b.Size
	if _, dup := w.live[b.Ptr]; !dup {
		w.records.Add(1)
	}
	w.live[b.Ptr] = record{site: st, size: b.Size, req: req}
	w.mu.Unlock()
}

// Free is the wrapped pool's Free, forgetting the block's record first.
func (w *Pool) Free(b *pool.Block, s backend.Stream) error {
	if w.records.Load() == 0 || b == nil {
		return w.Pool.Free(b, s)
	}
	// Forget before freeing: once the wrapped pool has the block, another
	// goroutine may be handed the same address and record it.
	w.mu.Lock()
	r, ok := w.live[b.Ptr]
	if ok {
		w.drop(b.Ptr, r)
	}
	w.mu.Unlock()
	err := w.Pool.Free(b, s)
	if err != nil && ok {
		// The pool refused the block, so it is still live: keep it in the
		// report rather than hide it.
		w.mu.Lock()
		if _, taken := w.live[b.Ptr]; !taken {
			w.restore(b.Ptr, r)
		}
		w.mu.Unlock()
	}
	return err
}

func (w *Pool) drop(p backend.Ptr, r record) {
	delete(w.live, p)
	w.records.Add(-1)
	r.site.live--
	r.site.liveBytes -= r.size
	r.site.liveReq -= r.req
}

func (w *Pool) restore(p backend.Ptr, r record) {
	w.live[p] = r
	w.records.Add(1)
	r.site.live++
	r.site.liveBytes += r.size
	r.site.liveReq += r.req
}

// Close closes the wrapped pool and takes this pool out of the report.
func (w *Pool) Close() error {
	registry.Lock()
	for i, p := range registry.pools {
		if p == w {
			registry.pools = append(registry.pools[:i:i], registry.pools[i+1:]...)
			break
		}
	}
	registry.Unlock()
	return w.Pool.Close()
}

// snapshot copies this pool's sites that ever allocated.
func (w *Pool) snapshot() []Site {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]Site, 0, len(w.sites))
	for _, st := range w.sites {
		n := 0
		for n < maxDepth && st.stack[n] != 0 {
			n++
		}
		out = append(out, Site{
			Device: w.dev, Memory: w.mem, Stack: append([]uintptr(nil), st.stack[:n]...),
			Live: st.live, LiveBytes: st.liveBytes, LiveRequested: st.liveReq,
			Allocs: st.allocs, AllocBytes: st.allocBytes,
		})
	}
	return out
}

// Sites returns every allocation site recorded by the wrapped pools, live
// bytes largest first (then bytes allocated in all, then device, then kind
// of memory). Sites whose buffers were all freed are included with Live 0:
// they count towards the alloc_* figures of the profile.
func Sites() []Site {
	registry.Lock()
	pools := append([]*Pool(nil), registry.pools...)
	registry.Unlock()
	var all []Site
	for _, p := range pools {
		all = append(all, p.snapshot()...)
	}
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if a.LiveBytes != b.LiveBytes {
			return a.LiveBytes > b.LiveBytes
		}
		if a.AllocBytes != b.AllocBytes {
			return a.AllocBytes > b.AllocBytes
		}
		if a.Device != b.Device {
			return a.Device < b.Device
		}
		if a.Memory != b.Memory {
			return a.Memory < b.Memory
		}
		// Sites that tie on every figure still print in one order.
		return slices.Compare(a.Stack, b.Stack) < 0
	})
	return all
}
