package cuarray_test

import (
	"testing"

	"github.com/gocuda/gocuda/cuarray"
)

// BenchmarkReduceAxes is float32 reductions of a [4096 4096] array beside
// a Copy of the same bytes: the sum along rows (the contiguous axis), the
// sum down columns (axis 0, a strided walk), and the argmax of each row.
// Each is queued back to back into a preallocated dst on the default
// stream and synchronized once, inside the timing. GB/s counts the bytes
// read (and, for copy, the same count, so the ratio to copy is the share of
// copy bandwidth; a copy also writes them). "plain-go-rows" and
// "plain-go-cols" are the same sums as a single-goroutine Go loop over a
// Go slice, the yardstick for the host backend (run with -cpu 1 to compare
// one core with one core).
func BenchmarkReduceAxes(b *testing.B) {
	const n = 4096
	s, err := cuarray.DefaultStream(0)
	if err != nil {
		b.Fatal(err)
	}
	x := cuarray.Must(cuarray.Ones[float32](n, n))
	defer x.UnsafeFree()
	copyDst := cuarray.Must(cuarray.New[float32](n, n))
	defer copyDst.UnsafeFree()
	sums := cuarray.Must(cuarray.New[float32](n))
	defer sums.UnsafeFree()
	idx := cuarray.Must(cuarray.New[int64](n))
	defer idx.UnsafeFree()
	for _, c := range []struct {
		name string
		run  func() error
	}{
		{"copy", func() error { return cuarray.Copy(copyDst, x) }},
		{"sum-rows", func() error { _, err := cuarray.SumAxes(sums, x, []int{1}, false); return err }},
		{"sum-cols", func() error { _, err := cuarray.SumAxes(sums, x, []int{0}, false); return err }},
		{"argmax-rows", func() error { _, err := cuarray.ArgMaxAxes(idx, x, []int{1}, false); return err }},
	} {
		b.Run(c.name, func(b *testing.B) {
			if err := c.run(); err != nil { // warm-up: kernels loaded, scratch cached
				b.Fatal(err)
			}
			if err := s.Synchronize(); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := c.run(); err != nil {
					b.Fatal(err)
				}
			}
			if err := s.Synchronize(); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			b.ReportMetric(4*float64(x.Len())*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
	host := make([]float32, n*n)
	out := make([]float32, n)
	acc := make([]float64, n)
	for _, c := range []struct {
		name string
		run  func()
	}{
		{"plain-go-rows", func() {
			for r := range n {
				var s float64
				for _, v := range host[r*n : (r+1)*n] {
					s += float64(v)
				}
				out[r] = float32(s)
			}
		}},
		{"plain-go-argmax-rows", func() {
			for r := range n {
				best, bi := host[r*n], 0
				for i, v := range host[r*n : (r+1)*n] {
					if v > best {
						best, bi = v, i
					}
				}
				out[r] = float32(bi)
			}
		}},
		{"plain-go-cols", func() {
			clear(acc)
			for r := range n {
				for j, v := range host[r*n : (r+1)*n] {
					acc[j] += float64(v)
				}
			}
			for j, s := range acc {
				out[j] = float32(s)
			}
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				c.run()
			}
			b.ReportMetric(4*float64(len(host))*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}
