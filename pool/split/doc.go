// Package split is the pool strategy that wastes the least memory when
// request sizes are mixed: it cuts large segments into blocks by best fit,
// merges free neighbours back together, and, where the device has virtual
// memory management, grows one segment per stream in place instead of
// taking new ones. It follows PyTorch's CUDACachingAllocator and its
// expandable segments, with its own data structures.
//
// Select it with GOCUDA_MEMORY_POOL=split, or pool.New("split", ...).
//
// # Rules
//
//   - Requests are rounded up to 512 bytes. Requests up to 1 MiB are
//     small, larger ones large; each kind has its own segments, so that
//     long-lived small blocks do not pin the middle of large free ranges.
//   - A request takes the smallest free block that fits (the lowest
//     address among equals). The rest of the block stays free if it is at
//     least 512 bytes (small) or more than 1 MiB (large); a smaller
//     remainder is handed out with the block (Block.Size says so), because
//     a sliver that no large request fits would only fragment the heap.
//   - A freed block merges with its free neighbours in the same segment.
//   - Each stream has its own segments and free blocks; a miss on one
//     stream never takes another stream's cache (no event is needed on the
//     hit path). A block freed on another stream than its owner's goes
//     back to its owner's cache after pool.Order(freeing stream, owner),
//     so the owner may reuse it at once. Memory cached by one stream
//     reaches another only through the driver: under the hard limit, a
//     miss gives back every stream's cached memory and retries once.
//
// # Growing in virtual memory
//
// Where the device implements backend.VirtualMemory (the host backend
// does, with a 2 MiB granularity, and so does CUDA), each stream reserves,
// on first use of each kind, an address range of the device's memory and
// an eighth more. The range is one segment whose last free block is the
// unused rest of the range; only the granules that blocks use are backed
// by physical memory. A request no free block serves is carved from that
// last block, which a freed block at the end of the used part has merged
// with: the segment grows in place, and memory freed at its end is reused
// by the next, larger, request instead of stranding it.
//
// Physical memory is created for what a request needs, in chunks of up to
// 32 MiB, each one physical allocation mapped by one call (PyTorch uses 20
// MiB pages for the same reason: mapping costs grow with the number of
// chunks). Each chunk counts against the hard limit while it is created
// and mapped (pool.Source.Take), and in Stats.Reserved once it is mapped,
// so Stats.Reserved is exactly the mapped bytes (plus any ordinary
// segments), and DriverAllocs and DriverFrees count chunks.
//
// A request beyond the hard limit or the device's memory is refused before
// anything is mapped or reclaimed for it. One that fits alone but not
// beside what is live unmaps the chunks it got before the limit stopped
// it, so a refusal leaves Reserved where it was.
//
// Before growth would take reserved memory past both its high-water mark
// and live memory plus 1/32 (at least 16 MiB), the pool moves memory
// instead of adding it: it synchronizes the stream, unmaps chunks that
// lie wholly inside the stream's free blocks (highest first), and maps that
// physical memory where the request needs it. Reserved memory then stays
// close to the most memory the program had live, at the cost of a few
// remappings when the layout shifts (on the GPT-2 trace, two per training
// step).
//
// Reclaim (and the soft and hard limits) unmaps and releases every chunk
// that lies wholly inside a free block, at the end of a segment or in its
// middle; chunks shared with a live block stay. Reclaim(pool.All) also
// gives back the address range of a segment left with nothing mapped.
//
// Without virtual memory, segments are ordinary allocations from the
// source, sized as PyTorch sizes them: 2 MiB for small requests, 20 MiB for
// large requests under 10 MiB (shared by several), the request rounded up
// to 2 MiB from 10 MiB. Reclaim releases segments that are entirely free.
//
// # Measured
//
// Peak reserved over peak live bytes, replaying the PyTorch training
// traces of testdata/traces on the host backend (PyTorch's own figure for
// the same run in brackets):
//
//	                  virtual memory   ordinary segments   (PyTorch)
//	gpt2_train        1.032            1.050               (1.049)
//	resnet50_train    1.016            1.208               (1.218)
//
// With virtual memory the GPT-2 replay creates 366 chunks and moves memory
// 27 times, twice per training step after the first, about 290 MiB (nine
// chunks) each time; ResNet-50 creates 275 chunks and moves memory only in
// its first step. A cached Alloc+Free pair takes 60-75 ns on one host core.
// The replays run at about 7-8 M events/s (GPT-2) and 9-10 M events/s
// (ResNet-50) on the host backend of a 2-core machine; a third to a half of
// that time is the system calls that map and unmap chunks.
//
// # When to pick it
//
// Pick split when memory is the constraint: models near the device's
// limit, mixed and changing request sizes (training with varying batch
// or sequence lengths), long runs where fragmentation would otherwise
// creep. Pick binned or simple when requests come in a few fixed sizes and
// the last nanoseconds matter more than the last percent of memory.
//
// # Example
//
//	p, err := pool.New("split", dev, pool.Limits{Hard: 70 << 30})
//	if err != nil {
//		return err
//	}
//	b, err := p.Alloc(3<<20+5, stream) // a 3 MiB+512 B block, 256-byte aligned
//	if err != nil {
//		return err
//	}
//	// ... queue work using b.Ptr on stream ...
//	err = p.Free(b, stream) // reusable at once on stream
package split
