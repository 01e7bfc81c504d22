package pooltest

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPattern32RepeatsTheWordInNativeOrder(t *testing.T) {
	for _, n := range []uint64{0, 1, 3, 4, 5, 4096, 1<<20 + 3} {
		p := pattern32(0x0A0B0C0D, n)
		assert.Len(t, p, int(n))
		for i := uint64(0); i+4 <= n; i += 4 {
			if binary.NativeEndian.Uint32(p[i:]) != 0x0A0B0C0D {
				t.Fatalf("n=%d: word at %d is %x", n, i, p[i:i+4])
			}
		}
	}
}

func TestRandSizeStaysInRangeAndSpreads(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	var small, large int
	for i := 0; i < 10000; i++ {
		s := randSize(rng, 4*miB)
		assert.True(t, s >= 1 && s <= 4*miB, "size %d", s)
		if s < 4*kiB {
			small++
		}
		if s >= miB {
			large++
		}
	}
	assert.Greater(t, small, 1000, "small sizes occur")
	assert.Greater(t, large, 500, "large sizes occur")
}

func TestFirstDiffNamesTheByteAndWords(t *testing.T) {
	a, b := pattern32(1, 16), pattern32(1, 16)
	assert.Equal(t, "no difference", firstDiff(a, b))
	b[9] = 7
	assert.Contains(t, firstDiff(a, b), "byte 9 of 16")
	assert.Contains(t, firstDiff(a, b[:8]), "want 8")
}

func TestRandomDataDiffersUnderShifts(t *testing.T) {
	d := randomData(3 * miB)
	for _, shift := range []int{256, 4096, miB} {
		assert.NotEqual(t, d[:miB], d[shift:shift+miB], "shift %d", shift)
	}
}
