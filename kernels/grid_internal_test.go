package kernels

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestElementwiseGridCountsVectorsByShift checks that the grid's shift
// counts the 16-byte vectors of every element type as a division would:
// the launch path replaced the division, the formula must not change.
func TestElementwiseGridCountsVectorsByShift(t *testing.T) {
	for d := Float32; d < numDTypes; d++ {
		for _, n := range []int{1, 2, 3, 7, 15, 16, 17, 255, 4096, 4097, 1<<20 + 3, 1 << 31, math.MaxInt32 * 4} {
			for _, sms := range []int{1, 132} {
				perVec := 16 / d.Size()
				vecs := (n + perVec - 1) / perVec
				blocks := (vecs + threads*ewUnroll - 1) / (threads * ewUnroll)
				spread := min((vecs+threads-1)/threads, 2*sms)
				want := clampGrid(max(blocks, spread), math.MaxInt32)
				require.Equal(t, want, elementwiseGrid(n, d, sms), "%s n=%d sms=%d", d, n, sms)
			}
		}
	}
}
