package gcpressure

// CollectForTest runs the out-of-memory path's collection: runtime.GC and
// the wait for its cleanups.
func CollectForTest(w *Pool) { w.collectNow() }

// ReclaimWindow is reclaimWindow: how many collections back the need
// that ReclaimAfterPacing keeps reaches.
const ReclaimWindow = reclaimWindow
