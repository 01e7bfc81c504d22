//go:build linux && !gocuda_portablemem

package host

import (
	"errors"

	"golang.org/x/sys/unix"

	"github.com/gocuda/gocuda/backend"
)

// The names of the system calls behind allocPages and freePages, for errors.
const (
	mapCall   = "mmap"
	unmapCall = "munmap"
)

// allocPages maps n bytes of zeroed, page-aligned anonymous memory.
// MAP_NORESERVE means the mapping costs no RAM or swap until its pages are
// touched.
func allocPages(n uint64) (backend.Ptr, error) {
	addr, err := unix.MmapPtr(-1, 0, nil, uintptr(n),
		unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	return backend.Ptr(addr), err
}

// freePages unmaps memory from allocPages.
func freePages(p backend.Ptr, n uint64) error { return unix.MunmapPtr(addrOf(p), uintptr(n)) }

// noMemory says whether err means the OS is out of memory or mappings.
func noMemory(err error) bool { return errors.Is(err, unix.ENOMEM) }
