//go:build linux && !gocuda_portablemem

package host

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gocuda/gocuda/backend"
)

// vmm is a device's virtual memory state.
//
// Physical memory is ranges of one memfd per device, the arena, mapped
// MAP_SHARED, so that two mappings of one handle alias as on CUDA.
// Creating a handle is bookkeeping only (no memfd, no ftruncate, no file
// descriptor per handle); its pages cost RAM once touched and are freed
// with FALLOC_FL_PUNCH_HOLE once the handle is released and no mapping of
// it is left, which is when CUDA frees physical memory too. (Where
// RLIMIT_FSIZE is set there is no arena: see arena.open.)
//
// A reservation is a PROT_NONE MAP_SHARED mapping of the arena at the file
// offset equal to its own address (its window), so that wherever nothing is
// mapped, address a shows arena offset a, inaccessibly. A handle gets its
// range of the arena when it is first mapped: if that range is free, the
// offset equal to the address it is mapped at ("in place"), and Map is one
// mprotect that opens the window there; otherwise a range above every
// user address ("loose"), mapped over the window with mmap. Unmap closes
// the window again: mprotect where everything in the range was in place,
// else an mmap of the window over it. Mapping memory where it was created,
// which is what pools mostly do, so costs one cheap system call, and
// adjacent in-place mappings share one kernel mapping.
//
// Reservations, each reservation's mappings and the in-place handles are
// slices sorted by address, so that finding the reservation of an address,
// checking a new mapping for overlaps, finding the mappings an Unmap covers
// and checking a range of the arena is free are binary searches, not
// scans.
type vmm struct {
	mu           sync.Mutex
	reservations []*reservation // sorted by start, disjoint
	physical     map[backend.Physical]*physical
	lastHandle   backend.Physical
	arena        arena
}

type reservation struct {
	start  backend.Ptr
	size   uint64
	mapped []mapping // sorted by start, disjoint
	// window is set when the reservation maps the arena at its own
	// address; without it (no arena, or it could not be mapped) it is
	// anonymous PROT_NONE memory and every Map is an mmap.
	window bool
}

// mapping is one Map call's range and the handle it maps.
type mapping struct {
	start backend.Ptr
	size  uint64
	ph    *physical
}

// inPlace says whether m shows its handle through its reservation's window.
func (m *mapping) inPlace() bool { return m.ph.placed && m.ph.off == uint64(m.start) }

// physical is one handle: size bytes, at offset off of file fd once
// bound.
type physical struct {
	fd        int
	off, size uint64
	// bound is set once the handle has its range of the arena (at its
	// first Map); placed when that range is the address it was first
	// mapped at, rather than a loose one.
	bound, placed bool
	// maps counts the mappings of the handle; released is set by
	// ReleasePhysical. The range goes back to the arena when both say
	// nothing uses it.
	maps     int
	released bool
}

// Arena layout: offsets below looseBase are addresses (in-place handles
// and reservation windows); loose handles take offsets from looseBase up.
// User addresses stay below 2^57 even with five-level page tables. The
// file is sparse, so its length costs nothing.
const (
	looseBase = 1 << 57
	arenaSize = 1 << 58
)

// arena is the memfd physical memory is carved from.
type arena struct {
	opened bool
	fd     int   // the arena's memfd; -1 without one
	err    error // why the memfd could not be made, if it could not
	// placed are the bound in-place handles, sorted by offset.
	placed []*physical
	// end is the lowest loose offset never handed out; free keeps loose
	// ranges given back, by size, for the next handle of that size.
	end  uint64
	free map[uint64][]uint64
}

func newVMM() vmm {
	return vmm{
		physical: make(map[backend.Physical]*physical),
		arena:    arena{fd: -1, end: looseBase, free: make(map[uint64][]uint64)},
	}
}

// open makes the arena's memfd for device d if it has none. Lengthening a
// file past RLIMIT_FSIZE raises SIGXFSZ, which kills the process, so where
// that limit is set there is no arena: every handle is a memfd of its own,
// mapped loose (from offset 0, without windows). Called with the vmm's
// lock.
func (a *arena) open(d *Device) error {
	if a.opened {
		return a.err
	}
	a.opened = true
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_FSIZE, &rl) == nil && rl.Cur != unix.RLIM_INFINITY {
		return nil
	}
	fd, err := unix.MemfdCreate("gocuda-host-physical", unix.MFD_CLOEXEC)
	if err == nil {
		if err = unix.Ftruncate(fd, arenaSize); err != nil {
			unix.Close(fd)
		}
	}
	if err != nil {
		a.err = fmt.Errorf("host: device %d: physical memory: memfd: %w", d.ordinal, err)
		return a.err
	}
	a.fd = fd
	// The device goes away with its backend; its arena's descriptor then
	// closes. Mappings keep their pages regardless.
	runtime.AddCleanup(d, func(fd int) { unix.Close(fd) }, fd)
	return nil
}

// windows says whether reservations map the arena at their addresses.
func (a *arena) windows() bool { return a.fd >= 0 }

// placedAt returns the index of the first in-place handle whose range ends
// above off.
func (a *arena) placedAt(off uint64) int {
	i, _ := slices.BinarySearchFunc(a.placed, off, func(ph *physical, off uint64) int {
		if ph.off+ph.size <= off {
			return -1
		}
		return 1
	})
	return i
}

// bind gives ph its range of the arena for a first mapping at va: in
// place if that range is free and the reservation has a window, else a
// loose one. Called with the vmm's lock.
func (a *arena) bind(ph *physical, va backend.Ptr, window bool) error {
	if !a.windows() {
		fd, err := unix.MemfdCreate("gocuda-host-physical", unix.MFD_CLOEXEC)
		if err == nil {
			if err = unix.Ftruncate(fd, int64(ph.size)); err != nil {
				unix.Close(fd)
			}
		}
		if err != nil {
			return err
		}
		ph.fd, ph.off, ph.bound = fd, 0, true
		return nil
	}
	ph.fd = a.fd
	if off := uint64(va); window && off+ph.size <= looseBase {
		i := a.placedAt(off)
		if i == len(a.placed) || a.placed[i].off >= off+ph.size {
			ph.off, ph.bound, ph.placed = off, true, true
			a.placed = slices.Insert(a.placed, i, ph)
			return nil
		}
	}
	if offs := a.free[ph.size]; len(offs) > 0 {
		ph.off = offs[len(offs)-1]
		a.free[ph.size] = offs[:len(offs)-1]
	} else {
		if a.end+ph.size > arenaSize {
			return unix.ENOMEM
		}
		ph.off = a.end
		a.end += ph.size
	}
	ph.bound = true
	return nil
}

// give returns ph's range to the arena once nothing uses it: its pages are
// freed (the range reads as zeros again) and the range is free for other
// handles. Called with the vmm's lock.
func (a *arena) give(ph *physical) error {
	switch {
	case !ph.bound:
		return nil // never mapped: it has no pages
	case ph.fd != a.fd:
		return unix.Close(ph.fd) // a memfd of its own
	}
	err := unix.Fallocate(a.fd, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, int64(ph.off), int64(ph.size))
	// Reused even if the pages could not be freed: a later handle then
	// holds them instead of leaking them.
	if ph.placed {
		i := a.placedAt(ph.off)
		a.placed = slices.Delete(a.placed, i, i+1)
	} else {
		a.free[ph.size] = append(a.free[ph.size], ph.off)
	}
	return err
}

// Reserve maps size bytes of inaccessible, unbacked address space aligned
// to the granularity. mmap only aligns to pages, so it maps one granule
// more and trims the ends; then the arena's window goes over the range.
func (d *Device) Reserve(size uint64) (backend.Ptr, error) {
	if !granular(size) {
		return 0, d.vmmError("Reserve of %d bytes: not a positive multiple of %d", size, granularity)
	}
	if err := d.b.fault(FaultReserve); err != nil {
		return 0, d.faulted(err, "Reserve of %d bytes", size)
	}
	span := size + granularity
	addr, err := unix.MmapPtr(-1, 0, nil, uintptr(span), unix.PROT_NONE,
		unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return 0, mmapError(d.ordinal, "Reserve", size, err)
	}
	base := backend.Ptr(addr)
	start := (base + granularity - 1) &^ (granularity - 1)
	if head := uint64(start - base); head > 0 {
		_ = unix.MunmapPtr(addrOf(base), uintptr(head))
	}
	if tail := uint64(base) + span - (uint64(start) + size); tail > 0 {
		_ = unix.MunmapPtr(addrOf(start+backend.Ptr(size)), uintptr(tail))
	}
	v := &d.vmm
	v.mu.Lock()
	defer v.mu.Unlock()
	r := &reservation{start: start, size: size}
	// Without a window the reservation still works, mapping everything
	// loose.
	if uint64(start)+size <= looseBase && v.arena.open(d) == nil && v.arena.windows() {
		r.window = v.mapWindow(start, size, unix.PROT_NONE) == nil
	}
	i, _ := v.findReservation(start)
	v.reservations = slices.Insert(v.reservations, i, r)
	return start, nil
}

// mapWindow maps the arena's window over [va, va+size) with prot.
func (v *vmm) mapWindow(va backend.Ptr, size uint64, prot int) error {
	_, err := unix.MmapPtr(v.arena.fd, int64(va), addrOf(va), uintptr(size), prot,
		unix.MAP_SHARED|unix.MAP_FIXED|unix.MAP_NORESERVE)
	return err
}

// ReleaseAddress unmaps a whole reservation with nothing mapped in it.
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
	switch r := v.reservations[i]; {
	case r.size != size:
		return d.vmmError("ReleaseAddress of %#x: size %d, reserved %d", uintptr(p), size, r.size)
	case len(r.mapped) > 0:
		return d.vmmError("ReleaseAddress of %#x: %d ranges still mapped", uintptr(p), len(r.mapped))
	}
	if err := unix.MunmapPtr(addrOf(p), uintptr(size)); err != nil {
		return fmt.Errorf("host: device %d: ReleaseAddress of %#x: munmap: %w", d.ordinal, uintptr(p), err)
	}
	v.reservations = slices.Delete(v.reservations, i, i+1)
	return nil
}

// CreatePhysical makes a handle of size bytes; its range of the device's
// arena is chosen when it is first mapped. Like Alloc it counts against
// TotalMemory, and its pages cost RAM only once touched.
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
	if err := v.arena.open(d); err != nil {
		d.uncharge(size)
		return 0, fmt.Errorf("host: device %d: CreatePhysical of %d bytes: %w", d.ordinal, size, err)
	}
	v.lastHandle++
	v.physical[v.lastHandle] = &physical{fd: -1, size: size}
	return v.lastHandle, nil
}

// ReleasePhysical gives the handle's bytes back to the budget. Mappings of
// it keep its pages until they are unmapped; then (or now, if there are
// none) they are freed.
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
	if ph.maps == 0 {
		if err := v.arena.give(ph); err != nil {
			return fmt.Errorf("host: device %d: ReleasePhysical of handle %d: fallocate: %w", d.ordinal, m, err)
		}
	}
	return nil
}

// Map maps the first size bytes of m at va, inside a reservation and over
// nothing already mapped.
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
	fresh := !ph.bound
	if fresh {
		if err := v.arena.bind(ph, va, r.window); err != nil {
			return mmapError(d.ordinal, "Map", size, err)
		}
	}
	var err error
	if r.window && ph.placed && ph.off == uint64(va) {
		// The window already shows the handle here: open it.
		err = unix.Mprotect(unsafe.Slice((*byte)(addrOf(va)), size), unix.PROT_READ|unix.PROT_WRITE)
	} else {
		_, err = unix.MmapPtr(ph.fd, int64(ph.off), addrOf(va), uintptr(size),
			unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_FIXED)
	}
	if err != nil {
		if fresh {
			_ = v.arena.give(ph) // unbind: the next Map chooses again
			ph.fd, ph.off, ph.bound, ph.placed = -1, 0, false, false
		}
		return mmapError(d.ordinal, "Map", size, err)
	}
	r.mapped = slices.Insert(r.mapped, i, mapping{start: va, size: size, ph: ph})
	ph.maps++
	return nil
}

// Unmap makes [va, va+size) inaccessible again, which must be exactly one
// or more whole mappings; the reservation stays. Physical memory already
// released, and now mapped nowhere, is freed.
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
	inPlace := r.window
	for p := va; p != end; j++ {
		if j >= len(r.mapped) || r.mapped[j].start != p || r.mapped[j].end() > end {
			return d.vmmError("Unmap of %d bytes at %#x: range is not whole mappings (at %#x)", size, uintptr(va), uintptr(p))
		}
		inPlace = inPlace && r.mapped[j].inPlace()
		p = r.mapped[j].end()
	}
	d.b.forget(va, size) // the next mapping here starts with no history
	var err error
	switch {
	case inPlace:
		// The window shows these handles here already: close it.
		err = unix.Mprotect(unsafe.Slice((*byte)(addrOf(va)), size), unix.PROT_NONE)
	case r.window:
		err = v.mapWindow(va, size, unix.PROT_NONE)
	default:
		_, err = unix.MmapPtr(-1, 0, addrOf(va), uintptr(size), unix.PROT_NONE,
			unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE|unix.MAP_FIXED)
	}
	if err != nil {
		return mmapError(d.ordinal, "Unmap", size, err)
	}
	for _, m := range r.mapped[i:j] {
		if m.ph.maps--; m.ph.maps == 0 && m.ph.released {
			_ = v.arena.give(m.ph) // the range is reused even if this failed
		}
	}
	r.mapped = slices.Delete(r.mapped, i, j)
	return nil
}
