package devstream

import (
	"fmt"

	"github.com/gocuda/gocuda/backend"
)

// Backend finds what b's devices offer, by its device 0 (a backend's
// devices are all of one kind), for what is made for a whole backend
// rather than on one device: NCCL's unique id, a launched job's check that
// its ranks can be processes. The errors are Device's, an error wrapping
// backend.ErrInvalidValue for a nil backend, and b.Device's for a backend
// without devices.
func Backend(b backend.Backend) (On, error) {
	if IsNil(b) {
		return On{}, fmt.Errorf("nil backend: %w", backend.ErrInvalidValue)
	}
	dev, err := b.Device(0)
	if err != nil {
		return On{}, err
	}
	return Device(dev)
}
