package gocuda

import (
	"cmp"
	"fmt"
	"slices"
	"sync"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/config"
	"github.com/gocuda/gocuda/gcpressure"
	"github.com/gocuda/gocuda/memprof"
	"github.com/gocuda/gocuda/pool"
)

// The registry of pools. Every pool this package makes, of every kind of
// memory (pool.Memories) on every device, is made by makePool, which
// applies the layers of layersOf in one order, and is listed in pools,
// which everything that reads or acts on pools walks: PoolStatus,
// MemoryStatus, Metrics, ReclaimAll, idle trimming. A new kind of memory
// is a pool.Memory (with pool.MemoryDevice's case) and a row of layersOf.

// layers says which layers a kind of memory's pool gets beyond those every
// pool gets (the pressure layer's out-of-memory retry, leak tracing, the
// registry's listing).
type layers struct {
	// strategy is the pool strategy; "" is GOCUDA_MEMORY_POOL's.
	strategy string
	// limits: GOCUDA_SOFT_MEMORY_LIMIT and GOCUDA_HARD_MEMORY_LIMIT apply
	// (and SetMemoryLimit).
	limits bool
	// early: the pressure layer collects early and paces
	// (GOCUDA_GC_EARLY, GOCUDA_GC_PERCENT) against the device's limit.
	early bool
	// record: GOCUDA_TRACE records the pool's allocations. The trace is
	// of device memory, which gocuda replay serves through device pools.
	record bool
}

// layersOf is each kind's layers. Unified and pinned memory are outside
// the device's limits (pinned memory is the host's; unified memory is
// never asked for beyond what the device has free), so neither limits nor
// early collection, which measures device memory against them, apply; an
// allocation that fails still climbs the out-of-memory ladder (give the
// cache back, collect, synchronize), since dropped arrays of those kinds
// come back only through the collector too.
var layersOf = [...]layers{
	pool.DeviceMemory: {limits: true, early: true, record: true},
	// "simple" hands back the smallest cached block that fits; unified
	// and pinned arrays are few and large, and cuMemAllocManaged and
	// cuMemAllocHost cost tens of microseconds to milliseconds (pinning
	// pages), so every array must not pay them.
	pool.UnifiedMemory: {strategy: "simple"},
	pool.PinnedMemory:  {strategy: "simple"},
}

// registered is one pool of the registry.
type registered struct {
	device int
	memory pool.Memory
	pool   pool.Pool
}

var pools struct {
	sync.Mutex
	m map[poolKey]pool.Pool
}

type poolKey struct {
	device int
	memory pool.Memory
}

// The presentation's part in making pools, which its files (status.go,
// metrics.go) set from init so that the wiring names nothing of theirs.
var (
	// outOfMemoryStatus describes device ordinal's pools in the error of
	// an allocation that fails for good.
	outOfMemoryStatus = func(ordinal int) string { return "" }
	// beforeFirstPool run once, before the first pool is made, so that
	// what they start (metrics' event counts) sees its first events.
	beforeFirstPool []func(config.Config)
	firstPool       sync.Once
)

// Pool returns device ordinal's pool of device memory, made on first use.
func Pool(ordinal int) (pool.Pool, error) { return poolOf(ordinal, pool.DeviceMemory) }

// UnifiedPool returns device ordinal's pool of unified memory (what
// cuarray.NewUnified allocates from), made on first use, after the
// device's pool. It caches what it gives back; PoolStatus lists it under
// the device, ReclaimAll and idle trimming empty it. It is outside the
// device's limits. A device without unified memory is an error wrapping
// backend.ErrNotSupported.
func UnifiedPool(ordinal int) (pool.Pool, error) { return poolOf(ordinal, pool.UnifiedMemory) }

// PinnedPool returns device ordinal's pool of pinned (page-locked) host
// memory (what cuarray.NewPinned allocates from), made on first use, as
// UnifiedPool is.
func PinnedPool(ordinal int) (pool.Pool, error) { return poolOf(ordinal, pool.PinnedMemory) }

func poolOf(ordinal int, m pool.Memory) (pool.Pool, error) {
	if m != pool.DeviceMemory {
		// The device's pool first: a device's other pools are shown
		// under it, and its making checks the knobs and the device.
		if _, err := Pool(ordinal); err != nil {
			return nil, err
		}
	}
	k := poolKey{ordinal, m}
	pools.Lock()
	defer pools.Unlock()
	if p := pools.m[k]; p != nil {
		return p, nil
	}
	c, err := cfg()
	if err != nil {
		return nil, err
	}
	firstPool.Do(func() {
		for _, f := range beforeFirstPool {
			f(c)
		}
	})
	p, err := makePool(c, ordinal, m)
	if err != nil {
		return nil, err
	}
	if pools.m == nil {
		pools.m = map[poolKey]pool.Pool{}
	}
	pools.m[k] = p
	startIdleTrim(c.IdleTrim)
	return p, nil
}

// makePool makes device ordinal's pool of memory m with its layers, from
// the inside out: the strategy; the recording (so that the trace holds
// what the strategy served, retries once); the pressure layer; leak
// tracing outermost, so that its stacks start at the caller rather than
// in gcpressure.
func makePool(c config.Config, ordinal int, m pool.Memory) (pool.Pool, error) {
	dev, err := Device(ordinal)
	if err != nil {
		return nil, err
	}
	lay := layersOf[m]
	var p pool.Pool
	if lay.limits {
		// Checked here rather than left to pool.New, so that the error
		// names the variables and their values, not only the bytes they
		// came to.
		if _, _, err := c.ResolveLimits(dev.Info().TotalMemory, ordinal); err != nil {
			return nil, fmt.Errorf("gocuda: device %d: %w", ordinal, err)
		}
	}
	if lay.strategy == "" {
		if p, err = pool.New(c.Pool, dev, LimitsFor(c, dev)); err != nil {
			return nil, fmt.Errorf("gocuda: %s=%s on device %d: %w", config.EnvPool, c.Pool, ordinal, err)
		}
	} else {
		md, err := pool.MemoryDevice(dev, m)
		if err != nil {
			return nil, fmt.Errorf("gocuda: %w", err)
		}
		if p, err = pool.New(lay.strategy, md, pool.Limits{}); err != nil {
			return nil, fmt.Errorf("gocuda: %s memory pool on device %d: %w", m, ordinal, err)
		}
	}
	if lay.record {
		p = wrapTrace(p, c) // GOCUDA_TRACE; p itself when unset
	}
	w, err := gcpressure.Wrap(p, gcpressure.Options{Early: lay.early && c.GCEarly, GCPercent: c.GCPercent,
		// An allocation that fails for good says what the device holds,
		// as PoolStatus prints it, for this device only.
		Status: func() string { return outOfMemoryStatus(ordinal) }})
	if err != nil {
		_ = p.Close() // nothing allocated from it yet
		return nil, fmt.Errorf("gocuda: device %d: %w", ordinal, err)
	}
	return memprof.Wrap(w), nil // leak tracing and Allocated see every array's memory
}

// poolsMade lists the pools made so far, by device and, within a device,
// in pool.Memories' order (device memory first).
func poolsMade() []registered {
	pools.Lock()
	out := make([]registered, 0, len(pools.m))
	for k, p := range pools.m {
		out = append(out, registered{k.device, k.memory, p})
	}
	pools.Unlock()
	slices.SortFunc(out, func(a, b registered) int {
		return cmp.Or(cmp.Compare(a.device, b.device), cmp.Compare(a.memory, b.memory))
	})
	return out
}

// allPools is every pool made so far, in poolsMade's order.
func allPools() []pool.Pool {
	var ps []pool.Pool
	for _, r := range poolsMade() {
		ps = append(ps, r.pool)
	}
	return ps
}

// LimitsFor resolves the configured limits against dev's memory.
func LimitsFor(c config.Config, dev backend.Device) pool.Limits {
	total := dev.Info().TotalMemory
	return pool.Limits{Soft: c.SoftLimit.Resolve(total), Hard: c.HardLimit.Resolve(total)}
}
