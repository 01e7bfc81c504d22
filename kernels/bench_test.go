package kernels_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/kernels"
)

// benchBytes is the size of each array in the bandwidth benchmarks.
const benchBytes = 256 << 20

func benchAlloc(b *testing.B, e *env, bytes uint64) backend.Ptr {
	p, err := e.dev.Alloc(bytes)
	require.NoError(b, err)
	b.Cleanup(func() {
		_ = e.s.Synchronize()
		_ = e.dev.Free(p)
	})
	require.NoError(b, e.dev.Memset8(p, 1, bytes, e.s))
	return p
}

// timed runs op iters times on the stream and returns the time per run,
// from before the first is queued to the end of the last.
func timed(b *testing.B, e *env, iters int, op func() error) time.Duration {
	require.NoError(b, e.s.Synchronize())
	start := time.Now()
	for range iters {
		if err := op(); err != nil {
			b.Fatal(err)
		}
	}
	require.NoError(b, e.s.Synchronize())
	return time.Since(start) / time.Duration(iters)
}

// BenchmarkElementwise measures Add float32 over 256 MiB arrays (two reads
// and a write: 768 MiB moved a call) against the device's own
// device-to-device copy of 256 MiB (a read and a write: 512 MiB) in the same
// run, and reports both as GB/s and their ratio, add/copy: the kernels'
// target is 0.85 or more on an H100.
func BenchmarkElementwise(b *testing.B) {
	e := newEnv(b)
	n := benchBytes / 4
	a, x, dst := benchAlloc(b, e, benchBytes), benchAlloc(b, e, benchBytes), benchAlloc(b, e, benchBytes)
	add := func() error { return kernels.Add[float32](e.dev, e.s, dst, a, x, n) }
	cp := func() error { return e.dev.CopyDtoD(dst, a, benchBytes, e.s) }
	// Warm up: load the module, touch every page.
	timed(b, e, 1, add)
	timed(b, e, 1, cp)

	b.SetBytes(3 * benchBytes)
	b.ResetTimer()
	perAdd := timed(b, e, b.N, add)
	b.StopTimer()
	perCopy := timed(b, e, max(b.N, 3), cp)

	addGBs := 3 * benchBytes / perAdd.Seconds() / 1e9
	copyGBs := 2 * benchBytes / perCopy.Seconds() / 1e9
	b.ReportMetric(addGBs, "add-GB/s")
	b.ReportMetric(copyGBs, "copy-GB/s")
	b.ReportMetric(addGBs/copyGBs, "add/copy")
}

// BenchmarkSum measures the two-pass reduction of 256 MiB of float32,
// including the wait for its result.
func BenchmarkSum(b *testing.B) {
	e := newEnv(b)
	n := benchBytes / 4
	x := benchAlloc(b, e, benchBytes)
	sum := func() error { _, err := kernels.Sum[float32](e.dev, e.s, x, n); return err }
	timed(b, e, 1, sum)
	b.SetBytes(benchBytes)
	b.ResetTimer()
	per := timed(b, e, b.N, sum)
	b.ReportMetric(benchBytes/per.Seconds()/1e9, "GB/s")
}

// BenchmarkLaunch is the host's cost of queuing one small kernel (n =
// 1024), the floor under every operation; cuda's BenchmarkLaunch has the
// driver's own share. Launches go in bursts with an untimed
// synchronization between them, as there: a launch into the driver's full
// queue waits for the GPU.
func BenchmarkLaunch(b *testing.B) {
	const burst = 256
	e := newEnv(b)
	x := benchAlloc(b, e, 4096)
	add := func() error { return kernels.AddScalar(e.dev, e.s, x, x, float32(1), 1024) }
	// The first launch in a process loads the module, which JIT-compiles
	// the PTX when the driver's cache lacks it (seconds): not a launch.
	timed(b, e, 1, add)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%burst == 0 && i > 0 {
			b.StopTimer()
			require.NoError(b, e.s.Synchronize())
			b.StartTimer()
		}
		if err := add(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	require.NoError(b, e.s.Synchronize())
}

// BenchmarkNN measures the network layers at examples/train's shapes
// (batch × width; the last layer has 10 classes) as bandwidth, bytes read
// plus written, against a device-to-device copy of x in the same run:
// they move about as many bytes as the copy, so their ratio to it shows
// how far each is from the memory's speed.
func BenchmarkNN(b *testing.B) {
	for _, c := range []struct {
		op         string
		rows, cols int
	}{
		{"SumCols", 8192, 1024},
		{"SumCols", 4096, 4096},
		{"SumCols", 8192, 10},
		{"AddRowVector", 8192, 1024},
		{"SoftmaxCrossEntropy", 8192, 10},
	} {
		b.Run(fmt.Sprintf("%s/%dx%d", c.op, c.rows, c.cols), func(b *testing.B) {
			e := newEnv(b)
			xBytes := uint64(4 * c.rows * c.cols)
			x, dst := benchAlloc(b, e, xBytes), benchAlloc(b, e, xBytes)
			vec := benchAlloc(b, e, uint64(4*max(c.rows, c.cols)))
			labels := benchAlloc(b, e, uint64(4*c.rows))
			require.NoError(b, e.dev.Memset8(labels, 0, uint64(4*c.rows), e.s)) // class 0: in range
			var op func() error
			var moved float64
			switch c.op {
			case "SumCols":
				// Scratch as cuarray gives it: from the device, SumColsScratch's size.
				var scratch kernels.Scratch
				if n := kernels.SumColsScratch(e.dev, c.rows, c.cols); n > 0 {
					scratch = kernels.Scratch{Ptr: benchAlloc(b, e, uint64(n)), Bytes: n}
				}
				op = func() error { return kernels.SumCols[float32](e.dev, e.s, vec, x, c.rows, c.cols, scratch) }
				moved = float64(xBytes + uint64(4*c.cols))
			case "AddRowVector":
				op = func() error { return kernels.AddRowVector[float32](e.dev, e.s, dst, x, vec, c.rows, c.cols) }
				moved = float64(2 * xBytes)
			case "SoftmaxCrossEntropy":
				op = func() error {
					return kernels.SoftmaxCrossEntropy[float32](e.dev, e.s, vec, dst, x, labels, c.rows, c.cols, 1)
				}
				moved = float64(2*xBytes + uint64(8*c.rows))
			}
			cp := func() error { return e.dev.CopyDtoD(dst, x, xBytes, e.s) }
			timed(b, e, 1, op)
			timed(b, e, 1, cp)
			b.SetBytes(int64(moved))
			b.ResetTimer()
			per := timed(b, e, b.N, op)
			b.StopTimer()
			perCopy := timed(b, e, max(b.N, 10), cp)
			opGBs := moved / per.Seconds() / 1e9
			copyGBs := 2 * float64(xBytes) / perCopy.Seconds() / 1e9
			b.ReportMetric(float64(per.Nanoseconds())/1e3, "us/op")
			b.ReportMetric(opGBs, "GB/s")
			b.ReportMetric(opGBs/copyGBs, "of-copy")
		})
	}
}
