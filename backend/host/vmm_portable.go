//go:build !linux || gocuda_portablemem

package host

import (
	"fmt"
	"slices"
	"sync"

	"github.com/gocuda/gocuda/backend"
)

// granularity matches the 2 MiB of CUDA's VMM on current GPUs, so pools see
// the same rounding on the host as on a device.
const granularity = 2 << 20

// vmm is a device's virtual memory state on the portable path, used where
// the OS has no memfd (and on Linux with the gocuda_portablemem build
// tag, so that it is tested there).
//
// Without a file to map twice, a handle cannot show the same pages at two
// addresses. A handle's bytes therefore live where it is mapped, and, while
// it is mapped nowhere, in pages of its own (its store): Map commits the
// range and copies the store in, Unmap copies the bytes out (unless the
// handle was released, when they die) and decommits the range, which
// frees its pages. A handle never mapped, or never unmapped while alive,
// has no store and costs no copy. What differs from Linux:
//
//   - A handle mapped at one address cannot be mapped at a second one
//     until it is unmapped: Map fails with ErrNotSupported.
//   - Map and Unmap of a live handle cost a copy of the mapped bytes, where
//     Linux changes page tables only.
//
// Everything else is the same: 2 MiB granularity, reservations aligned to
// it and inaccessible where nothing is mapped, fresh handles read as
// zeros, bytes kept across moves, the same validation and errors, and
// CreatePhysical charged against TotalMemory like Alloc.
type vmm struct {
	mu           sync.Mutex
	reservations []*reservation // sorted by start, disjoint
	physical     map[backend.Physical]*physical
	lastHandle   backend.Physical
}

type reservation struct {
	start backend.Ptr
	size  uint64
	// base and span are what reservePages returned, one granule more than
	// size so that start could be aligned; freePages takes them back.
	base   backend.Ptr
	span   uint64
	mapped []mapping // sorted by start, disjoint
}

// mapping is one Map call's range and the handle it maps.
type mapping struct {
	start backend.Ptr
	size  uint64
	ph    *physical
}

func (m *mapping) end() backend.Ptr { return m.start + backend.Ptr(m.size) }

// physical is one handle of size bytes.
type physical struct {
	size uint64
	// store holds the handle's bytes while it is not mapped (and those
	// past the mapped prefix while it is); 0 until the handle is first
	// unmapped alive, which means all zeros.
	store backend.Ptr
	// mapped is set while a Map shows the handle; released by
	// ReleasePhysical. The store goes once released and unmapped.
	mapped, released bool
}

func newVMM() vmm {
	return vmm{physical: make(map[backend.Physical]*physical)}
}

// dropStore frees ph's store, if it has one.
func (ph *physical) dropStore() error {
	if ph.store == 0 {
		return nil
	}
	err := freePages(ph.store, ph.size)
	ph.store = 0
	return err
}

// Granularity is 2 MiB.
func (d *Device) Granularity() uint64 { return granularity }

func (d *Device) vmmError(format string, args ...any) error {
	return fmt.Errorf("host: device %d: "+format+": %w", append(append([]any{d.ordinal}, args...), backend.ErrInvalidValue)...)
}

func granular(n uint64) bool { return n > 0 && n%granularity == 0 }

// Reserve takes size bytes of inaccessible, unbacked address space aligned
// to the granularity. The OS aligns only to pages (64 KiB on Windows), so
// it reserves one granule more and uses an aligned range inside.
func (d *Device) Reserve(size uint64) (backend.Ptr, error) {
	if !granular(size) {
		return 0, d.vmmError("Reserve of %d bytes: not a positive multiple of %d", size, granularity)
	}
	span := size + granularity
	base, err := reservePages(span)
	if err != nil {
		return 0, mmapError(d.ordinal, "Reserve", size, err)
	}
	start := (base + granularity - 1) &^ (granularity - 1)
	v := &d.vmm
	v.mu.Lock()
	defer v.mu.Unlock()
	i, _ := v.findReservation(start)
	v.reservations = slices.Insert(v.reservations, i, &reservation{start: start, size: size, base: base, span: span})
	return start, nil
}

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

// ReleaseAddress gives back a whole reservation with nothing mapped in it.
func (d *Device) ReleaseAddress(p backend.Ptr, size uint64) error {
	v := &d.vmm
	v.mu.Lock()
	defer v.mu.Unlock()
	i, ok := v.findReservation(p)
	if !ok {
		return d.vmmError("ReleaseAddress of %#x: not a reservation", uintptr(p))
	}
	r := v.reservations[i]
	switch {
	case r.size != size:
		return d.vmmError("ReleaseAddress of %#x: size %d, reserved %d", uintptr(p), size, r.size)
	case len(r.mapped) > 0:
		return d.vmmError("ReleaseAddress of %#x: %d ranges still mapped", uintptr(p), len(r.mapped))
	}
	if err := freePages(r.base, r.span); err != nil {
		return fmt.Errorf("host: device %d: ReleaseAddress of %#x: %s: %w", d.ordinal, uintptr(p), unmapCall, err)
	}
	v.reservations = slices.Delete(v.reservations, i, i+1)
	return nil
}

// CreatePhysical makes a handle of size bytes. It is bookkeeping only:
// memory is committed where the handle is mapped. Like Alloc it counts
// against TotalMemory.
func (d *Device) CreatePhysical(size uint64) (backend.Physical, error) {
	if !granular(size) {
		return 0, d.vmmError("CreatePhysical of %d bytes: not a positive multiple of %d", size, granularity)
	}
	if err := d.charge(size, "CreatePhysical"); err != nil {
		return 0, err
	}
	v := &d.vmm
	v.mu.Lock()
	defer v.mu.Unlock()
	v.lastHandle++
	v.physical[v.lastHandle] = &physical{size: size}
	return v.lastHandle, nil
}

// ReleasePhysical gives the handle's bytes back to the budget. A mapping of
// it keeps its bytes until it is unmapped; then (or now, if there is none)
// they are freed.
func (d *Device) ReleasePhysical(m backend.Physical) error {
	v := &d.vmm
	v.mu.Lock()
	defer v.mu.Unlock()
	ph, ok := v.physical[m]
	if !ok {
		return d.vmmError("ReleasePhysical of handle %d: no such handle", m)
	}
	delete(v.physical, m)
	d.uncharge(ph.size)
	ph.released = true
	if !ph.mapped {
		if err := ph.dropStore(); err != nil {
			return fmt.Errorf("host: device %d: ReleasePhysical of handle %d: %s: %w", d.ordinal, m, unmapCall, err)
		}
	}
	return nil
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

// Map maps the first size bytes of m at va, inside a reservation and over
// nothing already mapped. A handle already mapped elsewhere cannot be
// mapped again on this platform (see vmm).
func (d *Device) Map(va backend.Ptr, size uint64, m backend.Physical) error {
	if !granular(uint64(va)) || !granular(size) {
		return d.vmmError("Map of %d bytes at %#x: address and size must be multiples of %d", size, uintptr(va), granularity)
	}
	v := &d.vmm
	v.mu.Lock()
	defer v.mu.Unlock()
	ph, ok := v.physical[m]
	if !ok {
		return d.vmmError("Map of handle %d: no such handle", m)
	}
	if size > ph.size {
		return d.vmmError("Map of %d bytes of handle %d, which has %d", size, m, ph.size)
	}
	r := v.containing(va, size)
	if r == nil {
		return d.vmmError("Map of %d bytes at %#x: not inside one reservation", size, uintptr(va))
	}
	// Mappings are disjoint and sorted, so the first one ending above va
	// is the only one that can overlap [va, va+size) from below or
	// inside.
	i := r.mappingAt(va)
	if i < len(r.mapped) && r.mapped[i].start < va+backend.Ptr(size) {
		return d.vmmError("Map of %d bytes at %#x: overlaps the mapping at %#x", size, uintptr(va), uintptr(r.mapped[i].start))
	}
	if ph.mapped {
		return fmt.Errorf("host: device %d: Map of handle %d at %#x: it is mapped already, and this platform's host "+
			"backend shows a handle at one address at a time (two at once needs Linux's memfd): %w",
			d.ordinal, m, uintptr(va), backend.ErrNotSupported)
	}
	if err := commitPages(va, size); err != nil {
		return mmapError(d.ordinal, "Map", size, err)
	}
	if ph.store != 0 {
		copy(bytesAt(va, size), bytesAt(ph.store, size))
	}
	r.mapped = slices.Insert(r.mapped, i, mapping{start: va, size: size, ph: ph})
	ph.mapped = true
	return nil
}

// Unmap makes [va, va+size) inaccessible again, which must be exactly one
// or more whole mappings; the reservation stays. Live handles keep their
// bytes in their stores; released ones are freed.
func (d *Device) Unmap(va backend.Ptr, size uint64) error {
	v := &d.vmm
	v.mu.Lock()
	defer v.mu.Unlock()
	r := v.containing(va, size)
	if r == nil || size == 0 {
		return d.vmmError("Unmap of %d bytes at %#x: not inside one reservation", size, uintptr(va))
	}
	end := va + backend.Ptr(size)
	i := r.mappingAt(va)
	j := i
	for p := va; p != end; j++ {
		if j >= len(r.mapped) || r.mapped[j].start != p || r.mapped[j].end() > end {
			return d.vmmError("Unmap of %d bytes at %#x: range is not whole mappings (at %#x)", size, uintptr(va), uintptr(p))
		}
		p = r.mapped[j].end()
	}
	// Save live handles' bytes first, so that a failure leaves every
	// mapping as it was.
	for _, m := range r.mapped[i:j] {
		if m.ph.released {
			continue
		}
		if m.ph.store == 0 {
			store, err := allocPages(m.ph.size)
			if err != nil {
				return mmapError(d.ordinal, "Unmap", size, err)
			}
			m.ph.store = store
		}
		copy(bytesAt(m.ph.store, m.size), bytesAt(m.start, m.size))
	}
	d.b.forget(va, size) // the next mapping here starts with no history
	if err := decommitPages(va, size); err != nil {
		return mmapError(d.ordinal, "Unmap", size, err)
	}
	for _, m := range r.mapped[i:j] {
		m.ph.mapped = false
		if m.ph.released {
			_ = m.ph.dropStore() // the range is unmapped even if this failed
		}
	}
	r.mapped = slices.Delete(r.mapped, i, j)
	return nil
}
