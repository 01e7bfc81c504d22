package cuarray_test

import (
	"testing"
	"unsafe"

	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/half"
)

// BenchmarkNewFree1MiB is New of a 1 MiB float32 array and UnsafeFree on
// the default stream: the cost of a cached allocation through cuarray.
func BenchmarkNewFree1MiB(b *testing.B) {
	a, err := cuarray.New[float32](262144) // warm the pool and default stream
	if err != nil {
		b.Fatal(err)
	}
	a.UnsafeFree()
	b.ReportAllocs()
	for b.Loop() {
		a, err := cuarray.New[float32](262144)
		if err != nil {
			b.Fatal(err)
		}
		a.UnsafeFree()
	}
}

// BenchmarkNewFree1MiBParallel is the same from several goroutines, each
// on its own stream.
func BenchmarkNewFree1MiBParallel(b *testing.B) {
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		s, err := cuarray.NewStream(0)
		if err != nil {
			b.Fatal(err)
		}
		f := cuarray.On[float32](s)
		for pb.Next() {
			a, err := f.New(262144)
			if err != nil {
				b.Fatal(err)
			}
			a.UnsafeFree()
		}
	})
}

// BenchmarkPoolAllocFree1MiB is the pool alone (device 0's pool, default
// stream), for comparison: what cuarray adds is the difference.
func BenchmarkPoolAllocFree1MiB(b *testing.B) {
	s, err := cuarray.DefaultStream(0)
	if err != nil {
		b.Fatal(err)
	}
	p := s.Pool()
	b.ReportAllocs()
	for b.Loop() {
		blk, err := p.Alloc(1<<20, s.Backend())
		if err != nil {
			b.Fatal(err)
		}
		if err := p.Free(blk, s.Backend()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBroadcastAdd is float32 Add of a [4096 4096] array and an
// operand broadcast to it, against the plain Add of two [4096 4096] arrays
// (the same output): the row case [4096 4096] + [4096] (a bias), the column
// case + [4096 1], and a general layout [64 64 4096] + [64 1 4096] that
// takes neither fast path. Adds are queued back to back on the default
// stream and synchronized once, inside the timing. GB/s counts the bytes
// the operation must move: dst written, each operand read once.
func BenchmarkBroadcastAdd(b *testing.B) {
	const n = 4096
	for _, c := range []struct {
		name   string
		as, bs []int
	}{
		{"plain", []int{n, n}, []int{n, n}},
		{"row", []int{n, n}, []int{n}},
		{"column", []int{n, n}, []int{n, 1}},
		{"general", []int{64, 64, n}, []int{64, 1, n}},
	} {
		b.Run(c.name, func(b *testing.B) {
			s, err := cuarray.DefaultStream(0)
			if err != nil {
				b.Fatal(err)
			}
			x := cuarray.Must(cuarray.Ones[float32](c.as...))
			y := cuarray.Must(cuarray.Ones[float32](c.bs...))
			dst := cuarray.Must(cuarray.Add(nil, x, y)) // also the warm-up
			if err := s.Synchronize(); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := cuarray.Add(dst, x, y); err != nil {
					b.Fatal(err)
				}
			}
			if err := s.Synchronize(); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			bytes := 4 * float64(dst.Len()+x.Len()+y.Len()) * float64(b.N)
			b.ReportMetric(bytes/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}

// BenchmarkTranspose is a float32 [4096 4096] transposed into a new array
// (Contiguous of a Transpose view, and Copy of the view into an array made
// once) against a plain Copy of the same bytes. GB/s counts the bytes read
// and written; "of-copy" is the sub-benchmark's GB/s over the plain copy's
// (when both ran, in this order), the ratio the tiled transposition is
// held to (at least 0.8 on an H100).
func BenchmarkTranspose(b *testing.B) {
	const n = 4096
	var copyGBs float64
	for _, c := range []struct {
		name string
		run  func(dst, a, at *cuarray.Array[float32]) error
	}{
		{"copy", func(dst, a, _ *cuarray.Array[float32]) error { return cuarray.Copy(dst, a) }},
		{"transpose-copy", func(dst, _, at *cuarray.Array[float32]) error { return cuarray.Copy(dst, at) }},
		{"transpose-contiguous", func(_, _, at *cuarray.Array[float32]) error {
			c, err := cuarray.Contiguous(at)
			if err == nil {
				c.UnsafeFree() // the pool hands the memory to the next one
			}
			return err
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			s, err := cuarray.DefaultStream(0)
			if err != nil {
				b.Fatal(err)
			}
			a := cuarray.Must(cuarray.Ones[float32](n, n))
			at := cuarray.Must(a.Transpose())
			dst := cuarray.Must(cuarray.New[float32](n, n))
			if err := c.run(dst, a, at); err != nil { // the warm-up
				b.Fatal(err)
			}
			if err := s.Synchronize(); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := c.run(dst, a, at); err != nil {
					b.Fatal(err)
				}
			}
			if err := s.Synchronize(); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			gbs := 2 * 4 * float64(a.Len()) * float64(b.N) / b.Elapsed().Seconds() / 1e9
			b.ReportMetric(gbs, "GB/s")
			if c.name == "copy" {
				copyGBs = gbs
			} else if copyGBs > 0 {
				b.ReportMetric(gbs/copyGBs, "of-copy")
			}
		})
	}
}

// BenchmarkSmallOp is the host's cost of one small operation on 4096
// float32s, the launch-bound case of a training step or a simulation tick
// (issue 28): Add in place into a preallocated array, and the allocating
// form (a new array each time, freed at once). Operations go in bursts of
// 256 with an untimed synchronization between bursts, as kernels' and
// cuda's BenchmarkLaunch do: a launch into the driver's full queue waits
// for the GPU. cuda's BenchmarkLaunch, in the same run, is the floor.
func BenchmarkSmallOp(b *testing.B) {
	const burst = 256
	x := cuarray.Must(cuarray.Ones[float32](4096))
	y := cuarray.Must(cuarray.Ones[float32](4096))
	s := cuarray.Must(cuarray.DefaultStream(0))
	for _, c := range []struct {
		name string
		op   func() error
	}{
		{"inplace", func() error { return errOf(cuarray.Add(y, x, y)) }},
		{"allocating", func() error {
			z, err := cuarray.Add(nil, x, y)
			if err == nil {
				z.UnsafeFree()
			}
			return err
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			if err := c.op(); err != nil { // the module loads on the first launch
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if i%burst == 0 && i > 0 {
					b.StopTimer()
					if err := s.Synchronize(); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				if err := c.op(); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if err := s.Synchronize(); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkTransposeSizes is the copy of a transposed [4096 4096] view into
// a preallocated array for elements of 2, 4 and 8 bytes (one transpose
// kernel serves each size), beside a plain Copy of the same bytes; GB/s
// counts the bytes read and written, of-copy the share of Copy's.
func BenchmarkTransposeSizes(b *testing.B) {
	benchTransposeOf[half.Float16](b, "float16")
	benchTransposeOf[float32](b, "float32")
	benchTransposeOf[float64](b, "float64")
}

func benchTransposeOf[T cuarray.Elem](b *testing.B, name string) {
	const n = 4096
	s, err := cuarray.DefaultStream(0)
	if err != nil {
		b.Fatal(err)
	}
	a := cuarray.Must(cuarray.Zeros[T](n, n))
	defer a.UnsafeFree()
	at := cuarray.Must(a.Transpose())
	dst := cuarray.Must(cuarray.New[T](n, n))
	defer dst.UnsafeFree()
	var copyGBs float64
	for _, c := range []struct {
		name string
		src  *cuarray.Array[T]
	}{{name + "-copy", a}, {name + "-transpose", at}} {
		b.Run(c.name, func(b *testing.B) {
			if err := cuarray.Copy(dst, c.src); err != nil { // the warm-up
				b.Fatal(err)
			}
			if err := s.Synchronize(); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := cuarray.Copy(dst, c.src); err != nil {
					b.Fatal(err)
				}
			}
			if err := s.Synchronize(); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			gbs := 2 * float64(a.Len()*int(unsafe.Sizeof(*new(T)))) * float64(b.N) / b.Elapsed().Seconds() / 1e9
			b.ReportMetric(gbs, "GB/s")
			if c.src == a {
				copyGBs = gbs
			} else if copyGBs > 0 {
				b.ReportMetric(gbs/copyGBs, "of-copy")
			}
		})
	}
}
