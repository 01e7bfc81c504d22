// Package devstream finds the backend an operation on a device and stream
// runs on, for the packages that run on both the CUDA and the host backend
// (kernels, blas, curand): each checks its arguments the same way and says
// the same things when they do not belong together.
//
//	on, err := devstream.Resolve(dev, s)
//	if err != nil {
//		return fmt.Errorf("blas: Gemm: %w", err)
//	}
//	if on.CUDA != nil { /* on.CUDAStream */ } else { /* on.Host, on.HostStream */ }
package devstream

import (
	"fmt"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/cudabackend"
	"github.com/gocuda/gocuda/backend/host"
)

// On is where an operation runs: a CUDA device and one of its streams, or
// a host device and one of its streams.
type On struct {
	CUDA       *cudabackend.Device
	CUDAStream *cudabackend.Stream
	Host       *host.Device
	HostStream *host.Stream
}

// Resolve finds the backend of dev and checks that s is one of its
// streams. The errors wrap backend.ErrInvalidValue (nil arguments, a
// stream of another device), or backend.ErrNotSupported for a device of
// another backend.
func Resolve(dev backend.Device, s backend.Stream) (On, error) {
	if dev == nil || s == nil {
		return On{}, fmt.Errorf("nil device or stream (device %T, stream %T): %w", dev, s, backend.ErrInvalidValue)
	}
	on, err := Device(dev)
	if err != nil {
		return On{}, err
	}
	if on.CUDA != nil {
		cs, ok := s.(*cudabackend.Stream)
		if !ok || cs == nil || cs.Device() != dev {
			return On{}, fmt.Errorf("stream %T is not a stream of CUDA device %d: %w", s, on.CUDA.Ordinal(), backend.ErrInvalidValue)
		}
		on.CUDAStream = cs
		return on, nil
	}
	hs, ok := s.(*host.Stream)
	if !ok || hs == nil || hs.Device() != dev {
		return On{}, fmt.Errorf("stream %T is not a stream of host device %d: %w", s, on.Host.Ordinal(), backend.ErrInvalidValue)
	}
	on.HostStream = hs
	return on, nil
}

// Device finds the backend of dev alone (On's streams left nil), for what
// is made on a device rather than queued on a stream. The errors are
// Resolve's.
func Device(dev backend.Device) (On, error) {
	switch d := dev.(type) {
	case *cudabackend.Device:
		if d == nil {
			return On{}, fmt.Errorf("nil CUDA device: %w", backend.ErrInvalidValue)
		}
		return On{CUDA: d}, nil
	case *host.Device:
		if d == nil {
			return On{}, fmt.Errorf("nil host device: %w", backend.ErrInvalidValue)
		}
		return On{Host: d}, nil
	}
	return On{}, fmt.Errorf("device %T is of a backend this operation does not run on (it runs on the cuda and host backends): %w",
		dev, backend.ErrNotSupported)
}
