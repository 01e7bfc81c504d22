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
		switch op := rng.IntN(3); {
		case op == 0 || len(all) == 0:
			size := sizes[rng.IntN(len(sizes))] + uint64(rng.IntN(8))*512
			b := &pool.Block{Ptr: backend.Ptr(rng.Uint64N(1<<40) &^ 511), Size: size}
			f.insert(b)
			all = append(all, b)
		case op == 1:
			j := rng.IntN(len(all))
			f.remove(all[j])
			all = append(all[:j], all[j+1:]...)
		default:
			size := sizes[rng.IntN(len(sizes))] + uint64(rng.IntN(8))*512
			require.True(t, brute(size) == f.bestFit(size), "op %d: bestFit(%d)", i, size)
		}
		require.Equal(t, len(all), f.len())
	}
}

func TestFreeSetRemoveOfAnAbsentBlockPanics(t *testing.T) {
	var f freeSet
	f.insert(&pool.Block{Ptr: 4096, Size: 512})
	assert.Panics(t, func() { f.remove(&pool.Block{Ptr: 4096, Size: 512}) }, "a different block at the same place")
}
