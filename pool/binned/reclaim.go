package binned

import (
	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/pool"
)

// reclaimIdlePasses bounds the passes of Reclaim that find the top class
// emptied by the streams before they could take from it: Reclaim is best
// effort at a moment and must not chase a cache that others keep using.
const reclaimIdlePasses = 3

// Reclaim gives back at least n bytes of cached memory when the cache
// holds that much, largest blocks first: the large blocks, then the
// classes from the top down. Largest first gives back the most memory for
// the fewest driver calls and keeps the small, hot classes cached.
//
// Each pass finds the largest non-empty class over all streams, takes
// blocks of that class out of each stream's cache under its lock until n
// is met, and releases them with no lock held: a release synchronizes the
// block's stream and calls the driver, which must not stall the streams'
// Alloc and Free.
func (p *Pool) Reclaim(n uint64) uint64 {
	// Memory the driver refused to take back before comes first.
	got := p.src.RetryOrphans()
	var batch []*pool.Block
	for idle := 0; got < n && idle < reclaimIdlePasses; {
		top := p.topClass()
		if top < 0 {
			break
		}
		batch = batch[:0]
		var taken uint64
		p.streams.Each(func(e *entry) {
			if got+taken >= n {
				return
			}
			e.mu.Lock()
			batch, taken = e.take(top, n-got-taken, batch, taken)
			e.mu.Unlock()
		})
		if len(batch) == 0 {
			idle++
			continue
		}
		got += p.release(batch)
	}
	if got > 0 {
		p.src.NoteReclaimed(got)
	}
	return got
}

// topClass is the largest class cached by any stream (largeClass for a
// large block), -1 when the cache is empty.
func (p *Pool) topClass() int {
	top := -1
	p.streams.Each(func(e *entry) {
		e.mu.Lock()
		defer e.mu.Unlock()
		if len(e.large) > 0 {
			top = largeClass
			return
		}
		for c := numClasses - 1; c > top; c-- {
			if e.heads[c] != nil {
				top = c
				return
			}
		}
	})
	return top
}

// take moves blocks of class c (the largest first, for large blocks) to
// batch until need bytes are taken; the caller holds e.mu.
func (e *entry) take(c int, need uint64, batch []*pool.Block, taken uint64) ([]*pool.Block, uint64) {
	if c == largeClass {
		for got := uint64(0); got < need && len(e.large) > 0; {
			b := e.large[len(e.large)-1]
			e.large[len(e.large)-1] = nil
			e.large = e.large[:len(e.large)-1]
			batch = append(batch, b)
			got += b.Size
			taken += b.Size
		}
		return batch, taken
	}
	for got := uint64(0); got < need && e.heads[c] != nil; {
		b := e.popClass(c)
		batch = append(batch, b)
		got += b.Size
		taken += b.Size
	}
	return batch, taken
}

// release gives the blocks of batch back to the driver and returns the
// bytes it gave back. Each distinct stream is synchronized once, here,
// rather than once per block inside Source.Release. A stream that cannot
// be synchronized (destroyed since it freed the block) is covered by
// synchronizing the device, once.
func (p *Pool) release(batch []*pool.Block) uint64 {
	var synced []backend.Stream
	devSynced := false
	var got uint64
	for _, b := range batch {
		if st := b.Stream; st != nil && !devSynced && !contains(synced, st) {
			if err := st.Synchronize(); err != nil {
				// If the device cannot be synchronized either, nothing is
				// known to be done with the block: the source frees it
				// once the device is (RetryOrphans).
				if p.dev.Synchronize() != nil {
					p.src.FreeLater(b.Ptr, b.Size)
					continue
				}
				devSynced = true
			}
			synced = append(synced, st)
		}
		if err := p.src.Release(b.Ptr, b.Size, nil); err != nil {
			// The driver refused: the memory stays reserved, counted by
			// the source, which tries again in a later Reclaim.
			p.src.FreeLater(b.Ptr, b.Size)
			continue
		}
		got += b.Size
	}
	return got
}

func contains(l []backend.Stream, s backend.Stream) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
