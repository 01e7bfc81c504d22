package cufft_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend/host"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/cufft"
	"github.com/gocuda/gocuda/internal/testsupport/testhook"
	"github.com/gocuda/gocuda/pool"
)

// A transform on one stream of an input written on another, behind slow
// work, waits for the write like any cuarray operation: on a host backend
// of its own with the stream checker refusing any unordered use, the
// result is right and nothing is reported. The same on the process's
// backend (the GPU under GOCUDA_BACKEND=cuda).
func TestTransformsAreOrderedAfterOtherStreamsWrites(t *testing.T) {
	for _, name := range []string{"host, checked", "process"} {
		t.Run(name, func(t *testing.T) {
			var produce, transform *cuarray.Stream
			var hb *host.Backend
			var log bytes.Buffer
			if name == "process" {
				produce, transform = stream(t), stream(t)
			} else {
				hb = host.New(host.Options{TotalMemory: 1 << 30, StreamCheck: host.StreamCheckStrict, StreamCheckLog: &log}).(*host.Backend)
				dev, err := hb.Device(0)
				require.NoError(t, err)
				p, err := pool.New("split", dev, pool.Limits{})
				require.NoError(t, err)
				for _, s := range []**cuarray.Stream{&produce, &transform} {
					*s, err = cuarray.NewStreamPool(p)
					require.NoError(t, err)
				}
				t.Cleanup(func() { _ = produce.Close(); _ = transform.Close() })
			}
			const n = 256
			x := cuarray.Must(cuarray.On[float32](produce).Zeros(4, n))
			require.NoError(t, testhook.Spin(produce.Device(), produce.Backend(), 100*time.Millisecond))
			require.NoError(t, cuarray.On[float32](produce).Fill(x, 1)) // queued behind the spin
			spec := cuarray.Must(cuarray.On[complex64](transform).New(4, n/2+1))
			err := cufft.RFFT(transform, spec, x)
			skipWithoutCUFFT(t, err)
			require.NoError(t, err)
			back := cuarray.Must(cuarray.On[float32](transform).New(4, n))
			require.NoError(t, cufft.IRFFT(transform, back, spec))
			got := cuarray.Must(spec.ToSlice())
			for b := range 4 {
				assert.InDelta(t, n, real(got[b*(n/2+1)]), 1e-3, "row %d: the sum of n ones, written on the other stream", b)
			}
			for i, v := range cuarray.Must(back.ToSlice()) {
				require.InDelta(t, 1, v, 1e-5, "element %d", i)
			}
			if hb != nil {
				assert.Empty(t, hb.StreamRaces(), "stream checker log:\n%s", log.String())
				other := stream(t) // of the process's backend: not these arrays' device
				err := cufft.RFFT(other, spec, x)
				require.ErrorIs(t, err, cuarray.ErrDevice)
				assert.ErrorContains(t, err, "cufft: RFFT: the arrays are on device 0 (host CPU), the stream on device 0 (")
				assert.ErrorContains(t, err, "pass a stream of the arrays' device")
			}
		})
	}
}
