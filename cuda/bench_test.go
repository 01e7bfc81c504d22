package cuda_test

import (
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
			if _, err := c.CurrentDevice(); err != nil {
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
