package gocuda

import (
	"os"
	"slices"
	"sync"

	"github.com/gocuda/gocuda/observe"
	"github.com/gocuda/gocuda/pool"
)

// poolMetrics counts pool events from the first device pool on (Pool
// makes it before the pool), so that collections and out-of-memory
// retries before the first scrape are in the figures. It costs the pools'
// slow paths an event each and cached allocations nothing. It is made on
// first use, not at init: importing the package subscribes to nothing.
var poolMetrics = sync.OnceValue(func() *observe.Metrics { return observe.NewMetrics(poolsMade) })

// debugLog turns GOCUDA_DEBUG=log's debug lines on when the first device
// pool is made, the first moment there is anything to log; reading the
// knob then rather than at init also lets a program Setenv it first.
var debugLog sync.Once

func startDebugLog(debug map[string]bool) {
	debugLog.Do(func() {
		if debug["log"] {
			observe.EnableLog(observe.DebugLogger(os.Stderr))
		}
	})
}

// Metrics returns the figures of every device pool made so far (Pool),
// in device order. observe/expvarmetrics publishes them at /debug/vars.
func Metrics() observe.Snapshot { return poolMetrics().Snapshot() }

// StartTimeline starts recording the memory of every device pool of the
// process into a new Timeline, pools made later included: the sampler
// picks them up on its next tick. Stop it when done, then draw it with
// observe/timelinesvg:
//
//	tl, err := gocuda.StartTimeline(observe.TimelineOptions{})
//	...
//	tl.Stop()
//	err = timelinesvg.WriteTimeline(f, tl, "training")
func StartTimeline(opt observe.TimelineOptions) (*observe.Timeline, error) {
	tl, err := observe.NewTimeline(opt)
	if err != nil {
		return nil, err
	}
	// Events of devices without a pool yet are kept too: a pool made
	// between two ticks emits its first growth before the sampler sees it.
	if err := tl.StartFunc(poolsMade, false); err != nil {
		return nil, err
	}
	return tl, nil
}

// poolsMade lists the device pools made so far, in device order.
func poolsMade() []pool.Pool {
	pools.Lock()
	defer pools.Unlock()
	ords := make([]int, 0, len(pools.m))
	for o := range pools.m {
		ords = append(ords, o)
	}
	slices.Sort(ords)
	ps := make([]pool.Pool, len(ords))
	for i, o := range ords {
		ps[i] = pools.m[o]
	}
	return ps
}
