package gocuda

import (
	"context"
	"fmt"
	"math"

	"github.com/dustin/go-humanize"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/config"
	"github.com/gocuda/gocuda/gcpressure"
	"github.com/gocuda/gocuda/pool"
)

// Control from code: what GOCUDA_SOFT_MEMORY_LIMIT and
// GOCUDA_HARD_MEMORY_LIMIT set at start, changed while the program runs
// (PyTorch's set_per_process_memory_fraction), and the pools' caches given
// back (CUDA.jl's reclaim, PyTorch's empty_cache).

// SetMemoryLimit sets device ordinal's soft and hard limits at run time,
// each as bytes (config.Limit{Bytes: 4 << 30}), a share of the device's
// memory (config.Limit{Percent: 80}, resolved against its total memory
// now), or none (the zero Limit); config.ParseLimit reads the forms the
// variables take ("4GiB", "80%", "none").
//
// The next allocation is held to the new hard limit, and pressure (early
// collection) is measured against it. Memory the pool caches above the
// new soft limit (or the hard limit) is given back at once; live memory
// above a lowered hard limit stays live, and allocations fail with an
// out-of-memory error until enough is freed. The device's pool is made
// first if it does not exist yet. A Limit that is not valid (both fields
// set, a share outside (0, 100]) or a soft limit above the hard one is an
// error naming the value, and nothing changes.
func SetMemoryLimit(device int, soft, hard config.Limit) error {
	op := fmt.Sprintf("gocuda: SetMemoryLimit(device %d)", device)
	if err := checkLimit("soft", soft); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if err := checkLimit("hard", hard); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	p, err := Pool(device)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	total := p.Device().Info().TotalMemory
	l := pool.Limits{Soft: soft.Resolve(total), Hard: hard.Resolve(total)}
	if l.Hard > 0 && l.Soft > l.Hard {
		return fmt.Errorf("%s: soft limit %s (%d bytes) is above hard limit %s (%d bytes) of a %s device; the soft limit must be at most the hard limit: %w",
			op, described(soft, l.Soft), l.Soft, described(hard, l.Hard), l.Hard, humanize.IBytes(total), backend.ErrInvalidValue)
	}
	w, ok := gcpressure.For(p)
	if !ok {
		return fmt.Errorf("%s: pool %s has no pressure layer to set limits on: %w", op, p.Name(), backend.ErrNotSupported)
	}
	if err := w.SetLimits(l); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	// What a free would give back above the soft limit, given back now.
	st := p.Stats()
	keep := l.Soft
	if keep == 0 || (l.Hard > 0 && l.Hard < keep) {
		keep = l.Hard
	}
	if keep > 0 && st.Reserved > keep {
		p.Reclaim(st.Reserved - keep)
	}
	return nil
}

// MemoryLimits returns device ordinal's soft and hard limits in force, in
// bytes (0: none), making the device's pool if it does not exist yet.
func MemoryLimits(device int) (pool.Limits, error) {
	p, err := Pool(device)
	if err != nil {
		return pool.Limits{}, fmt.Errorf("gocuda: MemoryLimits(device %d): %w", device, err)
	}
	st := p.Stats()
	return pool.Limits{Soft: st.SoftLimit, Hard: st.HardLimit}, nil
}

// checkLimit rejects a Limit with both fields set or a share outside
// (0, 100].
func checkLimit(which string, l config.Limit) error {
	switch {
	case l.Bytes > 0 && l.Percent != 0:
		return fmt.Errorf("%s limit has both Bytes (%d) and Percent (%g) set; set one (or neither, for no limit): %w", which, l.Bytes, l.Percent, backend.ErrInvalidValue)
	case math.IsNaN(l.Percent) || l.Percent < 0 || l.Percent > 100:
		return fmt.Errorf("%s limit Percent is %g; a share of the device must be in (0, 100], or 0 for none: %w", which, l.Percent, backend.ErrInvalidValue)
	}
	return nil
}

// described is "50% (8.0 GiB)" for a share, "1.0 GiB" for bytes.
func described(l config.Limit, resolved uint64) string {
	if l.Percent > 0 {
		return fmt.Sprintf("%s (%s)", l, humanize.IBytes(resolved))
	}
	return l.String()
}

// Collect runs a full garbage collection and waits until the cleanups it
// queued have run, so that the device memory of every array that was
// unreachable is back in its pool: PoolStatus, MemoryStatus and a leak
// report then show only what the program still references, and
// ReclaimAll can give that memory back to the driver. runtime.GC alone
// returns before those cleanups run. This is Julia's GC.gc() before
// CUDA.reclaim(), Python's gc.collect() before
// torch.cuda.empty_cache(). It returns ctx's error if ctx ends first;
// see gcpressure.Collect.
func Collect(ctx context.Context) error { return gcpressure.Collect(ctx) }

// ReclaimAll gives what every pool caches back to the driver, as
// CUDA.jl's reclaim() and PyTorch's empty_cache() do, and returns the
// bytes given back: each device's pool, and its unified and pinned memory
// pools where the program made arrays of those kinds. Live arrays keep
// their memory; memory whose frees are still queued behind unfinished
// work on a stream may stay cached. Only pools made so far are asked
// (those of devices the program has used).
func ReclaimAll() uint64 {
	var n uint64
	for _, p := range allPools() {
		n += p.Reclaim(pool.All)
	}
	return n
}
