package binned

import (
	"slices"

	"github.com/gocuda/gocuda/pool"
)

// Requests above maxClassSize are too large for classes to pay off:
// 12.5% of 64 MiB is 8 MiB, while rounding to largeRound wastes at most
// 2 MiB (3% of 64 MiB, less above). They are served exactly, rounded to
// largeRound, and cached per stream in e.large, sorted by size: a
// best-fit map, kept in a slice because large blocks are few and their
// allocation is rare next to the work done on them. A cached block is
// handed out only if it is within 12.5% of the request, so a large block
// never wastes more than the classes do. Keeping them cached (rather than
// releasing them on Free) saves a driver allocation and free per reuse,
// which for hundreds of MiB is far dearer than a class hit; memory
// pressure gets them back, largest first, through Reclaim.

// cmpSize orders blocks by size, for the binary searches of e.large.
func cmpSize(b *pool.Block, size uint64) int {
	switch {
	case b.Size < size:
		return -1
	case b.Size > size:
		return 1
	}
	return 0
}

// takeLarge takes the smallest cached large block of at least size bytes
// if it is within size + size>>largeSlackShift, or returns nil; the caller
// holds e.mu.
func (e *entry) takeLarge(size uint64) *pool.Block {
	i, _ := slices.BinarySearchFunc(e.large, size, cmpSize)
	if i == len(e.large) || e.large[i].Size > size+size>>largeSlackShift {
		return nil
	}
	b := e.large[i]
	e.large = slices.Delete(e.large, i, i+1)
	return b
}

// putLarge caches a large block in size order; the caller holds e.mu.
func (e *entry) putLarge(b *pool.Block) {
	i, _ := slices.BinarySearchFunc(e.large, b.Size, cmpSize)
	e.large = slices.Insert(e.large, i, b)
}
