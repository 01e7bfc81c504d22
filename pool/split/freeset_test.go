package split

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/pool"
)

func TestClassesGrowWithSize(t *testing.T) {
	for _, tc := range []struct {
		size  uint64
		class int
	}{
		{0, 0}, {511, 0}, {512, 1}, {1024, 2}, {1536, 3},
		{2048, 4}, {2560, 5}, {3584, 7}, {4096, 8}, {1 << 20, 4 * 10},
		{1<<63 + 1<<62, 53*4 + 2},
	} {
		assert.Equal(t, tc.class, classOf(tc.size), "classOf(%d)", tc.size)
	}
	prev := 0
	for size := uint64(512); size < 1<<40; size += size/7 + 512 {
		c := classOf(size)
		require.GreaterOrEqual(t, c, prev, "classOf(%d)", size)
		require.Less(t, c, numClasses)
		prev = c
	}
}

// The free set agrees with a brute-force search over the same blocks:
// the smallest block that fits, the lowest address among equals.
func TestFreeSetFindsTheBestFit(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	var f freeSet
	var all []*pool.Block
	brute := func(size uint64) *pool.Block {
		var best *pool.Block
		for _, b := range all {
			if b.Size >= size && (best == nil || b.Size < best.Size || (b.Size == best.Size && b.Ptr < best.Ptr)) {
				best = b
			}
		}
		return best
	}
	sizes := []uint64{512, 1024, 4096, 1 << 20, 3 << 20, 20 << 20, 1 << 34}
	for i := range 5000 {
		switch op := rng.IntN(4); {
		case op == 0 || len(all) == 0:
			size := sizes[rng.IntN(len(sizes))] + uint64(rng.IntN(8))*512
			b := &pool.Block{Ptr: backend.Ptr(rng.Uint64N(1<<40) &^ 511), Size: size}
			f.insert(b)
			all = append(all, b)
		case op == 1:
			j := rng.IntN(len(all))
			f.remove(all[j])
			all = append(all[:j], all[j+1:]...)
		case op == 2:
			// What carving and merging do: a block takes another's
			// place with a size and address near it (the same class and
			// order, the in-place case) or far from it.
			j := rng.IntN(len(all))
			old := all[j]
			k, at := f.find(old)
			nw := &pool.Block{Ptr: old.Ptr + backend.Ptr(rng.IntN(3))*512, Size: old.Size + uint64(rng.IntN(3))*512}
			if rng.IntN(4) == 0 {
				nw.Size = sizes[rng.IntN(len(sizes))]
			}
			f.replaceAt(k, at, nw)
			all[j] = nw
		default:
			size := sizes[rng.IntN(len(sizes))] + uint64(rng.IntN(8))*512
			b, k, at := f.bestFitAt(size)
			require.True(t, brute(size) == b, "op %d: bestFit(%d)", i, size)
			if b != nil {
				require.True(t, f.classes[k][at] == b, "op %d: bestFitAt's place", i)
			}
		}
		require.Equal(t, len(all), f.len())
		requireOrdered(t, &f, i)
	}
}

// requireOrdered checks every class is in (size, address) order, holds
// only its sizes, and is marked non-empty exactly when it has blocks.
func requireOrdered(t *testing.T, f *freeSet, op int) {
	t.Helper()
	for k, c := range f.classes {
		require.Equal(t, len(c) > 0, f.nonEmpty[k>>6]&(1<<(k&63)) != 0, "op %d: class %d's bit", op, k)
		for i, b := range c {
			require.Equal(t, k, classOf(b.Size), "op %d: block of %d bytes in class %d", op, b.Size, k)
			if i > 0 {
				require.True(t, before(c[i-1], b), "op %d: class %d out of order at %d", op, k, i)
			}
		}
	}
}

func TestFreeSetRemoveOfAnAbsentBlockPanics(t *testing.T) {
	var f freeSet
	f.insert(&pool.Block{Ptr: 4096, Size: 512})
	assert.Panics(t, func() { f.remove(&pool.Block{Ptr: 4096, Size: 512}) }, "a different block at the same place")
}
