package split

import (
	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/pool"
)

// segment is one contiguous range of device addresses owned by one stream's
// heap, cut into blocks linked in address order by Block.Prev and
// Block.Next. It is either an ordinary segment (one allocation from the
// source, all of it reserved) or a virtual one: an address range reserved
// once, of which only the granules that blocks need are backed by physical
// memory. A virtual segment's blocks cover the whole range; the part never
// used yet is the last, free, block, so growth is an ordinary best-fit
// split of that block, and a free block at the end of the used part
// coalesces with it.
//
// Every field is guarded by the owning stream's mutex.
type segment struct {
	owner *streamState
	heap  *heap
	base  backend.Ptr
	size  uint64
	// first and last are the blocks at either end.
	first, last *pool.Block
	// live counts blocks handed out and not yet freed.
	live int

	// Virtual segments only.
	virtual bool
	// gran is the device's mapping granularity.
	gran uint64
	// granules[i] is the state of the granule at base+i*gran; it is as
	// long as the highest mapped granule, so len(granules)*gran is the
	// mapped extent.
	granules []granule
	// mapped counts granules backed by physical memory.
	mapped int
}

// granule is one granularity-sized piece of a virtual segment. Physical
// memory comes in chunks of one or more granules, each created and mapped
// by one call; every granule of a chunk records the chunk's handle and
// first granule, and the first granule also the chunk's length.
type granule struct {
	phys   backend.Physical
	head   uint32 // the chunk's first granule
	n      uint32 // the chunk's length in granules, at its first granule
	mapped bool
}

// chunk is one physical allocation mapped at granules [head, head+n) of a
// segment.
type chunk struct {
	head, n uint64
	phys    backend.Physical
}

// extent is the end, as an offset from base, of the highest mapped
// granule.
func (s *segment) extent() uint64 { return uint64(len(s.granules)) * s.gran }

// backed says whether [ptr, ptr+n) is all mapped. It is on the hot path:
// without holes (granules unmapped below the extent, left by Reclaim) it
// is one compare.
func (s *segment) backed(ptr backend.Ptr, n uint64) bool {
	if !s.virtual {
		return true
	}
	off := uint64(ptr - s.base)
	if off+n > s.extent() {
		return false
	}
	if s.mapped == len(s.granules) {
		return true
	}
	for i := off / s.gran; i*s.gran < off+n; i++ {
		if !s.granules[i].mapped {
			return false
		}
	}
	return true
}

// unbackedBytes is how many bytes of granules overlapping [ptr, ptr+n)
// are not mapped: what mapping it would charge.
func (s *segment) unbackedBytes(ptr backend.Ptr, n uint64) uint64 {
	off := uint64(ptr - s.base)
	var need uint64
	for i := off / s.gran; i*s.gran < off+n; i++ {
		if i >= uint64(len(s.granules)) || !s.granules[i].mapped {
			need += s.gran
		}
	}
	return need
}

// isMapped says whether granule i is mapped.
func (s *segment) isMapped(i uint64) bool {
	return i < uint64(len(s.granules)) && s.granules[i].mapped
}

// chunkAt returns the chunk that mapped granule i holds.
func (s *segment) chunkAt(i uint64) chunk {
	h := uint64(s.granules[i].head)
	return chunk{head: h, n: uint64(s.granules[h].n), phys: s.granules[h].phys}
}

// setMapped records chunk c as mapped.
func (s *segment) setMapped(c chunk) {
	for uint64(len(s.granules)) < c.head+c.n {
		s.granules = append(s.granules, granule{})
	}
	for i := c.head; i < c.head+c.n; i++ {
		s.granules[i] = granule{phys: c.phys, head: uint32(c.head), mapped: true}
	}
	s.granules[c.head].n = uint32(c.n)
	s.mapped += int(c.n)
}

// setUnmapped records chunk c as unmapped and trims the extent to the
// highest granule still mapped.
func (s *segment) setUnmapped(c chunk) {
	clear(s.granules[c.head : c.head+c.n])
	s.mapped -= int(c.n)
	n := len(s.granules)
	for n > 0 && !s.granules[n-1].mapped {
		n--
	}
	s.granules = s.granules[:n]
}

// heap is one stream's blocks of one kind (small or large requests): its
// segments and the free set over all of them.
type heap struct {
	small bool
	free  freeSet
	segs  []*segment
	// minRest is the smallest remainder worth leaving free when a block
	// is split; below it the whole block is handed out (512 B for small
	// blocks; for large ones a sliver no large request fits).
	minRest uint64
	// noVirtual is set once reserving address space failed, so that the
	// heap stops trying and takes ordinary segments from then on.
	noVirtual bool
}

// takeSize is how much of free block b an allocation of n bytes takes:
// n, or all of b when the remainder would be a sliver.
func (h *heap) takeSize(b *pool.Block, n uint64) uint64 {
	if b.Size-n >= h.minRest {
		return n
	}
	return b.Size
}

func (h *heap) removeSeg(s *segment) {
	for i, x := range h.segs {
		if x == s {
			h.segs[i] = h.segs[len(h.segs)-1]
			h.segs[len(h.segs)-1] = nil
			h.segs = h.segs[:len(h.segs)-1]
			return
		}
	}
}

// newSegment makes a segment over [base, base+size) of one free block and
// puts that block in the heap's free set.
func (st *streamState) newSegment(h *heap, base backend.Ptr, size uint64, virtual bool, gran uint64) *segment {
	seg := &segment{owner: st, heap: h, base: base, size: size, virtual: virtual, gran: gran}
	b := st.newBlock()
	b.Ptr, b.Size, b.Seg, b.Free, b.Stream = base, size, seg, true, st.stream
	seg.first, seg.last = b, b
	h.segs = append(h.segs, seg)
	h.free.insert(b)
	return seg
}

// carve takes the first take bytes of free block b for an allocation: b
// leaves the free set, and what is left past take becomes a new free block
// after it.
func (st *streamState) carve(h *heap, seg *segment, b *pool.Block, take uint64) {
	h.free.remove(b)
	if rest := b.Size - take; rest > 0 {
		st.splitAfter(seg, b, take)
		h.free.insert(b.Next)
	}
	b.Free = false
	seg.live++
}

// splitAfter cuts b at offset at: b keeps [Ptr, Ptr+at) and a new block,
// free and outside any free set, holds the rest.
func (st *streamState) splitAfter(seg *segment, b *pool.Block, at uint64) *pool.Block {
	r := st.newBlock()
	r.Ptr, r.Size, r.Seg, r.Free, r.Stream = b.Ptr+backend.Ptr(at), b.Size-at, seg, true, st.stream
	r.Prev, r.Next = b, b.Next
	if b.Next != nil {
		b.Next.Prev = r
	} else {
		seg.last = r
	}
	b.Next = r
	b.Size = at
	return r
}

// putBack makes b free and merges it with free neighbours; b survives the
// merge (so that a second Free of the same *Block still finds it marked
// free) and goes into the free set.
func (st *streamState) putBack(h *heap, seg *segment, b *pool.Block) {
	b.Free = true
	b.Requested = 0
	b.Stream = st.stream
	if pv := b.Prev; pv != nil && pv.Free {
		h.free.remove(pv)
		b.Ptr = pv.Ptr
		b.Size += pv.Size
		b.Prev = pv.Prev
		if pv.Prev != nil {
			pv.Prev.Next = b
		} else {
			seg.first = b
		}
		st.recycle(pv)
	}
	if nx := b.Next; nx != nil && nx.Free {
		h.free.remove(nx)
		b.Size += nx.Size
		b.Next = nx.Next
		if nx.Next != nil {
			nx.Next.Prev = b
		} else {
			seg.last = b
		}
		st.recycle(nx)
	}
	h.free.insert(b)
}

// newBlock returns a zeroed block owned by the pool, reusing a recycled
// one when there is one, so that splitting does not allocate.
func (st *streamState) newBlock() *pool.Block {
	b := st.spare
	if b != nil {
		st.spare = b.Next
		b.Next = nil
	} else {
		b = new(pool.Block)
	}
	b.Owner = st.pool
	return b
}

// recycle keeps a block that merging made redundant. Its Owner is cleared
// so that a stale handle to it is refused by Free as a foreign block.
func (st *streamState) recycle(b *pool.Block) {
	*b = pool.Block{Next: st.spare}
	st.spare = b
}
