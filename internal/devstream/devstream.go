// Package devstream is the one seam through which the compute packages
// (kernels, blas, curand, nccl, the runtime-compiled kernels) reach a
// backend: it finds what a device and stream offer — a CUDA driver context
// and stream, or host memory and a stream that runs Go functions in order —
// as capabilities (interfaces the backends' types satisfy), so that no
// compute package names a concrete backend type or switches on one per
// function. Each checks its arguments the same way and says the same things
// when they do not belong together.
//
//	on, err := devstream.Resolve(dev, s)
//	if err != nil {
//		return fmt.Errorf("blas: Gemm: %w", err)
//	}
//	if on.GPU != nil { /* on.GPU.Context(), on.GPUStream.CUDA() */ } else { /* on.HostStream.Enqueue */ }
package devstream

import (
	"fmt"
	"reflect"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/host"
	"github.com/gocuda/gocuda/cuda"
)

// GPU is a device whose work runs through the CUDA driver: kernels and
// libraries enter its context (backend/cudabackend's devices).
type GPU interface {
	backend.Device
	Context() *cuda.Context
}

// GPUStream is a stream of a GPU: libraries and launches take its driver
// handle.
type GPUStream interface {
	backend.Stream
	CUDA() *cuda.Stream
}

// Host is a device whose memory is this process's own (its Ptrs are
// addresses the CPU dereferences), so that the compute packages run Go
// loops on it (backend/host's devices).
type Host interface {
	backend.Device
	RunsOnHost()
}

// HostStream is a stream of a Host device: it runs the Go functions queued
// on it in order, and checks declared accesses when the stream checker is
// on (GOCUDA_STREAM_CHECK).
type HostStream interface {
	backend.Stream
	Enqueue(fn func()) error
	EnqueueAccess(name string, acc []host.Access, hostWaits bool, fn func()) error
	Checking() bool
}

// On is where an operation runs: a GPU and one of its streams, or a host
// device and one of its streams. Exactly one of GPU and Host is set.
type On struct {
	GPU        GPU
	GPUStream  GPUStream
	Host       Host
	HostStream HostStream
}

// Resolve finds what dev offers and checks that s is one of its streams.
// The errors wrap backend.ErrInvalidValue (nil arguments, a stream of
// another device), or backend.ErrNotSupported for a device of another
// backend.
func Resolve(dev backend.Device, s backend.Stream) (On, error) {
	if dev == nil || IsNil(s) { // a typed nil device is Device's to name
		return On{}, fmt.Errorf("nil device or stream (device %T, stream %T): %w", dev, s, backend.ErrInvalidValue)
	}
	on, err := Device(dev)
	if err != nil {
		return On{}, err
	}
	if on.GPU != nil {
		gs, ok := s.(GPUStream)
		if !ok || gs.Device() != dev {
			return On{}, fmt.Errorf("stream %T is not a stream of CUDA device %d: %w", s, dev.Ordinal(), backend.ErrInvalidValue)
		}
		on.GPUStream = gs
		return on, nil
	}
	hs, ok := s.(HostStream)
	if !ok || hs.Device() != dev {
		return On{}, fmt.Errorf("stream %T is not a stream of host device %d: %w", s, dev.Ordinal(), backend.ErrInvalidValue)
	}
	on.HostStream = hs
	return on, nil
}

// Device finds what dev alone offers (On's streams left nil), for what is
// made on a device rather than queued on a stream. The errors are
// Resolve's.
func Device(dev backend.Device) (On, error) {
	switch d := dev.(type) {
	case GPU:
		if IsNil(d) {
			return On{}, fmt.Errorf("nil CUDA device: %w", backend.ErrInvalidValue)
		}
		return On{GPU: d}, nil
	case Host:
		if IsNil(d) {
			return On{}, fmt.Errorf("nil host device: %w", backend.ErrInvalidValue)
		}
		return On{Host: d}, nil
	}
	return On{}, fmt.Errorf("device %T is of a backend this operation does not run on (it runs on the cuda and host backends): %w",
		dev, backend.ErrNotSupported)
}

// isNil is v == nil, or a typed nil pointer in an interface: a (*T)(nil)
// device satisfies the capability interfaces but has nothing behind it.
func IsNil(v any) bool {
	if v == nil {
		return true
	}
	r := reflect.ValueOf(v)
	return r.Kind() == reflect.Pointer && r.IsNil()
}
