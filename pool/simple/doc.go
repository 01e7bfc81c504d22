// Package simple is a caching pool: freed blocks are kept, per stream, and
// handed out again to the next request they fit. It is the smallest pool
// that makes allocation cheap, and the one to pick when a program
// allocates a few sizes over and over (a training loop, a solver's
// iterations) and fragmentation does not matter much.
//
// Rules:
//
//   - Sizes are rounded: below 2 MiB up to a multiple of 512 bytes, from
//     2 MiB up to a multiple of 2 MiB. The CUDA driver backs large
//     allocations with 2 MiB pages, so the large rounding costs no device
//     memory there, and it lets one cached block serve every request in the
//     same 2 MiB step (PyTorch's caching allocator rounds the same way).
//     512 bytes for small sizes (PyTorch's smallest block) lets requests
//     that differ by a few bytes share cached blocks.
//   - Alloc hands back the smallest cached block that fits, and only if it
//     is at most min(2x, +2 MiB) the rounded request: a 4 KiB request takes
//     a cached block of up to 8 KiB, a 64 MiB request one of up to 66 MiB.
//     The bound keeps a small request from pinning a large block (the
//     waste is at most the request itself, and never more than one 2 MiB
//     step, the driver's own rounding). Otherwise the request is a miss.
//   - Each stream's cache is a slice sorted by size, so the best fit is a
//     binary search. The hot path — a hit in the caller's stream's cache,
//     and every Free — takes only that stream's lock and counters.
//   - On a miss in its own cache, Alloc looks in the other streams' caches,
//     skipping any whose lock is busy rather than waiting, and takes a
//     block from there after ordering its stream after the block's last
//     stream (pool.Order: an event, no host wait). That is still a hit.
//     Only then does it go to the driver, which may reclaim cached blocks
//     first to stay under the hard limit.
//   - Reclaim(n) gives back, stream by stream, the smallest cached block of
//     at least what is still wanted, or else the largest, until n bytes are
//     back. Every Free above the soft limit reclaims the excess.
//
// It does not split or merge blocks, so a mix of many different sizes
// reserves more than the live bytes: pick binned or split for such loads,
// none to debug memory errors.
//
//	p, err := pool.New("simple", dev, pool.Limits{Soft: 8 << 30})
//	b, err := p.Alloc(3<<20, stream) // a 4 MiB block from the driver
//	err = p.Free(b, stream)
//	b, err = p.Alloc(4<<20, stream)  // the same block again, no driver call
package simple
