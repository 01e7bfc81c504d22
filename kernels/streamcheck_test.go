package kernels_test

import (
	"io"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/host"
	"github.com/gocuda/gocuda/kernels"
)

// The stream checker is the host backend's, so these tests make a host
// backend of their own whatever GOCUDA_BACKEND says.

type checkEnv struct {
	b    *host.Backend
	dev  backend.Device
	a, c backend.Stream
}

func newCheckEnv(t *testing.T, mode host.StreamCheck) checkEnv {
	t.Helper()
	b := host.New(host.Options{StreamCheck: mode, StreamCheckLog: io.Discard}).(*host.Backend)
	dev, err := b.Device(0)
	require.NoError(t, err)
	e := checkEnv{b: b, dev: dev}
	for _, s := range []*backend.Stream{&e.a, &e.c} {
		*s, err = dev.NewStream()
		require.NoError(t, err)
	}
	t.Cleanup(func() {
		assert.NoError(t, dev.Synchronize())
		assert.NoError(t, e.a.Destroy())
		assert.NoError(t, e.c.Destroy())
	})
	return e
}

func (e checkEnv) alloc(t *testing.T, n int) backend.Ptr {
	t.Helper()
	p, err := e.dev.Alloc(uint64(n) * 4)
	require.NoError(t, err)
	t.Cleanup(func() {
		assert.NoError(t, e.dev.Synchronize())
		assert.NoError(t, e.dev.Free(p))
	})
	return p
}

func line() int {
	_, _, l, _ := runtime.Caller(1)
	return l
}

func TestStreamCheckSeesKernelsWriteAndRead(t *testing.T) {
	e := newCheckEnv(t, host.StreamCheckReport)
	const n = 1000
	x, y, dst := e.alloc(t, n), e.alloc(t, n), e.alloc(t, n)
	gate := make(chan struct{})
	require.NoError(t, e.a.(*host.Stream).Enqueue(func() { <-gate }))

	require.NoError(t, kernels.Add[float32](e.dev, e.a, dst, x, y, n))
	addLine := line() - 1
	_, err := kernels.Sum[float32](e.dev, e.c, dst, n) // blocks until c runs it; a is still gated
	sumLine := line() - 1
	close(gate)
	require.NoError(t, err)

	races := e.b.StreamRaces()
	require.Len(t, races, 1)
	r := races[0]
	assert.Equal(t, "Add float32", r.Earlier.Op)
	assert.True(t, r.Earlier.Write)
	assert.Equal(t, "Sum float32", r.Later.Op)
	assert.False(t, r.Later.Write)
	assert.Equal(t, dst, r.OverlapPtr)
	assert.Equal(t, uint64(n*4), r.OverlapBytes)
	assert.True(t, r.EarlierRunning)
	assert.Equal(t, addLine, r.Earlier.Site.Line)
	assert.Equal(t, sumLine, r.Later.Site.Line)
	assert.Contains(t, r.Earlier.Site.File, "streamcheck_test.go")
}

func TestStreamCheckKernelsOrderedByAnEventDoNotRace(t *testing.T) {
	e := newCheckEnv(t, host.StreamCheckReport)
	const n = 1000
	x, y, dst := e.alloc(t, n), e.alloc(t, n), e.alloc(t, n)
	require.NoError(t, kernels.Fill[float32](e.dev, e.a, x, 1, n))
	require.NoError(t, kernels.Fill[float32](e.dev, e.a, y, 2, n))
	require.NoError(t, kernels.Add[float32](e.dev, e.a, dst, x, y, n))
	ev, err := e.dev.NewEvent(false)
	require.NoError(t, err)
	require.NoError(t, ev.Record(e.a))
	require.NoError(t, e.c.WaitEvent(ev))
	require.NoError(t, kernels.Scale[float32](e.dev, e.c, 2, dst, n))
	got, err := kernels.Sum[float32](e.dev, e.c, dst, n)
	require.NoError(t, err)
	assert.Equal(t, float32(6*n), got)
	assert.Empty(t, e.b.StreamRaces())
}

// A reduction hands its result to the host, so work queued after it
// returns is ordered after its read, on any stream.
func TestStreamCheckReductionResultOrdersLaterWork(t *testing.T) {
	e := newCheckEnv(t, host.StreamCheckReport)
	const n = 1000
	x := e.alloc(t, n)
	require.NoError(t, kernels.Fill[float32](e.dev, e.a, x, 1, n))
	_, err := kernels.Sum[float32](e.dev, e.a, x, n)
	require.NoError(t, err)
	require.NoError(t, kernels.Fill[float32](e.dev, e.c, x, 2, n))
	assert.Empty(t, e.b.StreamRaces())
}

func TestStreamCheckAxpyWritesYDotOnlyReads(t *testing.T) {
	e := newCheckEnv(t, host.StreamCheckReport)
	const n = 256
	x, y := e.alloc(t, n), e.alloc(t, n)
	require.NoError(t, kernels.Fill[float32](e.dev, e.a, x, 1, n))
	require.NoError(t, kernels.Fill[float32](e.dev, e.a, y, 1, n))
	require.NoError(t, e.a.Synchronize())

	// Reads of x and y on both streams: no race.
	_, err := kernels.Dot[float32](e.dev, e.a, x, y, n)
	require.NoError(t, err)
	_, err = kernels.Dot[float32](e.dev, e.c, x, y, n)
	require.NoError(t, err)
	require.Empty(t, e.b.StreamRaces())

	// Axpy updates y on a while c reads it, unordered.
	gate := make(chan struct{})
	require.NoError(t, e.a.(*host.Stream).Enqueue(func() { <-gate }))
	require.NoError(t, kernels.Axpy[float32](e.dev, e.a, 2, x, y, n))
	require.NoError(t, kernels.Copy[float32](e.dev, e.c, x, y, n))
	close(gate)
	races := e.b.StreamRaces()
	// c's copy reads y, which Axpy writes, and writes x, which Axpy reads:
	// two conflicts from one pair of sites, kept as one race.
	require.Len(t, races, 1)
	r := races[0]
	assert.Equal(t, 2, r.Count)
	assert.Equal(t, "Axpy float32", r.Earlier.Op)
	assert.True(t, r.Earlier.Write)
	assert.Equal(t, y, r.Earlier.Ptr)
	assert.Equal(t, "CopyDtoD", r.Later.Op)
}

func TestStreamCheckStrictRefusesARacingKernel(t *testing.T) {
	e := newCheckEnv(t, host.StreamCheckStrict)
	const n = 64
	x := e.alloc(t, n)
	require.NoError(t, kernels.Fill[float32](e.dev, e.a, x, 1, n))
	err := kernels.Fill[float32](e.dev, e.c, x, 2, n)
	require.ErrorIs(t, err, host.ErrStreamRace)
	assert.Contains(t, err.Error(), "kernels: Fill float32")
}

// The network layers declare each argument's real extent to the checker:
// all of a matrix they read (not one row), and one row or one value a row
// for a bias, a loss or the labels (not the whole matrix). A write on
// another stream, unordered, to memory just past a short argument is no
// race; to the last row of a matrix it is.
func TestStreamCheckNetworkLayersDeclareTheirArgumentsExtent(t *testing.T) {
	const rows, cols = 4, 8
	const row = cols * 4 // bytes
	cases := []struct {
		name  string
		op    func(e checkEnv, x, out, lab backend.Ptr) error // on stream a
		other func(e checkEnv, x, out, lab backend.Ptr) error // on stream c
		races int
	}{
		{"SumCols reads x's last row", func(e checkEnv, x, out, _ backend.Ptr) error {
			return kernels.SumCols[float32](e.dev, e.a, out, x, rows, cols, kernels.Scratch{})
		}, func(e checkEnv, x, _, _ backend.Ptr) error {
			return kernels.Fill[float32](e.dev, e.c, x+(rows-1)*row, 1, cols)
		}, 1},
		{"SumRows reads x's last row", func(e checkEnv, x, out, _ backend.Ptr) error {
			return kernels.SumRows[float32](e.dev, e.a, out, x, rows, cols)
		}, func(e checkEnv, x, _, _ backend.Ptr) error {
			return kernels.Fill[float32](e.dev, e.c, x+(rows-1)*row, 1, cols)
		}, 1},
		{"AddRowVector's bias is one row", func(e checkEnv, x, out, _ backend.Ptr) error {
			return kernels.AddRowVector[float32](e.dev, e.a, x, x, out, rows, cols)
		}, func(e checkEnv, _, out, _ backend.Ptr) error {
			return kernels.Fill[float32](e.dev, e.c, out+row, 1, cols)
		}, 0},
		{"SoftmaxCrossEntropy's loss is one value a row", func(e checkEnv, x, out, lab backend.Ptr) error {
			return kernels.SoftmaxCrossEntropy(e.dev, e.a, out, 0, x, lab, rows, cols, float32(1))
		}, func(e checkEnv, _, out, _ backend.Ptr) error {
			return kernels.Fill[float32](e.dev, e.c, out+rows*4, 1, cols)
		}, 0},
		{"SoftmaxCrossEntropy reads the labels", func(e checkEnv, x, out, lab backend.Ptr) error {
			return kernels.SoftmaxCrossEntropy(e.dev, e.a, out, 0, x, lab, rows, cols, float32(1))
		}, func(e checkEnv, _, _, lab backend.Ptr) error {
			return kernels.Fill[int32](e.dev, e.c, lab, 0, rows)
		}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newCheckEnv(t, host.StreamCheckReport)
			x, out, lab := e.alloc(t, rows*cols), e.alloc(t, 2*rows*cols), e.alloc(t, rows)
			for _, p := range []struct {
				p backend.Ptr
				n int
			}{{x, rows * cols}, {out, 2 * rows * cols}} {
				require.NoError(t, kernels.Fill[float32](e.dev, e.a, p.p, 1, p.n))
			}
			require.NoError(t, kernels.Fill[int32](e.dev, e.a, lab, 0, rows))
			require.NoError(t, e.dev.Synchronize())
			require.Empty(t, e.b.StreamRaces(), "set-up")

			gate := make(chan struct{})
			require.NoError(t, e.a.(*host.Stream).Enqueue(func() { <-gate }))
			require.NoError(t, c.op(e, x, out, lab))
			require.NoError(t, c.other(e, x, out, lab))
			close(gate)
			require.NoError(t, e.dev.Synchronize())
			assert.Len(t, e.b.StreamRaces(), c.races)
		})
	}
}
