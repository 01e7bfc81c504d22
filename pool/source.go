package pool

import (
	"errors"
	"fmt"
	"sync"

	"github.com/dustin/go-humanize"
	"go.uber.org/atomic"

	"github.com/gocuda/gocuda/backend"
)

// Limits are the memory limits of one pool, in bytes; 0 means none.
type Limits struct {
	// Soft: above it, memory a pool has cached is given back to the driver.
	Soft uint64
	// Hard: reserved memory never goes past it.
	Hard uint64
}

// Source is where every strategy gets its device memory: it enforces the
// hard limit, counts reserved bytes and driver calls, and says when the
// soft limit is exceeded. Limits and reserved-memory figures live here, once,
// instead of in each strategy.
//
// Source is on the slow path only (a cache miss or a release), so a few
// shared atomics are fine here.
type Source struct {
	dev backend.Device
	// limits is replaced whole by SetLimits, so that a reader never sees
	// one limit old and the other new.
	limits atomic.Pointer[Limits]
	// mu orders SetLimits calls and guards watchers.
	mu       sync.Mutex
	watchers []func(Limits) error

	reserved, reservedPeak    atomic.Uint64
	driverAllocs, driverFrees atomic.Uint64
	reclaimed, livePeak       atomic.Uint64
}

// NewSource makes a source for dev. A soft limit above the hard limit is an
// error.
func NewSource(dev backend.Device, l Limits) (*Source, error) {
	if err := l.check(); err != nil {
		return nil, err
	}
	s := &Source{dev: dev}
	s.limits.Store(&l)
	return s, nil
}

// check rejects a soft limit above the hard limit.
func (l Limits) check() error {
	if l.Hard > 0 && l.Soft > l.Hard {
		return fmt.Errorf("pool: soft limit %s (%d bytes) is above hard limit %s (%d bytes); the soft limit must be at most the hard limit, or the hard limit 0 (none): %w",
			humanize.IBytes(l.Soft), l.Soft, humanize.IBytes(l.Hard), l.Hard, backend.ErrInvalidValue)
	}
	return nil
}

// SetLimits replaces the limits at run time: the next allocation is held
// to the new hard limit, and the next free to the new soft limit. Memory
// already reserved above them is not given back here (the caller may
// Reclaim it); live memory above a lowered hard limit stays live, and
// allocations fail until enough of it is freed. A soft limit above the
// hard limit is an error, and nothing changes. Strategies that keep a
// limit elsewhere too (the driver pool's release threshold) are told
// through OnLimits; their errors are returned, joined.
func (s *Source) SetLimits(l Limits) error {
	if err := l.check(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limits.Store(&l)
	var errs []error
	for _, fn := range s.watchers {
		if err := fn(l); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// OnLimits has SetLimits call fn with the new limits, after storing them:
// for strategies that keep a limit elsewhere too.
func (s *Source) OnLimits(fn func(Limits) error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watchers = append(s.watchers, fn)
}

// Device is the source's device.
func (s *Source) Device() backend.Device { return s.dev }

// Limits returns the limits in force.
func (s *Source) Limits() Limits { return *s.limits.Load() }

// Reserved is the bytes currently taken from the driver.
func (s *Source) Reserved() uint64 { return s.reserved.Load() }

// Charge accounts size bytes about to be taken from the driver by other
// means than Alloc (virtual memory, a driver pool). It fails with an
// *OutOfMemoryError if that would pass the hard limit.
func (s *Source) Charge(size uint64) error {
	for {
		cur := s.reserved.Load()
		next := cur + size
		if hard := s.limits.Load().Hard; hard > 0 && next > hard {
			return &OutOfMemoryError{Request: size, Limit: hard, Reserved: cur, Device: s.dev.Ordinal()}
		}
		if s.reserved.CompareAndSwap(cur, next) {
			for {
				p := s.reservedPeak.Load()
				if next <= p || s.reservedPeak.CompareAndSwap(p, next) {
					s.emit(EventGrow, size)
					return nil
				}
			}
		}
	}
}

// Uncharge accounts size bytes given back to the driver.
func (s *Source) Uncharge(size uint64) {
	s.reserved.Sub(size)
	s.emit(EventRelease, size)
}

// CountDriverCalls counts driver allocations and frees done outside Alloc
// and Release.
func (s *Source) CountDriverCalls(allocs, frees uint64) {
	s.driverAllocs.Add(allocs)
	s.driverFrees.Add(frees)
}

// Alloc takes size bytes from the driver within the hard limit. When the
// limit or the device is full it calls reclaim (the strategy's own
// Reclaim) for what is missing and tries once more; only then does it
// fail, with an *OutOfMemoryError.
func (s *Source) Alloc(size uint64, reclaim func(uint64) uint64) (backend.Ptr, error) {
	p, err := s.alloc(size)
	if err == nil || !errors.Is(err, backend.ErrOutOfMemory) || reclaim == nil {
		return p, err
	}
	if reclaim(size) == 0 {
		return 0, err
	}
	return s.alloc(size)
}

func (s *Source) alloc(size uint64) (backend.Ptr, error) {
	if err := s.Charge(size); err != nil {
		return 0, err
	}
	p, err := s.dev.Alloc(size)
	if err != nil {
		s.Uncharge(size)
		if errors.Is(err, backend.ErrOutOfMemory) {
			return 0, &OutOfMemoryError{Request: size, Limit: s.Limits().Hard, Reserved: s.reserved.Load(), Device: s.dev.Ordinal(), Err: err}
		}
		return 0, err
	}
	s.driverAllocs.Inc()
	return p, nil
}

// Release gives memory from Alloc back to the driver once the work queued
// on stream (the block's last stream; nil for none) is done.
func (s *Source) Release(p backend.Ptr, size uint64, stream backend.Stream) error {
	if stream != nil {
		if err := stream.Synchronize(); err != nil {
			return err
		}
	}
	if err := s.dev.Free(p); err != nil {
		return err
	}
	s.Uncharge(size)
	s.driverFrees.Inc()
	return nil
}

// OverSoft is how many reserved bytes are above the soft limit (0 if none).
// It is two atomic loads, cheap enough for every Free.
func (s *Source) OverSoft() uint64 {
	soft := s.limits.Load().Soft
	if soft == 0 {
		return 0
	}
	if r := s.reserved.Load(); r > soft {
		return r - soft
	}
	return 0
}

// NoteReclaimed counts bytes a strategy gave back through Reclaim or the
// soft limit.
func (s *Source) NoteReclaimed(n uint64) {
	s.reclaimed.Add(n)
	s.emit(EventReclaim, n)
}

// NoteLive records a sample of live bytes for Stats.LivePeak.
func (s *Source) NoteLive(live uint64) {
	for {
		p := s.livePeak.Load()
		if live <= p || s.livePeak.CompareAndSwap(p, live) {
			return
		}
	}
}

// Fill completes st with the source's figures. Strategies call it from
// Stats after summing their per-stream counters into st.
func (s *Source) Fill(st *Stats) {
	st.Reserved = s.reserved.Load()
	st.ReservedPeak = s.reservedPeak.Load()
	st.DriverAllocs = s.driverAllocs.Load()
	st.DriverFrees = s.driverFrees.Load()
	st.Reclaimed = s.reclaimed.Load()
	l := s.Limits()
	st.SoftLimit, st.HardLimit = l.Soft, l.Hard
	s.NoteLive(st.Live)
	st.LivePeak = s.livePeak.Load()
}

// OutOfMemoryError is an allocation that found no room. errors.Is matches
// it against backend.ErrOutOfMemory.
type OutOfMemoryError struct {
	// Request is the bytes the caller asked for. Source fills in what it was
	// asked for (a rounded size or a whole segment); strategies set the
	// caller's size before returning the error.
	Request  uint64
	Limit    uint64 // hard limit in force, 0 if none
	Reserved uint64 // bytes reserved when it failed
	Device   int
	// Status is the pool's state at failure, filled by the layer that has
	// it (PoolStatus text); empty if none did.
	Status string
	Err    error // the driver's error, if the driver refused
}

func (e *OutOfMemoryError) Error() string {
	msg := fmt.Sprintf("out of device memory on device %d: cannot allocate %s (%d bytes) with %s reserved", e.Device,
		humanize.IBytes(e.Request), e.Request, humanize.IBytes(e.Reserved))
	if e.Limit > 0 {
		msg += fmt.Sprintf(" under a hard limit of %s", humanize.IBytes(e.Limit))
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	if e.Status != "" {
		msg += "\n" + e.Status
	}
	return msg
}

// Is makes errors.Is(err, backend.ErrOutOfMemory) true.
func (e *OutOfMemoryError) Is(target error) bool { return target == backend.ErrOutOfMemory }

// Unwrap returns the driver's error.
func (e *OutOfMemoryError) Unwrap() error { return e.Err }
