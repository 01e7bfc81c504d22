package cuarray

import (
	"github.com/gocuda/gocuda/pool"
)

// idleStreams is how many streams the set of p holds unborrowed: at most
// MaxIdleStreams.
func idleStreams(p pool.Pool) int {
	v, ok := sets.Load(p)
	if !ok {
		return 0
	}
	t := v.(*streamSet)
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.idle)
}

// Exported for the package's external tests.
var IdleStreams = idleStreams

// WaitRetired waits until every ended stream has been retired: its work
// done, its cache given back, its backend stream destroyed.
func WaitRetired() { retiring.wait() }

// StreamsMade is how many backend streams cuarray made and has not
// destroyed yet (default streams included).
func StreamsMade() int64 { return made.Load() }

// SetScalarIndexing makes At and SetAt act as GOCUDA_SCALAR_INDEXING=mode
// until the returned function restores the knob's value.
func SetScalarIndexing(mode string) (restore func()) {
	scalarOverride.Store(&mode)
	return func() { scalarOverride.Store(nil) }
}
