package blas

import (
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/cudabackend"
	"github.com/gocuda/gocuda/internal/testsupport/drivertest"
)

// batch is how many products are queued between synchronizations (which
// are not timed): well below the stream's queue depth, so that the
// figures are the host's cost of a call, not the GPU's speed.
const batch = 128

// BenchmarkSgemmOverhead is the cost of one Gemm[float32] call through our
// binding (checks, handle lookup, lock, cgo, context switch-in and out)
// against cublasSgemm_v2 called from a C loop on the same stream and
// sizes. Small sizes make the call, not the GPU, the bottleneck.
//
// Metrics: ns/op is ours; cublas-ns/op the C loop; overhead-ns/op ours
// minus the C loop; x-cublas ours over the C loop; setstream-ns/op what
// calling cublasSetStream_v2 before every product adds in C (what a handle
// shared by alternating streams pays, and what keeping the last stream
// saves).
func BenchmarkSgemmOverhead(b *testing.B) {
	dev := drivertest.GPU(b)
	for _, n := range []int{16, 256} {
		b.Run("n="+strconv.Itoa(n), func(b *testing.B) {
			s, ptrs, err := benchSetup(b, dev, n)
			if err != nil {
				b.Fatal(err)
			}
			cs := s.(*cudabackend.Stream)
			gemm := func() {
				if err := Gemm[float32](dev, s, false, false, n, n, n, 1, ptrs[0], n, ptrs[1], n, 0, ptrs[2], n); err != nil {
					b.Fatal(err)
				}
			}
			gemm() // warm up: the handle, cuBLAS's kernel choice
			syncStream(b, s)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				gemm()
				if (i+1)%batch == 0 {
					b.StopTimer()
					syncStream(b, s)
					b.StartTimer()
				}
			}
			b.StopTimer()
			syncStream(b, s)
			ours := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			plain := loopCost(b, dev, cs, n, ptrs, false)
			withSet := loopCost(b, dev, cs, n, ptrs, true)
			b.ReportMetric(plain, "cublas-ns/op")
			b.ReportMetric(ours-plain, "overhead-ns/op")
			b.ReportMetric(ours/plain, "x-cublas")
			b.ReportMetric(withSet-plain, "setstream-ns/op")
		})
	}
}

// BenchmarkSgemmParallelStreams is Gemm[float32] n=16 from several
// goroutines, each on its own stream, sharing the device's one handle:
// every call takes the handle's lock and, as the streams alternate, sets
// its stream. Compare ns/op with BenchmarkSgemmOverhead/n=16 times the
// goroutine count to see what the shared handle costs.
func BenchmarkSgemmParallelStreams(b *testing.B) {
	dev := drivertest.GPU(b)
	const n = 16
	b.RunParallel(func(pb *testing.PB) {
		s, ptrs, err := benchSetup(b, dev, n)
		if err != nil {
			b.Error(err)
			return
		}
		i := 0
		for pb.Next() {
			if err := Gemm[float32](dev, s, false, false, n, n, n, 1, ptrs[0], n, ptrs[1], n, 0, ptrs[2], n); err != nil {
				b.Error(err)
				return
			}
			if i++; i%batch == 0 {
				if err := s.Synchronize(); err != nil {
					b.Error(err)
					return
				}
			}
		}
		if err := s.Synchronize(); err != nil {
			b.Error(err)
		}
	})
}

// benchSetup makes a stream and three zeroed n × n float32 matrices, given
// back when the benchmark ends. It returns errors rather than failing, so
// that RunParallel's goroutines may call it.
func benchSetup(b *testing.B, dev *cudabackend.Device, n int) (backend.Stream, [3]backend.Ptr, error) {
	var ptrs [3]backend.Ptr
	s, err := dev.NewStream()
	if err != nil {
		return nil, ptrs, err
	}
	b.Cleanup(func() {
		_ = s.Synchronize()
		for _, p := range ptrs {
			if p != 0 {
				_ = dev.Free(p)
			}
		}
		_ = s.Destroy()
	})
	for i := range ptrs {
		if ptrs[i], err = dev.Alloc(uint64(4 * n * n)); err != nil {
			return nil, ptrs, err
		}
		if err := dev.Memset32(ptrs[i], 0, uint64(n*n), s); err != nil {
			return nil, ptrs, err
		}
	}
	return s, ptrs, nil
}

func syncStream(b *testing.B, s backend.Stream) {
	if err := s.Synchronize(); err != nil {
		b.Fatal(err)
	}
}

// loopCost is sgemmLoopCost's per-call time over 40 batches, synchronized
// between batches as the Go loop is.
func loopCost(b *testing.B, dev *cudabackend.Device, s *cudabackend.Stream, n int, p [3]backend.Ptr, setStream bool) float64 {
	var total float64
	const rounds = 40
	for range rounds {
		ns, err := sgemmLoopCost(dev, s, n, n, n, p[0], p[1], p[2], setStream, batch)
		if err != nil {
			b.Fatal(err)
		}
		total += ns
		syncStream(b, s)
	}
	return total / rounds
}

// sgemmLoopCost is the time one cublasSgemm_v2 call takes when made from a
// C loop of calls, with no Go, cgo or context handling around it: what
// cuBLAS itself costs to queue a product, to set beside a Go benchmark of
// Gemm on the same sizes so that the binding's own overhead is a measured
// difference. The product is column-major C (m × n) = A (m × k) · B (k × n)
// with tight leading dimensions; a, b and c must hold that many float32.
// With setStream every call is preceded by cublasSetStream_v2, which is
// what a handle shared by streams that alternate costs.
//
// The calls are queued without waiting for them; keep calls below the
// stream's queue depth (a few hundred) and synchronize between uses, or the
// loop measures the GPU's speed instead of the call's.
func sgemmLoopCost(dev *cudabackend.Device, s *cudabackend.Stream, m, n, k int, a, b, c backend.Ptr, setStream bool, calls int64) (float64, error) {
	if dev == nil || s == nil || s.Device() != backend.Device(dev) {
		return 0, fmt.Errorf("blas: sgemmLoopCost: need a CUDA device and one of its streams: %w", errInvalid)
	}
	if m <= 0 || n <= 0 || k <= 0 || m > maxDim || n > maxDim || k > maxDim || calls <= 0 || a == 0 || b == 0 || c == 0 {
		return 0, fmt.Errorf("blas: sgemmLoopCost: m = %d, n = %d, k = %d, calls = %d and the pointers must all be positive: %w",
			m, n, k, calls, errInvalid)
	}
	h, err := handleFor("sgemmLoopCost", dev)
	if err != nil {
		return 0, err
	}
	cs := s.CUDA().Handle()
	h.mu.Lock()
	defer h.mu.Unlock()
	ns := cBenchSgemm(h.ctx, h.h, cs, setStream, m, n, k, uintptr(a), uintptr(b), uintptr(c), calls)
	h.stream = cs // the loop left the handle on s
	if ns < 0 {
		h.stream = 0 // unknown after a failure: the next call sets it
		return 0, fmt.Errorf("blas: sgemmLoopCost on device %d: a cuBLAS call in the loop failed: %w", dev.Ordinal(), errLoopFailed)
	}
	return float64(ns) / float64(calls), nil
}

// errLoopFailed: a call in sgemmLoopCost's C loop returned an error.
var errLoopFailed = errors.New("cuBLAS call failed in the timing loop")
