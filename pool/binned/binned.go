package binned

import (
	"errors"
	"fmt"
	"sync"

	"github.com/dustin/go-humanize"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/pool"
)

// Name is the strategy's name as GOCUDA_MEMORY_POOL spells it.
const Name = "binned"

const (
	// largeRound is the rounding of requests above maxClassSize: the
	// granularity the CUDA driver maps memory in, so rounding finer would
	// save nothing on the device.
	largeRound = 2 << 20
	// largeSlackShift bounds the waste of a cached large block handed to a
	// smaller request: it is taken only if it is at most size + size>>3,
	// 12.5% more than asked, the same bound as the classes.
	largeSlackShift = 3
	// maxRequest bounds requests so that rounding cannot overflow; no
	// device has this much memory.
	maxRequest = 1 << 56
	// largeClass marks a block of the large path in Block.Class.
	largeClass = numClasses
)

func init() { pool.Register(Name, New) }

// Pool is the binned strategy; see the package documentation.
type Pool struct {
	dev     backend.Device
	src     *pool.Source
	streams *pool.StreamTable[entry]
	// marks is the live watcher's state (see WatchLive).
	marks pool.LiveMarks
}

var (
	_ pool.Pool        = (*Pool)(nil)
	_ pool.LiveWatcher = (*Pool)(nil)
)

// WatchLive implements pool.LiveWatcher.
func (p *Pool) WatchLive(room uint64, fn func()) {
	pool.Watch(&p.marks, p.streams, room, fn, func(e *entry, f func(uint64, *int64)) {
		e.mu.Lock()
		f(e.counts.live, &e.counts.mark)
		e.mu.Unlock()
	})
}

// entry is one stream's cache: a LIFO free list per class, linked through
// Block.Next, and the large blocks sorted by size. Its mutex is taken by
// Alloc and Free on this stream, by other streams' misses (TryLock only)
// and by Reclaim; goroutines on different streams never wait on it in the
// hot path.
type entry struct {
	mu sync.Mutex
	// counts are this stream's figures, updated under mu in the critical
	// sections Alloc and Free need anyway (see counters).
	counts counters
	// heads[c] is the most recently freed block of class c, the one most
	// likely still in the L2 cache and, on the GPU, with nothing queued
	// after it.
	heads [numClasses]*pool.Block
	// large holds cached blocks above maxClassSize, sorted by Size: few and
	// rarely touched, so a sorted slice is the simplest best-fit map.
	large []*pool.Block
	// pad keeps the next entry's mutex and counters off the cache line of
	// this entry's last fields.
	_ [64]byte
}

// New makes a binned pool for dev drawing memory from src.
func New(dev backend.Device, src *pool.Source) (pool.Pool, error) {
	if dev == nil || src == nil {
		return nil, fmt.Errorf("pool %s: New needs a device and a source: %w", Name, backend.ErrInvalidValue)
	}
	return &Pool{
		dev:     dev,
		src:     src,
		streams: pool.NewStreamTable(func() *entry { return new(entry) }),
	}, nil
}

// Name is "binned".
func (p *Pool) Name() string { return Name }

// Device is the pool's device.
func (p *Pool) Device() backend.Device { return p.dev }

// Alloc returns a block of size bytes rounded up to its class, from the
// cache of stream s when it has one.
func (p *Pool) Alloc(size uint64, s backend.Stream) (*pool.Block, error) {
	// One unsigned compare sends 0 (which wraps) and sizes beyond the
	// largest class off the hot path.
	if size-1 >= maxClassSize {
		return p.allocLarge(size, s)
	}
	// O(1): two shifts and a count of leading zeros.
	c := classOf(size)
	// One atomic load and an index: this stream's cache.
	e := p.streams.Get(s)
	// Uncontended unless another stream is stealing from this one or
	// Reclaim runs: the lock is the stream's own.
	e.mu.Lock()
	b := e.heads[c]
	// A block cached here was last used on a stream with s's ID; if that
	// was another stream (destroyed, its ID since reused by s), its work
	// may still be queued. Rare: the miss path deals with it.
	if b == nil || b.Stream != s {
		e.mu.Unlock()
		return p.allocMiss(e, c, size, s)
	}
	e.heads[c] = b.Next
	// Plain adds: the lock is held anyway (see counters).
	fire := e.counts.onAlloc(b.Size, size, true)
	e.mu.Unlock()
	if fire {
		p.marks.Fire()
	}
	// The block is ours now; fill it in outside the lock.
	b.Next = nil
	b.Requested = size
	b.Free = false
	return b, nil
}

// allocMiss serves a class request that stream s's cache could not: from
// another stream's cache of the same class if one has a block and is not
// busy, else from the driver.
func (p *Pool) allocMiss(e *entry, c int, size uint64, s backend.Stream) (*pool.Block, error) {
	pop := func(o *entry) *pool.Block { return o.popClass(c) }
	// The stream's own list may still hold blocks of a destroyed stream
	// with s's ID.
	if b, err := p.takeOwn(e, s, size, pop); b != nil || err != nil {
		return b, err
	}
	if b := p.steal(e, s, pop); b != nil {
		return p.handOver(e, b, size, s)
	}
	return p.allocDriver(e, c, classSize[c], size, s)
}

// allocLarge serves requests above the largest class, each rounded to
// largeRound: best fit from the stream's large blocks within 12.5%, then
// other streams', then the driver.
func (p *Pool) allocLarge(size uint64, s backend.Stream) (*pool.Block, error) {
	if size == 0 {
		return nil, fmt.Errorf("pool %s: Alloc of %d bytes: %w", Name, size, backend.ErrInvalidValue)
	}
	if size > maxRequest {
		return nil, &pool.OutOfMemoryError{Request: size, Limit: p.src.Limits().Hard, Reserved: p.src.Reserved(),
			Device: p.dev.Ordinal(), Err: fmt.Errorf("no device has %s", humanize.IBytes(size))}
	}
	e := p.streams.Get(s)
	take := func(o *entry) *pool.Block { return o.takeLarge(size) }
	if b, err := p.takeOwn(e, s, size, take); b != nil || err != nil {
		return b, err
	}
	if b := p.steal(e, s, take); b != nil {
		return p.handOver(e, b, size, s)
	}
	return p.allocDriver(e, largeClass, pool.RoundUp(size, largeRound), size, s)
}

// takeOwn takes a block with take from s's own cache e, or returns nil.
// A block there whose Stream is not s was freed on a destroyed stream
// that had s's ID: it goes back, the whole entry is rebound to s, and the
// take is tried again.
func (p *Pool) takeOwn(e *entry, s backend.Stream, size uint64, take func(*entry) *pool.Block) (*pool.Block, error) {
	for rebound := false; ; rebound = true {
		e.mu.Lock()
		b := take(e)
		if b == nil {
			e.mu.Unlock()
			return nil, nil
		}
		// After a rebind every block in e is safe for s: the device
		// synchronization covered the work of all earlier streams.
		if b.Stream == s || rebound {
			b.Stream = s
			fire := e.counts.onAlloc(b.Size, size, true)
			e.mu.Unlock()
			if fire {
				p.marks.Fire()
			}
			b.Requested = size
			b.Free = false
			return b, nil
		}
		e.push(b)
		e.mu.Unlock()
		if err := p.rebind(e, s); err != nil {
			return nil, err
		}
	}
}

// steal takes a block from another stream's cache with take, trying each
// stream's lock without waiting: a busy stream is skipped rather than
// slowed down, and a miss that finds nothing goes to the driver anyway.
func (p *Pool) steal(own *entry, s backend.Stream, take func(*entry) *pool.Block) *pool.Block {
	var got *pool.Block
	p.streams.Each(func(o *entry) {
		if got != nil || o == own || !o.mu.TryLock() {
			return
		}
		got = take(o)
		o.mu.Unlock()
	})
	return got
}

// handOver gives s a block cached by another stream. The block's old
// stream may still have work queued on it, so s is first ordered after
// that work (an event, no host wait).
func (p *Pool) handOver(e *entry, b *pool.Block, size uint64, s backend.Stream) (*pool.Block, error) {
	if err := pool.Order(b.Stream, s); err != nil {
		// The old stream is gone (destroyed: an event cannot be recorded
		// on it) or broken; waiting for the whole device covers its work
		// either way. Rare, and still cheaper than failing the caller.
		if err := p.dev.Synchronize(); err != nil {
			p.recache(b)
			return nil, fmt.Errorf("pool %s: Alloc of %d bytes: ordering stream after the block's last stream: %w", Name, size, err)
		}
	}
	b.Stream = s
	b.Requested = size
	b.Free = false
	e.mu.Lock()
	fire := e.counts.onAlloc(b.Size, size, true)
	e.mu.Unlock()
	if fire {
		p.marks.Fire()
	}
	return b, nil
}

// allocDriver takes a new block of blockSize bytes from the source, which
// enforces the hard limit and, when the device or the limit is full,
// calls Reclaim for what is missing and tries once more.
func (p *Pool) allocDriver(e *entry, c int, blockSize, size uint64, s backend.Stream) (*pool.Block, error) {
	ptr, err := p.src.Alloc(blockSize, p.Reclaim)
	if err != nil {
		var oom *pool.OutOfMemoryError
		if errors.As(err, &oom) {
			// Name the caller's request, and the class size the source
			// was asked for beside it.
			oom.Request, oom.Rounded, oom.RoundedTo = size, blockSize, "block"
		}
		return nil, err
	}
	// The only Go allocation of the pool: a new block on a miss. The
	// block is reused from then on, for as long as it stays cached.
	b := &pool.Block{Ptr: ptr, Size: blockSize, Requested: size, Stream: s, Class: int32(c), Owner: p}
	e.mu.Lock()
	fire := e.counts.onAlloc(blockSize, size, false)
	e.mu.Unlock()
	if fire {
		p.marks.Fire()
	}
	p.noteLive()
	return b, nil
}

// Free caches b in stream s's free list of b's class. s is the stream
// that used b last (the caller's word): b is reused on s at once and on
// other streams only after an event orders them after s.
func (p *Pool) Free(b *pool.Block, s backend.Stream) error {
	// Misuse is an error, not corruption: a nil block, another pool's
	// block, a second Free. (Two Frees of one block racing each other
	// are a data race in the caller and are not caught.)
	if b == nil || b.Owner != pool.Pool(p) || b.Free {
		return p.freeError(b)
	}
	// One atomic load and an index: the cache of the stream that used b
	// last, where an Alloc on that stream may take it back at once.
	e := p.streams.Get(s)
	// The stream's own lock: uncontended unless another stream steals
	// from it or Reclaim runs.
	e.mu.Lock()
	// Plain adds: the lock is held anyway (see counters).
	e.counts.onFree(b.Size, b.Requested)
	b.Requested = 0
	b.Stream = s
	b.Free = true
	if c := b.Class; c < numClasses {
		// Push on the class's LIFO list: two pointer writes, no Go
		// allocation (the list runs through the blocks themselves).
		b.Next = e.heads[c]
		e.heads[c] = b
	} else {
		e.putLarge(b)
	}
	e.mu.Unlock()
	// Soft limit: one atomic load when it is not exceeded (none when no
	// soft limit is set).
	if over := p.src.OverSoft(); over > 0 {
		p.Reclaim(over)
	}
	return nil
}

func (p *Pool) freeError(b *pool.Block) error {
	switch {
	case b == nil:
		return fmt.Errorf("pool %s: Free of a nil block: %w", Name, backend.ErrInvalidValue)
	case b.Owner != pool.Pool(p):
		return fmt.Errorf("pool %s: Free of block %#x, which this pool did not allocate: %w", Name, uintptr(b.Ptr), backend.ErrInvalidValue)
	default:
		return fmt.Errorf("pool %s: Free of block %#x (%d bytes), already freed: %w", Name, uintptr(b.Ptr), b.Size, backend.ErrInvalidValue)
	}
}

// recache puts a block taken out of the cache back, on the stream it was
// last used on.
func (p *Pool) recache(b *pool.Block) {
	e := p.streams.Get(b.Stream)
	e.mu.Lock()
	e.push(b)
	e.mu.Unlock()
}

// rebind makes every block cached in e that was last used on a destroyed
// stream safe to use on s. Stream IDs are unique among live
// streams only: a block whose Stream is not s but sits in s's entry was
// freed on an earlier stream with s's ID, since destroyed. A destroyed
// CUDA stream's queued work still runs, and no event can be recorded on
// it any more, so the only wait that covers that work is the whole
// device's. Once per reuse of an ID, then every stale block is s's.
func (p *Pool) rebind(e *entry, s backend.Stream) error {
	if err := p.dev.Synchronize(); err != nil {
		return fmt.Errorf("pool %s: Alloc on a reused stream ID: synchronizing the device: %w", Name, err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, h := range e.heads {
		for x := h; x != nil; x = x.Next {
			x.Stream = s
		}
	}
	for _, x := range e.large {
		x.Stream = s
	}
	return nil
}

// noteLive samples live bytes for Stats.LivePeak on the miss path, where
// a driver call makes summing the streams' counters cheap by comparison.
// Like steal, it never waits for another stream's lock: a busy stream is
// left out of this sample (a lower bound, as LivePeak is documented to
// be; Stats adds exact samples).
func (p *Pool) noteLive() {
	var live uint64
	p.streams.Each(func(e *entry) {
		if e.mu.TryLock() {
			live += e.counts.live
			e.mu.Unlock()
		}
	})
	// Per-stream live bytes wrap below zero for blocks freed on another
	// stream than their own; a sample missing a stream, or racing a
	// free, can wrap the sum too. Live never exceeds Reserved, so a sum
	// that does is such a sample and is dropped rather than poison the
	// peak.
	if live <= p.src.Reserved() {
		p.src.NoteLive(live)
	}
}

// Stats sums the per-stream counters and adds the source's figures. Each
// stream's figures are read under its lock, so they are consistent per
// stream.
//
// The sum is not one atomic snapshot: a block allocated on one stream
// and freed on another between the reads of the two can make Live wrap
// below zero for that read, and Fill would take the wrapped value as a
// new LivePeak. Live never exceeds Reserved, so a sum that does is read
// again (a few times; the race is a window of nanoseconds).
func (p *Pool) Stats() pool.Stats {
	var st pool.Stats
	for try := 0; try < 4; try++ {
		st = pool.Stats{}
		p.streams.Each(func(e *entry) {
			e.mu.Lock()
			e.counts.addTo(&st)
			e.mu.Unlock()
		})
		if st.Live <= p.src.Reserved() {
			break
		}
	}
	p.src.Fill(&st)
	return st
}

// Close gives every cached block back to the driver and reports blocks
// still live, whose memory it leaves alone.
func (p *Pool) Close() error {
	p.Reclaim(pool.All)
	return pool.LiveError(Name, p.Stats())
}

// push caches b in e; the caller holds e.mu.
func (e *entry) push(b *pool.Block) {
	if c := b.Class; c < numClasses {
		b.Next = e.heads[c]
		e.heads[c] = b
		return
	}
	e.putLarge(b)
}

// popClass takes the most recently freed block of class c, or nil; the
// caller holds e.mu.
func (e *entry) popClass(c int) *pool.Block {
	b := e.heads[c]
	if b != nil {
		e.heads[c] = b.Next
		b.Next = nil
	}
	return b
}

// Source is where the pool's memory comes from: its limits and reserved
// bytes, one atomic load away, for layers that wrap the pool (gcpressure).
func (p *Pool) Source() *pool.Source { return p.src }
