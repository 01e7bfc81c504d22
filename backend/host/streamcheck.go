package host

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dustin/go-humanize"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/config"
)

// The stream checker is a happens-before race detector for streams, in
// the manner of ThreadSanitizer. Every operation queued on a host stream
// declares the bytes it reads and writes and remembers where it was queued
// from. Streams carry vector clocks: an operation's clock is its stream's
// clock when it was queued; Event.Record captures the stream's clock,
// Stream.WaitEvent merges the captured clock into the waiting stream's, and
// a host-blocking wait (a Synchronize, a CopyDtoH, a Query that says done)
// orders all work queued after it, on every stream, after what it waited
// for. Two accesses to overlapping bytes by different streams, at least one
// a write, race when the earlier is not ordered before the later.
//
// Everything is checked when work is queued, in the order the program
// queued it, so a race is reported even when timing let the earlier work
// finish first: on a GPU the same program could overlap them.

// StreamCheck says what a host backend's stream checker does.
type StreamCheck int

const (
	// StreamCheckFromEnv, the zero value, takes the mode from
	// GOCUDA_STREAM_CHECK: StreamCheckReport when it is true,
	// StreamCheckOff when it is false or unset.
	StreamCheckFromEnv StreamCheck = iota
	// StreamCheckOff checks nothing; queued operations pay one branch.
	StreamCheckOff
	// StreamCheckReport records each race (Backend.StreamRaces,
	// StreamRaces) and writes it to the log once per pair of sites; the
	// racing operation is still queued.
	StreamCheckReport
	// StreamCheckStrict records and logs as StreamCheckReport does, and
	// refuses the racing operation: the call that would have queued it
	// returns an error wrapping ErrStreamRace and queues nothing.
	StreamCheckStrict
)

func (m StreamCheck) String() string {
	switch m {
	case StreamCheckFromEnv:
		return "from " + config.EnvStreamRace
	case StreamCheckOff:
		return "off"
	case StreamCheckReport:
		return "report"
	case StreamCheckStrict:
		return "strict"
	}
	return fmt.Sprintf("StreamCheck(%d)", int(m))
}

// ErrStreamRace is wrapped by the error of an operation refused in
// StreamCheckStrict mode; the message holds the race's report.
var ErrStreamRace = errors.New("stream race")

// Access is a range of device memory an operation touches, declared to
// the stream checker with Stream.EnqueueAccess.
type Access struct {
	Ptr   backend.Ptr
	Bytes uint64
	Write bool // false: read only
}

// boolForms are the spellings config.ParseBool accepts.
const boolForms = "true, false, 1, 0, on, off, yes, no"

// envStreamCheck reads GOCUDA_STREAM_CHECK with config's rules. New cannot
// fail, so a value that does not parse is said on stderr, not ignored.
func envStreamCheck() StreamCheck {
	v, ok := os.LookupEnv(config.EnvStreamRace)
	if !ok || strings.TrimSpace(v) == "" {
		return StreamCheckOff
	}
	on, err := config.ParseBool(v)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gocuda: host backend: %s=%q is not valid: accepted values are %s; the stream checker stays off\n",
			config.EnvStreamRace, v, boolForms)
		return StreamCheckOff
	}
	if on {
		return StreamCheckReport
	}
	return StreamCheckOff
}

// SetStreamCheck switches the stream checker. Switching it on starts from
// a clean state, so only work queued from then on is checked: turn it on
// before the work to check is queued, best before any. Switching it off
// drops what it knew but keeps the races found (StreamRaces).
func (b *Backend) SetStreamCheck(m StreamCheck) error {
	if m == StreamCheckFromEnv {
		m = envStreamCheck()
	}
	switch m {
	case StreamCheckOff:
		b.check.Store(nil)
	case StreamCheckReport, StreamCheckStrict:
		b.logMu.Lock()
		log := b.checkLog
		b.logMu.Unlock()
		b.check.Store(newChecker(m, log, &b.races))
	default:
		return fmt.Errorf("host: SetStreamCheck(%d): accepted modes are StreamCheckFromEnv, StreamCheckOff, StreamCheckReport and StreamCheckStrict: %w",
			int(m), backend.ErrInvalidValue)
	}
	return nil
}

// SetStreamCheckLog sends the reports of races found from now on to w
// (nil: stderr); a checker switched on later keeps it.
func (b *Backend) SetStreamCheckLog(w io.Writer) {
	b.logMu.Lock()
	b.checkLog = w
	b.logMu.Unlock()
	if c := b.check.Load(); c != nil {
		c.setLog(w)
	}
}

// StreamCheck is the stream checker's mode: StreamCheckOff,
// StreamCheckReport or StreamCheckStrict.
func (b *Backend) StreamCheck() StreamCheck {
	if c := b.check.Load(); c != nil {
		return c.mode
	}
	return StreamCheckOff
}

// StreamRaces returns the races this backend's checker found, one per
// pair of sites, in the order they were first found.
func (b *Backend) StreamRaces() []Race { return b.races.snapshot() }

// StreamRaces returns the races found by every host backend of the
// process, for a TestMain that fails a test binary with any.
func StreamRaces() []Race { return allRaces.snapshot() }

// Checking reports whether the stream checker is on, so that a caller of
// EnqueueAccess builds its access list only when it is looked at.
func (s *Stream) Checking() bool { return s.dev.b.check.Load() != nil }

// EnqueueAccess is Enqueue for work that touches device memory: with the
// stream checker on, acc is checked against the other streams' work and
// recorded, under the operation's name ("Add float32"). hostWaits says that
// the caller blocks until fn has run (a reduction handing its result back),
// which orders later work after fn as a Synchronize would. With the checker
// off it is Enqueue.
func (s *Stream) EnqueueAccess(name string, acc []Access, hostWaits bool, fn func()) error {
	if fn == nil {
		return fmt.Errorf("host: stream %d: EnqueueAccess of nil func: %w", s.id, backend.ErrInvalidValue)
	}
	if err := s.dev.b.fault(FaultLaunch); err != nil {
		return fmt.Errorf("host: stream %d: %s: %w", s.id, name, err)
	}
	for _, a := range acc {
		if a.Ptr == 0 && a.Bytes > 0 || uint64(a.Ptr)+a.Bytes < uint64(a.Ptr) {
			return fmt.Errorf("host: stream %d: %s: access of %d bytes at %#x: nil or wrapping range: %w",
				s.id, name, a.Bytes, uintptr(a.Ptr), backend.ErrInvalidValue)
		}
	}
	if s.capturing.Load() {
		if hostWaits {
			// The caller would wait for fn, which a capture never runs.
			return fmt.Errorf("host: stream %d: %s hands its result to the host: %w", s.id, name, backend.ErrCapturing)
		}
		if ok, err := s.record(name, acc, fn); ok {
			return err
		}
	}
	if c := s.dev.b.check.Load(); c != nil {
		_, err := s.enqueueChecked(c, opSpec{name: name, hostWaits: hostWaits}, acc, fn)
		return err
	}
	return s.enqueue(fn)
}

// ---------------------------------------------------------------------------
// Reports.

// Race is one conflict the checker found: two operations on different
// streams touched overlapping bytes, at least one wrote, and nothing
// ordered the earlier before the later.
type Race struct {
	Device         int
	Earlier, Later RaceAccess
	// OverlapPtr and OverlapBytes are the bytes both touch.
	OverlapPtr   backend.Ptr
	OverlapBytes uint64
	// EarlierRunning: when the later operation was queued, the earlier one
	// had not finished, so the two could really have run at once. A race
	// without it is as much a bug: on a GPU the timing may differ.
	EarlierRunning bool
	// Count is how many times operations queued from these two sites
	// raced.
	Count int
}

// RaceAccess is one side of a Race.
type RaceAccess struct {
	Stream uint32 // the stream's ID
	Op     string // "Memset32", "CopyDtoD", "Add float32"
	Write  bool
	Ptr    backend.Ptr // the range the operation declared
	Bytes  uint64
	// Site is where the operation was queued: the first caller outside
	// gocuda's packages (test files and examples count as outside).
	Site Site
	// Stack is the whole stack that queued it, innermost first.
	Stack []Site
}

// Site is one frame of a stack.
type Site struct {
	Function string
	File     string
	Line     int
}

func (s Site) String() string {
	if s.File == "" {
		return "(unknown site)"
	}
	return fmt.Sprintf("%s:%d (%s)", s.File, s.Line, s.Function)
}

func (a RaceAccess) verb() string {
	if a.Write {
		return "write"
	}
	return "read"
}

// String is the report without stacks: both operations, their streams,
// ranges and sites.
func (r Race) String() string { return r.format(false) }

// Verbose is the report with both stacks, as the checker logs it.
func (r Race) Verbose() string { return r.format(true) }

func (r Race) format(stacks bool) string {
	var b strings.Builder
	state := "had finished, by chance of timing,"
	if r.EarlierRunning {
		state = "was still running"
	}
	fmt.Fprintf(&b, "gocuda stream race on device %d: %s by %s on stream %d races with the %s by %s on stream %d, which %s when it was queued\n",
		r.Device, r.Later.verb(), r.Later.Op, r.Later.Stream, r.Earlier.verb(), r.Earlier.Op, r.Earlier.Stream, state)
	fmt.Fprintf(&b, "  overlap [%#x, %#x) (%s); no event wait or host wait orders stream %d's operation after stream %d's\n",
		uintptr(r.OverlapPtr), uintptr(r.OverlapPtr)+uintptr(r.OverlapBytes), humanize.IBytes(r.OverlapBytes), r.Later.Stream, r.Earlier.Stream)
	for _, x := range []struct {
		role string
		a    RaceAccess
	}{{"later", r.Later}, {"earlier", r.Earlier}} {
		fmt.Fprintf(&b, "  %s %s: %s on stream %d of [%#x, %#x) (%s)\n", x.role, x.a.verb(), x.a.Op, x.a.Stream,
			uintptr(x.a.Ptr), uintptr(x.a.Ptr)+uintptr(x.a.Bytes), humanize.IBytes(x.a.Bytes))
		fmt.Fprintf(&b, "    at %s\n", x.a.Site)
		if stacks {
			for _, f := range x.a.Stack {
				fmt.Fprintf(&b, "      %s\n        %s:%d\n", f.Function, f.File, f.Line)
			}
		}
	}
	if r.Count > 1 {
		fmt.Fprintf(&b, "  (%d times from these sites)\n", r.Count)
	}
	return b.String()
}

// maxRaces bounds the races kept per list; later pairs of sites are
// counted in dropped, so a program racing in a loop cannot exhaust memory.
const maxRaces = 1000

// raceList keeps one Race per pair of sites.
type raceList struct {
	mu      sync.Mutex
	byKey   map[raceKey]*Race
	order   []*Race
	dropped int
}

// raceKey is a pair of sites, by the program counters of their frames.
type raceKey struct{ later, earlier uintptr }

var allRaces raceList

// add records r under key and reports whether the pair of sites is new.
func (l *raceList) add(key raceKey, r Race) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if old, ok := l.byKey[key]; ok {
		old.Count++
		return false
	}
	if len(l.order) >= maxRaces {
		l.dropped++
		return false
	}
	if l.byKey == nil {
		l.byKey = map[raceKey]*Race{}
	}
	r.Count = 1
	l.byKey[key] = &r
	l.order = append(l.order, &r)
	return true
}

func (l *raceList) snapshot() []Race {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Race, len(l.order))
	for i, r := range l.order {
		out[i] = *r
		out[i].Earlier.Stack = slices.Clone(r.Earlier.Stack)
		out[i].Later.Stack = slices.Clone(r.Later.Stack)
	}
	return out
}

// ---------------------------------------------------------------------------
// The checker.

// checker is one backend's checker state, replaced whole when it is
// switched on again. mu guards the clocks and the shadow; it is taken
// after a stream's mu, never before.
type checker struct {
	mode  StreamCheck
	races *raceList

	logMu sync.Mutex // also orders the reports' lines
	log   io.Writer

	mu     sync.Mutex
	slots  int    // clock slots given to streams so far
	host   vclock // what host-blocking waits have ordered before all later work
	shadow shadow
}

func newChecker(m StreamCheck, log io.Writer, races *raceList) *checker {
	c := &checker{mode: m, races: races}
	c.setLog(log)
	return c
}

func (c *checker) setLog(w io.Writer) {
	if w == nil {
		w = os.Stderr
	}
	c.logMu.Lock()
	c.log = w
	c.logMu.Unlock()
}

// vclock is a vector clock indexed by slot: entry i is the newest epoch of
// slot i's stream that is ordered before the holder.
type vclock []uint64

func (v vclock) at(i int) uint64 {
	if i < len(v) {
		return v[i]
	}
	return 0
}

func (v *vclock) join(o vclock) {
	if len(o) > len(*v) {
		*v = append(*v, make(vclock, len(o)-len(*v))...)
	}
	for i, x := range o {
		if x > (*v)[i] {
			(*v)[i] = x
		}
	}
}

func (v *vclock) set(i int, x uint64) {
	if i >= len(*v) {
		*v = append(*v, make(vclock, i+1-len(*v))...)
	}
	(*v)[i] = x
}

// streamClock is a stream's state in one checker. Slots are the checker's
// own, never reused, where stream IDs are reused after Destroy.
type streamClock struct {
	owner *checker
	slot  int
	clock vclock
}

// clockOf returns s's state, making it on first use. c.mu is held.
func (c *checker) clockOf(s *Stream) *streamClock {
	if s.ck == nil || s.ck.owner != c {
		s.ck = &streamClock{owner: c, slot: c.slots}
		c.slots++
	}
	return s.ck
}

// snapshot returns a copy of s's clock for a host wait to join once the
// wait is over; nil when the checker does not know s.
func (c *checker) snapshot(s *Stream) vclock {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.ck == nil || s.ck.owner != c {
		return nil
	}
	return slices.Clone(s.ck.clock)
}

// hostWaited orders all later work after clock: the host has seen the
// work clock describes finish.
func (c *checker) hostWaited(clock vclock) {
	if clock == nil {
		return
	}
	c.mu.Lock()
	c.host.join(clock)
	c.mu.Unlock()
}

// opRec is one queued operation, shared by its accesses in the shadow.
type opRec struct {
	name   string
	stream uint32
	slot   int
	epoch  uint64 // its stream's count of queued work when it was queued
	pcs    []uintptr
	done   atomic.Bool
}

// access is one range an operation touches.
type access struct {
	op     *opRec
	lo, hi uintptr
	write  bool
}

// callers records the stack that is queueing an operation, skipping the
// host backend's own frames below its caller.
func callers() []uintptr {
	var buf [32]uintptr
	n := runtime.Callers(3, buf[:])
	return slices.Clone(buf[:n])
}

// opSpec is what the checker needs of an operation besides its function.
type opSpec struct {
	name string
	// after is a clock the operation waits for (a WaitEvent's marker).
	after vclock
	// hostWaits: the caller blocks until the operation has run.
	hostWaits bool
}

// enqueueChecked queues fn as an operation the checker sees, and returns
// its clock (a copy), for a caller that waits for it to join once the wait
// is over. fn must not be nil.
//
// acc is a parameter of its own, not a field of op, so that escape
// analysis sees it does not escape: the off path's variadic Access list
// then stays on the stack.
func (s *Stream) enqueueChecked(c *checker, op opSpec, acc []Access, fn func()) (vclock, error) {
	rec := &opRec{name: op.name, stream: s.id, pcs: callers()}
	run := func() {
		fn()
		rec.done.Store(true)
	}
	var found []pendingRace
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return nil, s.destroyed()
	}
	c.mu.Lock()
	st := c.clockOf(s)
	// Host waits finished before this call order the operation after
	// what they waited for, and so does the event it waits on.
	st.clock.join(c.host)
	st.clock.join(op.after)
	rec.slot, rec.epoch = st.slot, s.queued+1
	st.clock.set(st.slot, rec.epoch)
	accs := make([]*access, 0, len(acc))
	for _, a := range acc {
		if a.Bytes == 0 {
			continue
		}
		x := &access{op: rec, lo: uintptr(a.Ptr), hi: uintptr(a.Ptr) + uintptr(a.Bytes), write: a.Write}
		found = c.shadow.check(x, st.clock, found)
		accs = append(accs, x)
	}
	if len(found) > 0 && c.mode == StreamCheckStrict {
		c.mu.Unlock()
		s.mu.Unlock()
		msg := c.report(s.dev.ordinal, found)
		return nil, fmt.Errorf("host: stream %d: %s refused: %w:\n%s", s.id, op.name, ErrStreamRace, msg)
	}
	for _, x := range accs {
		c.shadow.record(x)
	}
	clock := slices.Clone(st.clock)
	if op.hostWaits {
		// The caller waits for the result inside fn, which cannot tell
		// the checker afterwards in time: work queued after the call
		// returns must already see the order. Joining now also orders
		// other goroutines' work queued meanwhile, a loss of precision
		// (a missed race), never a false report.
		c.host.join(clock)
	}
	c.mu.Unlock()
	s.queue = append(s.queue, run)
	s.queued++
	s.wake.Signal()
	s.mu.Unlock()
	if len(found) > 0 {
		c.report(s.dev.ordinal, found)
	}
	return clock, nil
}

// ordered merges clock into s's: s's later work is ordered after the work
// clock describes (an event already done that s was told to wait on).
func (c *checker) ordered(s *Stream, clock vclock) {
	c.mu.Lock()
	c.clockOf(s).clock.join(clock)
	c.mu.Unlock()
}

// pendingRace is a race found under the checker's lock, turned into a
// Race (which needs symbols) after it is released.
type pendingRace struct {
	earlier, later *access
	running        bool
}

// report records races and logs those from a new pair of sites; it returns
// the reports, for a strict refusal's error.
func (c *checker) report(device int, found []pendingRace) string {
	var all strings.Builder
	for _, p := range found {
		lo, hi := max(p.earlier.lo, p.later.lo), min(p.earlier.hi, p.later.hi)
		r := Race{
			Device:         device,
			Earlier:        describe(p.earlier),
			Later:          describe(p.later),
			OverlapPtr:     backend.Ptr(lo),
			OverlapBytes:   uint64(hi - lo),
			EarlierRunning: p.running,
		}
		key := raceKey{later: userPC(p.later.op.pcs), earlier: userPC(p.earlier.op.pcs)}
		all.WriteString(r.String())
		allRaces.add(key, r)
		if c.races.add(key, r) {
			c.logMu.Lock()
			fmt.Fprint(c.log, "==================\n"+r.Verbose()+"==================\n")
			c.logMu.Unlock()
		}
	}
	return all.String()
}

func describe(a *access) RaceAccess {
	stack := frames(a.op.pcs)
	return RaceAccess{
		Stream: a.op.stream,
		Op:     a.op.name,
		Write:  a.write,
		Ptr:    backend.Ptr(a.lo),
		Bytes:  uint64(a.hi - a.lo),
		Site:   userSite(stack),
		Stack:  stack,
	}
}

func frames(pcs []uintptr) []Site {
	var out []Site
	fr := runtime.CallersFrames(pcs)
	for {
		f, more := fr.Next()
		if f.Function != "" || f.File != "" {
			out = append(out, Site{Function: f.Function, File: f.File, Line: f.Line})
		}
		if !more {
			return out
		}
	}
}

// modulePath is gocuda's module; its library packages are "inside", so a
// report points at the user's call rather than at cuarray or kernels.
const modulePath = "github.com/gocuda/gocuda"

// isUser reports whether a frame is the user's code: outside gocuda's
// library packages and the runtime. Tests and examples of gocuda count as
// users, since they are what calls the library.
func isUser(f Site) bool {
	if strings.HasSuffix(f.File, "_test.go") {
		return true
	}
	fn := f.Function
	if strings.HasPrefix(fn, "runtime.") || strings.HasPrefix(fn, "testing.") {
		return false
	}
	if strings.HasPrefix(fn, modulePath+"/examples/") || strings.HasPrefix(fn, modulePath+"/cmd/") {
		return true
	}
	return !strings.HasPrefix(fn, modulePath+".") && !strings.HasPrefix(fn, modulePath+"/")
}

// userSite is the first user frame, or the first frame when the whole
// stack is gocuda's (work queued by a cleanup or gocuda's own goroutine).
func userSite(stack []Site) Site {
	for _, f := range stack {
		if isUser(f) {
			return f
		}
	}
	if len(stack) > 0 {
		return stack[0]
	}
	return Site{}
}

// userPC is the program counter of the first user frame, the key that
// makes a pair of sites log once.
func userPC(pcs []uintptr) uintptr {
	fr := runtime.CallersFrames(pcs)
	first := uintptr(0)
	for {
		f, more := fr.Next()
		if first == 0 {
			first = f.PC
		}
		if isUser(Site{Function: f.Function, File: f.File, Line: f.Line}) {
			return f.PC
		}
		if !more {
			return first
		}
	}
}

// ---------------------------------------------------------------------------
// Shadow memory.

// shadow records, for every byte range some checked operation touched, the
// last write and the reads since it (the newest per stream, which is
// enough: a later operation ordered after a stream's newest read is ordered
// after its older ones). Segments are sorted, disjoint and never empty;
// adjacent segments with the same state are merged, and freeing memory
// drops its segments, so the shadow is bounded by the live memory's
// distinct access patterns, not by the number of operations.
type shadow struct {
	segs []segment
}

type segment struct {
	lo, hi uintptr
	write  *access
	reads  []*access
}

// first is the index of the first segment ending after x.
func (sh *shadow) first(x uintptr) int {
	i, _ := slices.BinarySearchFunc(sh.segs, x, func(s segment, x uintptr) int {
		if s.hi <= x {
			return -1
		}
		return 1
	})
	return i
}

// check appends to found every earlier access that a races with under the
// operation's clock: on another stream, overlapping, one of the two a
// write, and not ordered before a. Each earlier access is reported once.
func (sh *shadow) check(a *access, clock vclock, found []pendingRace) []pendingRace {
	unordered := func(e *access) bool {
		return e.op.slot != a.op.slot && e.op.epoch > clock.at(e.op.slot)
	}
	add := func(e *access) []pendingRace {
		for _, f := range found {
			if f.earlier == e && f.later.op == a.op {
				return found
			}
		}
		return append(found, pendingRace{earlier: e, later: a, running: !e.op.done.Load()})
	}
	for i := sh.first(a.lo); i < len(sh.segs) && sh.segs[i].lo < a.hi; i++ {
		seg := &sh.segs[i]
		if seg.write != nil && unordered(seg.write) {
			found = add(seg.write)
		}
		if a.write {
			for _, r := range seg.reads {
				if unordered(r) {
					found = add(r)
				}
			}
		}
	}
	return found
}

// splitAt makes x a segment boundary if a segment spans it.
func (sh *shadow) splitAt(x uintptr) {
	i := sh.first(x)
	if i == len(sh.segs) || sh.segs[i].lo >= x {
		return
	}
	right := sh.segs[i]
	right.lo = x
	right.reads = slices.Clone(right.reads)
	sh.segs[i].hi = x
	sh.segs = slices.Insert(sh.segs, i+1, right)
}

// record makes a the newest access to its range: a write replaces the
// range's history, a read joins it, replacing its stream's older read.
func (sh *shadow) record(a *access) {
	sh.splitAt(a.lo)
	sh.splitAt(a.hi)
	i0 := sh.first(a.lo)
	mid := make([]segment, 0, 4)
	at := a.lo
	i := i0
	for ; i < len(sh.segs) && sh.segs[i].lo < a.hi; i++ {
		if sh.segs[i].lo > at { // a gap nothing touched yet
			mid = append(mid, segment{lo: at, hi: sh.segs[i].lo})
		}
		mid = append(mid, sh.segs[i])
		at = sh.segs[i].hi
	}
	if at < a.hi {
		mid = append(mid, segment{lo: at, hi: a.hi})
	}
	for j := range mid {
		seg := &mid[j]
		if a.write {
			seg.write, seg.reads = a, nil
			continue
		}
		k := slices.IndexFunc(seg.reads, func(r *access) bool { return r.op.slot == a.op.slot })
		if k >= 0 {
			seg.reads[k] = a
		} else {
			seg.reads = append(seg.reads, a)
		}
	}
	sh.segs = slices.Replace(sh.segs, i0, i, mid...)
	sh.merge(max(i0-1, 0), min(i0+len(mid)+1, len(sh.segs)))
}

// merge joins adjacent segments in [from, to) that touch and hold the
// same history.
func (sh *shadow) merge(from, to int) {
	out := from
	for i := from + 1; i < to; i++ {
		p, s := &sh.segs[out], &sh.segs[i]
		if p.hi == s.lo && p.write == s.write && slices.Equal(p.reads, s.reads) {
			p.hi = s.hi
			continue
		}
		out++
		sh.segs[out] = sh.segs[i]
	}
	sh.segs = slices.Delete(sh.segs, out+1, to)
}

// clear forgets [lo, hi): the memory was freed or unmapped, and whatever
// is allocated there next starts with no history.
func (sh *shadow) clear(lo, hi uintptr) {
	sh.splitAt(lo)
	sh.splitAt(hi)
	i := sh.first(lo)
	j := i
	for j < len(sh.segs) && sh.segs[j].lo < hi {
		j++
	}
	sh.segs = slices.Delete(sh.segs, i, j)
}

// forget drops the shadow of freed memory, if the checker is on.
func (b *Backend) forget(p backend.Ptr, size uint64) {
	if c := b.check.Load(); c != nil {
		c.mu.Lock()
		c.shadow.clear(uintptr(p), uintptr(p)+uintptr(size))
		c.mu.Unlock()
	}
}
