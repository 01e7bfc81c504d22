package nccl_test

import (
	"fmt"
	"testing"

	"github.com/dustin/go-humanize"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/nccl"
)

// allReduceSizes are bench/torch_allreduce.py's sizes, in bytes.
var allReduceSizes = []int{1 << 10, 1 << 16, 1 << 20, 1 << 24, 1 << 26, 1 << 28}

// BenchmarkAllReduce times in-place float32 Sum all-reduces on one rank,
// as bench/torch_allreduce.py --ranks 1 does with torch.distributed, for
// the table beside it: b.N all-reduces queued on one stream, then a
// synchronization, all timed. MB/s is Go's figure for b.SetBytes (bytes a
// second, 1e6); algbw_GB/s is nccl-tests' algorithm bandwidth (1e9).
//
// The forms:
//   - array: an array from the stream's pool, through AllReduceArray;
//   - array-registered: the same array registered with the communicator
//     (RegisterArray) for the whole run;
//   - alloc: memory straight from the device (backend Alloc, cuMemAlloc on
//     a GPU) through Comm.AllReduce, without cuarray;
//   - array-out: AllReduceArray into another array (not in place).
//
// With one rank NCCL moves no data for an in-place all-reduce: the time is
// the call's alone. Out of place it copies src to dst, so array-out is the
// one form whose bandwidth means something on one GPU.
//
// On a GPU: GOCUDA_BACKEND=cuda NCCL_NVLS_ENABLE=0 ./nccl.test
// -test.run '^$' -test.bench AllReduce -test.benchtime 50x.
func BenchmarkAllReduce(b *testing.B) {
	r := newArrayRig(b, 1)
	c, s := r.comms[0], r.streams[0]
	for _, size := range allReduceSizes {
		for _, form := range []string{"array", "array-registered", "alloc", "array-out"} {
			b.Run(fmt.Sprintf("size=%s/%s", humanize.IBytes(uint64(size)), form), func(b *testing.B) {
				queue := allReduceForm(b, form, r, size)
				for range 5 { // warm-up: NCCL's first call on a size sets up
					require.NoError(b, queue())
				}
				require.NoError(b, s.Synchronize())
				b.SetBytes(int64(size))
				b.ResetTimer()
				for range b.N {
					if err := queue(); err != nil {
						b.Fatal(err)
					}
				}
				if err := s.Synchronize(); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				require.NoError(b, c.Err())
				b.ReportMetric(float64(size)*float64(b.N)/b.Elapsed().Seconds()/1e9, "algbw_GB/s")
			})
		}
	}
}

// allReduceForm makes form's buffer of size bytes and returns the call
// that queues one all-reduce on it; the buffer lives until b ends.
func allReduceForm(b *testing.B, form string, r *arrayRig, size int) func() error {
	c, s, dev := r.comms[0], r.streams[0], r.devs[0]
	if form == "alloc" {
		p, err := dev.Alloc(uint64(size))
		require.NoError(b, err)
		b.Cleanup(func() {
			require.NoError(b, s.Synchronize())
			require.NoError(b, dev.Free(p))
		})
		bs := s.Backend()
		return func() error { return c.AllReduce(p, p, size/4, nccl.Float32, nccl.Sum, bs) }
	}
	x, err := cuarray.On[float32](s).Ones(size / 4)
	require.NoError(b, err)
	b.Cleanup(x.UnsafeFree) // cleanups run last first: after Release
	if form == "array-out" {
		y, err := cuarray.On[float32](s).New(size / 4)
		require.NoError(b, err)
		b.Cleanup(y.UnsafeFree)
		return func() error { return nccl.AllReduceArray(c, s, y, x, nccl.Sum) }
	}
	if form == "array-registered" {
		reg, err := nccl.RegisterArray(c, s, x)
		require.NoError(b, err)
		b.Cleanup(func() { require.NoError(b, reg.Release()) })
	}
	return func() error { return nccl.AllReduceArray(c, s, x, x, nccl.Sum) }
}

// BenchmarkAllReduceTwoRanks times in-place float32 Sum all-reduces of two
// ranks, one device each, driven from one goroutine in nccl.Group (one
// process driving both GPUs), at bench/torch_allreduce.py's sizes, with
// the arrays registered and not. busbw_GB/s is nccl-tests' bus bandwidth,
// algbw·2(n-1)/n, the column torch_allreduce.py --ranks 2 prints; `gocuda
// bench allreduce` prints the same table, also with a process per GPU.
//
// On two GPUs: GOCUDA_BACKEND=cuda NCCL_NVLS_ENABLE=0 ./nccl.test
// -test.run '^$' -test.bench AllReduceTwoRanks -test.benchtime 50x.
func BenchmarkAllReduceTwoRanks(b *testing.B) {
	const n = 2
	r := newArrayRig(b, n)
	for _, size := range allReduceSizes {
		for _, reg := range []bool{false, true} {
			b.Run(fmt.Sprintf("size=%s/registered=%v", humanize.IBytes(uint64(size)), reg), func(b *testing.B) {
				xs := make([]*cuarray.Array[float32], n)
				for i := range n {
					x, err := cuarray.On[float32](r.streams[i]).Ones(size / 4)
					require.NoError(b, err)
					b.Cleanup(x.UnsafeFree) // after Release: cleanups run last first
					xs[i] = x
					if reg {
						g, err := nccl.RegisterArray(r.comms[i], r.streams[i], x)
						require.NoError(b, err)
						b.Cleanup(func() { require.NoError(b, g.Release()) })
					}
				}
				queue := func() error {
					return nccl.Group(r.comms, func() error {
						for i := range n {
							if err := nccl.AllReduceArray(r.comms[i], r.streams[i], xs[i], xs[i], nccl.Sum); err != nil {
								return err
							}
						}
						return nil
					})
				}
				syncAll := func() {
					for i := range n {
						require.NoError(b, r.streams[i].Synchronize())
						require.NoError(b, r.comms[i].Err())
					}
				}
				for range 5 {
					require.NoError(b, queue())
				}
				syncAll()
				b.SetBytes(int64(size))
				b.ResetTimer()
				for range b.N {
					if err := queue(); err != nil {
						b.Fatal(err)
					}
				}
				syncAll()
				b.StopTimer()
				algbw := float64(size) * float64(b.N) / b.Elapsed().Seconds() / 1e9
				b.ReportMetric(algbw, "algbw_GB/s")
				b.ReportMetric(algbw*2*(n-1)/n, "busbw_GB/s")
			})
		}
	}
}
