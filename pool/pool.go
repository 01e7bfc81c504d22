package pool

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"

	"github.com/dustin/go-humanize"

	"github.com/gocuda/gocuda/backend"
)

// Pool hands out device memory on streams. One pool serves one device; all
// methods are safe for concurrent use.
type Pool interface {
	// Name is the strategy's name as GOCUDA_MEMORY_POOL spells it.
	Name() string
	// Device is the device whose memory the pool manages.
	Device() backend.Device
	// Alloc returns a block of at least size bytes that work queued on s
	// may use at once. Size 0 is an error wrapping backend.ErrInvalidValue;
	// no room (device or hard limit) is an *OutOfMemoryError.
	Alloc(size uint64, s backend.Stream) (*Block, error)
	// Free gives b back. s is the stream b was last used on: the pool may
	// hand b out again on s at once, and on another stream only once that
	// stream is ordered after the work queued on s so far.
	//
	// After Free the handle is the pool's: a later Alloc may return the
	// same *Block. Freeing it again while it is cached is an error
	// (wrapping backend.ErrInvalidValue); once it has been handed out
	// again, a second Free of the old handle cannot be told from the new
	// owner's and frees that allocation. Drop the handle at Free, as
	// cuarray does by taking it under a lock.
	Free(b *Block, s backend.Stream) error
	// Reclaim gives at least n bytes of cached (free) memory back to the
	// driver when it can, and returns how many bytes it gave back.
	// Reclaim(math.MaxUint64) empties the cache.
	Reclaim(n uint64) uint64
	// RetireStream is told that stream gone is going away: all the work
	// queued on it has finished and no more will be. The pool gives the
	// memory it caches for gone back to the driver, and hands what it
	// cannot give back (memory shared with blocks still live) to heir, a
	// live stream of the same device, which serves it from then on. Blocks
	// still live that were last used on gone are later freed on another
	// stream as usual. Afterwards the pool caches nothing for gone, whose
	// ID a new stream may take. It returns the bytes given back.
	RetireStream(gone, heir backend.Stream) (uint64, error)
	// Stats returns the pool's figures, summed over streams.
	Stats() Stats
	// Close gives all cached memory back. Blocks still live are reported
	// in the error and their memory is not touched.
	Close() error
}

// CheckRetire is the argument check every RetireStream makes: two
// distinct streams of dev.
func CheckRetire(name string, dev backend.Device, gone, heir backend.Stream) error {
	switch {
	case gone == nil:
		return fmt.Errorf("pool %s: RetireStream of a nil stream: name the stream going away: %w", name, backend.ErrInvalidValue)
	case heir == nil:
		return fmt.Errorf("pool %s: RetireStream of stream %d with a nil heir: name a live stream of the device: %w", name, gone.ID(), backend.ErrInvalidValue)
	case gone == heir || gone.ID() == heir.ID():
		return fmt.Errorf("pool %s: RetireStream: stream %d cannot be its own heir: %w", name, gone.ID(), backend.ErrInvalidValue)
	case gone.Device().Ordinal() != dev.Ordinal() || heir.Device().Ordinal() != dev.Ordinal():
		return fmt.Errorf("pool %s: RetireStream: streams %d and %d must both be on device %d: %w", name, gone.ID(), heir.ID(), dev.Ordinal(), backend.ErrInvalidValue)
	}
	return nil
}

// All is the argument to Reclaim that empties the cache.
const All = math.MaxUint64

// Block is one allocation handed out by a pool. The pool that made it owns
// every field; callers read Ptr and Size and hand the block back to Free.
// Blocks are reused: a block must not be used after Free.
type Block struct {
	// Ptr is the block's device address, aligned to at least Alignment.
	Ptr backend.Ptr
	// Size is the usable size, at least the size asked for.
	Size uint64
	// Requested is what the live allocation asked for (0 while cached).
	Requested uint64
	// Stream is the stream the block was last used on.
	Stream backend.Stream

	// The fields below belong to the pool implementation that made the
	// block; they let strategies link blocks without side tables, so the
	// hot path needs no map lookups.

	// Prev and Next link neighbours (in a segment, or in a free list).
	Prev, Next *Block
	// Seg is the segment the block was carved from, if any.
	Seg any
	// Class is a size class or bin index.
	Class int32
	// Free says whether the block is in the pool's cache.
	Free bool
	// Owner identifies the pool that made the block, so a block handed to
	// the wrong pool is an error rather than corruption.
	Owner Pool
}

// Alignment every pool guarantees for Block.Ptr: what cudaMalloc gives
// (256 bytes), so kernels may use vector loads on any block.
const Alignment = 256

// RoundUp rounds n up to a multiple of a, a power of two.
func RoundUp(n, a uint64) uint64 { return (n + a - 1) &^ (a - 1) }

// Factory makes a pool for dev drawing its memory from src.
type Factory func(dev backend.Device, src *Source) (Pool, error)

var registry = struct {
	sync.Mutex
	m map[string]Factory
}{m: map[string]Factory{}}

// Register makes a strategy available to New under name. Strategies call it
// from init; importing a strategy's package is what makes it selectable.
func Register(name string, f Factory) {
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.m[name]; dup {
		panic("pool: strategy " + name + " registered twice")
	}
	registry.m[name] = f
}

// Registered lists the registered strategy names, sorted.
func Registered() []string {
	registry.Lock()
	defer registry.Unlock()
	names := make([]string, 0, len(registry.m))
	for n := range registry.m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// New makes the strategy called name for dev, with limits.
func New(name string, dev backend.Device, limits Limits) (Pool, error) {
	registry.Lock()
	f, ok := registry.m[name]
	registry.Unlock()
	if !ok {
		return nil, fmt.Errorf("pool: no strategy %q: registered strategies are %s", name, strings.Join(Registered(), ", "))
	}
	src, err := NewSource(dev, limits)
	if err != nil {
		return nil, err
	}
	return f(dev, src)
}

// Stats are a pool's figures. Byte counts are exact at the moment they
// are read; LivePeak is sampled (see below).
type Stats struct {
	// Live is the bytes of blocks handed out and not yet freed (block
	// sizes, after rounding); Requested is what their callers asked for.
	Live, Requested uint64
	// LivePeak is the highest Live seen when the pool took memory from the
	// driver or when Stats was read: keeping an exact peak would need one
	// counter that every goroutine writes on every allocation.
	LivePeak uint64
	// Reserved is the bytes taken from the driver and not given back;
	// ReservedPeak its high-water mark.
	Reserved, ReservedPeak uint64
	// Allocs and Frees count successful Alloc and Free calls; Hits counts allocations
	// served from the cache, Misses those that needed the driver.
	Allocs, Frees, Hits, Misses uint64
	// DriverAllocs and DriverFrees count calls into the driver.
	DriverAllocs, DriverFrees uint64
	// Reclaimed is the bytes given back by Reclaim and the soft limit.
	Reclaimed uint64
	// SoftLimit and HardLimit in force, 0 when none.
	SoftLimit, HardLimit uint64
}

// LiveError is what Close returns: nil when every block was freed, else an
// error naming the pool and the blocks and bytes still live, whose memory
// the pool leaves alone.
func LiveError(name string, st Stats) error {
	n := st.Allocs - st.Frees
	if n == 0 {
		return nil
	}
	return fmt.Errorf("pool %s: closed with %d blocks (%s, %d bytes) still live; their memory stays reserved (%s reserved)",
		name, n, humanize.IBytes(st.Live), st.Live, humanize.IBytes(st.Reserved))
}

// Cached is the reserved memory not handed out.
func (s Stats) Cached() uint64 {
	if s.Reserved < s.Live {
		return 0
	}
	return s.Reserved - s.Live
}

// HitRate is the share of allocations served from the cache.
func (s Stats) HitRate() float64 {
	if s.Allocs == 0 {
		return 0
	}
	return float64(s.Hits) / float64(s.Allocs)
}

func (s Stats) String() string {
	return fmt.Sprintf("live %s (requested %s), reserved %s (peak %s), cached %s, %d allocs, %d frees, hit rate %.1f%%, %d driver allocs, %d driver frees",
		humanize.IBytes(s.Live), humanize.IBytes(s.Requested), humanize.IBytes(s.Reserved), humanize.IBytes(s.ReservedPeak),
		humanize.IBytes(s.Cached()), s.Allocs, s.Frees, 100*s.HitRate(), s.DriverAllocs, s.DriverFrees)
}
