package split

import (
	"errors"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/pool"
)

// allocSlow serves a request no mapped free block could: it maps chunks
// of a virtual segment (reserving one if needed) or takes an ordinary
// segment from the source. When the hard limit or the device is full it
// gives cached memory back (all streams) and tries once more.
func (p *Pool) allocSlow(st *streamState, h *heap, size, n uint64, s backend.Stream) (*pool.Block, error) {
	// A request beyond the hard limit or the device is refused before
	// anything is mapped or reclaimed for it.
	fit := n
	if p.vm != nil && !h.noVirtual {
		fit = roundUp(n, p.gran)
	}
	if err := p.src.Fits(fit); err != nil {
		if fit != n { // rounded up to whole granules to map
			return nil, p.oomNeeding(size, fit, err)
		}
		return nil, p.oom(size, err)
	}
	b, need, err := p.grow(st, h, size, n, s)
	if err != nil && need > 0 && errors.Is(err, backend.ErrOutOfMemory) && p.Reclaim(need) > 0 {
		b, need, err = p.grow(st, h, size, n, s)
	}
	if err != nil {
		return nil, p.oomNeeding(size, need, err)
	}
	p.noteLive()
	return b, nil
}

// grow is one attempt of allocSlow. On failure for want of memory in a
// virtual segment it returns how many bytes mapping still needed, for the
// caller to reclaim; ordinary segments reclaim and retry inside
// src.Alloc.
func (p *Pool) grow(st *streamState, h *heap, size, n uint64, s backend.Stream) (*pool.Block, uint64, error) {
	st.mu.Lock()
	if st.stream != s {
		st.stream = s // new segments record the stream for Reclaim
	}
	b := h.free.bestFit(n)
	if b == nil && p.vm != nil && !h.noVirtual && roundUp(n, p.gran) <= p.reserveSize {
		b = p.reserve(st, h)
	}
	if b == nil {
		// Ordinary segment. The source may call Reclaim, which takes
		// every stream's lock, so ours is let go meanwhile.
		st.mu.Unlock()
		segSize := ordinarySize(h.small, n)
		ptr, err := p.src.Alloc(segSize, p.Reclaim)
		if err != nil {
			return nil, 0, err
		}
		st.mu.Lock()
		seg := st.newSegment(h, ptr, segSize, false, 0)
		b = seg.first
	}
	seg := b.Seg.(*segment)
	st.carve(h, seg, b, h.takeSize(b, n))
	if !seg.backed(b.Ptr, b.Size) {
		need := seg.unbackedBytes(b.Ptr, b.Size)
		var moving []chunk
		if p.cfg.trim {
			// b is carved, so trimming cannot take its granules.
			st.mu.Unlock()
			moving = p.trimBeforeGrowth(st, need, b.Size)
			st.mu.Lock()
		}
		var mapped []chunk
		err := p.mapRange(seg, b.Ptr, b.Size, &moving, &mapped)
		p.releasePhysical(moving)
		if err != nil {
			// Undo what this attempt mapped, so that a refusal leaves
			// reserved memory as it found it, and put the block back.
			// st.mu has been held since the mapping: nothing else uses
			// those granules.
			p.unmapChunks(seg, mapped)
			seg.live--
			st.putBack(h, seg, b)
			st.mu.Unlock()
			return nil, need, err
		}
	}
	fire := st.hand(b, size, s, false)
	st.mu.Unlock()
	if fire {
		p.marks.Fire()
	}
	return b, 0, nil
}

// trimBeforeGrowth is called before need bytes are mapped for a block of
// size bytes. If that would take reserved memory past both its high-water
// mark and live memory plus the slack, it unmaps enough of st's cached
// chunks (synchronizing the stream first) and returns them, still
// charged, for mapRange to map where they are needed: memory moves instead
// of growing.
func (p *Pool) trimBeforeGrowth(st *streamState, need, size uint64) []chunk {
	var sum pool.Stats
	p.streams.Each(func(s *streamState) { s.addTo(&sum) })
	p.src.Fill(&sum)
	live := sum.Live + size
	target := max(live+p.cfg.trimSlack(live), sum.ReservedPeak)
	r := sum.Reserved + need
	if r <= target {
		return nil
	}
	var moving []chunk
	want := min(r-target, need)
	if got := p.reclaimStream(st, want, &moving); got > 0 {
		p.trims.Inc()
		if p.onTrim != nil {
			p.onTrim(got)
		}
	}
	return moving
}

// releasePhysical releases chunks that were unmapped to be moved but not
// needed after all.
func (p *Pool) releasePhysical(chunks []chunk) {
	for _, c := range chunks {
		p.releaseChunk(c.phys, c.n*p.gran)
	}
}

// reserve makes a new virtual segment for h and returns its one free
// block, or nil (and stops trying) when address space runs out.
func (p *Pool) reserve(st *streamState, h *heap) *pool.Block {
	ptr, err := p.vm.Reserve(p.reserveSize)
	if err != nil {
		h.noVirtual = true
		return nil
	}
	return st.newSegment(h, ptr, p.reserveSize, true, p.gran).first
}

// ordinarySize is the segment taken from the source for a request of n
// bytes when there is no virtual memory: small requests share 2 MiB
// segments, large ones below 10 MiB share 20 MiB segments, larger ones get
// their own, rounded to 2 MiB.
func ordinarySize(small bool, n uint64) uint64 {
	switch {
	case small:
		return smallSegment
	case n < minLargeAlloc:
		return largeSegment
	}
	return roundUp(n, roundLarge)
}

// mapRange backs every granule overlapping [ptr, ptr+n) with physical
// memory, each run of unmapped granules with as few chunks as it can:
// chunks from *moving that fit (already charged), else new ones of at most
// chunkGranules granules, charged to the source before they are created.
// It appends the chunks it maps to *mapped, which after a failure are the
// ones to undo.
func (p *Pool) mapRange(seg *segment, ptr backend.Ptr, n uint64, moving, mapped *[]chunk) error {
	off := uint64(ptr - seg.base)
	lo, hi := off/seg.gran, (off+n+seg.gran-1)/seg.gran
	for i := lo; i < hi; {
		if seg.isMapped(i) {
			i++
			continue
		}
		j := i + 1
		for j < hi && !seg.isMapped(j) {
			j++
		}
		for i < j {
			c, err := p.mapChunk(seg, i, j-i, moving)
			if err != nil {
				return err
			}
			*mapped = append(*mapped, c)
			i += c.n
		}
	}
	return nil
}

// mapChunk maps one chunk at granule at, of at most room granules: the
// largest moved chunk that fits, or a new one.
func (p *Pool) mapChunk(seg *segment, at, room uint64, moving *[]chunk) (chunk, error) {
	va := seg.base + backend.Ptr(at*seg.gran)
	best := -1
	for k, m := range *moving {
		if m.n <= room && (best < 0 || m.n > (*moving)[best].n) {
			best = k
		}
	}
	if best >= 0 {
		m := (*moving)[best]
		if err := p.vm.Map(va, m.n*seg.gran, m.phys); err != nil {
			return chunk{}, err
		}
		*moving = append((*moving)[:best], (*moving)[best+1:]...)
		c := chunk{head: at, n: m.n, phys: m.phys}
		seg.setMapped(c)
		p.moved.Add(c.n)
		return c, nil
	}
	c := chunk{head: at, n: min(room, p.chunkGranules)}
	size := c.n * seg.gran
	// Charged while the driver is asked, counted as reserved only once
	// the chunk is mapped: a chunk the driver refuses never reaches the
	// reserved peak.
	var mapErr error
	err := p.src.Take(size, func() error {
		ph, err := p.vm.CreatePhysical(size)
		if err != nil {
			return err
		}
		if err := p.vm.Map(va, size, ph); err != nil {
			if p.vm.ReleasePhysical(ph) != nil {
				// The driver still has the chunk: it stays charged (the
				// Take succeeds) and is given back later, as any memory
				// the driver refused to take back.
				mapErr = err
				p.src.Orphan(size, func() error { return p.vm.ReleasePhysical(ph) })
				return nil
			}
			return err
		}
		c.phys = ph
		return nil
	})
	if mapErr != nil {
		return chunk{}, mapErr
	}
	if err != nil {
		return chunk{}, err
	}
	p.src.CountDriverCalls(1, 0)
	seg.setMapped(c)
	return c, nil
}

// oomNeeding is oom for a failure of grow, which needed mapped bytes of a
// virtual segment (need > 0) or a new ordinary segment: the message names
// what the request needed beside the request.
func (p *Pool) oomNeeding(size, need uint64, err error) error {
	e := p.oom(size, err)
	var oom *pool.OutOfMemoryError
	if errors.As(e, &oom) {
		var src *pool.OutOfMemoryError
		switch {
		case need > 0:
			oom.Rounded, oom.RoundedTo = need, "mapping"
		case errors.As(err, &src):
			oom.Rounded, oom.RoundedTo = src.Request, "segment"
		}
	}
	return e
}

// unmapChunks unmaps and releases chunks of seg that a failed growth
// mapped. A chunk that will not unmap stays mapped and charged, inside
// the free block the failed request leaves, where Reclaim finds it.
func (p *Pool) unmapChunks(seg *segment, chunks []chunk) {
	for _, c := range chunks {
		if err := p.vm.Unmap(seg.base+backend.Ptr(c.head*seg.gran), c.n*seg.gran); err != nil {
			continue
		}
		seg.setUnmapped(c)
		p.releaseChunk(c.phys, c.n*seg.gran)
	}
}

// oom turns a failure for want of memory into the *pool.OutOfMemoryError
// that names the caller's request (the source names the segment or
// granule it was asked for); other errors pass unchanged.
func (p *Pool) oom(size uint64, err error) error {
	e := &pool.OutOfMemoryError{
		Request:  size,
		Limit:    p.src.Limits().Hard,
		Reserved: p.src.Reserved(),
		Device:   p.dev.Ordinal(),
	}
	var src *pool.OutOfMemoryError
	switch {
	case err == nil:
	case errors.As(err, &src):
		e.Err = src.Err
	case errors.Is(err, backend.ErrOutOfMemory):
		e.Err = err
	default:
		return err
	}
	return e
}
