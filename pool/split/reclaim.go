package split

import (
	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/pool"
)

// Reclaim gives back at least n bytes of cached memory when it can, from
// every stream, and returns how many bytes it gave back:
//
//   - an ordinary segment goes back to the driver when all of it is free;
//   - in a virtual segment, every chunk of physical memory that lies
//     entirely inside a free block is unmapped and released, wherever it
//     is in the segment (the end or the middle), highest addresses first;
//   - Reclaim(pool.All) also gives back the address space of virtual
//     segments left with nothing mapped.
//
// Each stream's blocks are taken out of its cache under its lock; the
// stream is synchronized and the memory released after the lock is let
// go, so allocations on that stream are held up only for the bookkeeping.
func (p *Pool) Reclaim(n uint64) uint64 {
	// Memory the driver refused to take back before comes first.
	got := p.src.RetryOrphans()
	p.streams.Each(func(st *streamState) {
		if got < n {
			got += p.reclaimStream(st, n-got, nil)
		}
	})
	if n == pool.All && p.vm != nil {
		p.streams.Each(p.releaseEmpty)
	}
	if got > 0 {
		p.src.NoteReclaimed(got)
	}
	return got
}

// run is a range of whole mapped chunks of a virtual segment, taken out
// of the free set (as block b, neither free nor live) while it is
// unmapped.
type run struct {
	seg    *segment
	b      *pool.Block
	chunks []chunk
	failed []bool // chunks that could not be unmapped
}

// reclaimStream gives back at least want bytes of st's cached memory if it
// can. With moving set it only unmaps chunks of virtual segments and hands
// them (still charged) to *moving instead of releasing them, for the
// caller to map elsewhere.
func (p *Pool) reclaimStream(st *streamState, want uint64, moving *[]chunk) uint64 {
	return p.reclaimWhere(st, want, moving, nil)
}

// reclaimWhere is reclaimStream for the segments pick accepts (all when
// pick is nil).
func (p *Pool) reclaimWhere(st *streamState, want uint64, moving *[]chunk, pick func(*segment) bool) uint64 {
	var segs []*segment
	var runs []run
	var planned uint64

	st.mu.Lock()
	for k := range st.heaps {
		h := &st.heaps[k]
		for i := 0; i < len(h.segs) && planned < want; {
			seg := h.segs[i]
			if pick != nil && !pick(seg) {
				i++
				continue
			}
			if !seg.virtual {
				if b := seg.first; moving == nil && b.Free && b.Size == seg.size {
					h.free.remove(b)
					st.recycle(b)
					h.removeSeg(seg) // moves the last segment to i
					segs = append(segs, seg)
					planned += seg.size
					continue
				}
			} else {
				runs, planned = st.takeRuns(h, seg, runs, planned, want)
			}
			i++
		}
	}
	stream := st.stream
	st.mu.Unlock()

	if len(segs) == 0 && len(runs) == 0 {
		return 0
	}
	// The memory may still be read or written by work queued on the
	// stream before it was freed. If that cannot be waited for, nothing
	// is given back: it all goes back to the cache.
	var got uint64
	var kept []*segment
	if p.syncStream(stream) != nil {
		kept = segs
		for i := range runs {
			clear(runs[i].failed)
			for j := range runs[i].failed {
				runs[i].failed[j] = true
			}
		}
	} else {
		for _, seg := range segs {
			if err := p.src.Release(seg.base, seg.size, nil); err != nil {
				kept = append(kept, seg)
				continue
			}
			got += seg.size
		}
		for i := range runs {
			got += p.unmapRun(&runs[i], moving)
		}
	}

	if len(kept) > 0 {
		st.mu.Lock()
		for _, seg := range kept {
			st.newSegment(seg.heap, seg.base, seg.size, false, 0)
		}
		st.mu.Unlock()
	}
	// A run goes back under its segment's owner of the moment: while the
	// lock was let go, RetireStream may have moved the segment to an heir.
	for _, r := range runs {
		owner := r.seg.lockOwner()
		for j, bad := range r.failed {
			if bad {
				r.seg.setMapped(r.chunks[j])
			}
		}
		owner.putBack(r.seg.heap, r.seg, r.b)
		owner.mu.Unlock()
	}
	return got
}

// takeRuns takes out of h's free set the runs of mapped chunks that lie
// wholly inside seg's free blocks, from the top of the segment down, until
// planned reaches want, and marks them unmapped.
func (st *streamState) takeRuns(h *heap, seg *segment, runs []run, planned, want uint64) ([]run, uint64) {
	g := seg.gran
	for b := seg.last; b != nil && planned < want; {
		prev := b.Prev
		if !b.Free || len(seg.granules) == 0 {
			b = prev
			continue
		}
		// Whole granules of b: [lo, hi).
		off, end := uint64(b.Ptr-seg.base), uint64(b.Ptr-seg.base)+b.Size
		lo, hi := (off+g-1)/g, min(end/g, uint64(len(seg.granules)))
		for i := hi; i > lo && planned < want; {
			// Skip down to the top of a chunk that lies within [lo, i).
			if !seg.isMapped(i - 1) {
				i--
				continue
			}
			if c := seg.chunkAt(i - 1); c.head < lo || c.head+c.n != i {
				i = max(c.head, lo) // sticks out of b
				continue
			}
			top := i
			var chunks []chunk
			for i > lo && seg.isMapped(i-1) && planned+(top-i)*g < want {
				c := seg.chunkAt(i - 1)
				if c.head < lo || c.head+c.n != i {
					break
				}
				chunks = append(chunks, c)
				i = c.head
			}
			for _, c := range chunks {
				seg.setUnmapped(c)
			}
			r := run{seg: seg, chunks: chunks, failed: make([]bool, len(chunks))}
			r.b = st.isolate(h, seg, b, i*g, (top-i)*g)
			runs = append(runs, r)
			planned += (top - i) * g
			if r.b == b {
				break // the run started at b: nothing of b is left below it
			}
		}
		b = prev
	}
	return runs, planned
}

// isolate cuts [off, off+size) (offsets in seg) out of free block b and
// returns it as a block of its own, out of the free set and not free, so
// that neither allocations nor merges touch it. What is left of b below
// and above stays free; b keeps the part below, if any.
func (st *streamState) isolate(h *heap, seg *segment, b *pool.Block, off, size uint64) *pool.Block {
	h.free.remove(b)
	start := seg.base + backend.Ptr(off)
	if end := uint64(start-b.Ptr) + size; end < b.Size {
		h.free.insert(st.splitAfter(seg, b, end))
	}
	mid := b
	if start > b.Ptr {
		mid = st.splitAfter(seg, b, uint64(start-b.Ptr))
		h.free.insert(b)
	}
	mid.Free = false
	return mid
}

// unmapRun unmaps and releases the chunks of r, uncharging each, and
// returns the bytes given back; with moving set, the chunks are appended
// to it instead of released. Chunks that fail to unmap are marked in
// r.failed and stay mapped.
func (p *Pool) unmapRun(r *run, moving *[]chunk) uint64 {
	var got uint64
	g := r.seg.gran
	for j, c := range r.chunks {
		if err := p.vm.Unmap(r.seg.base+backend.Ptr(c.head*g), c.n*g); err != nil {
			r.failed[j] = true
			continue
		}
		got += c.n * g
		if moving != nil {
			*moving = append(*moving, c)
			continue
		}
		p.releaseChunk(c.phys, c.n*g)
	}
	return got
}

// releaseChunk releases an unmapped chunk's physical memory and uncharges
// it; if the driver refuses, the source keeps it (still charged, as the
// driver still holds it) and retries in a later Reclaim.
func (p *Pool) releaseChunk(ph backend.Physical, size uint64) {
	if err := p.vm.ReleasePhysical(ph); err != nil {
		p.src.Orphan(size, func() error { return p.vm.ReleasePhysical(ph) })
		return
	}
	p.src.Uncharge(size)
	p.src.CountDriverCalls(0, 1)
}

// releaseEmpty gives back the address space of st's virtual segments that
// have nothing mapped and nothing live.
func (p *Pool) releaseEmpty(st *streamState) { p.releaseEmptyWhere(st, nil) }

// releaseEmptyWhere is releaseEmpty for the segments pick accepts (all
// when pick is nil).
func (p *Pool) releaseEmptyWhere(st *streamState, pick func(*segment) bool) {
	var empty []*segment
	st.mu.Lock()
	for k := range st.heaps {
		h := &st.heaps[k]
		for i := 0; i < len(h.segs); {
			seg := h.segs[i]
			if (pick == nil || pick(seg)) && seg.virtual && seg.live == 0 && seg.mapped == 0 && seg.first == seg.last && seg.first.Free {
				h.free.remove(seg.first)
				st.recycle(seg.first)
				h.removeSeg(seg)
				empty = append(empty, seg)
				continue
			}
			i++
		}
	}
	st.mu.Unlock()
	for _, seg := range empty {
		_ = p.vm.ReleaseAddress(seg.base, seg.size)
	}
}

// syncStream waits for the work queued on s. A stream destroyed since
// (its ID may even be reused) cannot be synchronized; the device is
// instead. An error says neither could be waited for.
func (p *Pool) syncStream(s backend.Stream) error {
	if s == nil || s.Synchronize() == nil {
		return nil
	}
	return p.dev.Synchronize()
}
