package recorder_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/host"
	"github.com/gocuda/gocuda/internal/recorder"
	"github.com/gocuda/gocuda/internal/trace"
	"github.com/gocuda/gocuda/pool"
	_ "github.com/gocuda/gocuda/pool/simple"
)

// record allocates and frees through a recorded simple pool on two
// streams, leaving one block live, and closes the recorder.
func record(t *testing.T, path string) {
	t.Helper()
	dev, err := host.New(host.Options{TotalMemory: 1 << 30}).Device(0)
	require.NoError(t, err)
	p, err := pool.New("simple", dev, pool.Limits{})
	require.NoError(t, err)
	r, err := recorder.Create(path)
	require.NoError(t, err)
	w := r.Wrap(p)
	var streams [2]backend.Stream
	for i := range streams {
		streams[i], err = dev.NewStream()
		require.NoError(t, err)
	}
	var live []*pool.Block
	for i := range 10 {
		b, err := w.Alloc(uint64(1000*(i+1)), streams[i%2])
		require.NoError(t, err)
		live = append(live, b)
	}
	for _, b := range live[1:] {
		require.NoError(t, w.Free(b, b.Stream))
	}
	require.NoError(t, r.Close())
	require.NoError(t, w.Free(live[0], streams[0]), "freeing after the recording stopped still frees")
	require.NoError(t, w.Close())
}

func TestRecordedTraceParsesWithStreamsAndSizes(t *testing.T) {
	for _, name := range []string{"run.trace", "run.trace.gz"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), name)
			record(t, path)
			raw, err := os.ReadFile(path)
			require.NoError(t, err)
			if filepath.Ext(name) == ".gz" {
				require.Equal(t, []byte{0x1f, 0x8b}, raw[:2], "a .gz file is gzip")
			} else {
				require.Contains(t, string(raw), "# workload ")
			}
			tr, err := trace.ParseFile(path)
			require.NoError(t, err)
			assert.Equal(t, 10, tr.Allocs)
			assert.Equal(t, 9, tr.Frees)
			assert.Len(t, tr.StreamNumbers, 2)
			assert.Equal(t, "simple", tr.Meta["pool"])
			peak, _ := trace.PeakLive(tr)
			assert.Equal(t, uint64(55_000), peak, "sizes are the sizes asked for")
		})
	}
}

func TestClosingTheLastPoolClosesTheTrace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.trace.gz")
	dev, err := host.New(host.Options{TotalMemory: 1 << 30}).Device(0)
	require.NoError(t, err)
	r, err := recorder.Create(path)
	require.NoError(t, err)
	var ws []*recorder.Pool
	for range 2 {
		p, err := pool.New("simple", dev, pool.Limits{})
		require.NoError(t, err)
		ws = append(ws, r.Wrap(p))
	}
	s, err := dev.NewStream()
	require.NoError(t, err)
	b, err := ws[0].Alloc(512, s)
	require.NoError(t, err)
	require.NoError(t, ws[0].Free(b, s))
	require.NoError(t, ws[0].Close())
	require.NoError(t, ws[0].Close(), "a second Close does not count twice")
	tr, err := trace.ParseFile(path)
	require.NoError(t, err, "closing a pool flushes: the trace so far reads")
	assert.Equal(t, 2, len(tr.Events))
	require.NotNil(t, tr.Cut, "the gzip stream is not ended yet")
	assert.False(t, tr.Ended)
	require.NoError(t, ws[1].Close())
	tr, err = trace.ParseFile(path)
	require.NoError(t, err)
	assert.Equal(t, 1, tr.Allocs)
	assert.Nil(t, tr.Cut)
	assert.True(t, tr.Ended, "the last pool's Close ends the recording")
}

func TestWriteFailureStopsRecordingAndTheProgramGoesOn(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("needs /dev/full to fail writes")
	}
	dev, err := host.New(host.Options{TotalMemory: 1 << 30}).Device(0)
	require.NoError(t, err)
	p, err := pool.New("simple", dev, pool.Limits{})
	require.NoError(t, err)
	r, err := recorder.Create("/dev/full")
	require.NoError(t, err)
	w := r.Wrap(p)
	s, err := dev.NewStream()
	require.NoError(t, err)
	// More than the 64 KiB buffer, so that a write reaches the file.
	for range 5000 {
		b, err := w.Alloc(4096, s)
		require.NoError(t, err, "allocations go on after the trace failed")
		require.NoError(t, w.Free(b, s))
	}
	err = r.Flush()
	require.ErrorContains(t, err, "cut short")
	require.Error(t, w.Close())
}

func TestCreateNamesTheVariableAndFile(t *testing.T) {
	_, err := recorder.Create(filepath.Join(t.TempDir(), "no", "such", "dir.trace"))
	require.ErrorContains(t, err, "GOCUDA_TRACE=")
	require.ErrorContains(t, err, "dir.trace")
}
