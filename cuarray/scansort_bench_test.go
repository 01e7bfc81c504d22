package cuarray_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/kernels"
)

// Scans and sorts against their baselines: a 1-D float32 sort against
// slices.Sort of the same data (on one core: the host backend's own
// speed), and cumulative sums along either axis of a square matrix against
// Copy of it, which moves the same bytes. The sizes (16 Mi and
// 4096 × 4096) on a GPU; on the host 1 Mi and 1024 × 1024.

func benchSizes(b *testing.B) (n, side int) {
	s, err := cuarray.DefaultStream(0)
	if err != nil {
		b.Fatal(err)
	}
	if kernels.ArgsortScratch[float32](s.Device(), 1, 1<<20) > 0 { // a GPU
		return 1 << 24, 4096
	}
	return 1 << 20, 1024
}

func randomFloat32s(n int) []float32 {
	r := rand.New(rand.NewPCG(5, 6))
	xs := make([]float32, n)
	for i := range xs {
		xs[i] = r.Float32()*2 - 1
	}
	return xs
}

func syncDefault(b *testing.B) {
	s, err := cuarray.DefaultStream(0)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Synchronize(); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkSort1D(b *testing.B) {
	n, _ := benchSizes(b)
	x := cuarray.Must(cuarray.FromSlice(randomFloat32s(n)))
	dst := cuarray.Must(cuarray.New[float32](n))
	b.SetBytes(int64(n) * 4)
	for b.Loop() {
		if _, err := cuarray.Sort(dst, x, false); err != nil {
			b.Fatal(err)
		}
		syncDefault(b)
	}
}

func BenchmarkArgsort1D(b *testing.B) {
	n, _ := benchSizes(b)
	x := cuarray.Must(cuarray.FromSlice(randomFloat32s(n)))
	dst := cuarray.Must(cuarray.New[int64](n))
	b.SetBytes(int64(n) * 4)
	for b.Loop() {
		if _, err := cuarray.Argsort(dst, x, false); err != nil {
			b.Fatal(err)
		}
		syncDefault(b)
	}
}

// BenchmarkSlicesSort1D is the baseline: slices.Sort of the same float32s
// on one goroutine, including the copy that keeps the input unsorted.
func BenchmarkSlicesSort1D(b *testing.B) {
	n, _ := benchSizes(b)
	xs := randomFloat32s(n)
	work := make([]float32, n)
	b.SetBytes(int64(n) * 4)
	for b.Loop() {
		copy(work, xs)
		slices.Sort(work)
	}
}

func BenchmarkSortRows(b *testing.B) {
	_, side := benchSizes(b)
	x := cuarray.Must(cuarray.FromSlice(randomFloat32s(side*side), side, side))
	dst := cuarray.Must(cuarray.New[float32](side, side))
	b.SetBytes(int64(side*side) * 4)
	for b.Loop() {
		if _, err := cuarray.Sort(dst, x, false); err != nil {
			b.Fatal(err)
		}
		syncDefault(b)
	}
}

func BenchmarkCumsum(b *testing.B) {
	_, side := benchSizes(b)
	x := cuarray.Must(cuarray.FromSlice(randomFloat32s(side*side), side, side))
	dst := cuarray.Must(cuarray.New[float32](side, side))
	for _, c := range []struct {
		name string
		axis int
	}{{"rows", 1}, {"cols", 0}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(side*side) * 4 * 2) // read and written, as Copy
			for b.Loop() {
				if _, err := cuarray.Cumsum(dst, x, c.axis); err != nil {
					b.Fatal(err)
				}
				syncDefault(b)
			}
		})
	}
	b.Run("copy", func(b *testing.B) {
		b.SetBytes(int64(side*side) * 4 * 2)
		for b.Loop() {
			if err := cuarray.Copy(dst, x); err != nil {
				b.Fatal(err)
			}
			syncDefault(b)
		}
	})
}
