package tracetest

import (
	"fmt"
	"sync"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/pool"
)

// ExactPool is the smallest pool that keeps the pool rules, for testing
// Replay without depending on a real strategy: with cache off every
// allocation goes to the driver (like pool/none); with cache on, a freed
// block is kept and handed out again only for the same rounded size on the
// same stream. One mutex for everything: it is a test double, not a
// strategy.
type ExactPool struct {
	dev   backend.Device
	src   *pool.Source
	cache bool

	mu     sync.Mutex
	free   map[cacheKey][]*pool.Block
	counts pool.Counters
}

type cacheKey struct {
	size   uint64
	stream uint32
}

// NewExact makes an ExactPool drawing from src; cache says whether freed
// blocks are kept for reuse.
func NewExact(dev backend.Device, src *pool.Source, cache bool) *ExactPool {
	return &ExactPool{dev: dev, src: src, cache: cache, free: map[cacheKey][]*pool.Block{}}
}

// Names under which Register registers the two flavours.
const (
	ExactName   = "test-exact"
	NoCacheName = "test-nocache"
)

var registerOnce sync.Once

// Register registers ExactPool as "test-exact" (caching) and
// "test-nocache", once per process, so that tests of code that walks
// pool.Registered have pools to walk before any real strategy exists.
func Register() {
	registerOnce.Do(func() {
		pool.Register(ExactName, func(dev backend.Device, src *pool.Source) (pool.Pool, error) {
			return NewExact(dev, src, true), nil
		})
		pool.Register(NoCacheName, func(dev backend.Device, src *pool.Source) (pool.Pool, error) {
			return NewExact(dev, src, false), nil
		})
	})
}

// Name is "test-exact" or "test-nocache".
func (p *ExactPool) Name() string {
	if p.cache {
		return ExactName
	}
	return NoCacheName
}

// Device is the device the pool serves.
func (p *ExactPool) Device() backend.Device { return p.dev }

func streamID(s backend.Stream) uint32 {
	if s == nil {
		return 0
	}
	return s.ID()
}

// Alloc serves size bytes on s from the cache (same rounded size, same
// stream) or the source.
func (p *ExactPool) Alloc(size uint64, s backend.Stream) (*pool.Block, error) {
	if size == 0 {
		return nil, fmt.Errorf("exact pool: alloc of %d bytes: %w", size, backend.ErrInvalidValue)
	}
	rounded := pool.RoundUp(size, pool.Alignment)
	key := cacheKey{rounded, streamID(s)}
	p.mu.Lock()
	if l := p.free[key]; len(l) > 0 {
		b := l[len(l)-1]
		p.free[key] = l[:len(l)-1]
		b.Free, b.Requested, b.Stream = false, size, s
		p.counts.OnAlloc(b.Size, size, true)
		p.mu.Unlock()
		return b, nil
	}
	p.mu.Unlock()
	ptr, err := p.src.Alloc(rounded, p.Reclaim)
	if err != nil {
		return nil, err
	}
	b := &pool.Block{Ptr: ptr, Size: rounded, Requested: size, Stream: s, Owner: p}
	p.counts.OnAlloc(rounded, size, false)
	return b, nil
}

// Free caches b for s, or gives it back to the source when caching is off.
func (p *ExactPool) Free(b *pool.Block, s backend.Stream) error {
	if b == nil || b.Owner != pool.Pool(p) || b.Free {
		return fmt.Errorf("exact pool: free of a block it does not hold: %w", backend.ErrInvalidValue)
	}
	p.counts.OnFree(b.Size, b.Requested)
	b.Free, b.Requested, b.Stream = true, 0, s
	if !p.cache {
		return p.src.Release(b.Ptr, b.Size, s)
	}
	p.mu.Lock()
	key := cacheKey{b.Size, streamID(s)}
	p.free[key] = append(p.free[key], b)
	p.mu.Unlock()
	return nil
}

// Reclaim gives back cached blocks until n bytes are returned.
func (p *ExactPool) Reclaim(n uint64) uint64 {
	p.mu.Lock()
	var out []*pool.Block
	var got uint64
	for k, l := range p.free {
		for len(l) > 0 && got < n {
			b := l[len(l)-1]
			l = l[:len(l)-1]
			out = append(out, b)
			got += b.Size
		}
		p.free[k] = l
	}
	p.mu.Unlock()
	for _, b := range out {
		_ = p.src.Release(b.Ptr, b.Size, b.Stream)
	}
	p.src.NoteReclaimed(got)
	return got
}

// RetireStream gives the blocks cached for gone back to the source.
func (p *ExactPool) RetireStream(gone, heir backend.Stream) (uint64, error) {
	if err := pool.CheckRetire("exact", p.dev, gone, heir); err != nil {
		return 0, err
	}
	p.mu.Lock()
	var out []*pool.Block
	for k, l := range p.free {
		if k.stream == gone.ID() {
			out = append(out, l...)
			delete(p.free, k)
		}
	}
	p.mu.Unlock()
	var got uint64
	for _, b := range out {
		if p.src.Release(b.Ptr, b.Size, nil) == nil {
			got += b.Size
		}
	}
	p.src.NoteReclaimed(got)
	return got, nil
}

// Stats sums the counters and the source's figures.
func (p *ExactPool) Stats() pool.Stats {
	var st pool.Stats
	p.counts.AddTo(&st)
	p.src.Fill(&st)
	return st
}

// Close empties the cache and reports live bytes.
func (p *ExactPool) Close() error {
	p.Reclaim(pool.All)
	if st := p.Stats(); st.Live > 0 {
		return fmt.Errorf("exact pool: %d bytes still live", st.Live)
	}
	return nil
}
