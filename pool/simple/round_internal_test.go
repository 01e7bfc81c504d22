package simple

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/pool"
)

func TestRoundSizeRoundsSmallTo512AndLargeTo2MiB(t *testing.T) {
	for _, tc := range []struct{ in, want uint64 }{
		{1, 512},
		{512, 512},
		{513, 1024},
		{1<<20 + 1, 1<<20 + 512},
		{2<<20 - 1, 2 << 20},
		{2 << 20, 2 << 20},
		{2<<20 + 1, 4 << 20},
		{63<<20 + 7, 64 << 20},
		{^uint64(0) - 5, 0}, // wraps: invalid
	} {
		assert.Equal(t, tc.want, roundSize(tc.in), "roundSize(%d)", tc.in)
	}
}

func TestFitLimitIsTwiceOrOneLargeStepMore(t *testing.T) {
	for _, tc := range []struct{ r, want uint64 }{
		{512, 1024},
		{1 << 20, 2 << 20},
		{2 << 20, 4 << 20},
		{64 << 20, 66 << 20},
	} {
		assert.Equal(t, tc.want, fitLimit(tc.r), "fitLimit(%d)", tc.r)
	}
}

func TestCacheStaysSortedBySizeThenPtr(t *testing.T) {
	var e stream
	for _, b := range []struct{ size, ptr uint64 }{{4096, 3}, {512, 9}, {4096, 1}, {8192, 2}, {4096, 2}, {512, 1}} {
		e.insert(testBlock(b.size, b.ptr))
	}
	var got [][2]uint64
	for _, b := range e.free {
		got = append(got, [2]uint64{b.Size, uint64(b.Ptr)})
	}
	assert.Equal(t, [][2]uint64{{512, 1}, {512, 9}, {4096, 1}, {4096, 2}, {4096, 3}, {8192, 2}}, got)

	b := e.take(3000) // smallest fit within 2x: a 4096 block, the lowest address
	assert.Equal(t, uint64(4096), b.Size)
	assert.EqualValues(t, 1, b.Ptr)
	assert.Nil(t, e.take(1<<20), "nothing within the bound")
	assert.Len(t, e.free, 5)
}

func testBlock(size, ptr uint64) *pool.Block {
	return &pool.Block{Size: size, Ptr: backend.Ptr(ptr), Free: true}
}
