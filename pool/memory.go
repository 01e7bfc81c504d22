package pool

import (
	"fmt"

	"github.com/gocuda/gocuda/backend"
)

// Memory is the kind of memory a pool serves: the device's own (what
// GOCUDA_MEMORY_POOL's strategies are for), or unified or pinned memory,
// which any strategy can cache through a device from MemoryDevice.
type Memory uint8

// The kinds of Memory.
const (
	// DeviceMemory is the device's own memory (cuMemAlloc).
	DeviceMemory Memory = iota
	// UnifiedMemory is managed memory that the host and the device both
	// address (backend.UnifiedMemory).
	UnifiedMemory
	// PinnedMemory is page-locked host memory that the device addresses
	// (backend.PinnedMemory).
	PinnedMemory
)

// Memories lists every kind, in order.
var Memories = []Memory{DeviceMemory, UnifiedMemory, PinnedMemory}

func (m Memory) String() string {
	switch m {
	case DeviceMemory:
		return "device"
	case UnifiedMemory:
		return "unified"
	case PinnedMemory:
		return "pinned"
	}
	return fmt.Sprintf("Memory(%d)", uint8(m))
}

// MemoryDevice returns dev itself for DeviceMemory, and for the other
// kinds a device whose Alloc and Free give memory of that kind, so that
// any strategy (New) caches it; everything else, its streams and events
// included, is dev's. A device without the kind's capability is an error
// wrapping backend.ErrNotSupported.
func MemoryDevice(dev backend.Device, m Memory) (backend.Device, error) {
	switch m {
	case DeviceMemory:
		return dev, nil
	case UnifiedMemory:
		u, ok := dev.(backend.UnifiedMemory)
		if !ok {
			return nil, fmt.Errorf("device %d (%T) has no unified memory: %w", dev.Ordinal(), dev, backend.ErrNotSupported)
		}
		return &memoryDevice{dev, m, u.AllocUnified, u.FreeUnified}, nil
	case PinnedMemory:
		pm, ok := dev.(backend.PinnedMemory)
		if !ok {
			return nil, fmt.Errorf("device %d (%T) has no pinned host memory: %w", dev.Ordinal(), dev, backend.ErrNotSupported)
		}
		return &memoryDevice{dev, m, pm.AllocPinned, pm.FreePinned}, nil
	}
	return nil, fmt.Errorf("pool: memory kind %d: the kinds are device, unified and pinned: %w", uint8(m), backend.ErrInvalidValue)
}

// MemoryOf is the kind of memory p serves: MemoryOfDevice of its device.
func MemoryOf(p Pool) Memory { return MemoryOfDevice(p.Device()) }

// MemoryOfDevice is the kind of memory dev's Alloc gives: that of a
// device from MemoryDevice, else DeviceMemory.
func MemoryOfDevice(dev backend.Device) Memory {
	if d, ok := dev.(*memoryDevice); ok {
		return d.kind
	}
	return DeviceMemory
}

// memoryDevice is MemoryDevice's device for unified and pinned memory; a
// pointer, so that devices compare (as map keys, ==) without panicking
// on its funcs.
type memoryDevice struct {
	backend.Device
	kind  Memory
	alloc func(uint64) (backend.Ptr, error)
	free  func(backend.Ptr) error
}

func (d *memoryDevice) Alloc(size uint64) (backend.Ptr, error) { return d.alloc(size) }
func (d *memoryDevice) Free(p backend.Ptr) error               { return d.free(p) }
