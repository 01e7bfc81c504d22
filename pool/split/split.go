package split

import (
	"fmt"
	"sync"

	"go.uber.org/atomic"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/pool"
)

// Thresholds, as PyTorch's CUDACachingAllocator has them (see doc.go).
const (
	// minBlock is the rounding of every request and the smallest block:
	// block sizes are multiples of it, so every block address within a
	// segment stays 512-byte (hence pool.Alignment) aligned.
	minBlock = 512
	// smallSize: requests up to it are small and come from the small heap.
	smallSize = 1 << 20
	// smallSegment is the size of an ordinary segment for small requests.
	smallSegment = 2 << 20
	// largeSegment is the size of an ordinary segment for large requests
	// below minLargeAlloc, which several such requests then share.
	largeSegment = 20 << 20
	// minLargeAlloc: large requests from it up get a segment of their own
	// size, rounded to roundLarge.
	minLargeAlloc = 10 << 20
	roundLarge    = 2 << 20
	// largeMinRest: a large block is split only if more than this is left
	// over; a smaller remainder would be a sliver no large request fits.
	largeMinRest = smallSize + 1
	// maxChunk: physical memory is allocated in chunks of at most 32 MiB
	// (and at most what the request needs): PyTorch's expandable
	// segments use 20 MiB pages for the same reason, mapping cost grows
	// with the number of chunks.
	maxChunk = 32 << 20
	// maxRequest bounds requests so that rounding cannot overflow; nothing
	// this large exists.
	maxRequest = 1 << 56
)

func init() { pool.Register("split", New) }

// Pool is the split strategy. See the package documentation.
type Pool struct {
	dev backend.Device
	src *pool.Source
	// vm is the device's virtual memory, nil where it has none: segments
	// are then ordinary allocations from the source.
	vm   backend.VirtualMemory
	gran uint64
	// reserveSize is the address space a virtual segment reserves.
	reserveSize uint64
	// chunkGranules is the most granules one physical allocation holds.
	chunkGranules uint64
	cfg           config
	// retryInherited is set while a goroutine waits to give back
	// inherited segments (giveBackInherited).
	retryInherited atomic.Bool
	retrying       sync.WaitGroup
	// trims counts growths that unmapped cached granules first (tests).
	trims atomic.Uint64
	// moved counts granules of physical memory remapped by trims (tests).
	moved atomic.Uint64
	// onTrim, if set, is told of every trim (tests).
	onTrim func(bytes uint64)

	streams *pool.StreamTable[streamState]
	// marks is the live watcher's state (see WatchLive).
	marks pool.LiveMarks
}

// streamState is one stream's heaps. Its mutex is taken by Alloc and Free
// on this stream only (and by a Free on another stream of a block from
// here, and by Reclaim), so goroutines on different streams do not meet.
type streamState struct {
	mu sync.Mutex
	// stream is the stream of this ID last allocated on (IDs are reused
	// after a stream is destroyed); nil for the nil stream.
	stream backend.Stream
	pool   *Pool
	heaps  [2]heap // small, large
	// spare holds block structs freed by merging, linked by Next.
	spare *pool.Block
	// counts are this stream's figures. They are plain integers guarded
	// by mu, which Alloc and Free hold anyway: pool.Counters would add
	// six atomic read-modify-writes to every pair (about 35 ns of a 95 ns
	// pair on the host benchmark), and Stats is rare enough to take each
	// stream's lock instead.
	counts counts
	// mark is where this stream's live bytes call the live watcher
	// (pool.LiveWatcher); 0 until a watch sets it, so a new stream's
	// first allocation under a watch fires.
	mark int64
}

// counts mirror pool.Counters without atomics; see streamState.counts.
type counts struct {
	live, requested     uint64
	hits, misses, frees uint64
}

// addTo adds st's figures to sum, under st's lock.
func (st *streamState) addTo(sum *pool.Stats) {
	st.mu.Lock()
	c := st.counts
	st.mu.Unlock()
	// Allocs and frees of a block are both counted on the stream that
	// owns its segment, so no stream's figures wrap below zero.
	sum.Live += c.live
	sum.Requested += c.requested
	sum.Hits += c.hits
	sum.Misses += c.misses
	sum.Allocs += c.hits + c.misses
	sum.Frees += c.frees
}

var (
	_ pool.Pool        = (*Pool)(nil)
	_ pool.LiveWatcher = (*Pool)(nil)
)

// New makes a split pool for dev. Where dev implements
// backend.VirtualMemory (and says so in its Info), segments grow in
// reserved address space; otherwise they are ordinary allocations.
func New(dev backend.Device, src *pool.Source) (pool.Pool, error) {
	return newPool(dev, src, defaultConfig)
}

// config holds the tunable rules; New uses defaultConfig, tests vary it.
type config struct {
	// largeMinRest: a large block is split only if at least this much is
	// left over.
	largeMinRest uint64
	// maxChunk is the most bytes one physical allocation holds (at least
	// one granule). Larger chunks mean fewer driver calls; smaller ones
	// let Reclaim and trimming take memory from between live blocks more
	// finely.
	maxChunk uint64
	// trim enables moving memory before growth (see trimBeforeGrowth)
	// with trimSlack(live) the cached memory allowed above live memory.
	trim      bool
	trimSlack func(live uint64) uint64
}

var defaultConfig = config{
	largeMinRest: largeMinRest,
	maxChunk:     maxChunk,
	trim:         true,
	trimSlack:    defaultSlack,
}

// defaultSlack lets cached memory reach 1/32 of live memory (and at least
// 16 MiB) before a growth past the high-water mark moves memory instead.
func defaultSlack(live uint64) uint64 { return max(live/32, 16<<20) }

func newPool(dev backend.Device, src *pool.Source, cfg config) (*Pool, error) {
	if dev == nil || src == nil {
		return nil, fmt.Errorf("split: New needs a device and a source: %w", backend.ErrInvalidValue)
	}
	p := &Pool{dev: dev, src: src, cfg: cfg}
	if vm, ok := dev.(backend.VirtualMemory); ok && dev.Info().VirtualMemory {
		if g := vm.Granularity(); g > 0 && g%minBlock == 0 {
			p.vm, p.gran = vm, g
			p.chunkGranules = max(cfg.maxChunk/g, 1)
			// As PyTorch's expandable segments: room for all of the
			// device's memory and an eighth more, so that a segment can
			// keep growing at its end after Reclaim left holes in it.
			total := dev.Info().TotalMemory
			if total == 0 {
				total = 16 << 30
			}
			p.reserveSize = roundUp(total+total/8, g)
		}
	}
	p.streams = pool.NewStreamTable(func() *streamState {
		st := &streamState{pool: p}
		st.heaps[0].small = true
		st.heaps[0].minRest = minBlock
		st.heaps[1].minRest = cfg.largeMinRest
		return st
	})
	return p, nil
}

// Name is "split".
func (p *Pool) Name() string { return "split" }

// Device is the pool's device.
func (p *Pool) Device() backend.Device { return p.dev }

// Virtual says whether the pool grows segments in reserved address space.
func (p *Pool) Virtual() bool { return p.vm != nil }

// Alloc returns a block of at least size bytes for work on s.
//
// The hit path is the stream's lock, a best-fit lookup and a split: no
// driver call, no map lookup, no shared lock or counter.
func (p *Pool) Alloc(size uint64, s backend.Stream) (*pool.Block, error) {
	if size == 0 {
		return nil, fmt.Errorf("split: alloc of %d bytes: %w", size, backend.ErrInvalidValue)
	}
	if size > maxRequest {
		return nil, p.oom(size, nil) // rounding would overflow; no device has it
	}
	// Blocks are multiples of 512 bytes, so every split keeps addresses
	// aligned and the remainders usable.
	n := roundUp(size, minBlock)
	// This stream's heaps: one atomic load and an index, no lock shared
	// with other streams.
	st := p.streams.Get(s)
	h := &st.heaps[1]
	if n <= smallSize {
		h = &st.heaps[0] // small and large requests never share a segment
	}
	st.mu.Lock()
	if b, k, i := h.free.bestFitAt(n); b != nil {
		seg := b.Seg.(*segment)
		take := h.takeSize(b, n)
		// A cached block whose memory is all mapped is a hit; one that
		// needs granules mapped (the unused end of a virtual segment, or
		// a hole Reclaim left) is a miss for the slow path.
		if seg.backed(b.Ptr, take) {
			st.carveAt(h, seg, b, k, i, take)
			fire := st.hand(b, size, s, true)
			st.mu.Unlock()
			if fire {
				p.marks.Fire()
			}
			return b, nil
		}
	}
	st.mu.Unlock()
	return p.allocSlow(st, h, size, n, s)
}

// hand fills in a block being handed out and counts it. It reports
// whether the stream's live bytes passed its mark: the caller then calls
// p.marks.Fire once it has let go of the lock.
func (st *streamState) hand(b *pool.Block, size uint64, s backend.Stream, hit bool) bool {
	if st.stream != s {
		st.stream = s
	}
	b.Requested = size
	b.Stream = s
	st.counts.live += b.Size
	st.counts.requested += size
	if hit {
		st.counts.hits++
	} else {
		st.counts.misses++
	}
	return pool.Passed(st.counts.live, &st.mark)
}

// WatchLive implements pool.LiveWatcher.
func (p *Pool) WatchLive(room uint64, fn func()) {
	pool.Watch(&p.marks, p.streams, room, fn, func(st *streamState, f func(uint64, *int64)) {
		st.mu.Lock()
		f(st.counts.live, &st.mark)
		st.mu.Unlock()
	})
}

// noteLive samples the live bytes for Stats.LivePeak; called when the pool
// takes memory from the driver, never on a hit.
func (p *Pool) noteLive() {
	var st pool.Stats
	p.streams.Each(func(s *streamState) { s.addTo(&st) })
	p.src.NoteLive(st.Live)
}

// Free gives b back. It goes to the free set of the stream that owns its
// segment; freed on another stream s, that stream is first ordered after
// s's queued work (pool.Order), so the owner can reuse it at once.
//
// The common path is the owner's lock, merging with free neighbours (two
// pointer checks) and a free-set insertion.
func (p *Pool) Free(b *pool.Block, s backend.Stream) error {
	if b == nil {
		return fmt.Errorf("split: free of a nil block: %w", backend.ErrInvalidValue)
	}
	// Owner and Seg tell our blocks from others' (and from block structs
	// recycled by merging, whose Owner is cleared) without a map lookup.
	if b.Owner != p {
		return fmt.Errorf("split: free of block %#x: not allocated by this pool: %w", uintptr(b.Ptr), backend.ErrInvalidValue)
	}
	seg, _ := b.Seg.(*segment)
	if seg == nil {
		return fmt.Errorf("split: free of block %#x: not allocated by this pool: %w", uintptr(b.Ptr), backend.ErrInvalidValue)
	}
	st := seg.lockOwner()
	// Checked under the lock: a cached block is Free until it is handed
	// out again.
	if b.Free || b.Requested == 0 {
		st.mu.Unlock()
		return fmt.Errorf("split: free of block %#x (%d bytes): already free: %w", uintptr(b.Ptr), b.Size, backend.ErrInvalidValue)
	}
	ordered := true
	if s != st.stream && s != nil {
		// Freed on another stream than the owner's: the owner reuses it
		// without waiting, so its later work must wait for s's.
		ordered = p.orderAfter(s, st.stream)
	}
	st.counts.live -= b.Size
	st.counts.requested -= b.Requested
	st.counts.frees++
	if !ordered {
		// Nothing orders the owner after s, and s could not be waited
		// for: the block stays out of the cache (not Free, so that no
		// neighbour merges with it; Requested 0, so that a second Free
		// is refused) until the source, having synchronized the whole
		// device, hands it back (RetryOrphans, from Reclaim).
		b.Requested = 0
		st.mu.Unlock()
		p.src.Orphan(0, func() error {
			st := seg.lockOwner()
			seg.live--
			st.putBack(seg.heap, seg, b)
			st.mu.Unlock()
			return nil
		})
		return nil
	}
	seg.live--
	st.putBack(seg.heap, seg, b)
	orphan := seg.inherited && seg.live == 0
	st.mu.Unlock()
	if orphan {
		p.giveBackInherited(st)
	}
	// Soft limit: one atomic load when under it.
	if over := p.src.OverSoft(); over > 0 {
		p.Reclaim(over)
	}
	return nil
}

// orderAfter makes later work on to wait for the work queued on from. When
// an event cannot do it (a destroyed stream, or none to wait on) it waits
// on the host instead, which is always safe. false says neither worked.
func (p *Pool) orderAfter(from, to backend.Stream) bool {
	if to != nil && pool.Order(from, to) == nil {
		return true
	}
	return from.Synchronize() == nil || p.dev.Synchronize() == nil
}

// Stats sums the per-stream counters and the source's figures.
func (p *Pool) Stats() pool.Stats {
	var st pool.Stats
	p.streams.Each(func(s *streamState) { s.addTo(&st) })
	p.src.Fill(&st)
	return st
}

// Close gives all cached memory back. Live blocks keep their memory and
// are reported.
func (p *Pool) Close() error {
	// A retry of giveBackInherited may be releasing segments it took out
	// of a heap, where Reclaim cannot see them.
	p.retrying.Wait()
	p.Reclaim(pool.All)
	return pool.LiveError("split", p.Stats())
}

func roundUp(n, a uint64) uint64 { return (n + a - 1) / a * a }

// Source is where the pool's memory comes from: its limits and reserved
// bytes, one atomic load away, for layers that wrap the pool (gcpressure).
func (p *Pool) Source() *pool.Source { return p.src }
