package backend

import "errors"

// Capture is an optional capability of streams: recording the work queued
// on a stream into a graph instead of running it, then replaying the graph
// (CUDA's stream capture and graphs). Both backends' streams implement it;
// a stream that does not is simply not capturable (Capturable says which).
//
// One stream is captured at a time per capture: work queued on the stream
// between BeginCapture and EndCapture is recorded, in order, and does not
// run. While a stream captures, what would need its work to have run is
// refused with an error wrapping ErrCapturing and leaves the capture as it
// was: Synchronize, Query, a copy to the host (CopyDtoH), a copy from
// pageable host memory (CopyHtoD), and recording an event on it or making
// it wait on an event (a dependency across the capture's boundary).
type Capture interface {
	// BeginCapture starts recording the stream's work. A stream that is
	// capturing already, or that cannot be captured, is an error.
	BeginCapture() error
	// EndCapture stops recording and returns what was recorded. Called on
	// a stream that is not capturing it is an error.
	EndCapture() (Graph, error)
	// Capturing reports whether the stream is recording.
	Capturing() bool
}

// Graph is the work a capture recorded, not yet runnable.
type Graph interface {
	// Instantiate makes a runnable copy of the graph.
	Instantiate() (GraphExec, error)
	// Nodes is the number of operations recorded.
	Nodes() (int, error)
	// Destroy releases the graph; instances made from it live on.
	Destroy() error
}

// GraphExec is an instantiated graph: Launch queues all of its work on a
// stream as one unit.
type GraphExec interface {
	// Launch queues the graph's work on s (a stream of the same device that
	// is not capturing), ordered after the work queued on s before it.
	Launch(s Stream) error
	// Update makes the instance run g's work instead, in place, when g has
	// the same operations in the same order and only their pointers and
	// scalar arguments differ (cuGraphExecUpdate). Otherwise it returns an
	// error wrapping ErrGraphUpdate and the instance is unchanged: make a
	// new one with g.Instantiate.
	Update(g Graph) error
	// Destroy releases the instance once launches already queued are done
	// with it.
	Destroy() error
}

// Errors of capture, shared by the backends.
var (
	// ErrCapturing: an operation a capturing stream cannot record (a
	// synchronisation, a host read, a dependency on work outside the
	// capture). The capture itself is left as it was.
	ErrCapturing = errors.New("not permitted while the stream is being captured into a graph")
	// ErrGraphUpdate: GraphExec.Update cannot apply a graph whose
	// operations differ from the instance's (another count, order or
	// kind): instantiate it anew.
	ErrGraphUpdate = errors.New("the graph's operations differ from the instance's; instantiate it anew")
)

// Capturable returns s's Capture capability, or false where its backend
// cannot capture.
func Capturable(s Stream) (Capture, bool) {
	c, ok := s.(Capture)
	return c, ok
}

// Capturing reports whether s is being captured: work queued on it now is
// recorded, not run. Pools ask before they order another stream after s
// or wait for s.
func Capturing(s Stream) bool {
	if s == nil {
		return false
	}
	c, ok := s.(Capture)
	return ok && c.Capturing()
}

// DeviceCapture is implemented by devices that know whether one of their
// streams is capturing. While one is, the driver refuses (and breaks the
// capture for) a device-wide synchronisation and may for a free of
// memory, so pools keep what they would give back until the capture ends.
type DeviceCapture interface {
	// Captures is the number of the device's streams capturing now.
	Captures() int
}

// DeviceCapturing reports whether a stream of dev is capturing.
func DeviceCapturing(dev Device) bool {
	c, ok := dev.(DeviceCapture)
	return ok && c.Captures() > 0
}
