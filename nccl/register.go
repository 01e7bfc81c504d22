package nccl

import (
	"fmt"
	"sync"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/cuarray"
)

// Buffer registration (ncclCommRegister, NCCL 2.19 and later) lets NCCL
// set up a buffer for its transports once, rather than copying through
// its own staging buffers or mapping the buffer at each collective: it
// pays where NCCL moves data between GPUs (peer-to-peer, NVLS, network),
// and does nothing measurable with one rank. It is an option, never
// automatic: whether it helps depends on the machine, the sizes and the
// NCCL version, so measure first (BenchmarkAllReduce has both forms).
//
// NCCL finds a registration by address when a collective is given the
// registered buffer, or part of it: nothing else changes in the calls.

// Registration is a buffer registered with one communicator, until
// Release. Destroy and Abort of the communicator end every registration
// of it (NCCL frees them), after which Release does nothing.
type Registration struct {
	c     *Comm
	p     backend.Ptr
	bytes uint64
	keep  any // the array RegisterArray registered, alive until Release

	mu       sync.Mutex
	h        uintptr // NCCL's handle; 0 once released
	released bool
}

// Register registers bytes of device memory from p with c, for c's
// collectives on buffers inside it. Release it before the memory is
// freed. On the host backend it checks its arguments and registers
// nothing: host collectives copy in memory either way.
func (c *Comm) Register(p backend.Ptr, bytes uint64) (*Registration, error) {
	if c == nil || c.impl == nil {
		return nil, fmt.Errorf("nccl: Register on a nil communicator: %w", errInvalid)
	}
	if p == 0 || bytes == 0 || bytes > maxBytes {
		return nil, fmt.Errorf("nccl: Register on rank %d: %d bytes at %#x: give a device buffer's address and a size of at least one byte: %w",
			c.rank, bytes, uintptr(p), errInvalid)
	}
	if c.grouping {
		return nil, fmt.Errorf("nccl: Register on rank %d inside Group: register before the group: %w", c.rank, errInvalid)
	}
	h, err := c.impl.register(p, bytes)
	if err != nil {
		return nil, err
	}
	return &Registration{c: c, p: p, bytes: bytes, h: h}, nil
}

// RegisterArray registers a's memory with c (see Register), ordered on
// stream s as any use of a is. The registration keeps a alive until
// Release; UnsafeFree of a before Release is a mistake, as freeing a
// registered buffer is in NCCL. Register arrays that live long, such as a
// model's gradients: a registration costs far more than a collective on a
// small buffer.
func RegisterArray[T cuarray.Elem](c *Comm, s *cuarray.Stream, a *cuarray.Array[T]) (*Registration, error) {
	const what = "RegisterArray"
	if err := checkComm(c, what, s); err != nil {
		return nil, err
	}
	if err := checkArray(c, what, "the array", a); err != nil {
		return nil, err
	}
	var reg *Registration
	err := cuarray.WithPointers(s, func(_ backend.Stream, p []backend.Ptr) error {
		var err error
		reg, err = c.Register(p[0], uint64(a.Len())*uint64(a.DType().Size()))
		return err
	}, cuarray.In(a))
	if err != nil {
		return nil, err
	}
	reg.keep = a
	return reg, nil
}

// Ptr and Bytes are the registered memory.
func (r *Registration) Ptr() backend.Ptr { return r.p }

// Bytes is the size of the registered memory.
func (r *Registration) Bytes() uint64 { return r.bytes }

// Release deregisters the memory (ncclCommDeregister). Releasing twice,
// or after the communicator's Destroy or Abort, does nothing.
func (r *Registration) Release() error {
	if r == nil {
		return fmt.Errorf("nccl: Release of a nil registration: %w", errInvalid)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.released {
		return nil
	}
	if r.c.grouping {
		return fmt.Errorf("nccl: Release of a registration on rank %d inside Group: release after the group: %w", r.c.rank, errInvalid)
	}
	r.released = true
	err := r.c.impl.deregister(r.h)
	r.h, r.keep = 0, nil
	return err
}
