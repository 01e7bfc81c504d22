package pooltest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/pool"
)

// BenchSizes are the sizes of BenchAllocFree, named as the sub-benchmarks
// are.
var BenchSizes = []struct {
	Name string
	Size uint64
}{
	{"512B", 512},
	{"64KiB", 64 * kiB},
	{"1MiB", miB},
	{"16MiB", 16 * miB},
	{"64MiB", 64 * miB},
}

// BenchGoroutines are the goroutine counts of BenchParallel.
var BenchGoroutines = []int{1, 2, 4, 8, 16}

// ParallelSize is the block size BenchParallel allocates.
const ParallelSize = miB

// Bench runs BenchAllocFree, BenchParallel and BenchRefusal as
// sub-benchmarks AllocFree, Parallel and Refusal.
func Bench(b *testing.B, mk pool.Factory) {
	b.Run("AllocFree", func(b *testing.B) { BenchAllocFree(b, mk) })
	b.Run("Parallel", func(b *testing.B) { BenchParallel(b, mk) })
	b.Run("Refusal", func(b *testing.B) { BenchRefusal(b, mk) })
}

// BenchAllocFree measures one Alloc+Free pair of each of BenchSizes on one
// goroutine and one stream, with the pool warmed by one pair first so that
// a caching pool is measured on its hit path. It reports pairs/s.
func BenchAllocFree(b *testing.B, mk pool.Factory) {
	for _, bs := range BenchSizes {
		b.Run(bs.Name, func(b *testing.B) {
			dev := Device(b)
			st := NewStream(b, dev)
			p := benchPool(b, mk, dev)
			pair(b, p, bs.Size, st, 1)
			b.ReportAllocs()
			b.ResetTimer()
			pair(b, p, bs.Size, st, b.N)
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pairs/s")
		})
	}
}

// BenchParallel measures Alloc+Free pairs of ParallelSize bytes from each
// of BenchGoroutines goroutines, each on its own stream, splitting b.N
// pairs among them. ns/op is wall time per pair over all goroutines;
// pairs/s is the total throughput.
func BenchParallel(b *testing.B, mk pool.Factory) {
	for _, g := range BenchGoroutines {
		b.Run(fmt.Sprintf("goroutines=%d", g), func(b *testing.B) {
			dev := Device(b)
			// Streams first: cleanups run last-in first-out, so the pool
			// closes (and syncs its blocks' streams) before they go.
			streams := make([]backend.Stream, g)
			for i := range streams {
				streams[i] = NewStream(b, dev)
			}
			p := benchPool(b, mk, dev)
			for i := range streams {
				pair(b, p, ParallelSize, streams[i], 1)
			}
			var wg sync.WaitGroup
			errs := make([]error, g)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range g {
				n := b.N / g
				if i < b.N%g {
					n++
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[i] = pairs(p, ParallelSize, streams[i], n)
				}()
			}
			wg.Wait()
			b.StopTimer()
			for _, err := range errs {
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pairs/s")
		})
	}
}

func benchPool(b *testing.B, mk pool.Factory, dev backend.Device) pool.Pool {
	src, err := pool.NewSource(dev, pool.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	p, err := mk(dev, src)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := p.Close(); err != nil {
			b.Error(err)
		}
	})
	return p
}

func pair(b *testing.B, p pool.Pool, size uint64, st backend.Stream, n int) {
	if err := pairs(p, size, st, n); err != nil {
		b.Fatal(err)
	}
}

// pairs is the measured loop: nothing in it but the pool's calls.
func pairs(p pool.Pool, size uint64, st backend.Stream, n int) error {
	for i := 0; i < n; i++ {
		blk, err := p.Alloc(size, st)
		if err != nil {
			return err
		}
		if err := p.Free(blk, st); err != nil {
			return err
		}
	}
	return nil
}
