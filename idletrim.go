package gocuda

import (
	"sync"
	"time"

	"github.com/gocuda/gocuda/pool"
)

// Idle trimming (GOCUDA_IDLE_TRIM), as CUDA.jl does for interactive
// sessions: a pool that served no allocation and no free for the period
// gives everything it caches back to the driver, so that a notebook or a
// service between bursts does not hold device memory other programs on
// the card could use. A pool in use is never trimmed for idleness: the
// next burst would only map the memory again.

// idleTrimmer watches the pools for idleness: every pool of the
// registry, of every kind of memory.
type idleTrimmer struct {
	period time.Duration
	// seen is each pool's allocations plus frees at the last check and
	// when that count last changed.
	seen map[pool.Pool]activity
}

type activity struct {
	ops   uint64
	since time.Time
}

// check trims the pools idle for the period at now and returns the bytes
// given back.
func (t *idleTrimmer) check(now time.Time, ps []pool.Pool) uint64 {
	var got uint64
	for _, p := range ps {
		st := p.Stats()
		ops := st.Allocs + st.Frees
		a, ok := t.seen[p]
		if !ok || a.ops != ops {
			t.seen[p] = activity{ops, now}
			continue
		}
		if now.Sub(a.since) >= t.period && st.Reserved > st.Live {
			got += p.Reclaim(pool.All)
			// Trimmed: the next trim needs another idle period.
			t.seen[p] = activity{ops, now}
		}
	}
	return got
}

var idleTrim sync.Once

// startIdleTrim starts the trimming goroutine once, at the first pool a
// program makes with GOCUDA_IDLE_TRIM set (never at import). It checks four
// times a period, so a pool is trimmed between one and 1.25 periods after
// its last use; a check costs one Stats per pool.
func startIdleTrim(period time.Duration) {
	if period <= 0 {
		return
	}
	idleTrim.Do(func() {
		t := &idleTrimmer{period: period, seen: map[pool.Pool]activity{}}
		go func() {
			tick := time.NewTicker(period / 4)
			defer tick.Stop()
			for now := range tick.C {
				t.check(now, allPools())
			}
		}()
	})
}
