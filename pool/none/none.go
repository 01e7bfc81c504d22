package none

import (
	"errors"
	"fmt"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/pool"
)

// Name is the strategy's name as GOCUDA_MEMORY_POOL spells it.
const Name = "none"

func init() { pool.Register(Name, New) }

// Pool is the no-cache pool; see the package documentation.
type Pool struct {
	dev backend.Device
	src *pool.Source
	// streams holds per-stream counters only: there is no cache to guard,
	// so there is no lock either.
	streams *pool.StreamTable[pool.Counters]
}

var _ pool.Pool = (*Pool)(nil)

// New makes a pool for dev that takes every block from src and gives it
// back on Free.
func New(dev backend.Device, src *pool.Source) (pool.Pool, error) {
	if dev == nil || src == nil {
		return nil, fmt.Errorf("pool %s: New needs a device and a source: %w", Name, backend.ErrInvalidValue)
	}
	return &Pool{
		dev:     dev,
		src:     src,
		streams: pool.NewStreamTable(func() *pool.Counters { return new(pool.Counters) }),
	}, nil
}

// Name is "none".
func (p *Pool) Name() string { return Name }

// Device is the pool's device.
func (p *Pool) Device() backend.Device { return p.dev }

// Alloc takes a block of size bytes, rounded up to pool.Alignment, from the
// driver. Every allocation is a miss.
func (p *Pool) Alloc(size uint64, s backend.Stream) (*pool.Block, error) {
	if size == 0 {
		return nil, fmt.Errorf("pool %s: Alloc of %d bytes: %w", Name, size, backend.ErrInvalidValue)
	}
	rounded := pool.RoundUp(size, pool.Alignment)
	if rounded < size { // wrapped: a size near 2^64
		return nil, fmt.Errorf("pool %s: Alloc of %d bytes: too large: %w", Name, size, backend.ErrInvalidValue)
	}
	// No reclaim callback: there is no cache to give back.
	ptr, err := p.src.Alloc(rounded, nil)
	if err != nil {
		return nil, namedRequest(err, size)
	}
	b := &pool.Block{Ptr: ptr, Size: rounded, Requested: size, Stream: s, Owner: p}
	p.streams.Get(s).OnAlloc(rounded, size, false)
	p.noteLive()
	return b, nil
}

// Free waits for the work queued on s (and on the stream the block was
// allocated on, if another) and gives the memory back to the driver.
func (p *Pool) Free(b *pool.Block, s backend.Stream) error {
	switch {
	case b == nil:
		return fmt.Errorf("pool %s: Free of a nil block: %w", Name, backend.ErrInvalidValue)
	case b.Owner != pool.Pool(p):
		return fmt.Errorf("pool %s: Free of block %#x, which this pool did not allocate: %w", Name, uintptr(b.Ptr), backend.ErrInvalidValue)
	case b.Free:
		return fmt.Errorf("pool %s: Free of block %#x (%d bytes), already freed: %w", Name, uintptr(b.Ptr), b.Size, backend.ErrInvalidValue)
	}
	b.Free = true
	p.streams.Get(s).OnFree(b.Size, b.Requested)
	b.Requested = 0
	// s is the stream the caller says used b last, but the stream b was
	// allocated on may have queued work too when the caller freed on
	// another stream without ordering; this pool is the debugging choice,
	// so it waits for both rather than trust the caller.
	if b.Stream != nil && s != nil && b.Stream != s {
		// A stream destroyed since cannot be synchronized; the device
		// covers its work.
		if err := b.Stream.Synchronize(); err != nil && p.dev.Synchronize() != nil {
			// Nothing is known to be done with the block: the source
			// frees it once the device is (RetryOrphans).
			p.src.FreeLater(b.Ptr, b.Size)
			return nil
		}
	}
	if s == nil {
		s = b.Stream
	}
	b.Stream = s
	if err := p.src.Release(b.Ptr, b.Size, s); err != nil {
		// The driver refused (or s could not be waited for): the memory
		// stays reserved and is given back by a later Reclaim.
		p.src.FreeLater(b.Ptr, b.Size)
	}
	return nil
}

// Reclaim caches nothing, so it gives back only what the driver refused
// to take back at Free, if it takes it now.
func (p *Pool) Reclaim(n uint64) uint64 {
	got := p.src.RetryOrphans()
	if got > 0 {
		p.src.NoteReclaimed(got)
	}
	return got
}

// Stats sums the per-stream counters.
func (p *Pool) Stats() pool.Stats {
	var st pool.Stats
	p.streams.Each(func(c *pool.Counters) { c.AddTo(&st) })
	p.src.Fill(&st)
	return st
}

// Close gives back what the driver refused to take back at Free, if it
// takes it now, and reports blocks still live; there is no cache to empty.
func (p *Pool) Close() error {
	p.Reclaim(pool.All)
	return pool.LiveError(Name, p.Stats())
}

// noteLive samples live bytes for Stats.LivePeak. Every Alloc here is a
// driver call, so summing the streams costs little next to it.
func (p *Pool) noteLive() {
	var live uint64
	p.streams.Each(func(c *pool.Counters) { live += c.Live.Load() })
	p.src.NoteLive(live)
}

// namedRequest makes an out-of-memory error name the caller's request,
// with the rounded size the source was asked for beside it.
func namedRequest(err error, size uint64) error {
	var oom *pool.OutOfMemoryError
	if errors.As(err, &oom) {
		oom.Rounded, oom.RoundedTo = oom.Request, "block"
		oom.Request = size
	}
	return err
}

// Source is where the pool's memory comes from: its limits and reserved
// bytes, one atomic load away, for layers that wrap the pool (gcpressure).
func (p *Pool) Source() *pool.Source { return p.src }
