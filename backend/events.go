package backend

import "sync"

// NewEvent returns a non-timing event of dev, recycled when one is spare:
// creating an event is a driver call, and pools (handing a block to
// another stream), arrays (one per buffer that moved between streams) and
// copies between devices need many short-lived ones. Give it back with
// RecycleEvent.
func NewEvent(dev Device) (Event, error) { return events.get(dev) }

// RecycleEvent keeps ev, an event of dev from NewEvent, for reuse. An
// event may be recorded again once streams have waited on it: a wait
// captures the work to wait for (CUDA semantics).
func RecycleEvent(dev Device, ev Event) { events.put(dev, ev) }

// maxSpareEvents bounds each device's spare events.
const maxSpareEvents = 1024

var events = eventCache{m: map[Device][]Event{}}

type eventCache struct {
	mu sync.Mutex
	m  map[Device][]Event
}

func (c *eventCache) get(d Device) (Event, error) {
	c.mu.Lock()
	l := c.m[d]
	if n := len(l); n > 0 {
		ev := l[n-1]
		c.m[d] = l[:n-1]
		c.mu.Unlock()
		return ev, nil
	}
	c.mu.Unlock()
	return d.NewEvent(false)
}

func (c *eventCache) put(d Device, ev Event) {
	c.mu.Lock()
	if len(c.m[d]) < maxSpareEvents {
		c.m[d] = append(c.m[d], ev)
		ev = nil
	}
	c.mu.Unlock()
	if ev != nil {
		_ = ev.Destroy()
	}
}
