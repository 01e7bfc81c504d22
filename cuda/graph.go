package cuda

// Stream capture and graphs: what a stream is given between BeginCapture
// and EndCapture is recorded into a Graph instead of running; an
// instantiated Graph (GraphExec) replays it with one launch.

// CaptureMode is cuda.h's CUstreamCaptureMode.
type CaptureMode int

// Capture modes (CUstreamCaptureMode). gocuda captures in relaxed mode:
// goroutines move between OS threads, so the thread-local and global
// modes' bans on "unsafe" calls (an allocation, a synchronisation) from
// other threads would fall on unrelated goroutines; the layers above
// refuse what would break a capture themselves.
const (
	CaptureModeGlobal      CaptureMode = 0 // CU_STREAM_CAPTURE_MODE_GLOBAL
	CaptureModeThreadLocal CaptureMode = 1 // CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
	CaptureModeRelaxed     CaptureMode = 2 // CU_STREAM_CAPTURE_MODE_RELAXED
)

// CaptureStatus is cuda.h's CUstreamCaptureStatus.
type CaptureStatus int

// Capture statuses (CUstreamCaptureStatus).
const (
	CaptureNone        CaptureStatus = 0 // CU_STREAM_CAPTURE_STATUS_NONE
	CaptureActive      CaptureStatus = 1 // CU_STREAM_CAPTURE_STATUS_ACTIVE
	CaptureInvalidated CaptureStatus = 2 // CU_STREAM_CAPTURE_STATUS_INVALIDATED
)

// Driver results of capture and graphs (cuda.h's CUresult).
const (
	ErrCaptureUnsupported Result = 900 // CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
	ErrCaptureInvalidated Result = 901 // CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
	ErrCaptureIsolation   Result = 905 // CUDA_ERROR_STREAM_CAPTURE_ISOLATION
	ErrCaptureImplicit    Result = 906 // CUDA_ERROR_STREAM_CAPTURE_IMPLICIT
	ErrGraphUpdateFailure Result = 910 // CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE
)

// BeginCapture starts capturing s's work (cuStreamBeginCapture_v2).
func (s *Stream) BeginCapture(mode CaptureMode) error {
	return check("cuStreamBeginCapture_v2", cBeginCapture(s.ctx.h, s.h, int(mode)))
}

// EndCapture ends the capture and returns its graph (cuStreamEndCapture).
func (s *Stream) EndCapture() (*Graph, error) {
	g, x := cEndCapture(s.ctx.h, s.h)
	if err := check("cuStreamEndCapture", x); err != nil {
		return nil, err
	}
	return &Graph{ctx: s.ctx, h: g}, nil
}

// CaptureStatus reports whether s is capturing (cuStreamIsCapturing).
func (s *Stream) CaptureStatus() (CaptureStatus, error) {
	st, x := cIsCapturing(s.ctx.h, s.h)
	return CaptureStatus(st), check("cuStreamIsCapturing", x)
}

// Graph is a CUgraph.
type Graph struct {
	ctx *Context
	h   uintptr
}

// Instantiate makes an executable graph (cuGraphInstantiateWithFlags,
// flags 0).
func (g *Graph) Instantiate() (*GraphExec, error) {
	e, x := cGraphInstantiate(g.ctx.h, g.h)
	if err := check("cuGraphInstantiateWithFlags", x); err != nil {
		return nil, err
	}
	return &GraphExec{ctx: g.ctx, h: e}, nil
}

// Nodes is the graph's node count (cuGraphGetNodes).
func (g *Graph) Nodes() (int, error) {
	n, x := cGraphNodes(g.ctx.h, g.h)
	return n, check("cuGraphGetNodes", x)
}

// Destroy destroys the graph (cuGraphDestroy).
func (g *Graph) Destroy() error { return check("cuGraphDestroy", cGraphDestroy(g.ctx.h, g.h)) }

// GraphExec is a CUgraphExec.
type GraphExec struct {
	ctx *Context
	h   uintptr
}

// Launch queues the graph on s (cuGraphLaunch).
func (e *GraphExec) Launch(s *Stream) error {
	return check("cuGraphLaunch", cGraphLaunch(e.ctx.h, e.h, s.h))
}

// Update applies g's parameters to e in place (cuGraphExecUpdate_v2). It
// returns the driver's CUgraphExecUpdateResult with the error: on
// ErrGraphUpdateFailure the result says why (2: topology changed, 3: node
// type, 4: function, 5: parameters that cannot change, 6: not supported).
func (e *GraphExec) Update(g *Graph) (int, error) {
	res, x := cGraphExecUpdate(e.ctx.h, e.h, g.h)
	return res, check("cuGraphExecUpdate_v2", x)
}

// Destroy destroys the executable graph (cuGraphExecDestroy).
func (e *GraphExec) Destroy() error {
	return check("cuGraphExecDestroy", cGraphExecDestroy(e.ctx.h, e.h))
}
