package cuarray_test

import (
	"strconv"
	"testing"

	"github.com/gocuda/gocuda/cuarray"
)

// BenchmarkGemm is float32 C = A·B for square matrices on device 0's
// default stream, reported as GFLOP/s (2n³ flops a product). Products are
// queued back to back and the stream is synchronized once at the end,
// inside the timing, so the figure is the device's throughput as a Go
// program sees it; bench/torch_mm.py measures torch.mm the same way.
// On the host backend 4096 takes minutes of gonum, and only runs without
// -short.
func BenchmarkGemm(b *testing.B) {
	for _, n := range []int{256, 1024, 4096} {
		b.Run("float32/n="+strconv.Itoa(n), func(b *testing.B) {
			s, err := cuarray.DefaultStream(0)
			if err != nil {
				b.Fatal(err)
			}
			if n >= 4096 && testing.Short() && s.Device().Info().Major == 0 {
				b.Skip("host backend: n=4096 takes minutes; run without -short")
			}
			a := cuarray.Must(cuarray.Ones[float32](n, n))
			x := cuarray.Must(cuarray.Ones[float32](n, n))
			c := cuarray.Must(cuarray.Zeros[float32](n, n))
			// Warm up: cuBLAS's handle and kernel selection, the pool.
			if _, err := cuarray.MatMul(c, a, x); err != nil {
				b.Fatal(err)
			}
			if err := s.Synchronize(); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := cuarray.MatMul(c, a, x); err != nil {
					b.Fatal(err)
				}
			}
			if err := s.Synchronize(); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			flops := 2 * float64(n) * float64(n) * float64(n) * float64(b.N)
			b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
