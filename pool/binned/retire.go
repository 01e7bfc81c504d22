package binned

import (
	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/pool"
)

// RetireStream gives every block cached for gone back to the driver: its
// work has finished, so none needs a wait first. Live blocks belong to no
// stream's cache; freed later, they go to the cache of the stream they are
// freed on.
func (p *Pool) RetireStream(gone, heir backend.Stream) (uint64, error) {
	if err := pool.CheckRetire(Name, p.dev, gone, heir); err != nil {
		return 0, err
	}
	e := p.streams.Lookup(gone)
	if e == nil {
		return 0, nil
	}
	var batch []*pool.Block
	e.mu.Lock()
	for c := range e.heads {
		for b := e.popClass(c); b != nil; b = e.popClass(c) {
			batch = append(batch, b)
		}
	}
	batch = append(batch, e.large...)
	clear(e.large)
	e.large = e.large[:0]
	e.mu.Unlock()
	got := p.release(batch)
	if got > 0 {
		p.src.NoteReclaimed(got)
	}
	return got, nil
}
