package cuarray_test

import (
	"testing"

	"github.com/gocuda/gocuda/cuarray"
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
