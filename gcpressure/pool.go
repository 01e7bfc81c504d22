package gcpressure

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/pool"
)

// Options configure Wrap.
type Options struct {
	// Early turns the eager heuristic on (GOCUDA_GC_EARLY, on by default
	// in the root package). Off, the collector runs only on the
	// out-of-memory path.
	Early bool
	// Budget is the share of run time early collections may take at the
	// bottom of the pressure zone; 0 means DefaultBudget. Accepted: 0 to
	// 0.25 (at most MaxBudgetFactor times it is ever spent).
	Budget float64
	// Status describes the pool for out-of-memory errors (the root
	// package's PoolStatus); nil means the wrapped pool's Stats().String().
	Status func() string
	// CleanupTimeout bounds how long the out-of-memory path waits for the
	// cleanups a collection queued; 0 means DefaultCleanupTimeout. A
	// cleanup that blocks must not hang every allocation.
	CleanupTimeout time.Duration
	// GCPercent is the pacer (GOCUDA_GC_PERCENT; see PacerTarget):
	// device bytes in use are kept near (1 + GCPercent/100) times what
	// the last collection left live. 0
	// means DefaultGCPercent (100, as GOGC), PacerOff turns it off. The
	// pacer is part of early collection: with Early off it is off too.
	GCPercent int
}

// DefaultCleanupTimeout: cleanups that free arrays take microseconds each,
// so even a million of them finish well within it; reaching it means a
// cleanup is stuck, and the allocation is retried anyway.
const DefaultCleanupTimeout = 5 * time.Second

// MaxBudget is the largest Budget accepted: with MaxBudgetFactor it lets
// early collections take up to all run time, which is not a budget.
const MaxBudget = 0.25

// sourced is implemented by every strategy in pool/...: the Source gives
// the reserved bytes with one atomic load.
type sourced interface{ Source() *pool.Source }

// unwrapper is implemented by wrappers (memprof.Pool, this Pool).
type unwrapper interface{ Unwrap() pool.Pool }

// Pool wraps a pool.Pool with the pressure layer: Alloc runs the eager
// heuristic, the pacer and the out-of-memory retry; Free counts what a
// running collection frees; Reclaim, Stats, Name and Device are the
// wrapped pool's. Blocks are the wrapped pool's own.
type Pool struct {
	pool.Pool

	// src gives the wrapped pool's reserved bytes (one atomic load). For
	// a pool without one it is a private, empty Source, and watch is
	// MaxUint64: only the out-of-memory path runs.
	src     *pool.Source
	sourced bool // src is the wrapped pool's, not a private empty one
	// watch is the reserved level above which Alloc looks: the lower of
	// eagerAt and pacerAt. It is written on the slow path only, so the
	// load that every Alloc does stays in a shared cache line.
	watch atomic.Uint64
	// nowLine is NowPressure of the limit, for look's first test; ticks
	// counts allocations above it (see sampleEvery).
	nowLine atomic.Uint64
	ticks   atomic.Uint32
	// counting is set while a collection runs; meanwhile Free adds the
	// bytes it frees to freedDuring, so that the collection knows the
	// live bytes it left without counting what the program allocated
	// while it ran (see collect). Written twice a collection, so Free's
	// load of it stays in a shared cache line.
	counting    atomic.Bool
	freedDuring atomic.Uint64
	// lw is the wrapped pool's live watcher, nil if it has none. With one
	// the pacer watches bytes in use through it (a caching pool serves
	// most allocations without its reserved bytes moving); without, it
	// watches reserved bytes, which for pools that cache nothing (cuda,
	// none) move with bytes in use. liveFn is what lw calls: it sets due
	// and makes the next Alloc look.
	lw     pool.LiveWatcher
	liveFn func()
	due    atomic.Bool

	dev  backend.Device
	opts Options

	// mu guards the heuristic's state. Looks take it with TryLock: while
	// one goroutine decides, the others allocate without waiting.
	mu        sync.Mutex
	limit     uint64    // effective limit (see Input.Limit)
	limitAt   time.Time // when limit was read from the device
	lastStart time.Time // the last collection (early or out of memory)
	lastDur   time.Duration
	lastFreed uint64
	lastLive  uint64      // live bytes as the last collection left them
	running   *collection // the collection in progress, nil if none
	// eagerAt is where the eager heuristic looks next: MinPressure of the
	// limit at first, then where the last look was (noWatch with Early
	// off). pacerAt is the reserved level where the pacer looks next
	// when it watches reserved bytes (see lw); noWatch with a live
	// watcher or with the pacer off.
	eagerAt, pacerAt uint64
	// target is the pacer's (PacerTarget of lastLive), trigger its
	// PacerTrigger; both 0 when it is off. credit is its unspent budget
	// as of creditAt (see PacerBurst).
	target, trigger uint64
	credit          time.Duration
	creditAt        time.Time
	// waitCredit is the unspent wait budget (PacerWaitBudget) as of
	// waitAt.
	waitCredit time.Duration
	waitAt     time.Time
	// cycleMost is the most bytes in use (with the request) the pacer
	// has seen since the last collection ended, cycleReq the largest
	// request; cycles holds both for the last reclaimWindow collections,
	// cycleAt counts them. The peaks are the need ReclaimAfterPacing
	// keeps, the requests the margin below the target where allocations
	// wait (PaceInput.Margin).
	cycleMost, cycleReq uint64
	cycles              [reclaimWindow]struct{ peak, req uint64 }
	cycleAt             int
	// dry: a wait for a dear collection ran its stream dry; until a
	// collection is cheap again, allocations do not wait (see
	// PacerWaitBudget).
	dry bool

	// oomMu makes one goroutine at a time climb the out-of-memory ladder;
	// the others wait and then find the memory it freed.
	oomMu sync.Mutex

	start   time.Time
	counts  counts
	closing sync.WaitGroup // background collections
}

// collection is one run of the collector; done is closed when it and its
// cleanups have finished.
type collection struct {
	done  chan struct{}
	freed uint64
}

// Wrap returns p with the pressure layer. The limits are p's Source's
// (see pool.New); without a hard limit the effective limit is what the
// device can give, read from it on slow paths. Options are checked:
// a Budget out of range is an error naming it.
func Wrap(p pool.Pool, o Options) (*Pool, error) {
	if p == nil {
		return nil, errors.New("gcpressure: Wrap: nil pool")
	}
	if o.Budget < 0 || o.Budget > MaxBudget || o.Budget != o.Budget {
		return nil, &OptionError{Field: "Budget", Value: o.Budget, Accepted: "0 (the default, 0.05) up to 0.25"}
	}
	if err := checkGCPercent(o.GCPercent); err != nil {
		return nil, err
	}
	if o.CleanupTimeout < 0 {
		return nil, &OptionError{Field: "CleanupTimeout", Value: o.CleanupTimeout, Accepted: "0 (the default, 5s) or a positive duration"}
	}
	if o.Budget == 0 {
		o.Budget = DefaultBudget
	}
	if o.CleanupTimeout == 0 {
		o.CleanupTimeout = DefaultCleanupTimeout
	}
	if o.GCPercent == 0 {
		o.GCPercent = DefaultGCPercent
	}
	w := &Pool{Pool: p, dev: p.Device(), opts: o, start: time.Now()}
	w.src = sourceOf(p)
	w.sourced = w.src != nil
	w.lw = liveWatcherOf(p)
	w.liveFn = w.liveGrew
	if w.src == nil {
		// Reserved() of a fresh source is 0, and watch below stays at
		// MaxUint64: Alloc never looks.
		src, err := pool.NewSource(w.dev, pool.Limits{})
		if err != nil {
			return nil, err
		}
		w.src = src
		w.opts.Early = false
	}
	w.eagerAt, w.pacerAt = noWatch, noWatch
	w.watch.Store(noWatch)
	if !w.opts.Early {
		w.opts.GCPercent = PacerOff
	}
	if w.opts.Early {
		w.mu.Lock()
		w.refreshLimit(time.Now(), w.src.Reserved())
		w.setTarget(0)
		w.credit, w.creditAt = PacerBurst, w.start
		w.waitCredit, w.waitAt = PacerWaitBurst, w.start
		w.rearmPacer()
		w.setWatch(w.zoneStart())
		w.mu.Unlock()
	}
	return w, nil
}

// OptionError is a bad Options field: what it was and what is accepted.
type OptionError struct {
	Field    string
	Value    any
	Accepted string
}

func (e *OptionError) Error() string {
	return fmt.Sprintf("gcpressure: Options.%s = %v is out of range; accepted: %s", e.Field, e.Value, e.Accepted)
}

// sourceOf finds the Source of p or of a pool it wraps.
func sourceOf(p pool.Pool) *pool.Source {
	if s, ok := unwrapTo[sourced](p); ok {
		return s.Source()
	}
	return nil
}

// liveWatcherOf finds the LiveWatcher of p or of a pool it wraps; only
// the innermost pool sees every allocation.
func liveWatcherOf(p pool.Pool) pool.LiveWatcher {
	lw, _ := unwrapTo[pool.LiveWatcher](p)
	return lw
}

// For returns the pressure layer of p, which may be wrapped further (the
// root package's pools are: For(gocuda.Pool(0)) finds it).
func For(p pool.Pool) (*Pool, bool) { return unwrapTo[*Pool](p) }

// unwrapTo finds the outermost of p and the pools it wraps (through
// Unwrap) that is a T.
func unwrapTo[T any](p pool.Pool) (T, bool) {
	for p != nil {
		if t, ok := p.(T); ok {
			return t, true
		}
		u, ok := p.(unwrapper)
		if !ok {
			break
		}
		p = u.Unwrap()
	}
	var zero T
	return zero, false
}

// Unwrap returns the wrapped pool.
func (w *Pool) Unwrap() pool.Pool { return w.Pool }

// Alloc allocates through the wrapped pool. Far from the limit it adds one
// atomic load and a compare; when the pool's reserved bytes have grown
// past where the heuristic last looked it looks again (see Decide); when
// the wrapped pool is out of memory it climbs the ladder (see retry).
func (w *Pool) Alloc(size uint64, s backend.Stream) (*pool.Block, error) {
	// The reserved bytes change only when the pool takes memory from the
	// driver or gives it back, so a cached allocation reads a value that
	// no other goroutine is writing: the load costs about a nanosecond.
	if w.src.Reserved() > w.watch.Load() {
		w.look(size, s)
	}
	b, err := w.Pool.Alloc(size, s)
	if err != nil {
		return w.retry(size, s, err)
	}
	return b, nil
}

// Free frees through the wrapped pool; while a collection runs it also
// counts the bytes freed (one atomic load otherwise).
func (w *Pool) Free(b *pool.Block, s backend.Stream) error {
	if w.counting.Load() && b != nil {
		w.freedDuring.Add(b.Size)
	}
	return w.Pool.Free(b, s)
}

// SetLimits sets the wrapped pool's limits at run time (see
// pool.Source.SetLimits) and measures pressure against them from the next
// allocation on. A pool with no pool.Source has no limits to set: that is
// an error wrapping backend.ErrNotSupported.
func (w *Pool) SetLimits(l pool.Limits) error {
	if !w.sourced {
		return fmt.Errorf("gcpressure: pool %s keeps no limits (it has no pool.Source): %w", w.Pool.Name(), backend.ErrNotSupported)
	}
	if err := w.src.SetLimits(l); err != nil {
		return err
	}
	w.mu.Lock()
	w.limit = 0 // refreshLimit reads it afresh
	w.refreshLimit(time.Now(), w.src.Reserved())
	if w.opts.Early {
		w.setWatch(w.zoneStart())
		w.rearmPacer() // the new limit may move the pacer in or aside
	}
	w.mu.Unlock()
	return nil
}

// Close waits for a background collection to end, then closes the
// wrapped pool.
func (w *Pool) Close() error {
	w.closing.Wait()
	return w.Pool.Close()
}

// zoneStart is the reserved level where looking starts. The caller holds
// mu.
func (w *Pool) zoneStart() uint64 { return uint64(MinPressure * float64(w.limit)) }

// limitRefresh is how old the device's free-memory figure may get before a
// look reads it again: other processes change it on the scale of seconds,
// and one driver call a second is nothing next to the growth that made
// the look happen.
const limitRefresh = time.Second

// refreshLimit recomputes the effective limit when it is older than
// limitRefresh. reserved is the wrapped pool's. The caller holds mu.
func (w *Pool) refreshLimit(now time.Time, reserved uint64) {
	if w.limit != 0 && now.Sub(w.limitAt) < limitRefresh {
		return
	}
	w.limit = EffectiveLimit(w.src.Limits(), reserved, w.dev)
	w.limitAt = now
	w.nowLine.Store(uint64(NowPressure * float64(w.limit)))
}

// noWatch is a watermark never passed: nobody looks.
const noWatch = ^uint64(0)

// setWatch sets where the eager heuristic next looks: at reserved level
// v, or, once reserved is past NowPressure of the limit, at every
// allocation (sampled, see look). There a caching pool stops growing: it
// sits at the limit and serves allocations from blocks that collections
// gave back until they run out, so growth no longer tells when garbage
// builds up; only live bytes do, and those take a look to read. With
// Early off it leaves the eager watermark at noWatch. The caller holds mu.
func (w *Pool) setWatch(v uint64) {
	if !w.opts.Early {
		return
	}
	if line := w.nowLine.Load(); w.src.Reserved() >= line && line > 0 {
		v = line - 1
	}
	w.eagerAt = v
	w.arm()
}

// setTarget sets the pacer's target and trigger from the live bytes a
// collection left. The caller holds mu.
func (w *Pool) setTarget(liveAfter uint64) {
	w.target = PacerTarget(liveAfter, w.opts.GCPercent)
	w.trigger = PacerTrigger(w.target, liveAfter)
}

// refill adds to the pacer's credit what the budget earned since it was
// last counted, up to PacerBurst. The caller holds mu.
func (w *Pool) refill(now time.Time) {
	if d := now.Sub(w.creditAt); d > 0 {
		w.credit = min(PacerBurst, w.credit+time.Duration(PacerBudget*float64(d)))
		w.creditAt = now
	}
	if d := now.Sub(w.waitAt); d > 0 {
		w.waitCredit = min(PacerWaitBurst, w.waitCredit+time.Duration(PacerWaitBudget*float64(d)))
		w.waitAt = now
	}
}

// pacerPoll is how often an allocation held at the pacer's target asks
// whether its stream still has work queued: the device idles at most this
// long (and the host's time to queue more) before the allocation goes on.
// A poll is one cuStreamQuery, about a microsecond.
const pacerPoll = 100 * time.Microsecond

// waitPacer holds an allocation on stream s at the pacer's target until
// collection c has ended, for as long as s has work queued (the device is
// busy, and holding up the goroutine that feeds it costs the program
// nothing: the device still has that work to do) or, once s is idle (or
// cannot tell: no backend.Pending, or no stream), while the wait budget
// lasts. Only the idle part is charged to the budget: that is the time
// the device stands still.
func (w *Pool) waitPacer(c *collection, s backend.Stream) {
	ps, tells := s.(backend.Pending)
	w.mu.Lock()
	allowance := w.waitCredit
	// A dear collection is not waited for with the device idle.
	dear := isDear(w.lastDur)
	if dear {
		allowance = 0
	}
	w.mu.Unlock()
	start := time.Now()
	last := start
	var idle time.Duration
	ended := false // the collection ended before the wait did
	tick := time.NewTicker(pacerPoll)
	defer tick.Stop()
	for done := false; !done; {
		select {
		case <-c.done:
			done, ended = true, true
		case now := <-tick.C:
			if !tells || !ps.Pending() {
				idle += now.Sub(last)
				done = idle >= allowance
			}
			last = now
		}
	}
	w.counts.waited.Add(int64(time.Since(start)))
	w.mu.Lock()
	w.waitCredit -= idle
	if dear && !ended {
		w.dry = true // the queued work did not last the collection
	}
	w.mu.Unlock()
}

// margin is PaceInput.Margin: the largest request the pacer saw in this
// cycle and the last reclaimWindow. The caller holds mu.
func (w *Pool) margin() uint64 {
	m := w.cycleReq
	for _, c := range w.cycles {
		m = max(m, c.req)
	}
	return m
}

// arm publishes the lower of the two watermarks for Alloc, or 0 while
// the live watcher has called (due): the next Alloc then looks. The
// caller holds mu.
func (w *Pool) arm() {
	w.watch.Store(min(w.eagerAt, w.pacerAt))
	// liveGrew sets due, then the watch; checking due after the store
	// means that whichever of the two runs last leaves the watch at 0.
	if w.due.Load() {
		w.watch.Store(0)
	}
}

// liveGrew is the live watcher's call: bytes in use reached the pacer's
// next line. The next Alloc looks (see arm); it is called with no lock
// held and takes none.
func (w *Pool) liveGrew() {
	w.due.Store(true)
	w.watch.Store(0)
}

// pacerNext is the bytes in use at which the pacer next has something to
// decide, given bytes in use now: the trigger, while below it and no
// collection runs; else the wait line (the target less the margin), where
// allocations wait; else, past both (no credit, or no wait allowed),
// pacerStep further on. The caller holds mu.
func (w *Pool) pacerNext(live uint64, inFlight bool) uint64 {
	line := waitLine(w.trigger, w.target, w.margin())
	switch {
	case w.target == 0:
		return noWatch
	case !inFlight && live < w.trigger:
		return w.trigger
	case live < line:
		return line
	}
	return live + pacerStep(w.target)
}

// watchPacer makes the pacer look next when bytes in use reach next,
// given live now: through the live watcher when the pool has one (it
// calls when the pool's streams have handed out next-live bytes more),
// else when reserved bytes pass next (bytes in use are at most reserved
// bytes, so nothing can be due below it), or grow by pacerStep when they
// are already past it. The caller holds mu.
func (w *Pool) watchPacer(live, next uint64) {
	if w.lw != nil {
		w.pacerAt = noWatch
		if next == noWatch {
			w.lw.WatchLive(0, nil)
		} else {
			w.lw.WatchLive(max(next-min(next, live), 1<<20), w.liveFn)
		}
		w.arm()
		return
	}
	if next != noWatch {
		if r := w.src.Reserved(); r >= next {
			next = r + pacerStep(w.target)
		}
	}
	w.pacerAt = next
	w.arm()
}

// sampleEvery: above NowPressure, one allocation in this many looks. A
// look costs a clock read, a lock and the pool's Stats (a few hundred
// nanoseconds); one in 8 keeps that to tens of nanoseconds an allocation,
// and a training step makes far more than 8 allocations per collection.
const sampleEvery = 8

// EffectiveLimit is the limit pressure is measured against: the smallest
// of the hard limit (else the soft limit) and what the device can give,
// which is what this pool holds (reserved) plus the device's free memory,
// so memory other processes use is left out.
func EffectiveLimit(l pool.Limits, reserved uint64, dev backend.Device) uint64 {
	avail := dev.Info().TotalMemory
	if free, _, err := dev.MemInfo(); err == nil {
		avail = reserved + free
	}
	limit := l.Hard
	if limit == 0 {
		limit = l.Soft
	}
	if limit == 0 || avail < limit {
		limit = avail
	}
	return limit
}

// lookStep is how far reserved must grow before the next look when the
// last one found a collection too soon for the budget: a look costs a
// clock read and a lock (tens of nanoseconds), and for a pool whose
// reserved bytes move on every allocation (the driver's pool charges each
// one) this keeps looks to one per 1/1024 of the limit.
const lookStep = 1024

// look is the slow path of the eager heuristic and the pacer: out of line
// so that Alloc stays small enough to inline.
//
//go:noinline
func (w *Pool) look(size uint64, s backend.Stream) {
	// Near the limit every allocation comes here (see setWatch); most
	// leave at once. The counter is written only there, so allocations far
	// from the limit never touch it.
	if w.src.Reserved() >= w.nowLine.Load() && w.ticks.Add(1)%sampleEvery != 0 {
		return
	}
	if !w.mu.TryLock() {
		return // another goroutine is deciding for everyone
	}
	now := time.Now()
	r := w.src.Reserved()
	w.refreshLimit(now, r)
	in := Input{Request: size, Limit: w.limit, Budget: w.opts.Budget, InFlight: w.running != nil}
	if !w.lastStart.IsZero() {
		in.SinceLast, in.LastDur, in.LastFreed = now.Sub(w.lastStart), w.lastDur, w.lastFreed
		in.LiveAfterLast = w.lastLive
	}
	// Live bytes are a sum over streams: read them once, and only if a
	// decision needs them.
	haveLive := false
	live := func() uint64 {
		if !haveLive {
			in.Live, haveLive = w.Pool.Stats().Live, true
		}
		return in.Live
	}
	act, note := Skip, "early"
	if r > w.eagerAt {
		// Before summing the pool's figures, the cheap test: if even the
		// largest budget says the last collection was too recent, and live
		// bytes (at most reserved) are below NowPressure so that no
		// collection can be imminent, nothing below can decide otherwise.
		if !in.InFlight && in.LastDur > 0 &&
			float64(in.LastDur) > MaxBudgetFactor*in.Budget*float64(in.SinceLast) &&
			float64(r)+float64(size) < NowPressure*float64(in.Limit) {
			w.eagerAt = max(w.zoneStart(), r+w.limit/lookStep)
		} else {
			live()
			act = Decide(in)
			if act == Now && !in.InFlight && !in.Within() {
				note = "imminent"
			}
			w.eagerAt = max(w.zoneStart(), r)
		}
		w.setWatch(w.eagerAt)
	}
	// The pacer's turn: reserved bytes passed its line (pools without a
	// live watcher), or the live watcher called; unless it stands aside
	// for the pressure rules.
	if act == Skip && (r > w.pacerAt || w.due.Swap(false)) && !w.pacerAside() {
		w.refill(now)
		x := live()
		w.cycleMost, w.cycleReq = max(w.cycleMost, x+size), max(w.cycleReq, size)
		pin := PaceInput{Live: x, Request: size, Trigger: w.trigger, Target: w.target, Credit: w.credit, InFlight: in.InFlight,
			WaitCredit: w.waitCredit, Margin: w.margin(), LastDur: w.lastDur, Dry: w.dry}
		// Only from the wait line does it matter whether the device still
		// has work queued (a driver call): if so, the wait is free.
		if w.target != 0 && x+size >= waitLine(w.trigger, w.target, pin.Margin) {
			if ps, ok := s.(backend.Pending); ok {
				pin.Busy = ps.Pending()
			}
		}
		if act = Pace(pin); act != Skip {
			note = "pacer"
		} else {
			w.watchPacer(x, w.pacerNext(x+size, in.InFlight))
		}
	}
	switch act {
	case Background:
		c := w.begin(now, live())
		w.mu.Unlock()
		w.closing.Add(1)
		go func() {
			defer w.closing.Done()
			w.collect(c, now, note, false)
		}()
	case Now:
		c, joined := w.running, true
		if c == nil {
			c, joined = w.begin(now, live()), false
		}
		w.mu.Unlock()
		if note == "pacer" {
			// The pacer's collection runs in the background even when
			// the allocation waits for it, so that the wait can end
			// before the collection does (see waitPacer).
			if !joined {
				w.closing.Add(1)
				go func() {
					defer w.closing.Done()
					w.collect(c, now, note, false)
				}()
			}
			w.waitPacer(c, s)
			return
		}
		if joined {
			t := time.Now()
			<-c.done
			w.counts.waited.Add(int64(time.Since(t)))
			return
		}
		w.collect(c, now, note, true)
	default:
		w.mu.Unlock()
	}
}

// begin records that a collection starts, with live bytes in use (read
// by the caller, who decided on them). The caller holds mu.
func (w *Pool) begin(now time.Time, live uint64) *collection {
	c := &collection{done: make(chan struct{})}
	w.running, w.lastStart = c, now
	// While a collection runs the pacer looks only from the target, where
	// allocations wait for it; its end sets the next target.
	if w.target != 0 && !w.pacerAside() {
		w.watchPacer(live, w.pacerNext(live, true))
	}
	return c
}

// collect runs the collector, waits for the cleanups it queued (so that
// what it freed is known, and is in the pool when blocking is true),
// records the figures and emits an EventCollect. blocking says an
// allocation waits for it: then the cleanup wait counts as collection
// time too.
func (w *Pool) collect(c *collection, start time.Time, note string, blocking bool) {
	// The live bytes a collection leaves are what was in use when it
	// started less what it freed: the bytes in use when it ends also hold
	// what the program allocated meanwhile (gigabytes, for a training loop
	// that allocates tens of GiB/s during a collection that takes
	// milliseconds), and a target set from those would grow every cycle.
	// Go's pacer likewise sets its goal from the heap marked live, not the
	// heap at the cycle's end. Frees the program makes meanwhile count as
	// the collection's: they too shrink the live set.
	w.freedDuring.Store(0)
	w.counting.Store(true)
	before := w.Pool.Stats().Live
	runtime.GC()
	gcDone := time.Now()
	waitCleanups(start.Add(w.opts.CleanupTimeout), nil)
	end := time.Now()
	w.counting.Store(false)
	c.freed = min(w.freedDuring.Load(), before)
	after := before - c.freed
	dur := gcDone.Sub(start)
	if blocking {
		dur = end.Sub(start)
		w.counts.waited.Add(int64(dur))
	}
	w.counts.add(note, dur, c.freed)

	w.counts.noteLive(after)

	w.mu.Lock()
	w.lastDur, w.lastFreed, w.lastLive = dur, c.freed, after
	if w.running == c {
		w.running = nil
	}
	// The pacer's next target follows what this collection left live,
	// whatever kind it was; its own collections spend its credit.
	if w.opts.GCPercent != PacerOff {
		w.setTarget(after)
	}
	if note == "pacer" {
		w.refill(end)
		w.credit -= dur
	}
	// A cheap collection can be waited for again (see PacerWaitBudget).
	if !isDear(dur) {
		w.dry = false
	}
	// What the next cycles need: this cycle's peak (bytes in use when it
	// started, or more where a look saw more) beside the last few; and
	// its largest request, for the margin.
	w.cycles[w.cycleAt%reclaimWindow] = struct{ peak, req uint64 }{max(w.cycleMost, before), w.cycleReq}
	w.cycleAt++
	w.cycleMost, w.cycleReq = 0, 0
	need := w.target
	for _, c := range w.cycles {
		need = max(need, c.peak)
	}
	// Where to look next: after a collection, the pool may hold less
	// (pools that cache nothing give freed memory straight back), and the
	// next growth from there is news.
	w.setWatch(max(w.zoneStart(), w.src.Reserved()))
	// The pacer's next cycle, from the bytes in use now (what the program
	// made while this collection ran is in them): armed before anyone
	// waiting for this collection goes on allocating.
	w.rearmPacer()
	w.mu.Unlock()
	close(c.done)

	if pool.Observed() {
		pool.Emit(pool.Event{Kind: pool.EventCollect, Device: w.dev.Ordinal(), Memory: pool.MemoryOfDevice(w.dev), Bytes: c.freed, Dur: dur,
			Note: note, Reserved: w.src.Reserved()})
	}

	// Reserved follows live: after a pacer collection, what the pool
	// reserves beyond what the next cycles need goes back to the driver
	// (with hysteresis, see ReclaimAfterPacing). Only after pacer
	// collections: the eager ones run under pressure, where the cache is
	// what the next allocations near the limit are served from, and the
	// out-of-memory ladder reclaims on its own.
	if note != "pacer" {
		return
	}
	if n := ReclaimAfterPacing(w.src.Reserved(), need); n > 0 {
		w.counts.pacerReclaimed.Add(w.Pool.Reclaim(n))
		if w.lw == nil {
			// Where the pacer watches reserved bytes, its line moves
			// with them.
			w.mu.Lock()
			w.rearmPacer()
			w.mu.Unlock()
		}
	}
}

// rearmPacer sets the pacer's next look after a collection, unless
// another has started since. The caller holds mu.
func (w *Pool) rearmPacer() {
	if w.running != nil || w.target == 0 {
		return
	}
	if w.pacerAside() {
		w.watchPacer(0, noWatch)
		return
	}
	live := w.Pool.Stats().Live
	// A cycle that starts past its trigger (a program that queues work
	// far ahead of the device made more while the collection ran than the
	// new target leaves room for) looks at the next allocation: its
	// collection is due now, not a pacerStep later (watchPacer's arm
	// publishes it).
	if live >= w.trigger {
		w.due.Store(true)
	}
	w.watchPacer(live, w.pacerNext(live, false))
}

// pacerAside says the pacer stands aside for the eager heuristic (see
// PacerAside). The caller holds mu.
func (w *Pool) pacerAside() bool {
	l := w.src.Limits()
	return w.opts.Early && PacerAside(w.target, w.zoneStart(), l.Hard != 0 || l.Soft != 0, w.lastDur)
}
