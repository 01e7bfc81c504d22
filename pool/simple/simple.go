package simple

import (
	"errors"
	"fmt"
	"sync"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/pool"
)

// Name is the strategy's name as GOCUDA_MEMORY_POOL spells it.
const Name = "simple"

func init() { pool.Register(Name, New) }

// Rounding and the oversize bound; the package documentation says why.
const (
	smallGrain = 512     // requests below largeFrom round up to this
	largeFrom  = 2 << 20 // from here, requests round up to largeGrain
	largeGrain = 2 << 20
	maxOver    = 2 << 20 // a block may exceed the rounded request by min(request, maxOver)
)

// roundSize is the block size for a request of n bytes; 0 if n is so large
// that rounding wraps.
func roundSize(n uint64) uint64 {
	if n < largeFrom {
		return pool.RoundUp(n, smallGrain)
	}
	if r := pool.RoundUp(n, largeGrain); r >= n {
		return r
	}
	return 0
}

// fitLimit is the largest cached block a request rounded to r may take.
func fitLimit(r uint64) uint64 { return r + min(r, maxOver) }

// paddedBlock keeps a block's fields, which Alloc and Free write, off the
// cache lines of the blocks allocated next to it: those may belong to
// goroutines on other streams (measured on the host backend, 8 goroutines
// on 2 cores: about 10% more pairs/s with the padding).
type paddedBlock struct {
	pool.Block
	_ [64]byte
}

func newBlock() *pool.Block { return &new(paddedBlock).Block }

// stream is one stream's cache and counters. Only goroutines using the
// stream take mu on the hot path; other streams try-lock it, Reclaim locks
// it on the slow path.
type stream struct {
	_  [64]byte // see the padding at the end
	mu sync.Mutex
	// free is the cached blocks sorted by (Size, Ptr): best fit is a
	// binary search, the largest block is the last.
	free []*pool.Block
	c    pool.Counters
	// Entries are separate heap objects that may sit next to each other
	// or next to objects other goroutines write; the padding on both sides
	// keeps one stream's lock and counters off their cache lines.
	_ [64]byte
}

// newStream makes a stream's entry. The cache starts with room for 8
// blocks, 64 bytes: a cache line of its own. A smaller backing array would
// share its line with other streams' arrays, and every Free writes to it
// (measured: 2 goroutines on 2 streams ran at 60% of one goroutine's rate).
func newStream() *stream { return &stream{free: make([]*pool.Block, 0, 8)} }

// search returns the index of the first cached block of at least size
// bytes (len(free) if none).
func (e *stream) search(size uint64) int { return e.searchKey(size, 0) }

// searchKey returns the index of the first cached block at or after
// (size, ptr) in the cache's order.
func (e *stream) searchKey(size uint64, ptr backend.Ptr) int {
	lo, hi := 0, len(e.free)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if b := e.free[m]; b.Size < size || (b.Size == size && b.Ptr < ptr) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// take removes and returns the smallest cached block that a request
// rounded to r may have, or nil.
func (e *stream) take(r uint64) *pool.Block {
	i := e.search(r)
	if i == len(e.free) || e.free[i].Size > fitLimit(r) {
		return nil
	}
	return e.remove(i)
}

func (e *stream) remove(i int) *pool.Block {
	b := e.free[i]
	n := len(e.free) - 1
	copy(e.free[i:], e.free[i+1:])
	e.free[n] = nil // no stale pointer keeps the block reachable from the slice
	e.free = e.free[:n]
	return b
}

// insert adds b, keeping the (Size, Ptr) order.
func (e *stream) insert(b *pool.Block) {
	i := e.searchKey(b.Size, b.Ptr)
	e.free = append(e.free, nil)
	copy(e.free[i+1:], e.free[i:])
	e.free[i] = b
}

// Pool is the simple caching pool; see the package documentation.
type Pool struct {
	dev     backend.Device
	src     *pool.Source
	streams *pool.StreamTable[stream]
}

var _ pool.Pool = (*Pool)(nil)

// New makes a simple pool for dev drawing its memory from src.
func New(dev backend.Device, src *pool.Source) (pool.Pool, error) {
	if dev == nil || src == nil {
		return nil, fmt.Errorf("pool %s: New needs a device and a source: %w", Name, backend.ErrInvalidValue)
	}
	return &Pool{
		dev:     dev,
		src:     src,
		streams: pool.NewStreamTable(newStream),
	}, nil
}

// Name is "simple".
func (p *Pool) Name() string { return Name }

// Device is the pool's device.
func (p *Pool) Device() backend.Device { return p.dev }

// Alloc returns a cached block that fits from s's cache, else from another
// stream's cache (ordered after it), else from the driver.
func (p *Pool) Alloc(size uint64, s backend.Stream) (*pool.Block, error) {
	r := roundSize(size)
	if r == 0 {
		return nil, fmt.Errorf("pool %s: Alloc of %d bytes: %w", Name, size, backend.ErrInvalidValue)
	}
	// One atomic load and an index: this stream's cache and counters.
	e := p.streams.Get(s)
	// Uncontended unless another stream is stealing or Reclaim runs.
	e.mu.Lock()
	b := e.take(r)
	e.mu.Unlock()
	if b == nil {
		// Slow paths: another stream's cache, then the driver.
		return p.allocSlow(e, size, r, s)
	}
	// b is out of every cache: nobody else can reach it, no lock needed.
	b.Free, b.Requested, b.Stream = false, size, s
	// Per-stream atomics, written by this stream's goroutines only.
	e.c.OnAlloc(b.Size, size, true)
	return b, nil
}

func (p *Pool) allocSlow(e *stream, size, r uint64, s backend.Stream) (*pool.Block, error) {
	if b := p.steal(e, r, s); b != nil {
		b.Free, b.Requested, b.Stream = false, size, s
		e.c.OnAlloc(b.Size, size, true)
		return b, nil
	}
	ptr, err := p.src.Alloc(r, p.Reclaim)
	if err != nil {
		var oom *pool.OutOfMemoryError
		if errors.As(err, &oom) {
			// Name the caller's request, and the rounded size the
			// source was asked for beside it.
			oom.Request, oom.Rounded, oom.RoundedTo = size, r, "block"
		}
		return nil, err
	}
	b := newBlock()
	*b = pool.Block{Ptr: ptr, Size: r, Requested: size, Stream: s, Owner: p}
	e.c.OnAlloc(r, size, false)
	p.noteLive()
	return b, nil
}

// steal takes a fitting block from another stream's cache and orders s
// after the block's last stream, so that work queued there before the free
// runs before anything s does with it. Busy caches are skipped, not
// waited for: a driver allocation is better than a stall.
func (p *Pool) steal(own *stream, r uint64, s backend.Stream) *pool.Block {
	var b *pool.Block
	var from *stream
	p.streams.Each(func(o *stream) {
		if b != nil || o == own || !o.mu.TryLock() {
			return
		}
		if b = o.take(r); b != nil {
			from = o
		}
		o.mu.Unlock()
	})
	if b == nil {
		return nil
	}
	if err := p.orderAfter(b.Stream, s); err != nil {
		// No way to order s after the block's work: keep it cached where
		// it was and let the caller go to the driver.
		from.mu.Lock()
		from.insert(b)
		from.mu.Unlock()
		return nil
	}
	return b
}

// orderAfter makes later work on to wait for the work queued on from so
// far. If no event can be recorded on from (a stream destroyed while its
// blocks sat in the cache), waiting for from, or for the whole device,
// gives the same guarantee by blocking. A nil to is no stream to order, so
// the host waits instead (pool.Order does nothing for it).
func (p *Pool) orderAfter(from, to backend.Stream) error {
	if from == nil {
		return nil
	}
	if to != nil {
		if err := pool.Order(from, to); err == nil {
			return nil
		}
	}
	if err := from.Synchronize(); err == nil {
		return nil
	}
	return p.dev.Synchronize()
}

// Free caches b on s, where it may be handed out again at once.
func (p *Pool) Free(b *pool.Block, s backend.Stream) error {
	if b == nil {
		return fmt.Errorf("pool %s: Free of a nil block: %w", Name, backend.ErrInvalidValue)
	}
	if b.Owner != pool.Pool(p) {
		return fmt.Errorf("pool %s: Free of block %#x, which this pool did not allocate: %w", Name, uintptr(b.Ptr), backend.ErrInvalidValue)
	}
	// The cache of the stream that used b last: reuse there is safe at
	// once, as later work on s runs after the work queued so far.
	e := p.streams.Get(s)
	e.mu.Lock()
	// Checked under the lock that also guards the insert, so two frees of
	// one block on one stream cannot both pass.
	if b.Free {
		e.mu.Unlock()
		return fmt.Errorf("pool %s: Free of block %#x (%d bytes), already freed: %w", Name, uintptr(b.Ptr), b.Size, backend.ErrInvalidValue)
	}
	// Per-stream atomics, as in Alloc.
	e.c.OnFree(b.Size, b.Requested)
	// b.Stream is what another stream's Alloc orders itself after.
	b.Free, b.Requested, b.Stream = true, 0, s
	e.insert(b)
	e.mu.Unlock()
	// One atomic load while under the soft limit.
	if over := p.src.OverSoft(); over > 0 {
		p.Reclaim(over)
	}
	return nil
}

// Reclaim gives cached blocks back to the driver until n bytes are back:
// in each stream's cache the smallest block covering what is still wanted,
// or else the largest, so that few driver calls give back little more
// than asked. Blocks leave the caches under their locks and go back to
// the driver (which waits for their streams) after the locks are dropped.
func (p *Pool) Reclaim(n uint64) uint64 {
	if n == 0 {
		return 0
	}
	var taken []*pool.Block
	var total uint64
	p.streams.Each(func(e *stream) {
		if total >= n {
			return
		}
		e.mu.Lock()
		for len(e.free) > 0 && total < n {
			i := e.search(n - total)
			if i == len(e.free) {
				i = len(e.free) - 1
			}
			b := e.remove(i)
			taken = append(taken, b)
			total += b.Size
		}
		e.mu.Unlock()
	})
	released := p.src.RetryOrphans()
	for _, b := range taken {
		if p.release(b) {
			released += b.Size
		}
	}
	p.src.NoteReclaimed(released)
	return released
}

// release gives a cached block back to the driver once its stream's work
// is done. A stream that can no longer be synchronized (destroyed) is
// covered by synchronizing the device. A block the driver will not take
// back goes to the source, which tries again in a later Reclaim.
func (p *Pool) release(b *pool.Block) bool {
	err := p.src.Release(b.Ptr, b.Size, b.Stream)
	if err != nil && b.Stream != nil && p.dev.Synchronize() == nil {
		err = p.src.Release(b.Ptr, b.Size, nil)
	}
	if err != nil {
		p.src.FreeLater(b.Ptr, b.Size)
	}
	return err == nil
}

// Stats sums the per-stream counters.
func (p *Pool) Stats() pool.Stats {
	var st pool.Stats
	p.streams.Each(func(e *stream) { e.c.AddTo(&st) })
	p.src.Fill(&st)
	return st
}

// Close gives every cached block back and reports blocks still live.
func (p *Pool) Close() error {
	p.Reclaim(pool.All)
	return pool.LiveError(Name, p.Stats())
}

// noteLive samples live bytes for Stats.LivePeak on a miss, where a driver
// call dwarfs summing the streams.
func (p *Pool) noteLive() {
	var live uint64
	p.streams.Each(func(e *stream) { live += e.c.Live.Load() })
	p.src.NoteLive(live)
}

// Source is where the pool's memory comes from: its limits and reserved
// bytes, one atomic load away, for layers that wrap the pool (gcpressure).
func (p *Pool) Source() *pool.Source { return p.src }
