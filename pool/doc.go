// Package pool is what every gocuda memory pool shares: the Pool interface,
// the Block type, statistics, limits and the registry that
// GOCUDA_MEMORY_POOL selects from. Each strategy is its own package:
//
//	pool/none    every allocation goes to the driver; the baseline
//	pool/simple  a cache of freed blocks, smallest fit within a bound
//	pool/binned  size classes, each with its own cache
//	pool/split   large segments split by best fit, neighbours coalesced
//	pool/cuda    the driver's stream-ordered pool (cuMemAllocAsync)
//
// Rules every strategy keeps:
//
//   - A block belongs to the stream it was last used on. Reuse on that
//     stream is immediate; reuse on another stream first orders that stream
//     after the free (Order: an event recorded on the old stream, waited on
//     by the new one), so queued work on the old stream never sees its
//     memory change under it.
//   - Per-stream state (StreamTable, Counters): goroutines allocating on
//     different streams share no lock and no counter on the hot path.
//   - Device memory comes from a Source, which enforces the hard limit,
//     counts reserved bytes and driver calls, and reports the soft limit;
//     strategies do not keep their own copies of those figures.
//   - Memory goes back to the driver only after the work queued on its
//     block's stream is done.
//
// Usage (normally through cuarray, which picks the pool from the
// environment):
//
//	p, err := pool.New("binned", dev, pool.Limits{Hard: 4 << 30})
//	b, err := p.Alloc(1<<20, stream)
//	// ... queue work on stream using b.Ptr ...
//	err = p.Free(b, stream)
package pool
