package split

import (
	"sync/atomic"

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
// Every field is guarded by the owning stream's mutex; owner changes only
// with both the old and the new owner's mutex held (RetireStream), and is
// atomic so that Free can read it before it knows which lock to take.
type segment struct {
	owner atomic.Pointer[streamState]
	heap  *heap
	base  backend.Ptr
	size  uint64
	// first and last are the blocks at either end.
	first, last *pool.Block
	// live counts blocks handed out and not yet freed.
	live int
	// inherited marks a segment moved from a retired stream to its heir
	// (RetireStream): it goes back to the driver once nothing in it is
	// live, instead of staying in the heir's cache, so that streams that
	// come and go do not pile their segments up on the heir.
	inherited bool

	// Virtual segments only.
	virtual bool
	// gran is the device's mapping granularity.
	gran uint64
	// granules[i] is the state of the granule at base+i*gran: 0 while it
	// is not mapped, else 1 + the index in chunks of the chunk mapped
	// over it. It is as long as the highest mapped granule, so
	// len(granules)*gran is the mapped extent. Four bytes a granule keep
	// it small (about 2 KiB per GiB mapped) and cheap to grow.
	granules []uint32
	// chunks holds the chunks mapped in the segment, at the indices
	// granules name; freeSlots are the indices of unmapped ones.
	chunks    []chunk
	freeSlots []uint32
	// mapped counts granules backed by physical memory.
	mapped int
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
		if s.granules[i] == 0 {
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
		if !s.isMapped(i) {
			need += s.gran
		}
	}
	return need
}

// isMapped says whether granule i is mapped.
func (s *segment) isMapped(i uint64) bool {
	return i < uint64(len(s.granules)) && s.granules[i] != 0
}

// chunkAt returns the chunk that mapped granule i holds.
func (s *segment) chunkAt(i uint64) chunk { return s.chunks[s.granules[i]-1] }

// setMapped records chunk c as mapped.
func (s *segment) setMapped(c chunk) {
	var slot uint32
	if k := len(s.freeSlots); k > 0 {
		slot = s.freeSlots[k-1]
		s.freeSlots = s.freeSlots[:k-1]
		s.chunks[slot] = c
	} else {
		slot = uint32(len(s.chunks))
		s.chunks = append(s.chunks, c)
	}
	if end := int(c.head + c.n); end > len(s.granules) {
		if end > cap(s.granules) {
			// Doubling: a segment grows a chunk at a time, and
			// append's gentler growth for large slices would copy
			// the table again and again.
			g := make([]uint32, len(s.granules), max(2*cap(s.granules), end, 64))
			copy(g, s.granules)
			s.granules = g
		}
		s.granules = s.granules[:end] // zero: granules past the extent are never set
	}
	g := s.granules[c.head : c.head+c.n]
	for i := range g {
		g[i] = slot + 1
	}
	s.mapped += int(c.n)
}

// setUnmapped records chunk c as unmapped and trims the extent to the
// highest granule still mapped.
func (s *segment) setUnmapped(c chunk) {
	slot := s.granules[c.head] - 1
	s.chunks[slot] = chunk{}
	s.freeSlots = append(s.freeSlots, slot)
	clear(s.granules[c.head : c.head+c.n])
	s.mapped -= int(c.n)
	n := len(s.granules)
	for n > 0 && s.granules[n-1] == 0 {
		n--
	}
	// The granules past the new extent are zero, as setMapped expects.
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
	seg := &segment{heap: h, base: base, size: size, virtual: virtual, gran: gran}
	seg.owner.Store(st)
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
	k, i := h.free.find(b)
	st.carveAt(h, seg, b, k, i, take)
}

// carveAt is carve of the block at index i of class k of h's free set
// (from bestFitAt: the hit path searches once).
func (st *streamState) carveAt(h *heap, seg *segment, b *pool.Block, k, i int, take uint64) {
	if rest := b.Size - take; rest > 0 {
		h.free.replaceAt(k, i, st.splitAfter(seg, b, take))
	} else {
		h.free.removeAt(k, i)
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
		k, i := h.free.find(nx)
		b.Size += nx.Size
		b.Next = nx.Next
		if nx.Next != nil {
			nx.Next.Prev = b
		} else {
			seg.last = b
		}
		// b takes nx's place in the free set, in place when it can.
		h.free.replaceAt(k, i, b)
		st.recycle(nx)
		return
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
