// Package none is the pool that does not pool: every Alloc is a driver
// allocation and every Free synchronizes the block's stream and gives the
// memory straight back to the driver. Nothing is cached, so Reclaim has
// nothing to give and returns 0, and every allocation counts as a miss.
//
// Pick it
//
//   - as the baseline the caching pools are measured against: what each
//     allocation costs without a pool;
//   - to debug memory errors: because freed memory is really unmapped,
//     a kernel that uses a block after Free faults at once, and
//     compute-sanitizer (memcheck) reports the access with the kernel
//     that made it, where a caching pool would hand the memory to someone
//     else and the bug would show up later as corrupted data;
//   - when the program allocates rarely and wants reserved memory to equal
//     live memory at every moment.
//
// It is slow where a pool matters: a driver call per Alloc, and a stream
// synchronization plus a driver call per Free, which stalls the host until
// the stream's queued work is done.
//
//	GOCUDA_MEMORY_POOL=none compute-sanitizer --tool memcheck ./mytest
//
// or in code:
//
//	p, err := pool.New("none", dev, pool.Limits{})
//	b, err := p.Alloc(1<<20, stream)
//	// ... queue work on stream using b.Ptr ...
//	err = p.Free(b, stream) // waits for stream, then frees
package none
