package kernels

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestConvKIsOneStoreCappedInput: a narrowing conversion's chunk fills one
// 16-byte store of its output, with at most convMaxIn bytes of input
// (optable.cuh's ConvK, which the grid must follow).
func TestConvKIsOneStoreCappedInput(t *testing.T) {
	cases := []struct {
		from, to DType
		k        int
	}{
		{Float32, BFloat16, 8},
		{Float32, Float16, 8},
		{Float64, Float32, 4},
		{Float32, Uint8, min(16, convMaxIn/4)},
		{Float64, Uint8, min(16, convMaxIn/8)},
		{Complex64, Float32, 4},
		{Float16, Bool, min(16, convMaxIn/2)},
	}
	for _, c := range cases {
		k := convK(c.from, c.to)
		assert.Equal(t, c.k, k, "%v → %v", c.from, c.to)
		assert.LessOrEqual(t, k*c.to.Size(), 16, "%v → %v stores at most 16 bytes", c.from, c.to)
		assert.GreaterOrEqual(t, k*c.from.Size(), 16, "%v → %v loads whole 16-byte words", c.from, c.to)
	}
}

// TestConvertGridFollowsTheKernelsChunks: narrowing conversions are sized
// by their chunks of convK elements, convChunks(to) a thread; widening and
// same-size ones as elementwiseGrid of the wider type; small arrays still
// spread over up to two blocks an SM.
func TestConvertGridFollowsTheKernelsChunks(t *testing.T) {
	const n, sms = 4096 * 4096, 132
	cases := []struct {
		name     string
		n        int
		from, to DType
		grid     uint32
	}{
		{"float32 → bfloat16 4096²", n, Float32, BFloat16, uint32(n / 8 / threads)},
		{"float64 → float32 4096²", n, Float64, Float32, uint32(n / 4 / (threads * 2))},
		{"float32 → float64 is emap1's", n, Float32, Float64, elementwiseGrid(n, Float64, sms)},
		{"bfloat16 → float32 is emap1's", n, BFloat16, Float32, elementwiseGrid(n, Float32, sms)},
		{"float32 → int32 is emap1's", n, Float32, Int32, elementwiseGrid(n, Float32, sms)},
		{"a small array spreads a chunk a thread", 8 * threads * 10, Float32, BFloat16, 10},
		{"a tiny array takes one block", 3, Float64, Float32, 1},
	}
	for _, c := range cases {
		assert.Equal(t, c.grid, convertGrid(c.n, c.from, c.to, sms), c.name)
	}
}
