package host_test

import (
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend/host"
)

var benchModes = []struct {
	name string
	mode host.StreamCheck
}{
	{"off", host.StreamCheckOff},
	{"report", host.StreamCheckReport},
}

// BenchmarkMemsetEnqueue is the cost of queueing a small memset, the
// shortest operation the host backend has, with the stream checker off
// (what every program pays for the checker: one load and branch) and on.
// The stream is drained every 1024 items so its queue stays short.
func BenchmarkMemsetEnqueue(b *testing.B) {
	for _, tc := range benchModes {
		b.Run(tc.name, func(b *testing.B) {
			bk := host.New(host.Options{StreamCheck: tc.mode, StreamCheckLog: io.Discard})
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
				if err := dev.Memset8(p, 1, 64, s); err != nil {
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
