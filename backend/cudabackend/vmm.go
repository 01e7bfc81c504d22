package cudabackend

import (
	"fmt"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/cuda"
)

// The device implements backend.VirtualMemory and
// backend.StreamOrderedMemory; Info().VirtualMemory and Info().MemoryPools
// say whether the GPU really supports them.
var (
	_ backend.VirtualMemory       = (*Device)(nil)
	_ backend.StreamOrderedMemory = (*Device)(nil)
)

func (d *Device) needVMM() error {
	if !d.info.VirtualMemory {
		return fmt.Errorf("cuda backend: device %d does not support virtual memory management: %w", d.info.Ordinal, backend.ErrNotSupported)
	}
	return nil
}

// Granularity is the minimum physical allocation and mapping size.
func (d *Device) Granularity() uint64 { return d.gran }

// Reserve reserves address space.
func (d *Device) Reserve(size uint64) (backend.Ptr, error) {
	if err := d.needVMM(); err != nil {
		return 0, err
	}
	p, err := d.ctx.AddressReserve(size, d.gran)
	return backend.Ptr(p), wrap(err)
}

// ReleaseAddress frees a reservation.
func (d *Device) ReleaseAddress(p backend.Ptr, size uint64) error {
	return wrap(d.ctx.AddressFree(cuda.DevicePtr(p), size))
}

// CreatePhysical allocates physical memory.
func (d *Device) CreatePhysical(size uint64) (backend.Physical, error) {
	if err := d.needVMM(); err != nil {
		return 0, err
	}
	h, err := d.ctx.MemCreate(size)
	return backend.Physical(h), wrap(err)
}

// Map maps physical memory at va, readable and writable by this device.
func (d *Device) Map(va backend.Ptr, size uint64, m backend.Physical) error {
	if err := d.ctx.MemMap(cuda.DevicePtr(va), size, cuda.MemHandle(m)); err != nil {
		return wrap(err)
	}
	if err := d.ctx.MemSetAccess(cuda.DevicePtr(va), size); err != nil {
		_ = d.ctx.MemUnmap(cuda.DevicePtr(va), size)
		return wrap(err)
	}
	return nil
}

// Unmap unmaps a range.
func (d *Device) Unmap(va backend.Ptr, size uint64) error {
	return wrap(d.ctx.MemUnmap(cuda.DevicePtr(va), size))
}

// ReleasePhysical releases physical memory.
func (d *Device) ReleasePhysical(m backend.Physical) error {
	return wrap(d.ctx.MemRelease(cuda.MemHandle(m)))
}

// NewMemPool creates a driver memory pool on the device.
func (d *Device) NewMemPool() (backend.MemPool, error) {
	if !d.info.MemoryPools {
		return nil, fmt.Errorf("cuda backend: device %d has no stream-ordered allocator: %w", d.info.Ordinal, backend.ErrNotSupported)
	}
	p, err := d.ctx.NewMemPool()
	if err != nil {
		return nil, wrap(err)
	}
	return &MemPool{p: p}, nil
}

// MemPool is a driver pool as a backend.MemPool.
type MemPool struct{ p *cuda.MemPool }

// AllocAsync allocates ordered on s.
func (m *MemPool) AllocAsync(size uint64, s backend.Stream) (backend.Ptr, error) {
	cs, ok := s.(*Stream)
	if !ok || cs == nil {
		return 0, fmt.Errorf("cuda backend: stream %T is not a CUDA stream: %w", s, backend.ErrInvalidValue)
	}
	if err := cs.live(); err != nil {
		return 0, err
	}
	p, err := cs.s.MemAllocAsync(m.p, size)
	return backend.Ptr(p), wrap(err)
}

// FreeAsync frees ordered on s.
func (m *MemPool) FreeAsync(p backend.Ptr, s backend.Stream) error {
	cs, ok := s.(*Stream)
	if !ok || cs == nil {
		return fmt.Errorf("cuda backend: stream %T is not a CUDA stream: %w", s, backend.ErrInvalidValue)
	}
	if err := cs.live(); err != nil {
		return err
	}
	return wrap(cs.s.MemFreeAsync(cuda.DevicePtr(p)))
}

// SetReleaseThreshold sets the bytes kept cached at synchronization.
func (m *MemPool) SetReleaseThreshold(bytes uint64) error {
	return wrap(m.p.SetAttribute(cuda.PoolReleaseThreshold, bytes))
}

// Trim releases cached memory down to keep bytes.
func (m *MemPool) Trim(keep uint64) error { return wrap(m.p.TrimTo(keep)) }

// Usage reads reserved and used bytes.
func (m *MemPool) Usage() (backend.PoolUsage, error) {
	var u backend.PoolUsage
	for _, a := range []struct {
		attr cuda.MemPoolAttribute
		dst  *uint64
	}{
		{cuda.PoolReservedMemCurrent, &u.Reserved}, {cuda.PoolReservedMemHigh, &u.ReservedHigh},
		{cuda.PoolUsedMemCurrent, &u.Used}, {cuda.PoolUsedMemHigh, &u.UsedHigh},
	} {
		v, err := m.p.Attribute(a.attr)
		if err != nil {
			return u, wrap(err)
		}
		*a.dst = v
	}
	return u, nil
}

// ResetHighWater resets the high-water marks (the driver resets a mark
// when it is set to zero).
func (m *MemPool) ResetHighWater() error {
	if err := m.p.SetAttribute(cuda.PoolReservedMemHigh, 0); err != nil {
		return wrap(err)
	}
	return wrap(m.p.SetAttribute(cuda.PoolUsedMemHigh, 0))
}

// Destroy destroys the pool.
func (m *MemPool) Destroy() error { return wrap(m.p.Destroy()) }
