package trace

import (
	"errors"
	"fmt"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/pool"
)

// Options change how Replay treats failures.
type Options struct {
	// ContinueOnOOM counts an allocation that fails for want of memory
	// and goes on (the matching free is skipped) instead of stopping with
	// the error. Useful with a hard limit, to see how often a pool would
	// fail a workload rather than only whether it does.
	ContinueOnOOM bool
}

// Result is what one replay measured.
type Result struct {
	// Pool is the pool's name.
	Pool string
	// Events is how many events ran (all of the trace's unless the
	// replay stopped early); Allocs and Frees split them.
	Events, Allocs, Frees int
	// Elapsed is the wall time of the event loop alone.
	Elapsed time.Duration
	// EventsPerSec is Events / Elapsed.
	EventsPerSec float64
	// PeakLive is the trace's exact peak of live requested bytes
	// (PeakLive), whatever the pool rounded them to.
	PeakLive uint64
	// PeakReserved is the pool's high-water mark of memory taken from the
	// device (Stats.ReservedPeak).
	PeakReserved uint64
	// ReservedPerLive is PeakReserved / PeakLive: 1 is perfect, the excess
	// is memory lost to rounding, fragmentation and caching.
	ReservedPerLive float64
	// HitRate is the share of allocations the pool served from its cache.
	HitRate float64
	// DriverAllocs and DriverFrees count the pool's calls into the driver
	// during the replay.
	DriverAllocs, DriverFrees uint64
	// OOMs counts allocations that failed for want of memory (at most one
	// unless Options.ContinueOnOOM).
	OOMs int
	// Leftover is how many allocations were still live at the end of the
	// trace; Replay frees them after the timed loop so the pool can be
	// closed cleanly.
	Leftover int
	// Stats is the pool's figures at the end of the timed loop.
	Stats pool.Stats
}

// Replay runs every event of tr through p with default Options: see
// ReplayWithOptions.
func Replay(tr *Trace, p pool.Pool, streams []backend.Stream) (Result, error) {
	return ReplayWithOptions(tr, p, streams, Options{})
}

// ReplayWithOptions runs every event of tr through p: an allocation is
// p.Alloc(size, streams[k]) and a free is p.Free(block, streams[k]), where
// k is the event's dense stream index (streams must have tr.Streams()
// entries) and a free goes to the stream the block was allocated on. Block
// memory is never touched, so on the host backend untouched bytes cost no
// RAM. p should be fresh: PeakReserved is the pool's high-water mark since
// it was made. Allocations still live at the end are freed after timing.
//
// An out-of-memory allocation stops the replay with an error naming the
// event and its trace line, unless opt.ContinueOnOOM; the Result returned
// alongside an error holds what was measured up to it.
func ReplayWithOptions(tr *Trace, p pool.Pool, streams []backend.Stream, opt Options) (res Result, err error) {
	if len(streams) < tr.Streams() {
		return res, fmt.Errorf("trace: replaying %s needs %d streams, got %d", tr.label(), tr.Streams(), len(streams))
	}
	res.Pool = p.Name()
	res.PeakLive, _ = PeakLive(tr)
	before := p.Stats()

	// blocks[slot] is the live block of the allocation in that slot; nil
	// while the slot is free or after its allocation ran out of memory.
	blocks := make([]*pool.Block, tr.Slots)
	// Whatever happens, give the pool back every block still held, so the
	// caller can Close it and see only the pool's own leaks.
	defer func() {
		n, ferr := freeAll(p, blocks, streams, tr)
		res.Leftover = n
		if err == nil && ferr != nil {
			err = ferr
		}
	}()

	evs := tr.Events
	var allocs, frees, ooms int
	i := 0
	start := time.Now()
	// The loop does nothing but index the event, the stream and the slot
	// table: everything else was resolved at parse time, so the time
	// measured is the pool's.
	for ; i < len(evs); i++ {
		e := &evs[i]
		s := streams[e.Stream]
		if e.Op == Alloc {
			b, aerr := p.Alloc(e.Size, s)
			if aerr != nil {
				if errors.Is(aerr, backend.ErrOutOfMemory) {
					ooms++
					if opt.ContinueOnOOM {
						continue
					}
				}
				err = fmt.Errorf("trace: %s event %d (%s): alloc %s on stream %d: %w",
					tr.label(), i, tr.lineLabel(i), humanize.IBytes(e.Size), tr.StreamNumbers[e.Stream], aerr)
				break
			}
			blocks[e.Slot] = b
			allocs++
			continue
		}
		b := blocks[e.Slot]
		if b == nil {
			continue // its allocation ran out of memory and was skipped
		}
		blocks[e.Slot] = nil
		if ferr := p.Free(b, s); ferr != nil {
			err = fmt.Errorf("trace: %s event %d (%s): free on stream %d: %w",
				tr.label(), i, tr.lineLabel(i), tr.StreamNumbers[e.Stream], ferr)
			break
		}
		frees++
	}
	res.Elapsed = time.Since(start)

	after := p.Stats()
	res.Stats = after
	res.Events = allocs + frees
	res.Allocs, res.Frees, res.OOMs = allocs, frees, ooms
	if res.Elapsed > 0 {
		res.EventsPerSec = float64(res.Events) / res.Elapsed.Seconds()
	}
	res.PeakReserved = after.ReservedPeak
	if res.PeakLive > 0 {
		res.ReservedPerLive = float64(res.PeakReserved) / float64(res.PeakLive)
	}
	// Counters are differences, so a pool that was used before still
	// reports this replay's calls (its ReservedPeak cannot be rebased).
	if n := after.Allocs - before.Allocs; n > 0 {
		res.HitRate = float64(after.Hits-before.Hits) / float64(n)
	}
	res.DriverAllocs = after.DriverAllocs - before.DriverAllocs
	res.DriverFrees = after.DriverFrees - before.DriverFrees
	return res, err
}

// freeAll frees every block still in blocks, each on the stream of the
// allocation that made it, and returns how many there were and the first
// error.
func freeAll(p pool.Pool, blocks []*pool.Block, streams []backend.Stream, tr *Trace) (int, error) {
	n := 0
	var first error
	for slot, b := range blocks {
		if b == nil {
			continue
		}
		n++
		blocks[slot] = nil
		// b.Stream is the stream the pool handed it out on: one of ours
		// (pools set it; fall back to the first stream if one did not).
		s := b.Stream
		if s == nil && len(streams) > 0 {
			s = streams[0]
		}
		if err := p.Free(b, s); err != nil && first == nil {
			first = fmt.Errorf("trace: %s: freeing an allocation live at the end: %w", tr.label(), err)
		}
	}
	return n, first
}

func (t *Trace) label() string {
	if t.Name != "" {
		return t.Name
	}
	return "trace"
}

func (t *Trace) lineLabel(i int) string {
	if l := t.Line(i); l > 0 {
		return fmt.Sprintf("line %d", l)
	}
	return "no line"
}
