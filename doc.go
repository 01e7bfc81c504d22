// Package gocuda is the entry point of a GPU array runtime for Go: it picks
// the backend (GOCUDA_BACKEND), gives each device one memory pool of the
// strategy GOCUDA_MEMORY_POOL names, with the soft and hard limits of
// GOCUDA_SOFT_MEMORY_LIMIT and GOCUDA_HARD_MEMORY_LIMIT resolved against the
// device's memory, and, when a program makes unified or pinned arrays, a
// pool of each of those kinds per device (UnifiedPool, PinnedPool). Every
// pool is made and listed in one registry: PoolStatus, MemoryStatus,
// Metrics, ReclaimAll and idle trimming see them all.
//
//	dev, err := gocuda.Device(0)
//	p, err := gocuda.Pool(0)
//	s, err := dev.NewStream()
//	b, err := p.Alloc(1<<20, s)
//	defer p.Free(b, s)
//
// The limits can be changed while the program runs, and the pools' caches
// given back, from code:
//
//	err := gocuda.SetMemoryLimit(0, config.Limit{Percent: 50}, config.Limit{Bytes: 8 << 30})
//	limits, err := gocuda.MemoryLimits(0) // in bytes, as resolved
//	err = gocuda.Collect(ctx)             // unreachable arrays' memory back in the pools
//	freed := gocuda.ReclaimAll()          // every device's cache, to the driver
//
// A knob that does not parse makes every function here return the error
// naming the variable, its value and the accepted forms; nothing is ignored.
package gocuda
