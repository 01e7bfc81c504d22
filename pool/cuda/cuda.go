package cuda

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/pool"
)

func init() { pool.Register("cuda", New) }

// Pool is the driver's stream-ordered pool behind the pool.Pool interface.
type Pool struct {
	dev     backend.Device
	src     *pool.Source
	mp      backend.MemPool
	streams *pool.StreamTable[stream]

	mu     sync.Mutex // guards closed
	closed bool
}

// stream is one stream's counters and spare Block structs: the driver owns
// the memory, so a Block is only a handle, and recycling handles keeps the
// hot path free of Go allocations.
type stream struct {
	mu    sync.Mutex
	spare []*pool.Block
	pool.Counters
}

// New makes a driver pool on dev.
func New(dev backend.Device, src *pool.Source) (pool.Pool, error) {
	som, ok := dev.(backend.StreamOrderedMemory)
	if !ok || !dev.Info().MemoryPools {
		return nil, fmt.Errorf("pool cuda: device %d (%s) has no stream-ordered allocator; this pool needs the CUDA backend on a GPU with memory pools: %w",
			dev.Ordinal(), dev.Info().Name, backend.ErrNotSupported)
	}
	mp, err := som.NewMemPool()
	if err != nil {
		return nil, fmt.Errorf("pool cuda: creating the driver pool: %w", err)
	}
	if err := mp.SetReleaseThreshold(releaseThreshold(src.Limits())); err != nil {
		_ = mp.Destroy()
		return nil, fmt.Errorf("pool cuda: setting the release threshold: %w", err)
	}
	p := &Pool{dev: dev, src: src, mp: mp, streams: pool.NewStreamTable(func() *stream { return &stream{} })}
	// A soft limit set at run time moves the driver's threshold with it.
	src.OnLimits(p.limitsChanged)
	return p, nil
}

// releaseThreshold is what the driver pool keeps cached: the soft limit,
// or everything without one.
func releaseThreshold(l pool.Limits) uint64 {
	if l.Soft > 0 {
		return l.Soft
	}
	return math.MaxUint64
}

func (p *Pool) limitsChanged(l pool.Limits) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	if err := p.mp.SetReleaseThreshold(releaseThreshold(l)); err != nil {
		return fmt.Errorf("pool cuda: setting the release threshold to the soft limit: %w", err)
	}
	return nil
}

// Name is "cuda".
func (p *Pool) Name() string { return "cuda" }

// Device is the pool's device.
func (p *Pool) Device() backend.Device { return p.dev }

// Alloc allocates size bytes ordered on s.
func (p *Pool) Alloc(size uint64, s backend.Stream) (*pool.Block, error) {
	if size == 0 {
		return nil, fmt.Errorf("pool cuda: cannot allocate 0 bytes: %w", backend.ErrInvalidValue)
	}
	if s == nil {
		return nil, fmt.Errorf("pool cuda: Alloc needs a stream: %w", backend.ErrInvalidValue)
	}
	if err := p.src.Fits(size); err != nil {
		return nil, err // before rounding, which would wrap near 2^64
	}
	req := size
	size = pool.RoundUp(size, pool.Alignment)
	// The hard limit: bytes handed out through this pool. A request
	// beyond it or beyond the device is refused before the driver (and
	// the Reclaim below, which synchronizes the device) is bothered.
	var ptr backend.Ptr
	err := p.src.Take(size, func() (err error) {
		ptr, err = p.mp.AllocAsync(size, s)
		if errors.Is(err, backend.ErrOutOfMemory) {
			// Frees queued on other streams may not have happened yet:
			// let them, give cached memory back, and try once more.
			p.Reclaim(pool.All)
			ptr, err = p.mp.AllocAsync(size, s)
		}
		return err
	})
	if err != nil {
		var oom *pool.OutOfMemoryError
		switch {
		case errors.As(err, &oom):
			oom.Request, oom.Rounded, oom.RoundedTo = req, size, "block"
			return nil, err
		case errors.Is(err, backend.ErrOutOfMemory):
			return nil, &pool.OutOfMemoryError{Request: req, Rounded: size, RoundedTo: "block", Limit: p.src.Limits().Hard,
				Reserved: p.src.Reserved(), Device: p.dev.Ordinal(), Err: err}
		}
		return nil, fmt.Errorf("pool cuda: %w", err)
	}
	st := p.streams.Get(s)
	st.mu.Lock()
	var b *pool.Block
	if n := len(st.spare); n > 0 {
		b = st.spare[n-1]
		st.spare = st.spare[:n-1]
	}
	st.mu.Unlock()
	if b == nil {
		b = &pool.Block{}
	}
	*b = pool.Block{Ptr: ptr, Size: size, Requested: req, Stream: s, Owner: p}
	st.OnAlloc(size, req, true)
	return b, nil
}

// Free frees b ordered on s.
func (p *Pool) Free(b *pool.Block, s backend.Stream) error {
	if b == nil || b.Owner != p {
		return fmt.Errorf("pool cuda: block was not allocated by this pool: %w", backend.ErrInvalidValue)
	}
	if b.Free {
		return fmt.Errorf("pool cuda: double free of block at %#x: %w", uintptr(b.Ptr), backend.ErrInvalidValue)
	}
	if s == nil {
		s = b.Stream
	}
	if err := p.mp.FreeAsync(b.Ptr, s); err != nil {
		// The block is freed for the caller (cuarray's cleanups have
		// no one to report to); the memory stays charged until a later
		// Reclaim gets the driver to take it.
		ptr := b.Ptr
		p.src.Orphan(b.Size, func() error { return p.mp.FreeAsync(ptr, s) })
	} else {
		p.src.Uncharge(b.Size)
	}
	st := p.streams.Get(s)
	st.OnFree(b.Size, b.Requested)
	b.Free = true
	st.mu.Lock()
	if len(st.spare) < 1024 {
		st.spare = append(st.spare, b)
	}
	st.mu.Unlock()
	return nil
}

// Reclaim gives at least n bytes of the driver pool's cache back, if it
// holds that much.
func (p *Pool) Reclaim(n uint64) uint64 {
	// Frees the driver refused before are tried again; what they give
	// back is cached by the driver's pool, where the trim below finds it.
	p.src.RetryOrphans()
	// Queued frees only become reusable, and trimmable, once their streams
	// reach them.
	if err := p.dev.Synchronize(); err != nil {
		return 0
	}
	before, err := p.mp.Usage()
	if err != nil {
		return 0
	}
	keep := before.Used
	if cached := before.Reserved - before.Used; n < cached {
		keep = before.Reserved - n
	}
	if err := p.mp.Trim(keep); err != nil {
		return 0
	}
	after, err := p.mp.Usage()
	if err != nil || after.Reserved >= before.Reserved {
		return 0
	}
	got := before.Reserved - after.Reserved
	p.src.NoteReclaimed(got)
	return got
}

// Stats sums the per-stream counters and reads the driver's reserved bytes.
func (p *Pool) Stats() pool.Stats {
	var st pool.Stats
	p.streams.Each(func(s *stream) { s.AddTo(&st) })
	p.src.Fill(&st)
	if u, err := p.mp.Usage(); err == nil {
		st.Reserved, st.ReservedPeak = u.Reserved, u.ReservedHigh
	}
	return st
}

// Close gives the cache back and destroys the driver pool; with blocks
// still live it reports them and keeps the pool.
func (p *Pool) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	if err := pool.LiveError("cuda", p.Stats()); err != nil {
		return err
	}
	p.Reclaim(pool.All)
	p.closed = true
	return p.mp.Destroy()
}

// Source is where the pool's memory comes from: its limits and reserved
// bytes, one atomic load away, for layers that wrap the pool (gcpressure).
func (p *Pool) Source() *pool.Source { return p.src }
