// Package backend is the seam between gocuda's pools and arrays and the
// devices they run on: the few operations they need (raw allocation,
// streams, events, copies, memset, device facts), implemented on the CUDA
// driver (backend/cudabackend) and on the host (backend/host).
//
// Packages above this one never call the driver directly, so every pool and
// array test runs unchanged on a machine with no GPU, where the host backend
// keeps stream semantics honest: work queued on a stream runs later, in
// order, on another goroutine, and events really order streams.
//
// Choosing a backend for the process is backend/auto's job:
//
//	b, err := auto.Default() // GOCUDA_BACKEND=auto|cuda|host
//	dev, _ := b.Device(0)
//	s, _ := dev.NewStream()
//	p, _ := dev.Alloc(1 << 20)
//	dev.Memset8(p, 0, 1<<20, s)
//	s.Synchronize()
//	dev.Free(p)
package backend
