package host

import (
	"errors"

	"golang.org/x/sys/windows"

	"github.com/gocuda/gocuda/backend"
)

// The portable path's memory on Windows: VirtualAlloc. Committed pages cost
// no RAM until touched, but do count against the commit limit (RAM plus
// page file), so an Alloc larger than that fails with ErrOutOfMemory where
// Linux would succeed.

const (
	mapCall   = "VirtualAlloc"
	unmapCall = "VirtualFree"
)

// allocPages commits n bytes of zeroed memory, aligned to 64 KiB.
func allocPages(n uint64) (backend.Ptr, error) {
	addr, err := windows.VirtualAlloc(0, uintptr(n), windows.MEM_RESERVE|windows.MEM_COMMIT, windows.PAGE_READWRITE)
	return backend.Ptr(addr), err
}

// freePages releases memory from allocPages or reservePages; p must be
// what they returned, and the whole allocation goes.
func freePages(p backend.Ptr, _ uint64) error {
	return windows.VirtualFree(uintptr(p), 0, windows.MEM_RELEASE)
}

// reservePages reserves n bytes of inaccessible address space.
func reservePages(n uint64) (backend.Ptr, error) {
	addr, err := windows.VirtualAlloc(0, uintptr(n), windows.MEM_RESERVE, windows.PAGE_NOACCESS)
	return backend.Ptr(addr), err
}

// commitPages makes reserved pages accessible; Windows zeroes pages as it
// commits them.
func commitPages(p backend.Ptr, n uint64) error {
	_, err := windows.VirtualAlloc(uintptr(p), uintptr(n), windows.MEM_COMMIT, windows.PAGE_READWRITE)
	return err
}

// decommitPages makes committed pages inaccessible and gives their memory
// back; the address space stays reserved.
func decommitPages(p backend.Ptr, n uint64) error {
	return windows.VirtualFree(uintptr(p), uintptr(n), windows.MEM_DECOMMIT)
}

// protectPages makes committed pages inaccessible (rw false) or accessible
// again, keeping their bytes.
func protectPages(p backend.Ptr, n uint64, rw bool) error {
	prot := uint32(windows.PAGE_NOACCESS)
	if rw {
		prot = windows.PAGE_READWRITE
	}
	var old uint32
	return windows.VirtualProtect(uintptr(p), uintptr(n), prot, &old)
}

// noMemory says whether err means the OS is out of memory or commit charge.
func noMemory(err error) bool {
	return errors.Is(err, windows.ERROR_NOT_ENOUGH_MEMORY) || errors.Is(err, windows.ERROR_COMMITMENT_LIMIT) ||
		errors.Is(err, windows.ERROR_OUTOFMEMORY)
}
