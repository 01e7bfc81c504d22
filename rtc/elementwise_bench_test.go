package rtc_test

import (
	"testing"

	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/rtc"
)

// BenchmarkElementwiseAxpy is a generated axpy against the built-in
// operations moving the same bytes, float32, 64 Mi elements (256 MiB an
// array), on the GPU:
//
//   - generated: y = a*x + y by NewElementwiseKernel, y passed as an input
//     and the output (in place, as Axpy);
//   - generated-out: z = a*x + y into a third array;
//   - Axpy: the built-in y = a*x + y;
//   - Add: the built-in z = x + y.
//
// Each reads two arrays and writes one: 12 bytes an element, which
// SetBytes reports as MB/s (and the GB/s metric, 1e9 bytes). Launches are
// queued back to back on one stream and synchronized once, inside the
// timing. The generated kernel is compiled before the timing. The
// acceptance bar: generated ≥ 90 % of Axpy's bandwidth on the H100.
//
// generated-row is z = a*x + y with y one row broadcast to every row of x
// ([8192 8192] + [8192]: 8 bytes an element), the broadcast kernel, to
// compare with BenchmarkBroadcastAdd/row.
func BenchmarkElementwiseAxpy(b *testing.B) {
	if !onGPU(b) {
		b.Skip("measures GPU memory bandwidth; run with GOCUDA_BACKEND=cuda")
	}
	needCompiler(b)
	const n = 64 << 20
	s, err := cuarray.NewStream(0)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	f := cuarray.On[float32](s)
	x := cuarray.Must(f.Full(1, n))
	y := cuarray.Must(f.Full(2, n))
	z := cuarray.Must(f.New(n))
	k, err := rtc.NewElementwiseKernel("axpy", "float32 a, float32 x, float32 y", "float32 z", "z = a * x + y")
	if err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, bytes int64, op func() error) {
		if err := op(); err != nil { // warm-up: compile, load
			b.Fatal(err)
		}
		if err := s.Synchronize(); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(bytes)
		b.ResetTimer()
		for range b.N {
			if err := op(); err != nil {
				b.Fatal(err)
			}
		}
		if err := s.Synchronize(); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		b.ReportMetric(float64(bytes)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
	}
	// Alpha 0 in the in-place forms keeps y's values unchanged run after run.
	b.Run("generated", func(b *testing.B) {
		run(b, 12*n, func() error { return k.Launch(s, float32(0), x, y, y) })
	})
	b.Run("generated-out", func(b *testing.B) {
		run(b, 12*n, func() error { return k.Launch(s, float32(2), x, y, z) })
	})
	b.Run("Axpy", func(b *testing.B) {
		run(b, 12*n, func() error { return f.Axpy(0, x, y) })
	})
	b.Run("Add", func(b *testing.B) {
		run(b, 12*n, func() error { return f.Add(z, x, y) })
	})
	b.Run("generated-row", func(b *testing.B) {
		const m = 8192
		xm := cuarray.Must(x.Reshape(m, m))
		zm := cuarray.Must(z.Reshape(m, m))
		row := cuarray.Must(f.Full(3, m))
		run(b, 8*n+4*m, func() error { return k.Launch(s, float32(2), xm, row, zm) })
	})
}
