package cuda

import (
	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/pool"
)

// RetireStream has nothing to give back: the driver's pool caches memory
// for the device, not per stream, and frees that wait on gone's work were
// queued on gone, which has finished it. The stream's spare block structs
// stay for the next stream with its ID.
func (p *Pool) RetireStream(gone, heir backend.Stream) (uint64, error) {
	return 0, pool.CheckRetire("cuda", p.dev, gone, heir)
}
