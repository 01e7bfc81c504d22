// Package cuda is the pool strategy "cuda": the CUDA driver's own
// stream-ordered allocator (cuMemAllocFromPoolAsync / cuMemFreeAsync) on a
// memory pool of gocuda's making.
//
// Rules:
//
//   - Alloc and Free are ordered on the stream they are given, by the
//     driver: a free is queued behind the work on its stream, and the
//     driver reuses the memory on another stream only once that work is
//     done (or through its own event dependencies).
//   - The pool's release threshold is the soft limit (or, with none, no
//     limit: everything freed stays cached until Reclaim), so at each
//     synchronization the driver keeps at most that much cached.
//   - Reclaim synchronizes the device, so that queued frees have happened,
//     and trims the pool (cuMemPoolTrimTo).
//   - The hard limit counts the bytes allocated through the pool. The driver
//     may reserve more than that (it rounds and caches in its own way);
//     Stats reports the driver's own reserved figures.
//   - The driver does not say whether an allocation was served from its
//     cache, so every allocation counts as a hit and DriverAllocs stays 0.
//
// Pick it to compare with gocuda's own pools, or when memory must be shared
// with other libraries that use the driver's pool. It needs the CUDA backend
// on a device with memory-pool support; elsewhere New fails with an error
// matching backend.ErrNotSupported.
//
//	p, err := pool.New("cuda", dev, pool.Limits{Soft: 8 << 30})
//	b, err := p.Alloc(1<<20, stream)
//	err = p.Free(b, stream)
package cuda
