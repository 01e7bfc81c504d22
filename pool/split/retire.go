package split

import (
	"unsafe"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/pool"
)

// lockOwner locks the stream state that owns seg and returns it. The owner
// may change (RetireStream) between reading it and locking it; the owner
// read again under the lock is the one that counts.
func (seg *segment) lockOwner() *streamState {
	for {
		st := seg.owner.Load()
		st.mu.Lock()
		if seg.owner.Load() == st {
			return st
		}
		st.mu.Unlock()
	}
}

// RetireStream gives gone's cached memory back to the driver (whole free
// segments, and every mapped chunk inside a free block of a virtual
// segment, with the address space of virtual segments left empty) and
// moves the segments it cannot give back, those with live blocks, to
// heir's heaps with their free blocks and live counts. gone's work has
// finished, so heir may hand out those free blocks at once.
func (p *Pool) RetireStream(gone, heir backend.Stream) (uint64, error) {
	if err := pool.CheckRetire("split", p.dev, gone, heir); err != nil {
		return 0, err
	}
	st := p.streams.Lookup(gone)
	if st == nil {
		return 0, nil
	}
	got := p.reclaimStream(st, pool.All, nil)
	if p.vm != nil {
		p.releaseEmpty(st)
	}
	if got > 0 {
		p.src.NoteReclaimed(got)
	}
	to := p.streams.Get(heir)
	// Only RetireStream holds two states' locks, and only here: lock them
	// in address order so that two retirements never wait on each other.
	first, second := st, to
	if uintptr(unsafe.Pointer(to)) < uintptr(unsafe.Pointer(st)) {
		first, second = to, st
	}
	first.mu.Lock()
	second.mu.Lock()
	if to.stream == nil {
		// Frees on heir of the moved blocks then need no ordering.
		to.stream = heir
	}
	for k := range st.heaps {
		from, dst := &st.heaps[k], &to.heaps[k]
		for _, seg := range from.segs {
			for b := seg.first; b != nil; b = b.Next {
				if b.Free {
					from.free.remove(b)
					b.Stream = to.stream
					dst.free.insert(b)
					continue
				}
				if b.Requested == 0 {
					// Out of the cache but not handed out: a run a
					// Reclaim is unmapping (it puts it back under the
					// new owner), or a block waiting on the source
					// (Orphan). Neither is counted live.
					continue
				}
				st.counts.live -= b.Size
				st.counts.requested -= b.Requested
				to.counts.live += b.Size
				to.counts.requested += b.Requested
			}
			seg.heap = dst
			seg.inherited = true
			seg.owner.Store(to)
			dst.segs = append(dst.segs, seg)
		}
		clear(from.segs)
		from.segs = from.segs[:0]
	}
	st.stream = nil
	second.mu.Unlock()
	first.mu.Unlock()
	// What earlier retirements left with heir and is free by now.
	p.giveBackInherited(to)
	return got, nil
}

// giveBackInherited gives back the inherited segments of st with nothing
// live in them, if st's stream has no work queued (blocks of them freed on
// it may still be in use by that work otherwise); a busy stream keeps them
// until a goroutine has waited for it. The driver may be asked once per
// retired stream that had live blocks, not per free.
func (p *Pool) giveBackInherited(st *streamState) {
	st.mu.Lock()
	s := st.stream
	st.mu.Unlock()
	if s != nil {
		if done, err := s.Query(); err != nil || !done {
			// Busy: one goroutine per pool waits for the stream and
			// tries again, so that the segments do not wait for a next
			// free that may never come.
			if p.retryInherited.CompareAndSwap(false, true) {
				p.retrying.Add(1)
				go func() {
					defer p.retrying.Done()
					p.syncStream(s)
					p.retryInherited.Store(false)
					p.giveBackInherited(st)
				}()
			}
			return
		}
	}
	empty := func(seg *segment) bool { return seg.inherited && seg.live == 0 }
	got := p.reclaimWhere(st, pool.All, nil, empty)
	if p.vm != nil {
		p.releaseEmptyWhere(st, empty)
	}
	if got > 0 {
		p.src.NoteReclaimed(got)
	}
}
