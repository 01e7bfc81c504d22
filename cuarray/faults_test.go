package cuarray_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
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
// collected, nothing is live, every Alloc was freed once, no block was
// handed out twice, and the pool's reserved bytes are exactly what the
// backend has outstanding.

// faultStrategies are the pools the run covers; the driver's pool needs a
// GPU (the GPU run of this test covers it there).
var faultStrategies = []string{"split", "binned", "simple", "none"}

const (
	faultHard     = 64 << 20
	faultTotal    = 1 << 30 // the device: a request beyond it is refused early
	faultMaxLive  = 24
	faultStreams  = 4
	faultMaxSteps = 3000
)

// TestFaultInjectionRun runs a seeded input of about 1 400 operations
// through each strategy: a few seconds in all, 150 operations each under
// -short.
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
				runFaults(t, name, data)
			})
		}
	}
}

// FuzzFaultInjection: go test -fuzz FuzzFaultInjection ./cuarray (see
// scripts/ci-fuzz.sh). The first byte picks the strategy.
func FuzzFaultInjection(f *testing.F) {
	for i := range faultStrategies {
		seed := []byte{byte(i), 3, 1, 4, 1, 5, 9, 2, 6}
		for k := range 300 {
			seed = append(seed, byte(k*37+i), byte(k*11), byte(k*7+3), byte(k), byte(k*5), byte(k*13))
		}
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 1 {
			return
		}
		runFaults(t, faultStrategies[int(data[0])%len(faultStrategies)], data[1:])
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
	errs    map[string]int // error kinds seen, for the log
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

func runFaults(t *testing.T, name string, data []byte) {
	r := &faultRun{t: t, name: name, errs: map[string]int{}}
	r.b = host.New(host.Options{TotalMemory: faultTotal}).(*host.Backend)
	var err error
	r.dev, err = r.b.Device(0)
	if err != nil {
		t.Fatal(err)
	}
	inner, err := pool.New(name, r.dev, pool.Limits{Hard: faultHard})
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
	maxSteps := faultMaxSteps
	if testing.Short() {
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
	var injected uint64
	for _, c := range counts {
		injected += c.Injected
	}
	t.Logf("%s: %d operations, %d faults injected, errors %v, counts %v", name, r.step, injected, r.errs, counts)
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
			r.op = fmt.Sprintf("Axpy(%v, %s, %s)", alpha, x.desc, y.desc)
			xv, yv := slices.Clone(x.model()), y.model()
			if r.result(ops.Axpy(alpha, x.a, y.a)) {
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
			r.op = fmt.Sprintf("Scale(%v, %s)", alpha, x.desc)
			if r.result(ops.Scale(alpha, x.a)) {
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
			} // else dropped: the collector frees it
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
			r.w.Reclaim(uint64(r.byte()) << 18)
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
	switch k := r.byte(); {
	case k < 200:
		n = 1 + int(r.byte())*int(r.byte())/16
	case k < 246:
		n = 1 + int(r.byte())<<10
	case k < 254:
		n = (1 + int(r.byte()%4)) << 20 // 4 to 16 MiB
	default:
		n = faultHard/4 + 1 + int(r.byte()) // beyond the hard limit
	}
	for len(r.live) >= faultMaxLive {
		r.live = slices.Delete(r.live, 0, 1) // dropped: the collector frees it
	}
	v := float32(r.byte() % 16)
	var a *cuarray.Array[float32]
	var err error
	vals := make([]float32, n)
	switch code % 3 {
	case 0:
		r.op = fmt.Sprintf("Full(%v, %d)", v, n)
		a, err = ops.Full(v, n)
		fill(vals, v)
	case 1:
		r.op = fmt.Sprintf("FromSlice(%d)", n)
		for i := range vals {
			vals[i] = float32((i + int(v)) % 13)
		}
		a, err = ops.FromSlice(vals)
	default:
		r.op = fmt.Sprintf("New(%d)", n)
		a, err = ops.New(n)
		fill(vals, float32(math.NaN()))
	}
	if n > faultHard/4 {
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
	if r.result(ops.Add(dst.a, ar, br)) {
		d := dst.model()
		for i := range d {
			d[i] = av[i] + bv[i]
		}
	} else {
		dst.forget()
	}
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
		r.live = slices.Delete(r.live, 0, 1)
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
		r.errs["injected"]++
	case errors.Is(err, backend.ErrOutOfMemory):
		r.errs["out of memory"]++
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

// finish drops every array and checks what the run left: nothing live,
// every block freed once, and reserved bytes equal to what the backend
// has outstanding.
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
	r.live, r.freed = nil, nil
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
	st := r.w.Stats()
	if st.Allocs != st.Frees || st.Live != 0 {
		t.Fatalf("%s: after every array was dropped and collected: %d allocs, %d frees, %s live (%v)",
			r.name, st.Allocs, st.Frees, humanize.IBytes(st.Live), st)
	}
	if err := r.check.err(); err != nil {
		t.Fatal(err)
	}
	for _, s := range r.streams {
		_ = s.Synchronize()
	}
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
}

// cleanupsDone waits until every cleanup queued so far has returned, by
// the runtime's counts (gcpressure's waitCleanups explains them).
func cleanupsDone(deadline time.Time) {
	for time.Now().Before(deadline) {
		s := []metrics.Sample{{Name: "/gc/cleanups/queued:cleanups"}, {Name: "/gc/cleanups/executed:cleanups"}}
		metrics.Read(s)
		if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Uint64() >= s[0].Value.Uint64() {
			return
		}
		time.Sleep(100 * time.Microsecond)
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
