package cuarray_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/host"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/gcpressure"
	"github.com/gocuda/gocuda/pool"
	_ "github.com/gocuda/gocuda/pool/binned"
	_ "github.com/gocuda/gocuda/pool/none"
	_ "github.com/gocuda/gocuda/pool/simple"
	_ "github.com/gocuda/gocuda/pool/split"
)

// The fault-injection run: arrays, views, copies, operations, frees,
// streams and collections, driven by a byte string (a fuzz input, or
// bytes from a seeded generator), on a host backend whose driver calls
// fail at the rates the input picks, through a pool of each strategy
// wrapped by gcpressure under a hard limit. Every operation must return
// its result or an error that says why (an injected fault, out of memory,
// a freed array used on purpose), never panic, and never report success
// for work that did not happen: a model of every array's contents checks
// each read. Afterwards, with the faults off and every array dropped and
// collected (UnsafeFree'd, in the fuzz target: see faultScale), nothing is
// live, every Alloc was freed once, no block was handed out twice, the
// pool's reserved bytes are exactly what the backend has outstanding, and
// after Close both are 0.

// faultStrategies are the pools the run covers; the driver's pool needs a
// GPU (the GPU run of this test covers it there).
var faultStrategies = []string{"split", "binned", "simple", "none"}

const (
	faultTotal   = 1 << 30 // the device: a request beyond it is refused early
	faultMaxLive = 24
	faultStreams = 4
)

// faultScale is the size and manner of a run. Arrays are sized from the
// hard limit (see make): mostly small, some up to 1/64 of it, now and then
// 1/16 to 1/4 of it, rarely beyond it.
type faultScale struct {
	hard  uint64 // the pool's hard limit
	steps int    // operations at most
	// collect: arrays the run drops are left to the collector, whose
	// cleanups free them at a moment of its choosing, and the end waits
	// for it (runtime.GC and the cleanups). Else the run UnsafeFrees each
	// array it drops, when it drops it: the same Frees, made at a moment
	// the input decides, with no collection to wait for.
	collect bool
}

var (
	// faultSeeded is TestFaultInjectionRun's: arrays up to 16 MiB, long
	// runs, and the collector.
	faultSeeded = faultScale{hard: 64 << 20, steps: 3000, collect: true}
	// faultFuzz is FuzzFaultInjection's, made for the fuzzer: an eighth
	// of the sizes (arrays up to 2 MiB; the split pool's large blocks
	// start above 1 MiB), 16 operations, frees the input decides, and one
	// processor (see runFaults), so that an input takes a millisecond or
	// two and covers the same code each time it runs. The fuzzer needs
	// both: it minimizes each input that reaches new code by running it
	// again with bytes cut out, keeping a cut only if the new code is
	// still reached, on the order of n² runs for n bytes. With coverage
	// that changed from run to run (the collector's and the scheduler's
	// timing), or inputs of a few hundred bytes, one minimization took
	// the whole of a 30 s run; with 16 operations (about 100 bytes) they
	// take a few seconds.
	faultFuzz = faultScale{hard: 8 << 20, steps: 16}
)

// faultFuzzMaxLen bounds a fuzz input: 16 operations read at most 121
// bytes, and longer inputs, which the mutator makes, would only give the
// minimizer more to cut.
const faultFuzzMaxLen = 128

// TestFaultInjectionRun runs a seeded input of about 1 400 operations
// through each strategy: a few seconds in all, 150 operations each under
// -short. The inputs saved for FuzzFaultInjection run here too, at this
// scale, which was the fuzz target's before it was cut down: those saved
// before (longer than the fuzz target now takes) keep their meaning.
func TestFaultInjectionRun(t *testing.T) {
	steps, seeds := 1000, 1
	for i, name := range faultStrategies {
		for seed := uint64(i); seed < uint64(i+seeds); seed++ {
			t.Run(fmt.Sprintf("%s/seed=%d", name, seed), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, 0xfa017))
				data := make([]byte, 8+steps*6)
				for i := range data {
					data[i] = byte(rng.Uint32())
				}
				runFaults(t, faultSeeded, name, data)
			})
		}
	}
	files, err := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzFaultInjection", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		t.Run("saved/"+filepath.Base(file), func(t *testing.T) {
			data := savedInput(t, file)
			if len(data) < 1 {
				return
			}
			runFaults(t, faultSeeded, faultStrategies[int(data[0])%len(faultStrategies)], data[1:])
		})
	}
}

// savedInput reads a fuzz input file of one []byte ("go test fuzz v1",
// then []byte("...") in Go syntax).
func savedInput(t *testing.T, file string) []byte {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	header, value, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	quoted, ok := strings.CutPrefix(value, "[]byte(")
	quoted, ok2 := strings.CutSuffix(quoted, ")")
	if header != "go test fuzz v1" || !ok || !ok2 {
		t.Fatalf("%s: not a fuzz input of one []byte", file)
	}
	data, err := strconv.Unquote(quoted)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return []byte(data)
}

// FuzzFaultInjection: go test -fuzz FuzzFaultInjection ./cuarray (see
// scripts/ci-fuzz.sh). The first byte picks the strategy, the next 8 the
// rates, the rest the operations (faultFuzz).
func FuzzFaultInjection(f *testing.F) {
	for i := range faultStrategies {
		seed := []byte{byte(i), 3, 1, 4, 1, 5, 9, 2, 6}
		for k := range faultFuzz.steps {
			seed = append(seed, byte(k*37+i), byte(k*11), byte(k*7+3), byte(k), byte(k*5), byte(k*13))
		}
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 1 || len(data) > faultFuzzMaxLen {
			return
		}
		runFaults(t, faultFuzz, faultStrategies[int(data[0])%len(faultStrategies)], data[1:])
	})
}

// mbuf is the model of one buffer: the value of each element, NaN where
// the contents are not known (never written, or written by an operation
// that failed part way).
type mbuf struct{ vals []float32 }

// marr is an array under test and its place in the model.
type marr struct {
	a    *cuarray.Array[float32]
	buf  *mbuf
	off  int
	desc string
}

func (m *marr) model() []float32 { return m.buf.vals[m.off : m.off+m.a.Len()] }

func (m *marr) forget() {
	v := m.model()
	for i := range v {
		v[i] = float32(math.NaN())
	}
}

type faultRun struct {
	t       *testing.T
	scale   faultScale
	name    string
	data    []byte
	b       *host.Backend
	dev     backend.Device
	check   *checkPool
	w       *gcpressure.Pool
	streams []*cuarray.Stream
	live    []*marr
	freed   []*marr
	step    int
	op      string
	// injected and oom count the errors seen, for the log.
	injected, oom int
}

func (r *faultRun) byte() byte {
	if len(r.data) == 0 {
		return 0
	}
	v := r.data[0]
	r.data = r.data[1:]
	return v
}

// faultRules picks a rate (0.5, 1, 3 or 8 %) for each kind of call from
// the input; allocations fail as out of memory or as a plain fault.
func faultRules(seed []byte) host.Faults {
	var f host.Faults
	f.Seed = binary.LittleEndian.Uint64(append(seed, make([]byte, 8)...)[:8])
	rates := []float64{0.005, 0.01, 0.03, 0.08}
	for i, op := range host.FaultOps() {
		sel := byte(f.Seed >> (uint(i) * 2 % 64))
		rate := rates[sel&3]
		if op == host.FaultSync && rate > 0.01 {
			rate = 0.01 // a failed synchronization has no safe fallback but waiting for the device
		}
		r := host.FaultRule{Op: op, Rate: rate}
		if op == host.FaultAlloc && sel&4 != 0 {
			r.As = backend.ErrOutOfMemory
		}
		f.Rules = append(f.Rules, r)
	}
	return f
}

// faultBackend is the host backend the runs share, one at a time (mu),
// so that a fuzz worker's thousands of inputs do not each leave a device
// behind: cuarray keeps a default stream (a goroutine) per device for the
// process's life, and backend a cache of spare events. A run finds it with
// injection off, nothing allocated and no spare event (drainEvents), and
// leaves it so, its pool forgotten by cuarray and its streams' IDs back
// in order (finish); after a run that failed, the next one makes a fresh
// backend.
var faultBackend struct {
	mu    sync.Mutex
	b     *host.Backend
	clean bool
}

func runFaults(t *testing.T, scale faultScale, name string, data []byte) {
	r := &faultRun{t: t, scale: scale, name: name}
	faultBackend.mu.Lock()
	defer faultBackend.mu.Unlock()
	if !faultBackend.clean {
		faultBackend.b = host.New(host.Options{TotalMemory: faultTotal}).(*host.Backend)
	}
	faultBackend.clean = false
	r.b = faultBackend.b
	if !scale.collect {
		// Replays cover the same code (see faultFuzz). The collector runs
		// only where the input says (the runtime.GC operation, gcpressure's
		// collections), and the run before left nothing for it (finish):
		// its cleanups, and the caches it empties (sync.Pools), do the same
		// each time. One processor: the streams' goroutines run while the
		// test's goroutine waits, not beside it, where the work they found
		// queued, and so their loops' counts, would differ from run to run.
		defer debug.SetGCPercent(debug.SetGCPercent(-1))
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	}
	var err error
	r.dev, err = r.b.Device(0)
	if err != nil {
		t.Fatal(err)
	}
	if err := drainEvents(r.b, r.dev); err != nil {
		t.Fatal(err)
	}
	inner, err := pool.New(name, r.dev, pool.Limits{Hard: scale.hard})
	if err != nil {
		t.Fatal(err)
	}
	r.check = &checkPool{Pool: inner, live: map[*pool.Block]span{}}
	r.w, err = gcpressure.Wrap(r.check, gcpressure.Options{Early: true, CleanupTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s, err := cuarray.NewStreamPool(r.w)
	if err != nil {
		t.Fatal(err)
	}
	r.streams = append(r.streams, s)

	var seed []byte
	if len(data) >= 8 {
		seed, data = data[:8], data[8:]
	}
	faults := faultRules(seed)
	if err := r.b.SetFaults(faults); err != nil {
		t.Fatal(err)
	}
	r.data = data
	maxSteps := scale.steps
	if testing.Short() && maxSteps > 150 {
		maxSteps = 150 // under -race too: a taste, the full run is the default
	}
	for r.step = 0; len(r.data) > 0 && r.step < maxSteps; r.step++ {
		r.do()
	}
	counts := r.b.FaultCounts()
	if err := r.b.SetFaults(host.Faults{}); err != nil {
		t.Fatal(err)
	}
	r.finish()
	// Calls and faults per kind, in FaultOps order: formatting the map
	// would sort its keys in an order that differs from run to run, and
	// with it the coverage the fuzzer sees.
	var injected uint64
	var calls strings.Builder
	for _, op := range host.FaultOps() {
		c := counts[op]
		injected += c.Injected
		fmt.Fprintf(&calls, " %s %d/%d", op, c.Injected, c.Calls)
	}
	t.Logf("%s: %d operations, %d faults injected; errors: %d injected, %d out of memory; faults/calls:%s",
		name, r.step, injected, r.injected, r.oom, calls.String())
}

// drainEvents empties the cache of spare events (backend.NewEvent) that
// the runs before left for dev, so that which of this run's events come
// from the device, in calls that faults may fail, does not depend on them.
// A rule that never fails counts the device's NewEvent calls: once one is
// made, the cache is empty.
func drainEvents(b *host.Backend, dev backend.Device) error {
	if err := b.SetFaults(host.Faults{Rules: []host.FaultRule{{Op: host.FaultEvent}}}); err != nil {
		return err
	}
	var evs []backend.Event
	for b.FaultCounts()[host.FaultEvent].Calls == 0 {
		ev, err := backend.NewEvent(dev)
		if err != nil {
			return err
		}
		evs = append(evs, ev)
	}
	for _, ev := range evs {
		if err := ev.Destroy(); err != nil {
			return err
		}
	}
	return b.SetFaults(host.Faults{})
}

// do decodes and runs one operation.
func (r *faultRun) do() {
	defer func() {
		if p := recover(); p != nil {
			r.t.Fatalf("step %d: %s panicked: %v\n%s", r.step, r.op, p, debug.Stack())
		}
	}()
	code := r.byte()
	s := r.streams[int(r.byte())%len(r.streams)]
	ops := cuarray.On[float32](s)
	switch code % 16 {
	case 0, 1, 2:
		r.make(ops, code)
	case 3:
		if d := r.pick(); d != nil {
			v := float32(r.byte() % 16)
			r.op = "Fill " + d.desc
			if r.result(ops.Fill(d.a, v)) {
				fill(d.model(), v)
			} else {
				d.forget()
			}
		}
	case 4:
		r.binaryOp(ops)
	case 5:
		if y := r.pick(); y != nil {
			x := r.pickLen(y.a.Len())
			alpha := []float32{0, 1, -1, 2}[r.byte()%4]
			r.op = fmt.Sprintf("Axpy(%s, %v, %s, %s)", y.desc, alpha, x.desc, y.desc)
			xv, yv := slices.Clone(x.model()), y.model()
			if r.result(errOf(ops.Axpy(y.a, alpha, x.a, y.a))) {
				for i := range yv {
					yv[i] = alpha*xv[i] + yv[i]
				}
			} else {
				y.forget()
			}
		}
	case 6:
		if x := r.pick(); x != nil {
			alpha := []float32{1, -1, 2, 0.5}[r.byte()%4]
			r.op = fmt.Sprintf("Scale(%s, %v, %s)", x.desc, alpha, x.desc)
			if r.result(errOf(ops.Scale(x.a, alpha, x.a))) {
				v := x.model()
				for i := range v {
					v[i] *= alpha
				}
			} else {
				x.forget()
			}
		}
	case 7:
		if dst := r.pick(); dst != nil {
			src := r.pickShape(dst)
			r.op = fmt.Sprintf("Copy(%s, %s)", dst.desc, src.desc)
			sv := slices.Clone(src.model())
			if r.result(ops.Copy(dst.a, src.a)) {
				copy(dst.model(), sv)
			} else {
				dst.forget()
			}
		}
	case 8, 9:
		if x := r.pick(); x != nil {
			r.op = "ToSlice " + x.desc
			got, err := x.a.ToSlice()
			if r.result(err) {
				r.compare(x, got)
			}
		}
	case 10:
		if x := r.pick(); x != nil {
			r.op = "Sum " + x.desc
			got, err := ops.Sum(x.a)
			if r.result(err) {
				if want, ok := exactSum(x.model()); ok && got != want {
					r.t.Fatalf("step %d: %s = %v, the model says %v", r.step, r.op, got, want)
				}
			}
		}
	case 11:
		r.share()
	case 12:
		if i := r.pickIndex(); i >= 0 {
			m := r.live[i]
			r.live = slices.Delete(r.live, i, i+1)
			if r.byte()%2 == 0 {
				m.a.UnsafeFree()
				r.freed = append(r.freed, m)
				if len(r.freed) > 8 {
					r.freed = r.freed[1:]
				}
			} else {
				r.drop(m.a)
			}
		}
	case 13:
		if len(r.freed) > 0 {
			m := r.freed[int(r.byte())%len(r.freed)]
			r.op = "Fill of freed " + m.desc
			if err := ops.Fill(m.a, 1); !errors.Is(err, cuarray.ErrFreed) {
				r.t.Fatalf("step %d: %s returned %v, want an error wrapping ErrFreed", r.step, r.op, err)
			}
		}
	case 14:
		switch r.byte() % 4 {
		case 0:
			r.op = "runtime.GC"
			runtime.GC()
		case 1:
			r.op = "Reclaim"
			r.w.Reclaim(uint64(r.byte()) * (r.scale.hard >> 8))
		default:
			if len(r.streams) < faultStreams {
				r.op = "NewStreamPool"
				s, err := cuarray.NewStreamPool(r.w)
				if r.result(err) {
					r.streams = append(r.streams, s)
				}
			}
		}
	case 15:
		if x := r.pick(); x != nil {
			r.op = "Clone " + x.desc
			c, err := ops.Clone(x.a)
			if r.result(err) {
				r.add(&marr{a: c, buf: &mbuf{vals: slices.Clone(x.model())}, desc: "clone of " + x.desc})
			}
		}
	}
}

// make allocates an array: mostly small, now and then large, rarely
// beyond the hard limit (which must be refused as out of memory).
func (r *faultRun) make(ops cuarray.Ops[float32], code byte) {
	var n int
	hard := int(r.scale.hard)
	switch k := r.byte(); {
	case k < 200:
		n = 1 + int(r.byte())*int(r.byte())/16 // up to 16 KiB
	case k < 246:
		n = 1 + int(r.byte())*(hard>>16) // up to 1/64 of the limit: 1 MiB of 64
	case k < 254:
		n = (1 + int(r.byte()%4)) * (hard >> 6) // 1/16 to 1/4 of the limit: 4 to 16 MiB of 64
	default:
		n = hard/4 + 1 + int(r.byte()) // beyond the hard limit
	}
	for len(r.live) >= faultMaxLive {
		r.drop(r.live[0].a)
		r.live = slices.Delete(r.live, 0, 1)
	}
	v := float32(r.byte() % 16)
	var a *cuarray.Array[float32]
	var err error
	// A request beyond the limit is refused: nothing to model, and
	// FromSlice's contents are never read.
	beyond := n > hard/4
	var vals []float32
	if !beyond || code%3 == 1 {
		vals = make([]float32, n)
	}
	switch code % 3 {
	case 0:
		r.op = fmt.Sprintf("Full(%v, %d)", v, n)
		a, err = ops.Full(v, n)
		fill(vals, v)
	case 1:
		r.op = fmt.Sprintf("FromSlice(%d)", n)
		if !beyond {
			for i := range vals {
				vals[i] = float32((i + int(v)) % 13)
			}
		}
		a, err = ops.FromSlice(vals)
	default:
		r.op = fmt.Sprintf("New(%d)", n)
		a, err = ops.New(n)
		fill(vals, float32(math.NaN()))
	}
	if beyond {
		if !errors.Is(err, backend.ErrOutOfMemory) {
			r.t.Fatalf("step %d: %s beyond the hard limit returned %v, want out of memory", r.step, r.op, err)
		}
		return
	}
	if r.result(err) {
		r.add(&marr{a: a, buf: &mbuf{vals: vals}, desc: r.op})
	}
}

// share makes a view, slice or reshape of a live array.
func (r *faultRun) share() {
	x := r.pick()
	if x == nil {
		return
	}
	n := x.a.Len()
	off := int(r.byte()) % n
	length := 1 + int(r.byte())%(n-off)
	var v *cuarray.Array[float32]
	var err error
	m := &marr{buf: x.buf, off: x.off}
	switch r.byte() % 3 {
	case 0:
		r.op = fmt.Sprintf("View(%d, %d) of %s", off, length, x.desc)
		v, err = x.a.View(off, length)
		m.off += off
	case 1:
		r.op = "Reshape of " + x.desc
		if n%2 == 0 {
			v, err = x.a.Reshape(2, -1)
		} else {
			v, err = x.a.Reshape(n)
		}
	default:
		r.op = "Slice of " + x.desc
		if x.a.Ndim() == 0 {
			return
		}
		d0 := x.a.Shape()[0]
		i := off % d0
		j := i + 1 + int(r.byte())%(d0-i)
		v, err = x.a.Slice(i, j)
		m.off += i * (n / d0)
	}
	if r.result(err) {
		m.a, m.desc = v, r.op
		r.add(m)
	}
}

func (r *faultRun) binaryOp(ops cuarray.Ops[float32]) {
	dst := r.pick()
	if dst == nil {
		return
	}
	a, b := r.pickLen(dst.a.Len()), r.pickLen(dst.a.Len())
	r.op = fmt.Sprintf("Add(%s, %s, %s)", dst.desc, a.desc, b.desc)
	if overlapsPartly(dst, a) || overlapsPartly(dst, b) {
		return // refused as ErrShape by design; not what this run is about
	}
	av, bv := slices.Clone(a.model()), slices.Clone(b.model())
	// Operands of one length but other shapes take dst's shape first:
	// elementwise operations broadcast, they do not flatten.
	shape := dst.a.Shape()
	ar, err := a.a.Reshape(shape...)
	if err != nil {
		r.t.Fatalf("step %d: Reshape of %s to %v: %v", r.step, a.desc, shape, err)
	}
	br, err := b.a.Reshape(shape...)
	if err != nil {
		r.t.Fatalf("step %d: Reshape of %s to %v: %v", r.step, b.desc, shape, err)
	}
	if r.result(errOf(ops.Add(dst.a, ar, br))) {
		d := dst.model()
		for i := range d {
			d[i] = av[i] + bv[i]
		}
	} else {
		dst.forget()
	}
	r.drop(ar)
	r.drop(br)
}

func overlapsPartly(d, a *marr) bool {
	if d.buf != a.buf || (d.off == a.off && d.a.Len() == a.a.Len()) {
		return false
	}
	return d.off < a.off+a.a.Len() && a.off < d.off+d.a.Len()
}

func (r *faultRun) add(m *marr) {
	r.live = append(r.live, m)
	if len(r.live) > faultMaxLive {
		r.drop(r.live[0].a)
		r.live = slices.Delete(r.live, 0, 1)
	}
}

// drop is the run's last use of a: the collector frees it, or (without
// collect) UnsafeFree at once.
func (r *faultRun) drop(a *cuarray.Array[float32]) {
	if !r.scale.collect {
		a.UnsafeFree()
	}
}

func (r *faultRun) pickIndex() int {
	if len(r.live) == 0 {
		return -1
	}
	return int(r.byte()) % len(r.live)
}

func (r *faultRun) pick() *marr {
	if i := r.pickIndex(); i >= 0 {
		return r.live[i]
	}
	return nil
}

// pickLen is a live array of n elements, the first found from a random
// start; there is one, the caller's own.
func (r *faultRun) pickLen(n int) *marr {
	start := int(r.byte())
	for k := range r.live {
		if m := r.live[(start+k)%len(r.live)]; m.a.Len() == n {
			return m
		}
	}
	panic("unreachable: the caller's array has n elements")
}

// pickShape is a live array of d's shape (d itself at worst).
func (r *faultRun) pickShape(d *marr) *marr {
	start := int(r.byte())
	for k := range r.live {
		if m := r.live[(start+k)%len(r.live)]; slices.Equal(m.a.Shape(), d.a.Shape()) && !overlapsPartly(d, m) {
			return m
		}
	}
	return d
}

// result says whether err is nil, and fails the test unless err is one
// an operation may return under faults: an injected fault or out of
// memory (the hard limit, or a fault that looks like it).
func (r *faultRun) result(err error) bool {
	switch {
	case err == nil:
		return true
	case errors.Is(err, host.ErrInjected):
		r.injected++
	case errors.Is(err, backend.ErrOutOfMemory):
		r.oom++
	default:
		r.t.Fatalf("step %d: %s returned an error no fault explains: %v", r.step, r.op, err)
	}
	return false
}

func (r *faultRun) compare(x *marr, got []float32) {
	want := x.model()
	for i, w := range want {
		if !math.IsNaN(float64(w)) && got[i] != w {
			r.t.Fatalf("step %d: %s: element %d of %d is %v, the model says %v (a fault was swallowed, or a block is shared)",
				r.step, r.op, i, len(want), got[i], w)
		}
	}
}

// finish drops every array, closes the streams and checks what the run
// left: nothing live, every block freed once, and reserved bytes equal to
// what the backend has outstanding, then none after Close.
func (r *faultRun) finish() {
	t := r.t
	// The model's last word on every live array, now that nothing fails.
	for _, m := range r.live {
		r.op = "final ToSlice " + m.desc
		got, err := m.a.ToSlice()
		if err != nil {
			t.Fatalf("%s with faults off: %v", r.op, err)
		}
		r.compare(m, got)
	}
	for _, m := range r.live {
		r.drop(m.a)
	}
	r.live, r.freed = nil, nil
	how := "UnsafeFree'd"
	if r.scale.collect {
		how = "dropped and collected"
		deadline := time.Now().Add(10 * time.Second)
		for {
			runtime.GC()
			// A pool counts a Free before it is done with the driver: wait
			// until the cleanups have returned, not only until Frees adds up.
			cleanupsDone(deadline)
			st := r.w.Stats()
			if st.Allocs == st.Frees || time.Now().After(deadline) {
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	st := r.w.Stats()
	if st.Allocs != st.Frees || st.Live != 0 {
		t.Fatalf("%s: after every array was %s: %d allocs, %d frees, %s live (%v)",
			r.name, how, st.Allocs, st.Frees, humanize.IBytes(st.Live), st)
	}
	if err := r.check.err(); err != nil {
		t.Fatal(err)
	}
	// The streams end, one after the other, the newest first (their IDs
	// go back to a last-in first-out list, and so the next run's streams
	// get the same ones): each one's work done, what the pools cached for
	// it given to the device's default stream, its goroutine gone.
	for _, s := range slices.Backward(r.streams) {
		if err := s.Close(); err != nil {
			t.Fatalf("%s: Close of a stream: %v", r.name, err)
		}
		cuarray.WaitRetired()
	}
	r.streams = nil
	free, total, err := r.dev.MemInfo()
	if err != nil {
		t.Fatal(err)
	}
	if used, reserved := total-free, r.w.Stats().Reserved; used != reserved {
		t.Fatalf("%s: the pool counts %s (%d bytes) reserved, the backend has %s (%d bytes) outstanding",
			r.name, humanize.IBytes(reserved), reserved, humanize.IBytes(used), used)
	}
	// With the faults off, Close gives everything back: what the driver
	// refused to take back during the run too.
	if err := r.w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	free, total, _ = r.dev.MemInfo()
	if used, reserved := total-free, r.w.Stats().Reserved; used != 0 || reserved != 0 {
		t.Fatalf("%s: after Close the pool counts %s reserved, the backend has %s outstanding; want nothing",
			r.name, humanize.IBytes(reserved), humanize.IBytes(used))
	}
	if !r.scale.collect {
		// What the run's objects leave to cleanups (ended streams' tail
		// events) comes back now, inside this run, so that the next one
		// starts where this one did: no garbage, no cleanup to come, no
		// spare event.
		collectAll(time.Now().Add(10 * time.Second))
		if err := drainEvents(r.b, r.dev); err != nil {
			t.Fatal(err)
		}
	}
	faultBackend.clean = true // the next run may have it
}

// cleanupsDone waits until every cleanup queued so far has returned, by
// the runtime's counts (gcpressure's waitCleanups explains them): yielding
// to the goroutines that run them (microseconds each) before sleeping, for
// a run's end costs a few of these waits.
func cleanupsDone(deadline time.Time) {
	s := []metrics.Sample{{Name: "/gc/cleanups/queued:cleanups"}, {Name: "/gc/cleanups/executed:cleanups"}}
	for i := 0; time.Now().Before(deadline); i++ {
		metrics.Read(s)
		if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Uint64() >= s[0].Value.Uint64() {
			return
		}
		if i < 1000 {
			runtime.Gosched()
		} else {
			time.Sleep(100 * time.Microsecond)
		}
	}
}

// collectAll collects until a collection queues no cleanup, waiting for
// the cleanups each one queued: a cleanup's argument stays reachable until
// it has run, so what it holds (an array's buffer holds its stream's life,
// whose cleanup recycles the stream's tail event) waits for the next
// collection, and anchors recycled by UnsafeFree wait in a sync.Pool for
// two.
func collectAll(deadline time.Time) {
	s := []metrics.Sample{{Name: "/gc/cleanups/queued:cleanups"}}
	queued := func() uint64 {
		metrics.Read(s)
		if s[0].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return s[0].Value.Uint64()
	}
	for before := queued(); time.Now().Before(deadline); {
		runtime.GC()
		cleanupsDone(deadline)
		after := queued()
		if after == before {
			return
		}
		before = after
	}
}

func fill(v []float32, x float32) {
	for i := range v {
		v[i] = x
	}
}

// exactSum is the sum of v when the model knows every element and the
// sum is exact in float32 whatever the order of the additions.
func exactSum(v []float32) (float32, bool) {
	var s float64
	for _, x := range v {
		if !(math.Abs(float64(x)) <= 1<<10) || x != float32(int32(x)) {
			return 0, false // unknown (NaN), not an integer, or large
		}
		s += float64(x)
	}
	if len(v) > 1<<12 {
		return 0, false
	}
	return float32(s), true
}

// span is a live block's range.
type span struct{ lo, hi backend.Ptr }

// checkPool sits between gcpressure and the strategy: it fails the run if
// a block is handed out while another live block overlaps it (a block
// handed out twice), or freed when it is not live.
type checkPool struct {
	pool.Pool
	mu   sync.Mutex
	live map[*pool.Block]span
	bad  []string
}

func (c *checkPool) Unwrap() pool.Pool { return c.Pool }

func (c *checkPool) Alloc(size uint64, s backend.Stream) (*pool.Block, error) {
	b, err := c.Pool.Alloc(size, s)
	if err != nil {
		return nil, err
	}
	sp := span{b.Ptr, b.Ptr + backend.Ptr(b.Size)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.live[b]; dup {
		c.bad = append(c.bad, fmt.Sprintf("block %p [%#x, +%d) handed out while live", b, uintptr(b.Ptr), b.Size))
	}
	for o, osp := range c.live {
		if sp.lo < osp.hi && osp.lo < sp.hi {
			c.bad = append(c.bad, fmt.Sprintf("block [%#x, +%d) overlaps live block %p [%#x, %#x)", uintptr(b.Ptr), b.Size, o, uintptr(osp.lo), uintptr(osp.hi)))
		}
	}
	c.live[b] = sp
	return b, nil
}

func (c *checkPool) Free(b *pool.Block, s backend.Stream) error {
	c.mu.Lock()
	if _, ok := c.live[b]; !ok {
		c.bad = append(c.bad, fmt.Sprintf("Free of block %p, which is not live", b))
	}
	delete(c.live, b)
	c.mu.Unlock()
	return c.Pool.Free(b, s)
}

func (c *checkPool) err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.bad) > 0 {
		return fmt.Errorf("%d pool misbehaviours, the first: %s", len(c.bad), c.bad[0])
	}
	if len(c.live) > 0 {
		return fmt.Errorf("%d blocks still live at the end", len(c.live))
	}
	return nil
}
