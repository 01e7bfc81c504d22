package cuarray

import (
	"fmt"
	"unsafe"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/kernels"
	"github.com/gocuda/gocuda/pool"
)

// Kind is where an array's memory lives.
type Kind uint8

const (
	// Device memory, from the device's pool: the default, and the fastest
	// for the device.
	Device Kind = iota
	// Unified (managed) memory: one address the host and the device both
	// read and write, the driver moving pages where they are used. Host
	// gives the host a slice of it, with no copy. Never more than the
	// device has free is asked for.
	Unified
	// Pinned (page-locked) host memory that the device addresses directly:
	// copies to and from it run at full speed, and kernels on it read
	// across the bus. Host gives the host a slice of it.
	Pinned
)

func (k Kind) String() string {
	switch k {
	case Device:
		return "device"
	case Unified:
		return "unified"
	case Pinned:
		return "pinned"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Kind is where the array's memory lives.
func (a *Array[T]) Kind() Kind { return a.origin.kind }

// NewKind makes an uninitialised array of shape in memory of kind on o's
// stream's device. Device is New. Unified and pinned memory come from a
// caching pool of their own per device (gocuda.UnifiedPool,
// gocuda.PinnedPool: allocating them costs far more than device memory),
// outside the device pool's limits; PoolStatus lists them under the device.
// The stream's device must be one of the process's backend (gocuda.Device).
func (o Ops[T]) NewKind(kind Kind, shape ...int) (*Array[T], error) {
	op := "NewKind(" + kind.String() + ")"
	s, err := o.newStream()
	if err == nil {
		s, err = s.of(kind)
	}
	if err != nil {
		return nil, fmt.Errorf("cuarray: %s %s%s: %w", op, kernels.DTypeOf[T](), fmtShape(shape), err)
	}
	return newArray[T](op, s, shape)
}

// NewUnified makes an uninitialised array of unified memory on device 0's
// default stream.
func NewUnified[T Elem](shape ...int) (*Array[T], error) { return Ops[T]{}.NewKind(Unified, shape...) }

// NewPinned makes an uninitialised array of pinned host memory on device
// 0's default stream.
func NewPinned[T Elem](shape ...int) (*Array[T], error) { return Ops[T]{}.NewKind(Pinned, shape...) }

// Host returns the array's elements as a Go slice over its own memory, for
// unified and pinned arrays: reading and writing the slice reads and
// writes the array, with no copy. It first waits for the work queued on
// the array (so the slice shows its results); work queued on the array
// afterwards is not waited for, so call Host again after later operations
// before reading. The slice is valid only while the array is: keep the
// array reachable (runtime.KeepAlive) and not freed while using it.
// A device array has no host address: use ToSlice or CopyTo.
func (a *Array[T]) Host() ([]T, error) {
	if err := a.check("Host", "array"); err != nil {
		return nil, err
	}
	if k := a.Kind(); k == Device {
		return nil, fmt.Errorf("cuarray: Host: %s is device memory, which the host cannot address; use ToSlice or CopyTo, or make it with NewKind(Unified or Pinned): %w",
			a, backend.ErrInvalidValue)
	}
	if !a.contiguous() {
		return nil, fmt.Errorf("cuarray: Host: %s is a strided view (strides %v), whose elements are not in row-major order in memory; Contiguous makes a packed copy: %w",
			a, a.x.strides, ErrShape)
	}
	if a.n == 0 {
		return []T{}, nil
	}
	b := a.buf
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.block == nil {
		return nil, fmt.Errorf("cuarray: Host: %s: its buffer was freed: %w", a, ErrFreed)
	}
	// The buffer's last stream has every operation on it queued before
	// now (each move to a new stream waited for the old one).
	if _, err := b.life.live(backend.Stream.Synchronize); err != nil {
		return nil, fmt.Errorf("cuarray: Host: %s: %w", a, err)
	}
	p := a.ptr()
	return unsafe.Slice((*T)(*(*unsafe.Pointer)(unsafe.Pointer(&p))), a.n), nil
}

// of is s's sibling for memory of kind: the same device and backend
// stream, with that kind's pool.
func (s *Stream) of(kind Kind) (*Stream, error) {
	if kind == s.kind {
		return s, nil
	}
	if kind == Device {
		return nil, fmt.Errorf("device memory of a %s stream: use the stream it came from: %w", s.kind, backend.ErrInvalidValue)
	}
	if kind != Unified && kind != Pinned {
		return nil, fmt.Errorf("memory kind %d: the kinds are Device, Unified and Pinned: %w", uint8(kind), backend.ErrInvalidValue)
	}
	if v := s.kinds[kind-1].Load(); v != nil {
		return v, nil
	}
	p, err := kindPool(s.dev, kind)
	if err != nil {
		return nil, err
	}
	s.life.note(p)
	root := s
	if s.root != nil {
		root = s.root
	}
	sib := &Stream{home: &home{dev: s.dev, pool: p, kind: kind}, bs: s.bs, life: s.life, root: root}
	if s.life.permanent {
		sib.root = nil // nothing to keep reachable: a default stream never ends
	}
	if !s.kinds[kind-1].CompareAndSwap(nil, sib) {
		return s.kinds[kind-1].Load(), nil
	}
	return sib, nil
}

// kindPool is the registry's pool (gocuda.UnifiedPool, gocuda.PinnedPool)
// of kind's memory for dev, which must be a device of the process's
// backend: the registry's pools are listed by PoolStatus and emptied by
// ReclaimAll, and a device of another backend has none.
func kindPool(dev backend.Device, kind Kind) (pool.Pool, error) {
	if own, err := gocuda.Device(dev.Ordinal()); err != nil || own != dev {
		return nil, fmt.Errorf("%s memory of device %d of a backend other than the process's (gocuda.Backend): unified and pinned arrays are made on the process's devices: %w",
			kind, dev.Ordinal(), backend.ErrNotSupported)
	}
	if kind == Unified {
		return gocuda.UnifiedPool(dev.Ordinal())
	}
	return gocuda.PinnedPool(dev.Ordinal())
}
