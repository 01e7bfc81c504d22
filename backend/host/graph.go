package host

import (
	"fmt"
	"slices"
	"sync"

	"github.com/gocuda/gocuda/backend"
)

// Capture on the host backend records the functions a captured stream
// would run, with their names and declared accesses, instead of queuing
// them; a Graph is that list and a GraphExec replays it. Functions keep the
// pointers and scalars they closed over, as a CUDA graph keeps its nodes'
// parameters: a replay runs the same work on the same memory.

var (
	_ backend.Capture   = (*Stream)(nil)
	_ backend.Graph     = (*Graph)(nil)
	_ backend.GraphExec = (*GraphExec)(nil)
)

// node is one recorded operation.
type node struct {
	name string
	acc  []Access
	fn   func()
}

// Graph is the work a host stream's capture recorded.
type Graph struct {
	dev   *Device
	mu    sync.Mutex
	nodes []node
	gone  bool
}

// GraphExec replays a Graph's functions on a stream.
type GraphExec struct {
	dev   *Device
	mu    sync.Mutex
	nodes []node
	gone  bool
}

// BeginCapture starts recording s's work.
func (s *Stream) BeginCapture() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closing:
		return s.destroyed()
	case s.capture != nil:
		return fmt.Errorf("host: stream %d: BeginCapture: the stream is capturing already; end that capture first: %w", s.id, backend.ErrInvalidValue)
	}
	s.capture = &Graph{dev: s.dev}
	s.capturing.Store(true)
	s.dev.captures.Add(1)
	return nil
}

// EndCapture stops recording and returns the graph of what was recorded.
func (s *Stream) EndCapture() (backend.Graph, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.capture
	if g == nil {
		return nil, fmt.Errorf("host: stream %d: EndCapture without BeginCapture: %w", s.id, backend.ErrInvalidValue)
	}
	s.capture = nil
	s.capturing.Store(false)
	s.dev.captures.Add(-1)
	return g, nil
}

// Captures is the number of d's streams capturing now.
func (d *Device) Captures() int { return int(d.captures.Load()) }

// Capturing reports whether s is recording.
func (s *Stream) Capturing() bool { return s.capturing.Load() }

// record appends fn to the capture when s is capturing, and reports
// whether it did.
func (s *Stream) record(name string, acc []Access, fn func()) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return true, s.destroyed()
	}
	if s.capture == nil {
		return false, nil // the capture ended meanwhile: queue as usual
	}
	s.capture.nodes = append(s.capture.nodes, node{name, slices.Clone(acc), fn})
	return true, nil
}

// notCapturing is the error of op on a capturing stream, nil otherwise.
func (s *Stream) notCapturing(op string) error {
	if s.capturing.Load() {
		return fmt.Errorf("host: stream %d: %s: %w", s.id, op, backend.ErrCapturing)
	}
	return nil
}

// Instantiate copies the recorded functions into a runnable instance.
func (g *Graph) Instantiate() (backend.GraphExec, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gone {
		return nil, errGraphDestroyed
	}
	return &GraphExec{dev: g.dev, nodes: slices.Clone(g.nodes)}, nil
}

// Nodes is the number of recorded operations.
func (g *Graph) Nodes() (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gone {
		return 0, errGraphDestroyed
	}
	return len(g.nodes), nil
}

// Destroy releases the graph.
func (g *Graph) Destroy() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gone {
		return errGraphDestroyed
	}
	g.gone, g.nodes = true, nil
	return nil
}

var (
	errGraphDestroyed = fmt.Errorf("host: graph used after Destroy: %w", backend.ErrInvalidValue)
	errExecDestroyed  = fmt.Errorf("host: graph instance used after Destroy: %w", backend.ErrInvalidValue)
)

// Launch queues the graph's functions on s in order. With the stream
// checker off they run as one queued function, as a CUDA graph launches
// as one unit; with it on each is queued with its accesses, so that the
// checker sees a replay as it saw the eager work.
func (e *GraphExec) Launch(s backend.Stream) error {
	hs, err := e.dev.stream(s)
	if err != nil {
		return err
	}
	e.mu.Lock()
	nodes, gone := e.nodes, e.gone
	e.mu.Unlock()
	if gone {
		return errExecDestroyed
	}
	if err := e.dev.b.fault(FaultLaunch); err != nil {
		return fmt.Errorf("host: stream %d: graph launch: %w", hs.id, err)
	}
	if hs.dev.b.check.Load() != nil || hs.capturing.Load() {
		for _, n := range nodes {
			if err := hs.enqueueOp(n.name, n.fn, n.acc...); err != nil {
				return err
			}
		}
		return nil
	}
	return hs.enqueue(func() {
		for _, n := range nodes {
			n.fn()
		}
	})
}

// Update takes g's functions when g recorded the same operations (by
// name, in order) as the instance; otherwise it wraps
// backend.ErrGraphUpdate and changes nothing.
func (e *GraphExec) Update(g backend.Graph) error {
	hg, ok := g.(*Graph)
	if !ok || hg == nil {
		return fmt.Errorf("host: graph update from %T, not a host graph: %w", g, backend.ErrInvalidValue)
	}
	hg.mu.Lock()
	nodes, gone := slices.Clone(hg.nodes), hg.gone
	hg.mu.Unlock()
	if gone {
		return errGraphDestroyed
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.gone {
		return errExecDestroyed
	}
	if len(nodes) != len(e.nodes) {
		return fmt.Errorf("host: graph update: %d operations where the instance has %d: %w", len(nodes), len(e.nodes), backend.ErrGraphUpdate)
	}
	for i := range nodes {
		if nodes[i].name != e.nodes[i].name {
			return fmt.Errorf("host: graph update: operation %d is %q where the instance has %q: %w", i, nodes[i].name, e.nodes[i].name, backend.ErrGraphUpdate)
		}
	}
	e.nodes = nodes
	return nil
}

// Destroy releases the instance; launches already queued run to the end.
func (e *GraphExec) Destroy() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.gone {
		return errExecDestroyed
	}
	e.gone, e.nodes = true, nil
	return nil
}
