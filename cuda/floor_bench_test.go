package cuda_test

import (
	"slices"
	"testing"
	"time"

	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/kernels"
)

// BenchmarkSmallOpOverFloor is issue 28's measure of the launch path: an
// in-place cuarray.Add of 4096 float32 against the floor, a launch of a
// small kernel made from C in a loop with its parameters built once. The
// floor and each layer between it and cuarray.Add run in alternating
// bursts in one process, each burst followed by an untimed synchronization
// (so that the driver's queue never fills), and the medians over the
// rounds are reported: separate runs drifted by up to a microsecond on the
// H100, more than the 0.3 µs the goal allows, while alternating bursts see
// the same clocks and queue.
//
//	op-ns         the cuarray.Add, host time per call (also ns/op)
//	floor-ns      the C loop's cuLaunchKernel per launch
//	over-floor-ns what gocuda adds: the median over rounds of the round's
//	              op burst minus its floor burst
//	cgo-ns        the floor's kernel launched from Go (Stream.LaunchWords)
//	              over the floor, round by round: the cgo call's share
//	kernels-ns    kernels.Add on raw pointers on cuarray's stream over
//	              that: package kernels' share (with its kernel's two
//	              more parameters and another stream)
//	cuarray-ns    the cuarray.Add over kernels.Add: cuarray's share
//	alloc/op      the allocating form (a nil dst, then UnsafeFree) over
//	              the in-place one, also in alternating bursts
func BenchmarkSmallOpOverFloor(b *testing.B) {
	const burst = 256
	const n = 4096
	f, cs, p := addOne(b, n)
	x := cuarray.Must(cuarray.Ones[float32](n))
	y := cuarray.Must(cuarray.Ones[float32](n))
	s := cuarray.Must(cuarray.DefaultStream(0))
	floor := func() float64 {
		ns, err := cuda.LaunchLoopCost(cs, f, p, n, n/256, 256, burst, burst)
		if err != nil {
			b.Fatal(err)
		}
		return ns
	}
	sync := func() {
		if err := s.Synchronize(); err != nil {
			b.Fatal(err)
		}
	}
	// The first launches load the modules and do the driver's one-time work.
	if _, err := cuarray.Add(y, x, y); err != nil {
		b.Fatal(err)
	}
	sync()
	floor()
	allocating := func() {
		z, err := cuarray.Add(nil, x, y)
		if err != nil {
			b.Fatal(err)
		}
		z.UnsafeFree()
	}
	allocating()
	sync()
	// The layers between: the floor's launch from Go, and kernels.Add on
	// raw pointers on cuarray's own stream.
	dev, bs := s.Device(), s.Backend()
	px, err := dev.Alloc(4 * n)
	if err != nil {
		b.Fatal(err)
	}
	defer dev.Free(px)
	grid, block := cuda.Dim3{X: n / 256, Y: 1, Z: 1}, cuda.Dim3{X: 256, Y: 1, Z: 1}
	syncFloor := func() {
		if err := cs.Synchronize(); err != nil {
			b.Fatal(err)
		}
	}
	// timed is a burst's host time per call of fn, the stream fn queues on
	// idle before and drained after (wait).
	timed := func(wait func(), fn func() error) float64 {
		wait()
		start := time.Now()
		for range burst {
			if err := fn(); err != nil {
				b.Fatal(err)
			}
		}
		ns := float64(time.Since(start).Nanoseconds()) / burst
		wait()
		return ns
	}
	words := func() error { return cs.LaunchWords(f, grid, block, 0, uint64(p), cuda.Word32(n)) }
	kernel := func() error { return kernels.Add[float32](dev, bs, px, px, px, n) }
	inPlace := func() error { _, err := cuarray.Add(y, x, y); return err }
	if err := kernel(); err != nil {
		b.Fatal(err)
	}
	var ops, allocs, floors, wordss, kerns []float64
	b.ResetTimer()
	for i := 0; i < b.N; i += burst {
		ops = append(ops, timed(sync, inPlace))
		b.StopTimer()
		floors = append(floors, floor())
		wordss = append(wordss, timed(syncFloor, words))
		kerns = append(kerns, timed(sync, kernel))
		allocs = append(allocs, timed(sync, func() error { allocating(); return nil }))
		b.StartTimer()
	}
	b.StopTimer()
	op, fl := median(ops), median(floors)
	b.ReportMetric(op, "ns/op")
	b.ReportMetric(op, "op-ns")
	b.ReportMetric(fl, "floor-ns")
	// The differences are taken round by round, then their median: a
	// round's bursts are a few milliseconds apart, so the drift of the
	// host's clocks between rounds cancels.
	b.ReportMetric(medianDiff(ops, floors), "over-floor-ns")
	b.ReportMetric(medianDiff(wordss, floors), "cgo-ns")
	b.ReportMetric(medianDiff(kerns, wordss), "kernels-ns")
	b.ReportMetric(medianDiff(ops, kerns), "cuarray-ns")
	b.ReportMetric(median(allocs)/op, "alloc/op")
}

// medianDiff is the median over rounds of a[i] - b[i].
func medianDiff(a, b []float64) float64 {
	d := make([]float64, len(a))
	for i := range a {
		d[i] = a[i] - b[i]
	}
	return median(d)
}

func median(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	return v[len(v)/2]
}
