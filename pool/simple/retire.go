package simple

import (
	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/pool"
)

// RetireStream gives every block cached for gone back to the driver. Its
// work has finished, so no block needs a wait first. Live blocks are not
// tied to a stream's cache here: freed later, they go to the cache of the
// stream they are freed on.
func (p *Pool) RetireStream(gone, heir backend.Stream) (uint64, error) {
	if err := pool.CheckRetire(Name, p.dev, gone, heir); err != nil {
		return 0, err
	}
	e := p.streams.Lookup(gone)
	if e == nil {
		return 0, nil
	}
	e.mu.Lock()
	taken := e.free
	e.free = make([]*pool.Block, 0, 8)
	e.mu.Unlock()
	var released uint64
	for _, b := range taken {
		if p.release(b) {
			released += b.Size
		}
	}
	p.src.NoteReclaimed(released)
	return released, nil
}
