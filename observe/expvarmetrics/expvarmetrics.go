package expvarmetrics

import (
	"errors"
	"expvar"
	"fmt"
	"sync"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/observe"
)

// Name is the expvar name Publish uses.
const Name = "gocuda"

var (
	// mu makes a name's check and publication one step.
	mu sync.Mutex
	// published is whether Publish has published Name.
	published bool
)

// Publish publishes the figures of every device pool of the process
// (gocuda.Metrics) in expvar under Name. The figures are read when
// /debug/vars is fetched and never in between. Calling it again does
// nothing; it fails only when something else took Name first.
func Publish() error {
	mu.Lock()
	defer mu.Unlock()
	if published {
		return nil
	}
	if err := publishLocked(Name, gocuda.Metrics); err != nil {
		return err
	}
	published = true
	return nil
}

// PublishMetrics publishes m's figures in expvar under name, read when
// /debug/vars is fetched. expvar names are process-wide and cannot be
// taken back, so a name already published is an error rather than
// expvar's panic.
func PublishMetrics(name string, m *observe.Metrics) error {
	if m == nil {
		return errors.New("expvarmetrics: PublishMetrics needs Metrics (observe.NewMetrics), got nil")
	}
	mu.Lock()
	defer mu.Unlock()
	return publishLocked(name, m.Snapshot)
}

func publishLocked(name string, snapshot func() observe.Snapshot) error {
	if name == "" {
		return errors.New("expvarmetrics: the expvar name is empty; give one such as \"gocuda\"")
	}
	if expvar.Get(name) != nil {
		return fmt.Errorf("expvarmetrics: expvar name %q is already published; pick another", name)
	}
	// A Func: the pools' Stats are read when /debug/vars is fetched.
	expvar.Publish(name, expvar.Func(func() any { return snapshot() }))
	return nil
}
