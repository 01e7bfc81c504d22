package gocuda

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/memprof"
	"github.com/gocuda/gocuda/pool"
)

// Graph pools: the memory a CUDA graph's captured work uses lives as long
// as the graph (PyTorch's graph pools), so each graph has a pool of its
// own, made here with the registry's other pools and listed with them:
// PoolStatus and MemoryStatus show each under its device. Unlike a
// device's pools, nothing acts on a graph pool from outside: ReclaimAll,
// idle trimming and the pacer never see it (the graph's replays write the
// memory it holds whether or not an array does), and it has no limits or
// early collection (an allocation inside a capture must not run the
// collector or synchronize). Its layers: the strategy "simple" on the
// device's memory, and leak tracing.

// graphPoolStrategy is the strategy of every graph pool: a graph's
// allocations are few and repeat exactly from one capture to the next.
const graphPoolStrategy = "simple"

// GraphPool is one graph's pool, as PoolStatus reports it.
type GraphPool struct {
	// Name is the graph's name, "graph 3".
	Name string
	// Closed: the graph was closed or collected; the pool is listed until
	// its last live block (an array the program still holds) is freed.
	Closed bool
	Stats  pool.Stats
}

var graphPools struct {
	sync.Mutex
	list []*graphPool
	next int
}

// NewGraphPool makes a pool private to one graph on device ordinal, whose
// blocks are all handed out on stream home (the capturing stream), and
// lists it in the registry as "graph N". CloseGraphPool gives it back.
// It is for cuarray.Capture; a program has no other use for it.
func NewGraphPool(ordinal int, home backend.Stream) (pool.Pool, error) {
	if home == nil {
		return nil, fmt.Errorf("gocuda: NewGraphPool(device %d): nil stream: %w", ordinal, backend.ErrInvalidValue)
	}
	// The device's pool first: its making checks the knobs and the device,
	// and a device's graph pools are shown under it.
	if _, err := Pool(ordinal); err != nil {
		return nil, err
	}
	dev, err := Device(ordinal)
	if err != nil {
		return nil, err
	}
	if home.Device() != dev {
		return nil, fmt.Errorf("gocuda: NewGraphPool(device %d): stream %d is of device %d: %w",
			ordinal, home.ID(), home.Device().Ordinal(), backend.ErrInvalidValue)
	}
	inner, err := pool.New(graphPoolStrategy, dev, pool.Limits{})
	if err != nil {
		return nil, fmt.Errorf("gocuda: graph pool on device %d: %w", ordinal, err)
	}
	graphPools.Lock()
	graphPools.next++
	g := &graphPool{inner: inner, home: home, device: ordinal, name: fmt.Sprintf("graph %d", graphPools.next)}
	g.traced = memprof.Wrap(g)
	graphPools.list = append(graphPools.list, g)
	graphPools.Unlock()
	return g.traced, nil
}

// CloseGraphPool gives p, from NewGraphPool, back: at once if no block is
// live, else once the last live block is freed (arrays the program still
// holds keep their memory). Until then PoolStatus lists it as closed.
// Closing it twice is an error.
func CloseGraphPool(p pool.Pool) error {
	g := findGraphPool(p)
	if g == nil {
		return fmt.Errorf("gocuda: CloseGraphPool of a pool that is not a live graph pool (%T): %w", p, backend.ErrInvalidValue)
	}
	if !g.closed.CompareAndSwap(false, true) {
		return fmt.Errorf("gocuda: CloseGraphPool of %s twice: %w", g.name, backend.ErrInvalidValue)
	}
	return g.maybeRelease()
}

func findGraphPool(p pool.Pool) *graphPool {
	graphPools.Lock()
	defer graphPools.Unlock()
	for _, g := range graphPools.list {
		if g.traced == p || pool.Pool(g) == p {
			return g
		}
	}
	return nil
}

// graphPoolsMade lists the graph pools of device ordinal.
func graphPoolsMade(ordinal int) []GraphPool {
	graphPools.Lock()
	list := slices.Clone(graphPools.list)
	graphPools.Unlock()
	var out []GraphPool
	for _, g := range list {
		if g.device == ordinal {
			out = append(out, GraphPool{Name: g.name, Closed: g.closed.Load(), Stats: g.Stats()})
		}
	}
	return out
}

// graphPool is a graph's pool: the strategy's pool, every block handed out
// and cached on the graph's home stream, given back to the driver only
// when the graph is closed and no block is live.
type graphPool struct {
	inner  pool.Pool
	traced *memprof.Pool
	home   backend.Stream
	device int
	name   string

	mu       sync.Mutex // orders the release after the last free
	closed   atomic.Bool
	released bool
}

var _ pool.Pool = (*graphPool)(nil)

func (g *graphPool) Name() string           { return graphPoolStrategy }
func (g *graphPool) Device() backend.Device { return g.inner.Device() }

// Alloc serves the graph's capture, on its home stream only.
func (g *graphPool) Alloc(size uint64, s backend.Stream) (*pool.Block, error) {
	if s != g.home {
		return nil, fmt.Errorf("gocuda: %s: allocation on stream %d; a graph's pool serves its capturing stream %d only: %w",
			g.name, streamID(s), g.home.ID(), backend.ErrInvalidValue)
	}
	if g.closed.Load() {
		return nil, fmt.Errorf("gocuda: %s: allocation after the graph was closed: %w", g.name, backend.ErrInvalidValue)
	}
	b, err := g.inner.Alloc(size, g.home)
	if err != nil {
		return nil, err
	}
	b.Owner = g // Free checks that the block is the graph's
	return b, nil
}

// Free caches b on the home stream. A block last used on another stream
// is waited for first (once, by the host), so that a replay on the home
// stream never runs under that stream's work.
func (g *graphPool) Free(b *pool.Block, s backend.Stream) error {
	if b == nil || b.Owner != pool.Pool(g) {
		return fmt.Errorf("gocuda: %s: Free of a block this pool did not allocate: %w", g.name, backend.ErrInvalidValue)
	}
	if s != nil && s != g.home && !backend.Capturing(s) {
		if err := s.Synchronize(); err != nil {
			_ = g.inner.Device().Synchronize()
		}
	}
	b.Owner = g.inner
	if err := g.inner.Free(b, g.home); err != nil {
		b.Owner = g
		return err
	}
	if g.closed.Load() {
		_ = g.maybeRelease()
	}
	return nil
}

// maybeRelease gives the memory back once the graph is closed and no
// block is live, and drops the pool from the registry.
func (g *graphPool) maybeRelease() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.released || g.inner.Stats().Live > 0 {
		return nil
	}
	g.released = true
	graphPools.Lock()
	graphPools.list = slices.DeleteFunc(graphPools.list, func(x *graphPool) bool { return x == g })
	graphPools.Unlock()
	return g.inner.Close()
}

// Reclaim gives nothing back: the graph's replays write the memory its
// pool caches. Closing the graph gives it back.
func (g *graphPool) Reclaim(uint64) uint64 { return 0 }

// RetireStream is told that a stream went away; the pool caches for its
// home stream only, whose end (the stream's Close) leaves the memory
// cached until the graph is closed.
func (g *graphPool) RetireStream(gone, heir backend.Stream) (uint64, error) { return 0, nil }

func (g *graphPool) Stats() pool.Stats { return g.inner.Stats() }

// Close is CloseGraphPool.
func (g *graphPool) Close() error {
	if !g.closed.CompareAndSwap(false, true) {
		return nil
	}
	return g.maybeRelease()
}

func streamID(s backend.Stream) uint32 {
	if s == nil {
		return 0
	}
	return s.ID()
}
