package half

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// every16 is each 16-bit pattern once.
func every16() []uint16 {
	s := make([]uint16, 1<<16)
	for i := range s {
		s[i] = uint16(i)
	}
	return s
}

func TestSliceConversionsMatchTheScalarOnes(t *testing.T) {
	var src32 []float32
	for _, b := range every16() {
		src32 = append(src32, Float16(b).Float32(), BFloat16(b).Float32(), math.Float32frombits(uint32(b)<<16|uint32(b)))
	}
	h := make([]Float16, len(src32))
	require.Equal(t, len(src32), Float16sFromFloat32s(h, src32))
	bf := make([]BFloat16, len(src32))
	require.Equal(t, len(src32), BFloat16sFromFloat32s(bf, src32))
	for i, f := range src32 {
		require.Equal(t, Float16FromFloat32(f), h[i], "%d", i)
		require.Equal(t, BFloat16FromFloat32(f), bf[i], "%d", i)
	}
	back := make([]float32, len(h))
	require.Equal(t, len(h), Float32sFromFloat16s(back, h))
	for i := range h {
		require.Equal(t, math.Float32bits(h[i].Float32()), math.Float32bits(back[i]), "%d", i)
	}
	require.Equal(t, len(bf), Float32sFromBFloat16s(back, bf))
	for i := range bf {
		require.Equal(t, math.Float32bits(bf[i].Float32()), math.Float32bits(back[i]), "%d", i)
	}
}

func TestSliceConversionsStopAtTheShorterSlice(t *testing.T) {
	src := []float32{1, 2, 3}
	for _, c := range []struct {
		name string
		dst  int
		want int
	}{
		{"shorter destination", 2, 2},
		{"longer destination", 5, 3},
		{"empty destination", 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := make([]Float16, c.dst)
			assert.Equal(t, c.want, Float16sFromFloat32s(h, src))
			b := make([]BFloat16, c.dst)
			assert.Equal(t, c.want, BFloat16sFromFloat32s(b, src))
			for i := 0; i < c.dst; i++ {
				if i < c.want {
					assert.Equal(t, src[i], h[i].Float32())
					assert.Equal(t, src[i], b[i].Float32())
				} else {
					assert.Zero(t, h[i], "untouched past the source")
					assert.Zero(t, b[i], "untouched past the source")
				}
			}
			out := make([]float32, c.dst)
			assert.Equal(t, c.want, Float32sFromFloat16s(out, h[:min(c.dst, 3)]))
			assert.Equal(t, c.want, Float32sFromBFloat16s(out, b[:min(c.dst, 3)]))
		})
	}
	assert.Zero(t, Float16sFromFloat32s(nil, nil))
	assert.Zero(t, Float32sFromBFloat16s(nil, []BFloat16{1}))
}
