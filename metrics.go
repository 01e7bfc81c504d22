package gocuda

import (
	"expvar"
	"os"
	"slices"

	"github.com/gocuda/gocuda/config"
	"github.com/gocuda/gocuda/observe"
	"github.com/gocuda/gocuda/pool"
)

// MetricsVar is the expvar name under which every device pool's figures
// are published: a program that serves net/http's DefaultServeMux with
// expvar imported shows them at /debug/vars.
const MetricsVar = "gocuda"

// poolMetrics counts pool events from start-up, so that collections and
// out-of-memory retries before the first scrape are in the figures. It
// costs the pools' slow paths an event each and cached allocations
// nothing.
var poolMetrics = observe.NewMetrics(poolsMade)

func init() {
	// A Func: the pools' Stats are read when /debug/vars is fetched, and
	// never between fetches.
	expvar.Publish(MetricsVar, poolMetrics.Var())

	// A separate parse, not Config's: Config's is cached on first use,
	// and reading it here would fix the knobs at init, before a test's
	// or a program's Setenv. A knob that does not parse is reported by
	// every function of this package; here it only leaves logging off.
	if c, err := config.FromEnv(); err == nil && c.Debug["log"] {
		observe.EnableLog(observe.DebugLogger(os.Stderr))
	}
}

// Metrics returns the figures of every device pool made so far (Pool),
// in device order: what /debug/vars shows under MetricsVar.
func Metrics() observe.Snapshot { return poolMetrics.Snapshot() }

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
