package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/host"
	"github.com/gocuda/gocuda/config"
	"github.com/gocuda/gocuda/internal/trace"
	"github.com/gocuda/gocuda/pool"
)

// A -quick run recorded with GOCUDA_TRACE gives a trace that gocuda replay
// reads and that every pool serves to the end, freeing what the run freed.
func TestRecordedTrainingReplaysThroughEveryPool(t *testing.T) {
	path := filepath.Join(t.TempDir(), "train.trace.gz")
	cmd := exec.Command(os.Args[0], "-quick", "-json")
	cmd.Env = append(os.Environ(), helperEnv+"=1", config.EnvTrace+"="+path)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "train -quick: %s", out)

	tr, err := trace.ParseFile(path)
	require.NoError(t, err)
	require.Greater(t, tr.Allocs, 100, "a training run allocates on every step")
	assert.GreaterOrEqual(t, tr.Allocs, tr.Frees)
	assert.NotEmpty(t, tr.Meta["pool"], "the header names the pool that recorded it")
	peak, _ := trace.PeakLive(tr)
	require.Positive(t, peak)

	dev, err := host.New(host.Options{TotalMemory: 1 << 34}).Device(0)
	require.NoError(t, err)
	for _, name := range pool.Registered() {
		if _, ok := dev.(backend.StreamOrderedMemory); name == "cuda" && !ok {
			continue // the driver's pool needs the CUDA backend
		}
		t.Run(name, func(t *testing.T) {
			p, err := pool.New(name, dev, pool.Limits{})
			require.NoError(t, err)
			streams := make([]backend.Stream, tr.Streams())
			for i := range streams {
				streams[i], err = dev.NewStream()
				require.NoError(t, err)
			}
			res, err := trace.Replay(tr, p, streams)
			require.NoError(t, err)
			assert.Equal(t, len(tr.Events), res.Events)
			assert.Equal(t, peak, res.PeakLive)
			assert.Equal(t, tr.Allocs-tr.Frees, res.Leftover)
			assert.GreaterOrEqual(t, res.PeakReserved, res.PeakLive)
			assert.Zero(t, res.OOMs)
			t.Logf("%s: %d events on %d streams, reserved/live %.3f", name, res.Events, tr.Streams(), res.ReservedPerLive)
			require.NoError(t, p.Close())
			for _, s := range streams {
				require.NoError(t, s.Destroy())
			}
		})
	}
}
