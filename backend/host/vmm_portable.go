//go:build !linux || gocuda_portablemem

package host

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/gocuda/gocuda/backend"
)

// vmm is a device's virtual memory state on the portable path, used where
// the OS has no memfd (and on Linux with the gocuda_portablemem build
// tag, so that it is tested there).
//
// Without a file to map twice, a handle cannot show the same pages at two
// addresses, so its bytes live in one place at a time:
//
//   - mapped: in the committed range it is mapped at;
//   - parked: where it was last mapped, that range made inaccessible by
//     Unmap but not freed, so that mapping it there again, or releasing
//     it, costs one system call and no copy (pools do both);
//   - otherwise in pages of its own, its store, made when needed.
//
// A handle moves to its store when it is mapped somewhere else, when a
// Map covers its parked range, or when its reservation is released: those
// cost a copy of its bytes, where Linux only changes page tables. A store
// is made only then, so a handle never moved has none. What else differs
// from Linux: a handle mapped at one address cannot be mapped at a second
// one until it is unmapped; Map then fails with ErrNotSupported.
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
	// parked are the handles parked here, sorted by address, disjoint
	// from each other and from mapped.
	parked []*physical
}

// mapping is one Map call's range and the handle it maps.
type mapping struct {
	start backend.Ptr
	size  uint64
	ph    *physical
}

// physical is one handle of size bytes.
type physical struct {
	size uint64
	// store holds the bytes not mapped or parked; 0 while there is none,
	// which means they are all zeros.
	store backend.Ptr
	// at and n are the range holding the handle's first n bytes while it
	// is mapped or parked, in reservation in; in is nil otherwise.
	at backend.Ptr
	n  uint64
	in *reservation
	// mapped is set while a Map shows the handle (in is then set too);
	// released by ReleasePhysical.
	mapped, released bool
}

func newVMM() vmm {
	return vmm{physical: make(map[backend.Physical]*physical)}
}

// parkedAt returns the index of r's first parked handle whose range ends
// above va.
func (r *reservation) parkedAt(va backend.Ptr) int {
	i, _ := slices.BinarySearchFunc(r.parked, va, func(ph *physical, va backend.Ptr) int {
		if ph.at+backend.Ptr(ph.n) <= va {
			return -1
		}
		return 1
	})
	return i
}

// unpark forgets that ph is parked in its reservation.
func (ph *physical) unpark() {
	r := ph.in
	i := r.parkedAt(ph.at)
	r.parked = slices.Delete(r.parked, i, i+1)
	ph.in = nil
}

// evict moves a parked handle's bytes to its store and frees its range.
func (ph *physical) evict() error {
	fresh := ph.store == 0
	if fresh {
		store, err := allocPages(ph.size)
		if err != nil {
			return err
		}
		ph.store = store
	}
	if err := protectPages(ph.at, ph.n, true); err != nil {
		return err
	}
	if fresh {
		copyToZeros(bytesAt(ph.store, ph.n), bytesAt(ph.at, ph.n))
	} else {
		copy(bytesAt(ph.store, ph.n), bytesAt(ph.at, ph.n))
	}
	if err := decommitPages(ph.at, ph.n); err != nil {
		return err
	}
	ph.unpark()
	return nil
}

// free gives back a released handle's memory once nothing maps it: its
// parked range and its store.
func (ph *physical) free() error {
	var err error
	if ph.in != nil {
		err = decommitPages(ph.at, ph.n)
		ph.unpark()
	}
	if ph.store != 0 {
		err = errors.Join(err, freePages(ph.store, ph.size))
		ph.store = 0
	}
	return err
}

// Reserve takes size bytes of inaccessible, unbacked address space aligned
// to the granularity. The OS aligns only to pages (64 KiB on Windows), so
// it reserves one granule more and uses an aligned range inside.
func (d *Device) Reserve(size uint64) (backend.Ptr, error) {
	if !granular(size) {
		return 0, d.vmmError("Reserve of %d bytes: not a positive multiple of %d", size, granularity)
	}
	if err := d.b.fault(FaultReserve); err != nil {
		return 0, d.faulted(err, "Reserve of %d bytes", size)
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

// ReleaseAddress gives back a whole reservation with nothing mapped in it.
func (d *Device) ReleaseAddress(p backend.Ptr, size uint64) error {
	if err := d.b.fault(FaultFree); err != nil {
		return d.faulted(err, "ReleaseAddress of %#x", uintptr(p))
	}
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
	for len(r.parked) > 0 {
		if err := r.parked[0].evict(); err != nil {
			return mmapError(d.ordinal, "ReleaseAddress", size, err)
		}
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
	if err := d.b.fault(FaultAlloc); err != nil {
		return 0, d.faulted(err, "CreatePhysical of %d bytes", size)
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
	if err := d.b.fault(FaultFree); err != nil {
		return d.faulted(err, "ReleasePhysical of handle %d", m)
	}
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
		if err := ph.free(); err != nil {
			return fmt.Errorf("host: device %d: ReleasePhysical of handle %d: %s: %w", d.ordinal, m, unmapCall, err)
		}
	}
	return nil
}

// Map maps the first size bytes of m at va, inside a reservation and over
// nothing already mapped. A handle already mapped elsewhere cannot be
// mapped again on this platform (see vmm).
func (d *Device) Map(va backend.Ptr, size uint64, m backend.Physical) error {
	if !granular(uint64(va)) || !granular(size) {
		return d.vmmError("Map of %d bytes at %#x: address and size must be multiples of %d", size, uintptr(va), granularity)
	}
	if err := d.b.fault(FaultMap); err != nil {
		return d.faulted(err, "Map of %d bytes at %#x", size, uintptr(va))
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
	if err := v.place(ph, r, va, size); err != nil {
		return mmapError(d.ordinal, "Map", size, err)
	}
	r.mapped = slices.Insert(r.mapped, i, mapping{start: va, size: size, ph: ph})
	ph.mapped, ph.in, ph.at, ph.n = true, r, va, size
	return nil
}

// place puts the first size bytes of ph at va in r, committed: with one
// system call if ph is parked there, else by committing the range (and
// evicting whatever is parked in it) and copying ph's bytes in.
func (v *vmm) place(ph *physical, r *reservation, va backend.Ptr, size uint64) error {
	if ph.in == r && ph.at == va && ph.n == size {
		if err := protectPages(va, size, true); err != nil {
			return err
		}
		ph.unpark()
		return nil
	}
	end := va + backend.Ptr(size)
	// Parked elsewhere with as many bytes as are wanted here, ph moves
	// straight over; else through its store.
	direct := ph.in != nil && ph.n == size && (ph.at >= end || ph.at+backend.Ptr(ph.n) <= va)
	if ph.in != nil && !direct {
		if err := ph.evict(); err != nil {
			return err
		}
	}
	for j := r.parkedAt(va); j < len(r.parked) && r.parked[j].at < end; {
		if err := r.parked[j].evict(); err != nil { // removes it from r.parked
			return err
		}
	}
	if err := commitPages(va, size); err != nil {
		return err
	}
	switch {
	case direct:
		if err := protectPages(ph.at, ph.n, true); err != nil {
			_ = decommitPages(va, size)
			return err
		}
		copyToZeros(bytesAt(va, size), bytesAt(ph.at, size))
		err := decommitPages(ph.at, ph.n)
		ph.unpark()
		return err
	case ph.store != 0:
		copyToZeros(bytesAt(va, size), bytesAt(ph.store, size))
	}
	return nil
}

// zeroBlock is what copyToZeros compares with.
var zeroBlock [4096]byte

// copyToZeros copies src to dst, which reads as zeros, skipping the 4 KiB
// blocks of src that are zeros too. Memory a pool moves is often memory
// nobody wrote: reading it costs little, while writing it would make the
// OS back every page of dst.
func copyToZeros(dst, src []byte) {
	for off := 0; off < len(src); off += len(zeroBlock) {
		end := min(off+len(zeroBlock), len(src))
		if !bytes.Equal(src[off:end], zeroBlock[:end-off]) {
			copy(dst[off:end], src[off:end])
		}
	}
}

// Unmap makes [va, va+size) inaccessible again, which must be exactly one
// or more whole mappings; the reservation stays. Live handles stay parked
// there with their bytes; released ones are freed.
func (d *Device) Unmap(va backend.Ptr, size uint64) error {
	if err := d.b.fault(FaultUnmap); err != nil {
		return d.faulted(err, "Unmap of %d bytes at %#x", size, uintptr(va))
	}
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
	d.b.forget(va, size) // the next mapping here starts with no history
	// Live handles are parked, released ones freed, one mapping at a time;
	// one that fails stays mapped, and so do those after it.
	for k := i; k < j; k++ {
		m := r.mapped[k]
		var err error
		if m.ph.released {
			err = decommitPages(m.start, m.size)
		} else {
			err = protectPages(m.start, m.size, false)
		}
		if err != nil {
			r.mapped = slices.Delete(r.mapped, i, k)
			return mmapError(d.ordinal, "Unmap", size, err)
		}
		m.ph.mapped = false
		if m.ph.released {
			m.ph.in = nil
			_ = m.ph.free() // its store, if it has one; the range is unmapped even if this failed
		} else {
			r.parked = slices.Insert(r.parked, r.parkedAt(m.start), m.ph)
		}
	}
	r.mapped = slices.Delete(r.mapped, i, j)
	return nil
}
