package cuarray_test

import (
	"testing"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/internal/testsupport/testhook"
)

// BenchmarkCopyAcrossDevices is Copy from an array of device 0 to one of
// device 1, queued on a stream of device 1, peer to peer and staged
// through pinned host memory (testhook.StagePeerCopies), beside torch's
// cuda:0→cuda:1 copy_ (bench/torch_peer.py). "pipelined" queues b.N copies
// and synchronizes once: bandwidth. "roundtrip" (4 KiB only, where latency
// is the figure) synchronizes after every copy: ns/op is one copy's
// latency as a program that waits for it sees it. Either way the timed
// region ends with the destination's stream synchronized, so that the
// bytes have really moved. That the copied values are right, across the
// staging chunk too, is TestCopyAcrossDevices's business.
func BenchmarkCopyAcrossDevices(b *testing.B) {
	be, err := gocuda.Backend()
	if err != nil {
		b.Fatal(err)
	}
	if be.DeviceCount() < 2 {
		b.Skipf("needs two devices; the %s backend has %d", be.Name(), be.DeviceCount())
	}
	dev0, err := gocuda.Device(0)
	if err != nil {
		b.Fatal(err)
	}
	for _, size := range []struct {
		name string
		n    int
	}{{"4KiB", 4 << 10}, {"1MiB", 1 << 20}, {"16MiB", 16 << 20}, {"256MiB", 256 << 20}} {
		for _, path := range []string{"peer", "staged"} {
			forms := []string{"pipelined"}
			if size.n <= 4<<10 {
				forms = append(forms, "roundtrip")
			}
			for _, form := range forms {
				b.Run(size.name+"/"+path+"/"+form, func(b *testing.B) {
					if path == "staged" && !isCUDA(dev0) {
						// The switch is the CUDA backend's; host devices share memory.
						b.Skipf("the %s backend has no staged path: its devices share memory", be.Name())
					}
					testhook.StagePeerCopies.Store(path == "staged")
					defer testhook.StagePeerCopies.Store(false)
					benchCopyAcross(b, size.n, form == "roundtrip")
				})
			}
		}
	}
}

// benchCopyAcross times b.N copies of n bytes from device 0 to device 1,
// synchronizing device 1's stream after each (roundTrip) or once at the
// end.
func benchCopyAcross(b *testing.B, n int, roundTrip bool) {
	ss, err := cuarray.NewStream(0)
	if err != nil {
		b.Fatal(err)
	}
	defer ss.Close()
	ds, err := cuarray.NewStream(1)
	if err != nil {
		b.Fatal(err)
	}
	defer ds.Close()
	// uint8, so that the length is the byte count; the contents do not
	// matter to a copy, and New leaves them as they are.
	src := cuarray.Must(cuarray.On[uint8](ss).New(n))
	defer src.UnsafeFree()
	dst := cuarray.Must(cuarray.On[uint8](ds).New(n))
	defer dst.UnsafeFree()
	fd := cuarray.On[uint8](ds)
	// Warm-up: the first copy between the pair enables peer access (or
	// allocates the staging buffers); a few more settle the clocks.
	for range 3 {
		if err := fd.Copy(dst, src); err != nil {
			b.Fatal(err)
		}
	}
	if err := ds.Synchronize(); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(n))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := fd.Copy(dst, src); err != nil {
			b.Fatal(err)
		}
		if roundTrip {
			if err := ds.Synchronize(); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := ds.Synchronize(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
}
