package cuarray

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/pool"
)

// ErrCapturing: an operation that a capture cannot record — a
// synchronisation, a read by the host, a copy from host memory, a copy
// between devices, a use of an array on another stream while a capture
// holds it — was refused; the capture goes on as it was. It is
// backend.ErrCapturing, so that errors.Is matches the backends' errors too.
var ErrCapturing = backend.ErrCapturing

// Graph is the work a function queued on a stream, captured once and
// replayed with Launch: one launch for the whole step instead of one per
// operation (CUDA graphs; on the host backend, the recorded functions).
//
// A replay runs the captured operations on the same memory with the same
// scalars: arrays the function allocated come from a pool private to the
// graph and keep their memory as long as the graph lives, so that a
// replay writes them again; arrays made before the capture are used in
// place, so writing new values into them (Copy, SetAt, an operation before
// Launch) is how a step gets new inputs. Recapture captures the function
// again (new arrays, new scalars, new shapes) and updates the graph in
// place when only pointers and scalars changed.
//
// Close gives the graph and its pool back; a Graph the program drops is
// closed when the collector finds it.
type Graph struct {
	st *graphState
}

// graphState is a Graph's resources, reached by its cleanup without the
// Graph.
type graphState struct {
	mu    sync.Mutex
	s     *Stream
	home  *home // the graph pool's home: arrays made in the capture
	exec  backend.GraphExec
	nodes int
	used  map[*buffer]struct{} // buffers of other pools its work uses (pinned)
	// outputs are the buffers of its own pool that were live when the
	// capture ended: with used, what Launch orders after their last use.
	outputs map[*buffer]struct{}
	closed  bool
	stats   GraphStats
}

// GraphStats counts what a Graph did.
type GraphStats struct {
	// Nodes is the number of operations the last capture recorded.
	Nodes int
	// Captures counts captures (Capture and each Recapture); Updates the
	// recaptures applied in place, Instantiations those that made a new
	// executable graph (the first capture and each change of shape).
	Captures, Updates, Instantiations int
	// Launches counts Launch calls that queued the graph.
	Launches int
}

// capture is one capture in progress on a stream's life.
type capture struct {
	s    *Stream
	home *home
	// used are the buffers of other pools the capture's work touched,
	// pinned (see pins) as they are met; own, those of the graph's pool.
	used, own map[*buffer]struct{}
	// deferred are frees of blocks last used on the capturing stream,
	// run once the capture ends.
	deferred []func()
}

// graphsLive counts captures in progress and graphs holding pins: while
// it is 0, a free pays one atomic load for graphs.
var graphsLive atomic.Int32

// pins are the buffers that captures and live graphs use, with how many
// hold each: their frees wait until none does.
var pins struct {
	sync.Mutex
	m map[*buffer]*pin
}

type pin struct {
	holders int
	// pending is the buffer's free, deferred while it is held.
	pending func()
	// byUser: UnsafeFree freed every array of the buffer while held, which
	// Launch reports.
	byUser bool
}

// notCapturing is the error of op on s while s captures.
func (s *Stream) notCapturing(op string) error {
	if s.life.capture.Load() != nil {
		return fmt.Errorf("cuarray: %s of stream %d during a capture on it: the capture records work, it runs none: %w", op, s.bs.ID(), ErrCapturing)
	}
	return nil
}

// Capturing reports whether a capture is in progress on s.
func (s *Stream) Capturing() bool { return s.life.capture.Load() != nil }

// homeFor is where an array made on s inside the capture comes from.
func (c *capture) homeFor(op string, s *Stream) (*home, error) {
	if s.kind != Device {
		return nil, fmt.Errorf("cuarray: %s of %s memory inside a capture: a graph's pool holds device memory only; make it before the capture: %w",
			op, s.kind, ErrCapturing)
	}
	return c.home, nil
}

// use pins b for the capture unless it is the graph's own memory. The
// caller holds b.mu.
func (c *capture) use(b *buffer) {
	// Under pins' lock: goroutines may queue on the capturing stream at
	// once, each holding its own buffers' locks.
	pins.Lock()
	defer pins.Unlock()
	if b.origin.pool == c.home.pool {
		c.own[b] = struct{}{}
		return
	}
	if _, ok := c.used[b]; ok {
		return
	}
	c.used[b] = struct{}{}
	if pins.m == nil {
		pins.m = map[*buffer]*pin{}
	}
	p := pins.m[b]
	if p == nil {
		p = &pin{}
		pins.m[b] = p
	}
	p.holders++
}

// unpin drops one hold of each buffer of used and runs the frees that
// waited for the last.
func unpin(used map[*buffer]struct{}) {
	var run []func()
	pins.Lock()
	for b := range used {
		p := pins.m[b]
		if p == nil {
			continue
		}
		if p.holders--; p.holders == 0 {
			delete(pins.m, b)
			if p.pending != nil {
				run = append(run, p.pending)
			}
		}
	}
	pins.Unlock()
	for _, f := range run {
		f()
	}
}

// deferFree keeps a buffer's free for later when a graph or capture holds
// the buffer, or its last stream is capturing (a free there would be
// recorded, or would reach a pool that orders streams across the
// capture); it reports whether it did. A block of the capture's own pool
// is freed at once: back into that pool, as PyTorch's graph pools do.
func deferFree(b *buffer, l *life, origin *home, byUser bool, free func()) bool {
	pins.Lock()
	defer pins.Unlock()
	if p := pins.m[b]; p != nil {
		p.pending, p.byUser = free, byUser
		return true
	}
	if c := l.capture.Load(); c != nil {
		if origin.pool != c.home.pool {
			c.deferred = append(c.deferred, free)
			return true
		}
		// Freed into the graph's pool at once: its anchor is recycled
		// for any stream's next array, so the capture forgets it (its
		// outputs are the buffers still live when it ends).
		delete(c.own, b)
	}
	return false
}

// orderIntoCapture moves b onto s, whose capture is c. Work on another
// stream cannot be waited for by the device inside a capture (the wait
// would cross its boundary), so the host waits for it here, once: it is
// done before anything captured runs, at every replay too.
func (b *buffer) orderIntoCapture(s *life, c *capture) error {
	if b.life != s {
		if b.life.capture.Load() != nil {
			return fmt.Errorf("the array is in use by the capture in progress on stream %d: %w", b.life.bs.ID(), ErrCapturing)
		}
		if !b.unordered {
			if err := hostWait(b.life); err != nil {
				return err
			}
		}
	}
	if b.others != nil && !b.unordered {
		for _, o := range *b.others {
			if err := hostWait(o); err != nil {
				return err
			}
		}
		b.others = nil
	}
	if b.life != s {
		if b.unordered {
			b.noteOther(b.life)
		}
		b.life = s
		s.note(b.origin.pool)
	}
	c.use(b)
	return nil
}

// hostWait blocks until the work queued on l so far is done.
func hostWait(l *life) error {
	if l.acquire() {
		defer l.release()
		return l.bs.Synchronize()
	}
	if l.tail != nil {
		return l.tail.Synchronize()
	}
	return nil
}

// Capture runs fn, capturing the work it queues on s into a Graph instead
// of running it, and makes the graph ready to Launch. Nothing fn queues
// runs during the capture: Launch runs it, as often as wanted.
//
// Inside fn, operations on s are recorded; arrays made on s come from the
// graph's own pool (gocuda.PoolStatus lists it under the device as "graph
// N"), and arrays freed there go back to it. What cannot be recorded fails
// with an error wrapping ErrCapturing and leaves the capture intact:
// synchronising s, reading an array to the host (ToSlice, At, String,
// reductions to a Go value), copying from host memory (FromSlice, SetAt),
// copying between devices, using an array on another stream while the
// capture holds it. fn's error, or the first such error fn returns,
// ends the capture and is Capture's error; nothing stays allocated.
//
// Arrays made before the capture and used inside it are held by the graph:
// their memory is not freed until the graph is closed (an UnsafeFree of
// one meanwhile makes Launch fail, naming it). s must be a stream of its
// own (NewStream or BorrowStream), not a default stream, which every
// goroutine's package-level operations share.
func Capture(s *Stream, fn func() error) (*Graph, error) {
	if s == nil || fn == nil {
		return nil, fmt.Errorf("cuarray: Capture: nil stream or function: %w", backend.ErrInvalidValue)
	}
	st := &graphState{s: s}
	if err := st.capture(fn); err != nil {
		return nil, err
	}
	g := &Graph{st: st}
	runtime.AddCleanup(g, func(st *graphState) { _ = st.close() }, st)
	return g, nil
}

// Recapture captures fn again into g, as Capture does, with the same pool:
// arrays freed since come back from it, so a step that allocates the same
// shapes in the same order gets the same memory. When the new capture
// recorded the same operations with other pointers or scalars, the graph
// is updated in place (cuGraphExecUpdate) and updated is true; when they
// differ (another shape changes the launch configuration, or another
// sequence of operations), a new executable graph replaces the old one.
// On an error the graph is left as it was.
func (g *Graph) Recapture(fn func() error) (updated bool, err error) {
	if fn == nil {
		return false, fmt.Errorf("cuarray: Recapture: nil function: %w", backend.ErrInvalidValue)
	}
	st := g.st
	st.mu.Lock()
	closed := st.closed
	st.mu.Unlock()
	if closed {
		return false, fmt.Errorf("cuarray: Recapture of a closed graph: %w", ErrClosed)
	}
	before := st.Stats()
	if err := st.capture(fn); err != nil {
		return false, err
	}
	return st.Stats().Updates > before.Updates, nil
}

// capture captures fn on st.s: into st's pool, made on the first capture.
func (st *graphState) capture(fn func() error) (err error) {
	s := st.s
	switch {
	case s.life.permanent:
		return fmt.Errorf("cuarray: Capture on the default stream of device %d: every goroutine's package-level operations share it; capture on a stream of your own (NewStream): %w",
			s.dev.Ordinal(), backend.ErrNotSupported)
	case s.kind != Device:
		return fmt.Errorf("cuarray: Capture on a %s-memory stream: capture on the device stream it was made from: %w", s.kind, backend.ErrInvalidValue)
	}
	cp, ok := backend.Capturable(s.bs)
	if !ok {
		return fmt.Errorf("cuarray: Capture: stream %d of device %d (%T) cannot be captured: %w", s.bs.ID(), s.dev.Ordinal(), s.bs, backend.ErrNotSupported)
	}
	if s.Closed() || !s.life.acquire() {
		return closedError("Capture", s)
	}
	h := st.home
	madePool := false
	if h == nil {
		gp, err := gocuda.NewGraphPool(s.dev.Ordinal(), s.bs)
		if err != nil {
			s.life.release()
			return fmt.Errorf("cuarray: Capture: %w", err)
		}
		h, madePool = &home{dev: s.dev, pool: gp}, true
	}
	c := &capture{s: s, home: h, used: map[*buffer]struct{}{}, own: map[*buffer]struct{}{}}
	if !s.life.capture.CompareAndSwap(nil, c) {
		s.life.release()
		if madePool {
			_ = gocuda.CloseGraphPool(h.pool)
		}
		return fmt.Errorf("cuarray: Capture on stream %d: a capture is in progress on it already: %w", s.bs.ID(), backend.ErrInvalidValue)
	}
	graphsLive.Add(1)
	berr := cp.BeginCapture()
	s.life.release()
	var bg backend.Graph
	if berr == nil {
		func() {
			defer func() {
				// fn panicked: end the capture before the panic goes on,
				// so that the stream is usable again.
				if r := recover(); r != nil {
					if g, err := cp.EndCapture(); err == nil {
						_ = g.Destroy()
					}
					st.endCapture(c, false, madePool)
					panic(r)
				}
			}()
			if err = fn(); err != nil {
				err = fmt.Errorf("cuarray: Capture: the captured function: %w", err)
			}
		}()
		var eerr error
		bg, eerr = cp.EndCapture()
		if err == nil && eerr != nil {
			err = fmt.Errorf("cuarray: Capture: ending the capture on stream %d: %w", s.bs.ID(), eerr)
		}
	} else {
		err = fmt.Errorf("cuarray: Capture on stream %d: %w", s.bs.ID(), berr)
	}
	if err == nil {
		if err = st.install(bg, h); err != nil {
			err = fmt.Errorf("cuarray: Capture: instantiating the graph: %w", err)
		}
	}
	if bg != nil {
		_ = bg.Destroy() // the executable graph is a copy
	}
	st.endCapture(c, err == nil, madePool)
	return err
}

// install makes bg st's executable graph: an update in place of the one
// it has where the driver can apply it, else a new instance.
func (st *graphState) install(bg backend.Graph, h *home) error {
	nodes, err := bg.Nodes()
	if err != nil {
		return err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.stats.Captures++
	if st.exec != nil {
		uerr := st.exec.Update(bg)
		if uerr == nil {
			st.stats.Updates++
			st.nodes, st.stats.Nodes = nodes, nodes
			return nil
		}
		if !errors.Is(uerr, backend.ErrGraphUpdate) {
			return uerr
		}
	}
	ex, err := bg.Instantiate()
	if err != nil {
		return err
	}
	if st.exec != nil {
		_ = st.exec.Destroy()
	}
	st.exec, st.home = ex, h
	st.stats.Instantiations++
	st.nodes, st.stats.Nodes = nodes, nodes
	return nil
}

// endCapture clears c from its stream and settles its pins: a graph that
// took the capture holds the buffers it used (and lets go of those of its
// previous capture); a failed capture lets go of its own, and of its pool
// if it made it.
func (st *graphState) endCapture(c *capture, ok, madePool bool) {
	// Under pins' lock, so that a free deciding to wait for the capture
	// (deferFree) is either in deferred or sees no capture.
	pins.Lock()
	c.s.life.capture.Store(nil)
	deferred := c.deferred
	c.deferred = nil
	pins.Unlock()
	if ok {
		outputs := map[*buffer]struct{}{}
		for b := range c.own {
			b.mu.Lock()
			if b.block != nil && b.origin.pool == c.home.pool {
				outputs[b] = struct{}{}
			}
			b.mu.Unlock()
		}
		st.mu.Lock()
		old := st.used
		st.used, st.outputs = c.used, outputs
		st.mu.Unlock()
		if old != nil {
			unpin(old)
			graphsLive.Add(-1)
		}
	} else {
		unpin(c.used)
		graphsLive.Add(-1)
		if madePool {
			_ = gocuda.CloseGraphPool(c.home.pool)
		}
	}
	for _, f := range deferred {
		f()
	}
}

// Launch queues the graph's work on its stream, after the work queued
// there before, and returns without waiting, as an operation does. Read
// its results as after any operation (ToSlice waits for them). It fails on
// a closed graph or stream, or when an array the graph uses was freed with
// UnsafeFree after the capture.
func (g *Graph) Launch() error {
	st := g.st
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return fmt.Errorf("cuarray: Launch of a closed graph: %w", ErrClosed)
	}
	s := st.s
	if s.Closed() || !s.life.acquire() {
		return closedError("Launch of a graph", s)
	}
	defer s.life.release()
	if err := st.freedInputs(); err != nil {
		return err
	}
	if err := st.orderBuffers(s.life); err != nil {
		return fmt.Errorf("cuarray: Launch of a graph on stream %d: %w", s.bs.ID(), err)
	}
	if err := st.exec.Launch(s.bs); err != nil {
		return fmt.Errorf("cuarray: Launch of a graph on stream %d: %w", s.bs.ID(), err)
	}
	st.stats.Launches++
	return nil
}

// orderBuffers orders s after the last use of every buffer the graph
// reads or writes that moved to another stream since (an output read on
// another stream), and makes s their last stream, so that arrays order
// their uses around a replay as around any operation. The caller holds
// st.mu.
func (st *graphState) orderBuffers(s *life) error {
	for _, set := range []map[*buffer]struct{}{st.used, st.outputs} {
		for b := range set {
			b.mu.Lock()
			var err error
			// (An output freed since and recycled for another array is
			// ordered too: a wait more than needed, never one less.)
			if b.block != nil && b.life != s {
				err = b.orderOn(s)
			}
			b.mu.Unlock()
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// freedInputs names a buffer the graph uses whose arrays were all freed
// with UnsafeFree. The caller holds st.mu.
func (st *graphState) freedInputs() error {
	if len(st.used) == 0 {
		return nil
	}
	pins.Lock()
	defer pins.Unlock()
	for b := range st.used {
		if p := pins.m[b]; p != nil && p.byUser {
			return fmt.Errorf("cuarray: Launch of a graph: it uses a buffer of %d bytes whose arrays were freed with UnsafeFree after the capture; keep them until the graph is closed, or Recapture without them: %w",
				b.size, ErrFreed)
		}
	}
	return nil
}

// Stream is the stream the graph was captured on, where Launch queues it.
func (g *Graph) Stream() *Stream { return g.st.s }

// Pool is the graph's private pool, where the arrays its captures made
// come from.
func (g *Graph) Pool() pool.Pool {
	g.st.mu.Lock()
	defer g.st.mu.Unlock()
	if g.st.home == nil {
		return nil
	}
	return g.st.home.pool
}

// Stats returns what the graph did so far.
func (g *Graph) Stats() GraphStats { return g.st.Stats() }

func (st *graphState) Stats() GraphStats {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.stats
}

// Close releases the executable graph, lets go of the arrays it held (a
// free that waited for it happens now) and gives its pool back: at once,
// or, where arrays the captures made are still held by the program, when
// the last of them is freed. Closing twice does nothing.
func (g *Graph) Close() error { return g.st.close() }

func (st *graphState) close() error {
	st.mu.Lock()
	if st.closed {
		st.mu.Unlock()
		return nil
	}
	st.closed = true
	ex, used, h := st.exec, st.used, st.home
	st.exec, st.used, st.outputs = nil, nil, nil
	st.mu.Unlock()
	var errs []error
	if ex != nil {
		errs = append(errs, ex.Destroy())
	}
	if used != nil {
		unpin(used)
		graphsLive.Add(-1)
	}
	if h != nil {
		errs = append(errs, gocuda.CloseGraphPool(h.pool))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("cuarray: Close of a graph: %w", err)
	}
	return nil
}
