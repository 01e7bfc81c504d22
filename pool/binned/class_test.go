package binned

import (
	_ "embed"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/pool"
	"github.com/gocuda/gocuda/pool/binned/internal/sizeclass"
)

// committed is the table as checked in; embedded so the test needs no
// source tree where the binary runs (the GPU machine).
//
//go:embed sizeclasses.go
var committed []byte

func TestCommittedTableIsWhatTheGeneratorWritesNow(t *testing.T) {
	want, err := sizeclass.Default.Source("binned")
	require.NoError(t, err)
	require.Equal(t, string(want), string(committed),
		"sizeclasses.go is stale: run go generate ./pool/binned")
}

func TestClassTableIsAlignedIncreasingAndWithinTheWasteBound(t *testing.T) {
	require.Equal(t, uint64(pool.Alignment), classSize[0], "the smallest class is the alignment")
	require.Equal(t, uint64(maxClassSize), classSize[numClasses-1])
	bound := sizeclass.Default.Bound()
	assert.LessOrEqual(t, maxWastePct, bound)
	var prev uint64
	for c, size := range classSize {
		require.Zero(t, size%pool.Alignment, "class %d (%d bytes) is not %d-aligned", c, size, pool.Alignment)
		require.Greater(t, size, prev, "class %d does not grow", c)
		// The smallest request the class serves, rounded to the
		// alignment, is prev+Alignment: the worst case.
		waste := size - (prev + pool.Alignment)
		pct := 100 * float64(waste) / float64(size)
		require.LessOrEqual(t, pct, bound, "class %d (%d bytes) wastes %d bytes", c, size, waste)
		require.LessOrEqual(t, 100*float64(waste)/float64(prev+pool.Alignment), 12.5,
			"class %d (%d bytes): waste as a share of the request", c, size)
		prev = size
	}
}

// searchClass is the definition classOf must meet: the smallest class at
// least size.
func searchClass(size uint64) int {
	return sort.Search(numClasses, func(c int) bool { return classSize[c] >= size })
}

func TestClassOfMatchesSearch(t *testing.T) {
	// Every size up to 4 MiB, walking the expected class along.
	c := 0
	for size := uint64(1); size <= 4<<20; size++ {
		if size > classSize[c] {
			c++
		}
		if got := classOf(size); got != c {
			require.Equal(t, c, got, "classOf(%d)", size)
		}
	}
	// Around every class boundary.
	for c, size := range classSize {
		require.Equal(t, c, classOf(size), "classOf(%d), a class size", size)
		require.Equal(t, c, classOf(size-1), "classOf(%d)", size-1)
		if c+1 < numClasses {
			require.Equal(t, c+1, classOf(size+1), "classOf(%d)", size+1)
		}
	}
	// Random sizes over the whole range, spread over powers of two.
	rng := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 200000; i++ {
		size := 1 + rng.Uint64N(maxClassSize>>rng.IntN(26))
		require.Equal(t, searchClass(size), classOf(size), "classOf(%d)", size)
	}
}

func BenchmarkClassOf(b *testing.B) {
	sizes := make([]uint64, 1024)
	rng := rand.New(rand.NewPCG(1, 1))
	for i := range sizes {
		sizes[i] = 1 + rng.Uint64N(maxClassSize>>rng.IntN(26))
	}
	var sink int
	for i := 0; b.Loop(); i++ {
		sink += classOf(sizes[i&1023])
	}
	_ = sink
}
