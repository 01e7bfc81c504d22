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
	// total is the device's memory: no request beyond it can succeed.
	total uint64

	// charged is what the hard limit is checked against: reserved plus
	// what driver calls under way (Take) may add. reserved counts only
	// what the driver gave, so that neither Reserved nor its peak ever
	// counts bytes the driver refused.
	charged, reserved, reservedPeak atomic.Uint64
	driverAllocs, driverFrees       atomic.Uint64
	reclaimed, livePeak             atomic.Uint64

	// orphans are releases the driver refused: memory still taken (and
	// still counted in Reserved), given back by RetryOrphans.
	orphanMu sync.Mutex
	orphans  []orphan
}

type orphan struct {
	size    uint64
	release func() error
}

// NewSource makes a source for dev. A soft limit above the hard limit is an
// error.
func NewSource(dev backend.Device, l Limits) (*Source, error) {
	if err := l.check(); err != nil {
		return nil, err
	}
	s := &Source{dev: dev}
	s.limits.Store(&l)
	if dev != nil {
		s.total = dev.Info().TotalMemory
	}
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

// Fits says whether a request of size bytes could ever be served: it is
// an *OutOfMemoryError when size is beyond the hard limit or beyond the
// device's total memory, which no reclaiming or collecting can change.
// Strategies call it before they map or reclaim anything for a request,
// so that such a request leaves the pool as it was and costs no driver
// call.
func (s *Source) Fits(size uint64) error {
	hard := s.Limits().Hard
	switch {
	case hard > 0 && size > hard:
		return &OutOfMemoryError{Request: size, Limit: hard, Reserved: s.reserved.Load(), Device: s.ordinal()}
	case s.total > 0 && size > s.total:
		// A refusal's message may cost a driver call: say what is free.
		what := ""
		if free, _, err := s.dev.MemInfo(); err == nil {
			what = fmt.Sprintf(", %s free", humanize.IBytes(free))
		}
		return &OutOfMemoryError{Request: size, Limit: s.Limits().Hard, Reserved: s.reserved.Load(), Device: s.ordinal(),
			Err: fmt.Errorf("device %d has %s (%d bytes) in all%s: %w", s.ordinal(), humanize.IBytes(s.total), s.total, what, backend.ErrOutOfMemory)}
	}
	return nil
}

func (s *Source) ordinal() int {
	if s.dev == nil {
		return 0
	}
	return s.dev.Ordinal()
}

// Take accounts size bytes that take, a driver call, is about to get by
// other means than Alloc (virtual memory, a driver pool). It fails with an
// *OutOfMemoryError, without calling take, if the bytes would pass the
// hard limit or can never fit (Fits). The bytes count against the hard
// limit while take runs, so concurrent calls cannot pass it together, but
// in Reserved and its peak only once take succeeded: a refused call
// leaves both as they were.
func (s *Source) Take(size uint64, take func() error) error {
	if err := s.Fits(size); err != nil {
		return err
	}
	hard := s.Limits().Hard
	for {
		cur := s.charged.Load()
		next := cur + size
		if next < cur || (hard > 0 && next > hard) {
			return &OutOfMemoryError{Request: size, Limit: hard, Reserved: s.reserved.Load(), Device: s.ordinal()}
		}
		if s.charged.CompareAndSwap(cur, next) {
			break
		}
	}
	if err := take(); err != nil {
		s.charged.Sub(size)
		return err
	}
	r := s.reserved.Add(size)
	for {
		p := s.reservedPeak.Load()
		if r <= p || s.reservedPeak.CompareAndSwap(p, r) {
			break
		}
	}
	s.emit(EventGrow, size)
	return nil
}

// Uncharge accounts size bytes given back to the driver.
func (s *Source) Uncharge(size uint64) {
	s.reserved.Sub(size)
	s.charged.Sub(size)
	s.emit(EventRelease, size)
}

// CountDriverCalls counts driver allocations and frees done outside Alloc
// and Release.
func (s *Source) CountDriverCalls(allocs, frees uint64) {
	s.driverAllocs.Add(allocs)
	s.driverFrees.Add(frees)
}

// Alloc takes size bytes from the driver within the hard limit. A request
// that can never fit (Fits) is refused at once. When the limit or the
// device is full it calls reclaim (the strategy's own Reclaim) for what is
// missing and tries once more; only then does it fail, with an
// *OutOfMemoryError.
func (s *Source) Alloc(size uint64, reclaim func(uint64) uint64) (backend.Ptr, error) {
	if err := s.Fits(size); err != nil {
		return 0, err
	}
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
	var p backend.Ptr
	err := s.Take(size, func() (err error) {
		p, err = s.dev.Alloc(size)
		return err
	})
	if err != nil {
		var oom *OutOfMemoryError
		if !errors.As(err, &oom) && errors.Is(err, backend.ErrOutOfMemory) {
			return 0, &OutOfMemoryError{Request: size, Limit: s.Limits().Hard, Reserved: s.reserved.Load(), Device: s.ordinal(), Err: err}
		}
		return 0, err
	}
	s.driverAllocs.Inc()
	return p, nil
}

// Release gives memory from Alloc back to the driver once the work queued
// on stream (the block's last stream; nil for none) is done.
func (s *Source) Release(p backend.Ptr, size uint64, stream backend.Stream) error {
	if backend.Capturing(stream) || backend.DeviceCapturing(s.dev) {
		// Its work cannot be waited for until the capture ends; the
		// strategy keeps the block (FreeLater) or waits for the device.
		return fmt.Errorf("pool: giving %d bytes back while device %d has a stream capturing: %w", size, s.dev.Ordinal(), backend.ErrCapturing)
	}
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

// Orphan keeps size bytes that a strategy failed to give back to the
// driver (a failed free, or a stream that could not be synchronized
// first): they stay in Reserved, as the driver still has them taken, and
// RetryOrphans calls release for them later. release only gives the
// memory back (the Source does the accounting); it runs after the whole
// device has been synchronized, so no queued work still uses the memory.
// Size 0 is a strategy's own deferred work that takes nothing from the
// driver (a block held out of its cache until the device is idle).
func (s *Source) Orphan(size uint64, release func() error) {
	s.orphanMu.Lock()
	s.orphans = append(s.orphans, orphan{size, release})
	s.orphanMu.Unlock()
}

// FreeLater is Orphan for memory from Alloc.
func (s *Source) FreeLater(p backend.Ptr, size uint64) {
	s.Orphan(size, func() error { return s.dev.Free(p) })
}

// RetryOrphans tries again to give back what Orphan kept, once the device
// is synchronized, and returns the bytes it gave back. Strategies call it
// from Reclaim, so that Close and the out-of-memory path retry too.
func (s *Source) RetryOrphans() uint64 {
	s.orphanMu.Lock()
	defer s.orphanMu.Unlock()
	if len(s.orphans) == 0 || s.dev.Synchronize() != nil {
		return 0
	}
	var got uint64
	kept := s.orphans[:0]
	for _, o := range s.orphans {
		if o.release() != nil {
			kept = append(kept, o)
			continue
		}
		if o.size == 0 {
			continue
		}
		s.Uncharge(o.size)
		s.driverFrees.Inc()
		got += o.size
	}
	clear(s.orphans[len(kept):])
	s.orphans = kept
	return got
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
	Request uint64
	// Rounded is what the pool needed from the driver to serve Request:
	// the request rounded up to the pool's block size, or the segment it
	// would be cut from. 0 or Request when the pool asked for no more. The
	// message shows it, since a request that seems to fit under the limit
	// may not once rounded.
	Rounded uint64
	// RoundedTo says what Rounded is, for the message: "block" (also when
	// empty), "segment" (a new segment the request would be cut from), or
	// "mapping" (more of a virtual segment mapped).
	RoundedTo string
	Limit     uint64 // hard limit in force, 0 if none
	Reserved  uint64 // bytes reserved when it failed
	Device    int
	// Status is the pool's state at failure, filled by the layer that has
	// it (PoolStatus text); empty if none did.
	Status string
	Err    error // the driver's error, if the driver refused
}

func (e *OutOfMemoryError) Error() string {
	msg := fmt.Sprintf("out of device memory on device %d: cannot allocate %s (%d bytes)", e.Device,
		humanize.IBytes(e.Request), e.Request)
	if e.Rounded > e.Request {
		r := humanize.IBytes(e.Rounded)
		switch e.RoundedTo {
		case "segment":
			msg += " from a new " + r + " segment"
		case "mapping":
			msg += " by mapping " + r + " more"
		default:
			msg += " as a " + r + " block"
		}
	}
	msg += fmt.Sprintf(" with %s reserved", humanize.IBytes(e.Reserved))
	if e.Limit > 0 {
		msg += fmt.Sprintf(" under a hard limit of %s", humanize.IBytes(e.Limit))
		if e.Reserved <= e.Limit {
			// The room left, so that "3.0 MiB as a 4.0 MiB block" against
			// "3.0 MiB left" reads as the reason, not a contradiction.
			msg += fmt.Sprintf(" (%s left)", humanize.IBytes(e.Limit-e.Reserved))
		}
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
