package cuarray_test

import (
	"math/rand/v2"
	"testing"

	"github.com/gocuda/gocuda/cuarray"
)

// BenchmarkTake gathers 1 Mi float32s from a table of 64 Ki by random
// indices, through Take and as a plain Go loop: on the host backend with
// one processor (go test -bench Take -cpu 1 ./cuarray) Take should stay
// within 3x of the loop, its bound for the host kernels.
func BenchmarkTake(b *testing.B) {
	const n, table = 1 << 20, 1 << 16
	r := rand.New(rand.NewPCG(5, 6))
	idx := make([]int64, n)
	for i := range idx {
		idx[i] = int64(r.IntN(table))
	}
	xs := make([]float32, table)
	for i := range xs {
		xs[i] = float32(i)
	}
	b.Run("cuarray", func(b *testing.B) {
		x := cuarray.Must(cuarray.FromSlice(xs))
		ia := cuarray.Must(cuarray.FromSlice(idx))
		dst := cuarray.Must(cuarray.New[float32](n))
		b.SetBytes(n * (4 + 8))
		for b.Loop() {
			if _, err := cuarray.Take(dst, x, ia, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("plain-loop", func(b *testing.B) {
		dst := make([]float32, n)
		b.SetBytes(n * (4 + 8))
		for b.Loop() {
			for i, j := range idx {
				if j < 0 {
					j += table
				}
				dst[i] = xs[j]
			}
		}
	})
}
