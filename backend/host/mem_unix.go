//go:build unix && (!linux || gocuda_portablemem)

package host

import (
	"errors"

	"golang.org/x/sys/unix"

	"github.com/gocuda/gocuda/backend"
)

// The portable path's memory on unix: POSIX anonymous mappings, which every
// unix has, without Linux's MAP_NORESERVE and memfd. Untouched pages still
// cost no RAM; whether they count against swap is the OS's overcommit
// policy.

const (
	mapCall   = "mmap"
	unmapCall = "munmap"
)

// allocPages maps n bytes of zeroed, page-aligned, accessible memory.
func allocPages(n uint64) (backend.Ptr, error) {
	addr, err := unix.MmapPtr(-1, 0, nil, uintptr(n),
		unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	return backend.Ptr(addr), err
}

// freePages unmaps memory from allocPages or reservePages.
func freePages(p backend.Ptr, n uint64) error { return unix.MunmapPtr(addrOf(p), uintptr(n)) }

// reservePages maps n bytes of inaccessible address space, which costs no
// memory.
func reservePages(n uint64) (backend.Ptr, error) {
	addr, err := unix.MmapPtr(-1, 0, nil, uintptr(n), unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANON)
	return backend.Ptr(addr), err
}

// commitPages makes reserved pages accessible. They read as zeros: they
// were never touched, or decommitPages replaced them.
func commitPages(p backend.Ptr, n uint64) error {
	return unix.Mprotect(bytesAt(p, n), unix.PROT_READ|unix.PROT_WRITE)
}

// decommitPages makes committed pages inaccessible and gives their memory
// back, by mapping fresh inaccessible pages over them.
func decommitPages(p backend.Ptr, n uint64) error {
	_, err := unix.MmapPtr(-1, 0, addrOf(p), uintptr(n), unix.PROT_NONE,
		unix.MAP_PRIVATE|unix.MAP_ANON|unix.MAP_FIXED)
	return err
}

// protectPages makes committed pages inaccessible (rw false) or accessible
// again, keeping their bytes.
func protectPages(p backend.Ptr, n uint64, rw bool) error {
	prot := unix.PROT_NONE
	if rw {
		prot = unix.PROT_READ | unix.PROT_WRITE
	}
	return unix.Mprotect(bytesAt(p, n), prot)
}

// noMemory says whether err means the OS is out of memory or mappings.
func noMemory(err error) bool { return errors.Is(err, unix.ENOMEM) }
