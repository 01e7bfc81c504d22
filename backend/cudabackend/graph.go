package cudabackend

import (
	"errors"
	"fmt"
	"sync"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/cuda"
)

var (
	_ backend.Capture   = (*Stream)(nil)
	_ backend.Graph     = (*Graph)(nil)
	_ backend.GraphExec = (*GraphExec)(nil)
)

// BeginCapture starts capturing s in relaxed mode (see cuda.CaptureModeRelaxed
// for why), so that other goroutines' allocations and synchronisations on
// other streams go on during the capture.
func (s *Stream) BeginCapture() error {
	if err := s.live(); err != nil {
		return err
	}
	if s.s.Handle() == 0 {
		// The legacy default stream synchronizes with every blocking
		// stream: the driver refuses to capture it.
		return fmt.Errorf("cuda backend: stream %d is the legacy default stream, which cannot be captured: %w", s.id, backend.ErrNotSupported)
	}
	if !s.capturing.CompareAndSwap(false, true) {
		return fmt.Errorf("cuda backend: stream %d: BeginCapture: the stream is capturing already; end that capture first: %w", s.id, backend.ErrInvalidValue)
	}
	s.dev.captures.Add(1)
	if err := s.s.BeginCapture(cuda.CaptureModeRelaxed); err != nil {
		s.capturing.Store(false)
		s.dev.captures.Add(-1)
		return wrap(err)
	}
	return nil
}

// EndCapture ends the capture and returns its graph.
func (s *Stream) EndCapture() (backend.Graph, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	if !s.capturing.Load() {
		return nil, fmt.Errorf("cuda backend: stream %d: EndCapture without BeginCapture: %w", s.id, backend.ErrInvalidValue)
	}
	g, err := s.s.EndCapture()
	s.capturing.Store(false)
	s.dev.captures.Add(-1)
	if err != nil {
		return nil, wrap(err)
	}
	return &Graph{g: g}, nil
}

// Captures is the number of d's streams capturing now.
func (d *Device) Captures() int { return int(d.captures.Load()) }

// Capturing reports whether s is capturing.
func (s *Stream) Capturing() bool { return s.capturing.Load() }

// dropCapture ends a capture still open, dropping its graph.
func (s *Stream) dropCapture() {
	if s.capturing.Load() {
		if g, err := s.s.EndCapture(); err == nil {
			_ = g.Destroy()
		}
		s.capturing.Store(false)
		s.dev.captures.Add(-1)
	}
}

func (s *Stream) notCapturing(op string) error {
	if s.capturing.Load() {
		return fmt.Errorf("cuda backend: stream %d: %s: %w", s.id, op, backend.ErrCapturing)
	}
	return nil
}

// Graph is a captured CUgraph.
type Graph struct {
	mu   sync.Mutex
	g    *cuda.Graph
	gone bool
}

var (
	errGraphDestroyed = fmt.Errorf("cuda backend: graph used after Destroy: %w", backend.ErrInvalidValue)
	errExecDestroyed  = fmt.Errorf("cuda backend: graph instance used after Destroy: %w", backend.ErrInvalidValue)
)

// Instantiate makes an executable graph.
func (g *Graph) Instantiate() (backend.GraphExec, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gone {
		return nil, errGraphDestroyed
	}
	e, err := g.g.Instantiate()
	if err != nil {
		return nil, wrap(err)
	}
	return &GraphExec{e: e}, nil
}

// Nodes is the graph's node count.
func (g *Graph) Nodes() (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gone {
		return 0, errGraphDestroyed
	}
	n, err := g.g.Nodes()
	return n, wrap(err)
}

// Destroy destroys the graph.
func (g *Graph) Destroy() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gone {
		return errGraphDestroyed
	}
	g.gone = true
	return wrap(g.g.Destroy())
}

// GraphExec is an executable CUgraphExec.
type GraphExec struct {
	mu   sync.Mutex
	e    *cuda.GraphExec
	gone bool
}

// Launch queues the graph on s.
func (e *GraphExec) Launch(s backend.Stream) error {
	cs, ok := s.(*Stream)
	if !ok || cs == nil {
		return fmt.Errorf("cuda backend: graph launch on stream %T, not a CUDA stream: %w", s, backend.ErrInvalidValue)
	}
	if err := cs.live(); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.gone {
		return errExecDestroyed
	}
	return wrap(e.e.Launch(cs.s))
}

// Update applies g to e in place; a graph the driver cannot apply
// (CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE) wraps backend.ErrGraphUpdate.
func (e *GraphExec) Update(g backend.Graph) error {
	cg, ok := g.(*Graph)
	if !ok || cg == nil {
		return fmt.Errorf("cuda backend: graph update from %T, not a CUDA graph: %w", g, backend.ErrInvalidValue)
	}
	cg.mu.Lock()
	defer cg.mu.Unlock()
	if cg.gone {
		return errGraphDestroyed
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.gone {
		return errExecDestroyed
	}
	res, err := e.e.Update(cg.g)
	if errors.Is(err, cuda.ErrGraphUpdateFailure) {
		return fmt.Errorf("cuda backend: graph update (CUgraphExecUpdateResult %d): %w: %w", res, backend.ErrGraphUpdate, err)
	}
	return wrap(err)
}

// Destroy destroys the executable graph.
func (e *GraphExec) Destroy() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.gone {
		return errExecDestroyed
	}
	e.gone = true
	return wrap(e.e.Destroy())
}
