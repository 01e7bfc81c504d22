package kernels_test

import (
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend/host"
	"github.com/gocuda/gocuda/kernels"
)

// BenchmarkHostLaunchSmall is the cost of launching a 16-element Add on a
// host stream, with the stream checker off (what every launch pays for
// it: a load at resolve and a branch per argument and at enqueue) and on.
func BenchmarkHostLaunchSmall(b *testing.B) {
	for _, mode := range []struct {
		name string
		mode host.StreamCheck
	}{{"off", host.StreamCheckOff}, {"report", host.StreamCheckReport}} {
		b.Run(mode.name, func(b *testing.B) {
			bk := host.New(host.Options{StreamCheck: mode.mode, StreamCheckLog: io.Discard})
			dev, err := bk.Device(0)
			require.NoError(b, err)
			s, err := dev.NewStream()
			require.NoError(b, err)
			defer s.Destroy()
			p, err := dev.Alloc(1 << 16)
			require.NoError(b, err)
			defer dev.Free(p)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if err := kernels.Add[float32](dev, s, p, p, p, 16); err != nil {
					b.Fatal(err)
				}
				if i%1024 == 1023 {
					_ = s.Synchronize()
				}
			}
			require.NoError(b, s.Synchronize())
		})
	}
}
