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
		run(b, 12*n, func() error { _, err := f.Axpy(y, 0, x, y); return err })
	})
	b.Run("Add", func(b *testing.B) {
		run(b, 12*n, func() error { _, err := f.Add(z, x, y); return err })
	})
	b.Run("generated-row", func(b *testing.B) {
		const m = 8192
		xm := cuarray.Must(x.Reshape(m, m))
		zm := cuarray.Must(z.Reshape(m, m))
		row := cuarray.Must(f.Full(3, m))
		run(b, 8*n+4*m, func() error { return k.Launch(s, float32(2), xm, row, zm) })
	})
}

// BenchmarkElementwiseHost is an elementwise kernel on the host backend,
// float32, 4 Mi elements, each launch synchronized: its Go form
// (HostFunc, the loop as one writes it, on one goroutine) against the
// host's evaluation of its body (on up to GOMAXPROCS goroutines; run with
// -cpu 1 to compare on one core):
//
//   - axpy: z = a*x + y, a a scalar;
//   - relu: z = x > 0 ? x : 0;
//   - row: z = a*x + y with y one row broadcast to every row of x
//     ([2048 2048] + [2048]), which the Go form gets expanded into a slice
//     of the result's length and the body gathers block by block.
//
// On the 2-core AMD EPYC build machine (2026-11-26, -cpu 1, medians of 3,
// the machine shared): axpy 2.60 ms with the Go form, 2.62 ms the body;
// relu 3.06 ms and 6.31 ms; row 8.6 to 19 ms and 4.0 ms.
func BenchmarkElementwiseHost(b *testing.B) {
	if onGPU(b) {
		b.Skip("measures the host backend; run without GOCUDA_BACKEND=cuda")
	}
	const m = 2048
	s, err := cuarray.NewStream(0)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	f := cuarray.On[float32](s)
	x := cuarray.Must(f.Full(1, m, m))
	y := cuarray.Must(f.Full(2, m, m))
	row := cuarray.Must(f.Full(3, m))
	z := cuarray.Must(f.New(m, m))
	kernels := []struct {
		name, in, body string
		goForm         any
		args           []any
	}{
		{"axpy", "float32 a, float32 x, float32 y", "z = a * x + y", func(a float32, x, y, z []float32) {
			for i := range z {
				z[i] = a*x[i] + y[i]
			}
		}, []any{float32(2), x, y, z}},
		{"relu", "float32 x", "z = x > 0 ? x : 0", func(x, z []float32) {
			for i, v := range x {
				z[i] = max(v, 0)
			}
		}, []any{x, z}},
		{"row", "float32 a, float32 x, float32 y", "z = a * x + y", func(a float32, x, y, z []float32) {
			for i := range z {
				z[i] = a*x[i] + y[i]
			}
		}, []any{float32(2), x, row, z}},
	}
	for _, kc := range kernels {
		for _, form := range []string{"HostFunc", "body"} {
			var opts []rtc.Option
			if form == "HostFunc" {
				opts = append(opts, rtc.HostFunc(kc.goForm))
			}
			k, err := rtc.NewElementwiseKernel(kc.name, kc.in, "float32 z", kc.body, opts...)
			if err != nil {
				b.Fatal(err)
			}
			bytes := 0
			for _, a := range kc.args {
				if arr, ok := a.(*cuarray.Array[float32]); ok {
					bytes += 4 * arr.Len()
				}
			}
			b.Run(kc.name+"/"+form, func(b *testing.B) {
				b.SetBytes(int64(bytes))
				for b.Loop() {
					if err := k.Launch(s, kc.args...); err != nil {
						b.Fatal(err)
					}
					if err := s.Synchronize(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
