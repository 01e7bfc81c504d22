package gocuda

import (
	"os"
	"sync"

	"github.com/gocuda/gocuda/config"
	"github.com/gocuda/gocuda/observe"
	"github.com/gocuda/gocuda/pool"
)

// Metrics, debug logs and the timeline: presentation, reading the
// registry (pools.go). Nothing here is called by the wiring: the event
// counts and the debug log start from beforeFirstPool, which this file
// fills.

func init() {
	beforeFirstPool = append(beforeFirstPool, func(c config.Config) {
		poolMetrics()
		startDebugLog(c.Debug)
	})
}

// poolMetrics counts pool events from the first pool on (beforeFirstPool
// makes it before the pool), so that collections and out-of-memory
// retries before the first scrape are in the figures. It costs the pools'
// slow paths an event each and cached allocations nothing. It is made on
// first use, not at init: importing the package subscribes to nothing.
var poolMetrics = sync.OnceValue(func() *observe.Metrics { return observe.NewMetrics(allPools) })

// debugLog turns GOCUDA_DEBUG=log's debug lines on when the first pool is
// made, the first moment there is anything to log; reading the knob then
// rather than at init also lets a program Setenv it first.
var debugLog sync.Once

func startDebugLog(debug map[string]bool) {
	debugLog.Do(func() {
		if debug["log"] {
			observe.EnableLog(observe.DebugLogger(os.Stderr))
		}
	})
}

// Metrics returns the figures of every pool made so far (Pool, and the
// unified and pinned pools, with Figures.Memory saying which), in device
// order. observe/expvarmetrics publishes them at /debug/vars.
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
//
// It draws device memory, a line a device: unified and pinned memory are
// outside the device's limits (Metrics and PoolStatus show them).
func StartTimeline(opt observe.TimelineOptions) (*observe.Timeline, error) {
	tl, err := observe.NewTimeline(opt)
	if err != nil {
		return nil, err
	}
	// Events of devices without a pool yet are kept too: a pool made
	// between two ticks emits its first growth before the sampler sees it.
	if err := tl.StartFunc(devicePools, false); err != nil {
		return nil, err
	}
	return tl, nil
}

// devicePools lists the pools of device memory made so far, in device
// order.
func devicePools() []pool.Pool {
	var ps []pool.Pool
	for _, r := range poolsMade() {
		if r.memory == pool.DeviceMemory {
			ps = append(ps, r.pool)
		}
	}
	return ps
}
