package main

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/backend/host"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/cufft"
	"github.com/gocuda/gocuda/internal/testsupport/testhook"
	"github.com/gocuda/gocuda/pool"
)

// hostStreams makes a host backend of its own (whatever the process's
// backend is) with the stream checker in mode, and two streams on it.
func hostStreams(t *testing.T, mode host.StreamCheck, log *bytes.Buffer) (*host.Backend, *cuarray.Stream, *cuarray.Stream) {
	t.Helper()
	b := host.New(host.Options{TotalMemory: 1 << 30, StreamCheck: mode, StreamCheckLog: log}).(*host.Backend)
	dev, err := b.Device(0)
	require.NoError(t, err)
	p, err := pool.New("split", dev, pool.Limits{})
	require.NoError(t, err)
	s1, err := cuarray.NewStreamPool(p)
	require.NoError(t, err)
	s2, err := cuarray.NewStreamPool(p)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s1.Close(); _ = s2.Close() })
	return b, s1, s2
}

// runChecked runs the example with the producing stream held up by slow
// work, so that an FFT not ordered after the input's writes reads memory
// not yet written, and the comparison with the direct DFT fails.
func runChecked(t *testing.T, produce, transform *cuarray.Stream) string {
	t.Helper()
	require.NoError(t, testhook.Spin(produce.Device(), produce.Backend(), 200*time.Millisecond))
	var out bytes.Buffer
	err := run(&out, produce, transform)
	if errors.Is(err, cufft.ErrNoCUFFT) {
		t.Skip(err.Error())
	}
	require.NoError(t, err, "output so far:\n%s", out.String())
	t.Log("\n" + out.String())
	return out.String()
}

// TestExampleOnTheHostBackend runs the example on a host backend on any
// machine, with the stream checker refusing any unordered use: the FFT
// through WithPointers is ordered after the other stream's writes.
func TestExampleOnTheHostBackend(t *testing.T) {
	var log bytes.Buffer
	b, produce, transform := hostStreams(t, host.StreamCheckStrict, &log)
	out := runChecked(t, produce, transform)
	assert.Contains(t, out, "gonum.org/v1/gonum/dsp/fourier")
	assert.Contains(t, out, "tone at 499, spectrum peaks at 499")
	assert.Empty(t, b.StreamRaces(), "stream checker log:\n%s", log.String())
}

// TestExampleOnTheProcessBackend runs the example as main does, on the
// process's backend: the GPU under GOCUDA_BACKEND=cuda, through cuFFT (the
// test skips, with the loader's message, where cuFFT is absent).
func TestExampleOnTheProcessBackend(t *testing.T) {
	b, err := gocuda.Backend()
	require.NoError(t, err)
	if b.Name() != "cuda" {
		t.Skipf("the process's backend is %s; GOCUDA_BACKEND=cuda runs this on the GPU", b.Name())
	}
	produce, err := cuarray.NewStream(0)
	require.NoError(t, err)
	transform, err := cuarray.NewStream(0)
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = produce.Close()
		_ = transform.Close()
		assert.NoError(t, cufft.ClearPlans())
	})
	out := runChecked(t, produce, transform)
	assert.Contains(t, out, "by cuFFT")
	// Again, with the plans made by the first run.
	out = runChecked(t, produce, transform)
	assert.Contains(t, out, "tone at 499, spectrum peaks at 499")
}

// TestFFTMovesBetweenStreams: one array transformed forward and back on
// two streams in turn, each behind slow work, with the plan (on a GPU)
// moving between the streams.
func TestFFTMovesBetweenStreams(t *testing.T) {
	for _, name := range []string{"host", "process"} {
		t.Run(name, func(t *testing.T) {
			var s1, s2 *cuarray.Stream
			if name == "host" {
				_, s1, s2 = hostStreams(t, host.StreamCheckStrict, nil)
			} else {
				var err error
				s1, err = cuarray.NewStream(0)
				require.NoError(t, err)
				s2, err = cuarray.NewStream(0)
				require.NoError(t, err)
				t.Cleanup(func() { _ = s1.Close(); _ = s2.Close(); assert.NoError(t, cufft.ClearPlans()) })
			}
			in := make([]complex64, 64)
			in[1] = 1 // a tone at frequency 1: its transform is exp(-2πik/64)
			x, err := cuarray.On[complex64](s1).FromSlice(in)
			require.NoError(t, err)
			y, err := cuarray.On[complex64](s1).New(64)
			require.NoError(t, err)
			for i, s := range []*cuarray.Stream{s1, s2, s1, s2} {
				require.NoError(t, testhook.Spin(s.Device(), s.Backend(), 50*time.Millisecond))
				err := cufft.FFT(s, y, x)
				if errors.Is(err, cufft.ErrNoCUFFT) {
					t.Skip(err.Error())
				}
				require.NoError(t, err)
				require.NoError(t, cufft.IFFT(s, x, y)) // back into x
				got, err := y.ToSlice()
				require.NoError(t, err)
				e := relErr(got, dft(in, 64))
				assert.True(t, e <= tol, "transform %d: relative error %g, bound %g", i, e, tol) // NaN fails
			}
			back, err := x.ToSlice()
			require.NoError(t, err)
			e := relErr(back, in)
			assert.True(t, e <= tol, "round trip: relative error %g, bound %g", e, tol)
		})
	}
}

// TestStreamCheckerFlagsAnUnorderedFFT: with automatic ordering off for the
// input, the FFT on another stream is no longer ordered after its write,
// and the host stream checker reports the FFT's read.
func TestStreamCheckerFlagsAnUnorderedFFT(t *testing.T) {
	var log bytes.Buffer
	b, produce, transform := hostStreams(t, host.StreamCheckReport, &log)
	x := cuarray.Must(cuarray.On[complex64](produce).Zeros(64))
	y := cuarray.Must(cuarray.On[complex64](transform).Zeros(64))
	require.NoError(t, x.SetAutoOrdering(false))
	require.NoError(t, cuarray.On[complex64](produce).Fill(x, 1))
	require.NoError(t, cufft.FFT(transform, y, x))
	require.NoError(t, produce.Synchronize())
	require.NoError(t, transform.Synchronize())
	races := b.StreamRaces()
	require.Len(t, races, 1, "log:\n%s", log.String())
	assert.Equal(t, "WithPointers", races[0].Later.Op)
	assert.False(t, races[0].Later.Write)
	assert.True(t, races[0].Earlier.Write)
	assert.Contains(t, log.String(), "WithPointers")
}
