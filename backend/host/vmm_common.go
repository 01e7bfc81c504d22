package host

// What the host backend's two virtual-memory paths (vmm_memfd.go on Linux,
// vmm_portable.go elsewhere) share: the granularity, validation and the
// lookups in the sorted reservations and mappings.

import (
	"fmt"
	"slices"

	"github.com/gocuda/gocuda/backend"
)

// granularity matches the 2 MiB of CUDA's VMM on current GPUs, so pools see
// the same rounding on the host as on a device.
const granularity = 2 << 20

func (m *mapping) end() backend.Ptr { return m.start + backend.Ptr(m.size) }

// Granularity is 2 MiB.
func (d *Device) Granularity() uint64 { return granularity }

func (d *Device) vmmError(format string, args ...any) error {
	return fmt.Errorf("host: device %d: "+format+": %w", append(append([]any{d.ordinal}, args...), backend.ErrInvalidValue)...)
}

func granular(n uint64) bool { return n > 0 && n%granularity == 0 }

// findReservation returns the index of the reservation starting at p, or
// where one would be inserted, and whether it exists.
func (v *vmm) findReservation(p backend.Ptr) (int, bool) {
	return slices.BinarySearchFunc(v.reservations, p, func(r *reservation, p backend.Ptr) int {
		switch {
		case r.start < p:
			return -1
		case r.start > p:
			return 1
		}
		return 0
	})
}

// containing returns the reservation holding [va, va+size), if any.
func (v *vmm) containing(va backend.Ptr, size uint64) *reservation {
	// The last reservation starting at or below va.
	i, ok := v.findReservation(va)
	if !ok {
		if i == 0 {
			return nil
		}
		i--
	}
	r := v.reservations[i]
	if off := uint64(va - r.start); off <= r.size && size <= r.size-off {
		return r
	}
	return nil
}

// mappingAt returns the index of r's first mapping that ends after va:
// the one holding va, if any, else the first above it.
func (r *reservation) mappingAt(va backend.Ptr) int {
	i, _ := slices.BinarySearchFunc(r.mapped, va, func(m mapping, va backend.Ptr) int {
		if m.end() <= va {
			return -1
		}
		return 1
	})
	return i
}
