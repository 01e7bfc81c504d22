package split

import (
	"math/bits"

	"github.com/gocuda/gocuda/pool"
)

// freeSet holds the free blocks of one heap of one stream, ordered by
// (size, address) so that bestFit finds the smallest block that fits and,
// among blocks of that size, the one at the lowest address (which keeps
// live memory packed at the bottom of a segment).
//
// Blocks are spread over size classes, four per power of two, and each
// class is a slice sorted by (size, address). A lookup is a binary search
// in one class plus, when that class has nothing big enough, a bitmap scan
// for the next non-empty class, whose first block is the answer: every
// block of a higher class is larger than every block of a lower one. An
// insertion or removal moves only the pointers of one class, so even a
// heap fragmented into thousands of free blocks keeps its updates short,
// and the common case (a handful of free blocks) is a few compares.
type freeSet struct {
	nonEmpty [numClasses / 64]uint64
	classes  [numClasses][]*pool.Block
	n        int
}

// numClasses covers every size up to 2^64: class of 2^63 is 215.
const numClasses = 256

// classOf maps a size to its class: sizes are counted in 512-byte units,
// the first four units have a class each, and from there every power of
// two is cut into four classes of equal width.
func classOf(size uint64) int {
	v := size >> 9
	if v < 4 {
		return int(v)
	}
	m := bits.Len64(v) - 1 // m >= 2
	return (m-1)*4 + int((v>>(m-2))&3)
}

// search returns the index of the first block of c that is not below
// (size, ptr) in (size, address) order.
func search(c []*pool.Block, size uint64, ptr uint64) int {
	lo, hi := 0, len(c)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		b := c[mid]
		if b.Size < size || (b.Size == size && uint64(b.Ptr) < ptr) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

func (f *freeSet) insert(b *pool.Block) {
	k := classOf(b.Size)
	c := f.classes[k]
	i := search(c, b.Size, uint64(b.Ptr))
	c = append(c, nil)
	copy(c[i+1:], c[i:])
	c[i] = b
	f.classes[k] = c
	f.nonEmpty[k>>6] |= 1 << (k & 63)
	f.n++
}

// remove takes b out of the set; b must be in it with the size and
// address it was inserted with.
func (f *freeSet) remove(b *pool.Block) {
	k, i := f.find(b)
	f.removeAt(k, i)
}

// find returns where b is: its class and index. b must be in the set with
// the size and address it was inserted with.
func (f *freeSet) find(b *pool.Block) (k, i int) {
	k = classOf(b.Size)
	c := f.classes[k]
	i = search(c, b.Size, uint64(b.Ptr))
	if i >= len(c) || c[i] != b {
		panic("split: free block missing from its free set")
	}
	return k, i
}

// removeAt takes out the block at index i of class k.
func (f *freeSet) removeAt(k, i int) {
	c := f.classes[k]
	copy(c[i:], c[i+1:])
	c[len(c)-1] = nil
	c = c[:len(c)-1]
	f.classes[k] = c
	if len(c) == 0 {
		f.nonEmpty[k>>6] &^= 1 << (k & 63)
	}
	f.n--
}

// replaceAt puts nw where the block at index i of class k was (found by
// find before that block's size or address changed). A block carved from
// the front of a free block, or a freed block merged into its free
// neighbour, usually keeps its size class and its place in the class's
// order: nw then takes the slot in place, one search instead of the two
// (and two copies) of remove and insert. This is the hit path of every
// allocation and free at the growing end of a segment.
func (f *freeSet) replaceAt(k, i int, nw *pool.Block) {
	c := f.classes[k]
	if classOf(nw.Size) == k && (i == 0 || before(c[i-1], nw)) && (i == len(c)-1 || before(nw, c[i+1])) {
		c[i] = nw
		return
	}
	f.removeAt(k, i)
	f.insert(nw)
}

// before reports whether a comes before b in (size, address) order.
func before(a, b *pool.Block) bool {
	return a.Size < b.Size || (a.Size == b.Size && a.Ptr < b.Ptr)
}

// bestFit returns the smallest free block of at least size bytes, the
// lowest-addressed among equals, or nil. It leaves the block in the set.
func (f *freeSet) bestFit(size uint64) *pool.Block {
	b, _, _ := f.bestFitAt(size)
	return b
}

// bestFitAt is bestFit with where the block is (class and index), for
// replaceAt and removeAt without a second search.
func (f *freeSet) bestFitAt(size uint64) (b *pool.Block, k, i int) {
	k = classOf(size)
	if c := f.classes[k]; len(c) > 0 {
		if i := search(c, size, 0); i < len(c) {
			return c[i], k, i
		}
	}
	// The next non-empty class above k: its smallest block is the answer.
	k++
	for w := k >> 6; w < len(f.nonEmpty); w++ {
		m := f.nonEmpty[w]
		if w == k>>6 {
			m &= ^uint64(0) << (k & 63)
		}
		if m != 0 {
			k = w<<6 | bits.TrailingZeros64(m)
			return f.classes[k][0], k, 0
		}
	}
	return nil, 0, 0
}

// len is the number of free blocks in the set.
func (f *freeSet) len() int { return f.n }
