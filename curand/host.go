package curand

import (
	"math/rand/v2"
	"unsafe"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/host"
	"github.com/gocuda/gocuda/internal/devstream"
)

// hostGenerate queues the host backend's generation on hs: call key of a
// generator seeded with seed draws from PCG(seed, key), so the numbers
// depend on the seed and the order of the calls only. The stream checker,
// when on, is told of the bytes written, under name ("Normal float32").
func hostGenerate(seed, key uint64, hs devstream.HostStream, p backend.Ptr, n int, normal, f64 bool, mean, stddev float64, name string) error {
	size := uint64(4)
	if f64 {
		size = 8
	}
	fill := func() {
		r := rand.New(rand.NewPCG(seed, key))
		if f64 {
			out := unsafe.Slice((*float64)(addrOf(p)), n)
			for i := range out {
				if normal {
					out[i] = mean + stddev*r.NormFloat64()
				} else {
					out[i] = 1 - r.Float64() // (0, 1], as cuRAND's
				}
			}
			return
		}
		out := unsafe.Slice((*float32)(addrOf(p)), n)
		for i := range out {
			if normal {
				out[i] = float32(mean + stddev*r.NormFloat64())
			} else {
				out[i] = 1 - r.Float32()
			}
		}
	}
	if hs.Checking() {
		return hs.EnqueueAccess(name, []host.Access{{Ptr: p, Bytes: uint64(n) * size, Write: true}}, false, fill)
	}
	return hs.Enqueue(fill)
}

// addrOf turns a host-backend device address into a pointer. The memory is
// mapped from the OS, outside the Go heap, so the collector never looks at
// it; the indirection keeps vet's uintptr-to-pointer check quiet for this
// one deliberate conversion (kernels, blas and the host backend do the
// same).
func addrOf(p backend.Ptr) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&p))
}
