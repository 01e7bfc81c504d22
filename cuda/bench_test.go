package cuda_test

import (
	"os"
	"testing"

	"github.com/gocuda/gocuda/cuda"
)

// BenchmarkDriverCall measures cheap driver calls through our binding
// (context made current inside the same C call) against anchors from the
// same run: a bare cgo call, a raw cgo call into cuCtxGetCurrent through the
// dlopen'd pointer, and each call made from C in a loop (what the driver
// itself costs). overhead-ns/op is ours minus the C loop: the binding's cost.
func BenchmarkDriverCall(b *testing.B) {
	c := gpu(b)
	s, err := c.NewStream(cuda.StreamNonBlocking)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Destroy()
	ev, err := c.NewEvent(cuda.EventDisableTiming)
	if err != nil {
		b.Fatal(err)
	}
	defer ev.Destroy()
	if err := ev.Record(s); err != nil {
		b.Fatal(err)
	}
	if err := s.Synchronize(); err != nil {
		b.Fatal(err)
	}
	b.Logf("call path: %s", cuda.CallPath())
	b.Run("anchor=cgo-noop", func(b *testing.B) {
		for b.Loop() {
			cuda.NoopCall()
		}
	})
	b.Run("anchor=raw-cuCtxGetCurrent", func(b *testing.B) {
		for b.Loop() {
			if _, err := cuda.RawCtxGetCurrent(); err != nil {
				b.Fatal(err)
			}
		}
		report(b, c, "cuCtxGetCurrent", nil)
	})
	b.Run("CtxGetDevice", func(b *testing.B) {
		for b.Loop() {
			if _, err := cuda.CurrentDevice(c); err != nil {
				b.Fatal(err)
			}
		}
		report(b, c, "cuCtxGetDevice", nil)
	})
	b.Run("EventQuery", func(b *testing.B) {
		for b.Loop() {
			if ok, err := ev.Query(); !ok || err != nil {
				b.Fatal(ok, err)
			}
		}
		report(b, c, "cuEventQuery", ev)
	})
	b.Run("StreamQuery", func(b *testing.B) {
		for b.Loop() {
			if ok, err := s.Query(); !ok || err != nil {
				b.Fatal(ok, err)
			}
		}
		report(b, c, "cuStreamQuery", s)
	})
}

// report adds the C-loop cost of the same call and our overhead over it.
func report(b *testing.B, c *cuda.Context, call string, h any) {
	b.Helper()
	driver, err := cuda.DriverLoopCost(c, call, h, 200000)
	if err != nil {
		b.Fatal(err)
	}
	ours := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(driver, "driver-ns/op")
	b.ReportMetric(ours-driver, "overhead-ns/op")
}

// BenchmarkLaunch measures Stream.Launch of a small kernel (add_one over
// 1024 floats) against the same launch made from C in a loop in the same
// run. Both launch in bursts of launchBurst and synchronize between them
// with the timer stopped: the driver's launch queue holds about a thousand
// launches, and a launch into a full queue waits for the GPU to run one,
// which would time the GPU, not the host. overhead-ns/op is what the
// binding (argument packing, the cgo call, making the context current)
// adds to cuLaunchKernel.
func BenchmarkLaunch(b *testing.B) {
	benchLaunch(b, func(s *cuda.Stream, f *cuda.Function, grid, block cuda.Dim3, p cuda.DevicePtr, n uint32) error {
		return s.Launch(f, grid, block, 0, p, n)
	})
}

// BenchmarkLaunchWords is BenchmarkLaunch through LaunchWords, the path of
// package kernels' small operations: the arguments go by value, with no
// interface boxing and no packing.
func BenchmarkLaunchWords(b *testing.B) {
	benchLaunch(b, func(s *cuda.Stream, f *cuda.Function, grid, block cuda.Dim3, p cuda.DevicePtr, n uint32) error {
		return s.LaunchWords(f, grid, block, 0, uint64(p), cuda.Word32(n))
	})
}

// addOne is the tests' add_one kernel loaded on device 0, a non-blocking
// stream and n floats for it, all released when the benchmark ends: what
// the launch benchmarks and their C loops launch.
func addOne(b *testing.B, n int) (*cuda.Function, *cuda.Stream, cuda.DevicePtr) {
	c := gpu(b)
	ptx, err := os.ReadFile("testdata/add_one.ptx")
	if err != nil {
		b.Fatal(err)
	}
	m, err := c.LoadModule(ptx)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Unload() })
	f, err := m.Function("add_one")
	if err != nil {
		b.Fatal(err)
	}
	s, err := c.NewStream(cuda.StreamNonBlocking)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Destroy() })
	p, err := c.MemAlloc(4 * uint64(n))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.MemFree(p) })
	return f, s, p
}

func benchLaunch(b *testing.B, launch func(s *cuda.Stream, f *cuda.Function, grid, block cuda.Dim3, p cuda.DevicePtr, n uint32) error) {
	const launchBurst = 256
	const n = 1024
	f, s, p := addOne(b, n)
	grid, block := cuda.Dim3{X: n / 256, Y: 1, Z: 1}, cuda.Dim3{X: 256, Y: 1, Z: 1}
	sync := func() {
		if err := s.Synchronize(); err != nil {
			b.Fatal(err)
		}
	}
	// The first launch of a function does one-time work in the driver.
	if err := launch(s, f, grid, block, p, n); err != nil {
		b.Fatal(err)
	}
	sync()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%launchBurst == 0 && i > 0 {
			b.StopTimer()
			sync()
			b.StartTimer()
		}
		if err := launch(s, f, grid, block, p, n); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	ours := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	sync()
	driver, err := cuda.LaunchLoopCost(s, f, p, n, grid.X, block.X, 100*launchBurst, launchBurst)
	if err != nil {
		b.Fatal(err)
	}
	sync()
	b.ReportMetric(driver, "driver-ns/op")
	b.ReportMetric(ours-driver, "overhead-ns/op")
}
