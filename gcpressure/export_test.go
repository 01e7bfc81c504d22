package gcpressure

// CollectForTest runs the out-of-memory path's collection: runtime.GC and
// the wait for its cleanups.
func CollectForTest(w *Pool) { w.collectNow() }

// ReclaimWindow is reclaimWindow: how many collections back the need
// that ReclaimAfterPacing keeps reaches.
const ReclaimWindow = reclaimWindow

// WaitBackground waits for the background collections running now, and
// the reclaims that follow them. The caller must not allocate meanwhile.
func WaitBackground(w *Pool) { w.closing.Wait() }
