package cuda_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/cuda"
)

// LaunchWords hands each word to the driver by value; a kernel parameter
// reads 8 bytes (a pointer, int64, float64) or 4 (int32, float32) at its
// word. These are the bytes C sees after the same by-value call.
func TestLaunchWordsCarryEveryArgumentKindToC(t *testing.T) {
	words := []uint64{
		0xdead_beef_0000_1000, // a device pointer
		uint64(math.MaxUint64),
		math.Float64bits(-2.5),
		cuda.Word32(math.Float32bits(1.5)),
		cuda.Word32(uint32(0xffff_fff0)), // int32(-16)
		4096,
	}
	for i := range cuda.MaxWords - len(words) {
		words = append(words, uint64(i)<<33|7)
	}
	require.Len(t, words, cuda.MaxWords)
	for i, w := range words {
		assert.Equal(t, w, cuda.WordAt(words, i, 8), "word %d as 8 bytes", i)
	}
	assert.Equal(t, uint64(math.Float32bits(1.5)), cuda.WordAt(words, 3, 4), "a float32 word as 4 bytes")
	assert.Equal(t, uint64(0xffff_fff0), cuda.WordAt(words, 4, 4), "an int32 word as 4 bytes")
	assert.Equal(t, int32(-16), int32(uint32(cuda.WordAt(words, 4, 4))))
}

func TestWord32PutsTheValueWhereAFourByteParameterIsRead(t *testing.T) {
	for _, v := range []uint32{0, 1, 0x8000_0000, math.MaxUint32, math.Float32bits(float32(math.Pi))} {
		assert.Equal(t, uint64(v), cuda.WordAt([]uint64{cuda.Word32(v)}, 0, 4), "%#x", v)
	}
}

func TestLaunchWordsPathAllocatesNothing(t *testing.T) {
	words := []uint64{1, 2, 3, 4}
	allocs := testing.AllocsPerRun(1000, func() {
		_ = cuda.WordAt(words, 2, 8)
	})
	assert.Zero(t, allocs, "the by-value cgo call of the words")
}
