package main

import (
	"bytes"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/backend/host"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/internal/testhook"
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
	if errors.Is(err, errNoCUFFT) {
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
		assert.NoError(t, closePlans())
	})
	out := runChecked(t, produce, transform)
	assert.Contains(t, out, "by cuFFT")
	// The plan is made once per size and device, and reused.
	out = runChecked(t, produce, transform)
	assert.Contains(t, out, "tone at 499, spectrum peaks at 499")
	plans.Lock()
	assert.Len(t, plans.m, 1, "one (n, batch, device): one plan")
	plans.Unlock()
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
				t.Cleanup(func() { _ = s1.Close(); _ = s2.Close(); assert.NoError(t, closePlans()) })
			}
			in := make([]complex64, 64)
			in[1] = 1 // a tone at frequency 1: its transform is exp(-2πik/64)
			x, err := cuarray.On[complex64](s1).FromSlice(in)
			require.NoError(t, err)
			y, err := cuarray.On[complex64](s1).New(64)
			require.NoError(t, err)
			for i, s := range []*cuarray.Stream{s1, s2, s1, s2} {
				require.NoError(t, testhook.Spin(s.Device(), s.Backend(), 50*time.Millisecond))
				err := fft(s, y, x, 64, false)
				if errors.Is(err, errNoCUFFT) {
					t.Skip(err.Error())
				}
				require.NoError(t, err)
				require.NoError(t, fft(s, x, y, 64, true)) // back into x: 64·in, then scaled
				require.NoError(t, cuarray.On[complex64](s).Scale(1.0/64, x))
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

// TestFFTRejectsMismatchedLengths: lengths that are not a positive
// multiple of n, or differ, are an error naming them, before anything runs.
func TestFFTRejectsMismatchedLengths(t *testing.T) {
	_, s, _ := hostStreams(t, host.StreamCheckOff, nil)
	f := cuarray.On[complex64](s)
	a10, b10 := cuarray.Must(f.New(10)), cuarray.Must(f.New(10))
	a12, empty := cuarray.Must(f.New(12)), cuarray.Must(f.New(0))
	tests := []struct {
		name     string
		dst, src *cuarray.Array[complex64]
		n        int
		want     string
	}{
		{"n zero", b10, a10, 0, "src has 10 elements and dst 10; both need the same, a positive multiple of n = 0"},
		{"not a multiple", b10, a10, 4, "multiple of n = 4"},
		{"lengths differ", a12, a10, 2, "src has 10 elements and dst 12"},
		{"empty", empty, empty, 1, "src has 0 elements"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.ErrorContains(t, fft(s, tc.dst, tc.src, tc.n, false), tc.want)
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
	require.NoError(t, fft(transform, y, x, 64, false))
	require.NoError(t, produce.Synchronize())
	require.NoError(t, transform.Synchronize())
	races := b.StreamRaces()
	require.Len(t, races, 1, "log:\n%s", log.String())
	assert.Equal(t, "WithPointers", races[0].Later.Op)
	assert.False(t, races[0].Later.Write)
	assert.True(t, races[0].Earlier.Write)
	assert.Contains(t, log.String(), "WithPointers")
}

// TestLoaderNamesEveryPathTried: when no path loads, the error names each
// with the loader's reason.
func TestLoaderNamesEveryPathTried(t *testing.T) {
	paths := []string{"/nonexistent/libcufft.so.12", "libcufft-not-here.so"}
	_, _, err := open(paths)
	require.ErrorIs(t, err, errNoCUFFT)
	for _, p := range paths {
		assert.Contains(t, err.Error(), p+" (")
	}
	err = loadCUFFT()
	if err == nil {
		t.Logf("cuFFT is here (%s): the message for its absence is not seen", lib.path)
		return
	}
	require.ErrorIs(t, err, errNoCUFFT)
	want := append(slices.Clone(libraryNames), "nvidia/cufft/lib", "nvidia/cu13/lib")
	if !cgoAvailable {
		want = []string{"built without cgo"}
	}
	for _, w := range want {
		assert.Contains(t, err.Error(), w)
	}
}
