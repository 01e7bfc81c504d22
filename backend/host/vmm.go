package host

import (
	"fmt"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/gocuda/gocuda/backend"
)

// granularity matches the 2 MiB of CUDA's VMM on current GPUs, so pools see
// the same rounding on the host as on a device.
const granularity = 2 << 20

// vmm is a device's virtual memory state. Reservations are PROT_NONE
// mappings; physical memory is a memfd per handle, mapped MAP_SHARED into
// reservations, so that two mappings of one handle alias as on CUDA.
type vmm struct {
	mu           sync.Mutex
	reservations map[backend.Ptr]*reservation // by start address
	physical     map[backend.Physical]physical
	lastHandle   backend.Physical
}

type reservation struct {
	size   uint64
	mapped map[backend.Ptr]uint64 // mapping start -> size
}

type physical struct {
	fd   int
	size uint64
}

func newVMM() vmm {
	return vmm{
		reservations: make(map[backend.Ptr]*reservation),
		physical:     make(map[backend.Physical]physical),
	}
}

// Granularity is 2 MiB.
func (d *Device) Granularity() uint64 { return granularity }

func (d *Device) vmmError(format string, args ...any) error {
	return fmt.Errorf("host: device %d: "+format+": %w", append(append([]any{d.ordinal}, args...), backend.ErrInvalidValue)...)
}

func granular(n uint64) bool { return n > 0 && n%granularity == 0 }

// Reserve maps size bytes of inaccessible, unbacked address space aligned
// to the granularity. mmap only aligns to pages, so it maps one granule
// more and trims the ends.
func (d *Device) Reserve(size uint64) (backend.Ptr, error) {
	if !granular(size) {
		return 0, d.vmmError("Reserve of %d bytes: not a positive multiple of %d", size, granularity)
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
	d.vmm.mu.Lock()
	d.vmm.reservations[start] = &reservation{size: size, mapped: make(map[backend.Ptr]uint64)}
	d.vmm.mu.Unlock()
	return start, nil
}

// ReleaseAddress unmaps a whole reservation with nothing mapped in it.
func (d *Device) ReleaseAddress(p backend.Ptr, size uint64) error {
	v := &d.vmm
	v.mu.Lock()
	defer v.mu.Unlock()
	r, ok := v.reservations[p]
	switch {
	case !ok:
		return d.vmmError("ReleaseAddress of %#x: not a reservation", uintptr(p))
	case r.size != size:
		return d.vmmError("ReleaseAddress of %#x: size %d, reserved %d", uintptr(p), size, r.size)
	case len(r.mapped) > 0:
		return d.vmmError("ReleaseAddress of %#x: %d ranges still mapped", uintptr(p), len(r.mapped))
	}
	if err := unix.MunmapPtr(addrOf(p), uintptr(size)); err != nil {
		return fmt.Errorf("host: device %d: ReleaseAddress of %#x: munmap: %w", d.ordinal, uintptr(p), err)
	}
	delete(v.reservations, p)
	return nil
}

// CreatePhysical makes a memfd of size bytes. Like Alloc it counts against
// TotalMemory, and its pages cost RAM only once touched.
func (d *Device) CreatePhysical(size uint64) (backend.Physical, error) {
	if !granular(size) {
		return 0, d.vmmError("CreatePhysical of %d bytes: not a positive multiple of %d", size, granularity)
	}
	if err := d.charge(size, "CreatePhysical"); err != nil {
		return 0, err
	}
	fd, err := unix.MemfdCreate("gocuda-host-physical", unix.MFD_CLOEXEC)
	if err == nil {
		if err = unix.Ftruncate(fd, int64(size)); err != nil {
			unix.Close(fd)
		}
	}
	if err != nil {
		d.uncharge(size)
		return 0, fmt.Errorf("host: device %d: CreatePhysical of %d bytes: memfd: %w", d.ordinal, size, err)
	}
	v := &d.vmm
	v.mu.Lock()
	defer v.mu.Unlock()
	v.lastHandle++
	v.physical[v.lastHandle] = physical{fd: fd, size: size}
	return v.lastHandle, nil
}

// ReleasePhysical closes the memfd and gives its bytes back to the budget.
// Mappings of it keep its pages until they are unmapped.
func (d *Device) ReleasePhysical(m backend.Physical) error {
	v := &d.vmm
	v.mu.Lock()
	ph, ok := v.physical[m]
	delete(v.physical, m)
	v.mu.Unlock()
	if !ok {
		return d.vmmError("ReleasePhysical of handle %d: no such handle", m)
	}
	d.uncharge(ph.size)
	if err := unix.Close(ph.fd); err != nil {
		return fmt.Errorf("host: device %d: ReleasePhysical of handle %d: close: %w", d.ordinal, m, err)
	}
	return nil
}

// containing returns the reservation holding [va, va+size), if any.
// Reservations are few, so a scan is fine.
func (v *vmm) containing(va backend.Ptr, size uint64) *reservation {
	for start, r := range v.reservations {
		if va >= start && uint64(va-start) <= r.size && size <= r.size-uint64(va-start) {
			return r
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
	for start, n := range r.mapped {
		if va < start+backend.Ptr(n) && start < va+backend.Ptr(size) {
			return d.vmmError("Map of %d bytes at %#x: overlaps the mapping at %#x", size, uintptr(va), uintptr(start))
		}
	}
	_, err := unix.MmapPtr(ph.fd, 0, addrOf(va), uintptr(size),
		unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_FIXED)
	if err != nil {
		return mmapError(d.ordinal, "Map", size, err)
	}
	r.mapped[va] = size
	return nil
}

// Unmap puts inaccessible address space back over [va, va+size), which
// must be exactly one or more whole mappings; the reservation stays.
func (d *Device) Unmap(va backend.Ptr, size uint64) error {
	v := &d.vmm
	v.mu.Lock()
	defer v.mu.Unlock()
	r := v.containing(va, size)
	if r == nil || size == 0 {
		return d.vmmError("Unmap of %d bytes at %#x: not inside one reservation", size, uintptr(va))
	}
	end := va + backend.Ptr(size)
	for p := va; p != end; {
		n, ok := r.mapped[p]
		if !ok || p+backend.Ptr(n) > end {
			return d.vmmError("Unmap of %d bytes at %#x: range is not whole mappings (at %#x)", size, uintptr(va), uintptr(p))
		}
		p += backend.Ptr(n)
	}
	_, err := unix.MmapPtr(-1, 0, addrOf(va), uintptr(size), unix.PROT_NONE,
		unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE|unix.MAP_FIXED)
	if err != nil {
		return mmapError(d.ordinal, "Unmap", size, err)
	}
	for p := va; p != end; {
		n := r.mapped[p]
		delete(r.mapped, p)
		p += backend.Ptr(n)
	}
	return nil
}
