package half

import (
	"math/rand/v2"
	"testing"
)

// The slice conversions against a plain loop over the scalar conversion,
// and against copying the float32s, the memory-bound floor. Inputs are
// spread over the formats' ranges, so branches are not predictable:
//
//	go test -run X -bench . ./half
const benchN = 1 << 16

func benchInputs() []float32 {
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]float32, benchN)
	for i := range src {
		src[i] = float32(rng.NormFloat64()) * float32(int(1)<<rng.IntN(20)) / 1024
	}
	return src
}

func BenchmarkToFloat16(b *testing.B) {
	src, dst := benchInputs(), make([]Float16, benchN)
	b.Run("Float16sFromFloat32s", func(b *testing.B) {
		b.SetBytes(benchN * 4)
		for b.Loop() {
			Float16sFromFloat32s(dst, src)
		}
	})
	b.Run("loop", func(b *testing.B) {
		b.SetBytes(benchN * 4)
		for b.Loop() {
			for i, f := range src {
				dst[i] = Float16FromFloat32(f)
			}
		}
	})
}

func BenchmarkFromFloat16(b *testing.B) {
	src, dst := make([]Float16, benchN), make([]float32, benchN)
	Float16sFromFloat32s(src, benchInputs())
	b.Run("Float32sFromFloat16s", func(b *testing.B) {
		b.SetBytes(benchN * 2)
		for b.Loop() {
			Float32sFromFloat16s(dst, src)
		}
	})
	b.Run("loop", func(b *testing.B) {
		b.SetBytes(benchN * 2)
		for b.Loop() {
			for i, h := range src {
				dst[i] = h.Float32()
			}
		}
	})
}

func BenchmarkToBFloat16(b *testing.B) {
	src, dst := benchInputs(), make([]BFloat16, benchN)
	b.Run("BFloat16sFromFloat32s", func(b *testing.B) {
		b.SetBytes(benchN * 4)
		for b.Loop() {
			BFloat16sFromFloat32s(dst, src)
		}
	})
	b.Run("loop", func(b *testing.B) {
		b.SetBytes(benchN * 4)
		for b.Loop() {
			for i, f := range src {
				dst[i] = BFloat16FromFloat32(f)
			}
		}
	})
}

func BenchmarkFromBFloat16(b *testing.B) {
	src, dst := make([]BFloat16, benchN), make([]float32, benchN)
	BFloat16sFromFloat32s(src, benchInputs())
	b.Run("Float32sFromBFloat16s", func(b *testing.B) {
		b.SetBytes(benchN * 2)
		for b.Loop() {
			Float32sFromBFloat16s(dst, src)
		}
	})
	b.Run("loop", func(b *testing.B) {
		b.SetBytes(benchN * 2)
		for b.Loop() {
			for i, h := range src {
				dst[i] = h.Float32()
			}
		}
	})
}

func BenchmarkCopyFloat32(b *testing.B) {
	src, dst := benchInputs(), make([]float32, benchN)
	b.SetBytes(benchN * 4)
	for b.Loop() {
		copy(dst, src)
	}
}
