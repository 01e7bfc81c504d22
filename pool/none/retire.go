package none

import (
	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/pool"
)

// RetireStream has nothing to do: the pool caches nothing for any stream.
func (p *Pool) RetireStream(gone, heir backend.Stream) (uint64, error) {
	return 0, pool.CheckRetire(Name, p.dev, gone, heir)
}
