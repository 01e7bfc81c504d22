package split

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dustin/go-humanize"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/internal/trace"
	"github.com/gocuda/gocuda/pool"
	"github.com/gocuda/gocuda/pool/pooltest"
)

// replayResult is what one replay measured, with the pool's own figures.
type replayResult struct {
	trace.Result
	trims, moved uint64
}

func (r replayResult) String() string {
	return fmt.Sprintf("peak live %s, peak reserved %s, reserved/live %.4f, %.0f events/s, hit rate %.3f, driver allocs %d frees %d, %d trims moving %d granules",
		humanize.IBytes(r.PeakLive), humanize.IBytes(r.PeakReserved), r.ReservedPerLive, r.EventsPerSec, r.HitRate,
		r.DriverAllocs, r.DriverFrees, r.trims, r.moved)
}

// replay runs tr through a fresh pool with cfg on dev and closes it. It is
// the helper for tuning the rules: peak reserved over peak live is the
// figure to bring down, trims and moved granules what that costs.
func replay(t testing.TB, dev backend.Device, cfg config, tr *trace.Trace) replayResult {
	t.Helper()
	src, err := pool.NewSource(dev, pool.Limits{})
	require.NoError(t, err)
	p, err := newPool(dev, src, cfg)
	require.NoError(t, err)
	streams := make([]backend.Stream, tr.Streams())
	for i := range streams {
		streams[i] = pooltest.NewStream(t, dev)
	}
	res, err := trace.Replay(tr, p, streams)
	require.NoError(t, err)
	require.NoError(t, p.Close())
	return replayResult{res, p.trims.Load(), p.moved.Load()}
}

// plainDevice hides the VirtualMemory methods of the device it wraps.
type plainDevice struct{ backend.Device }

// syntheticTraining writes a trace shaped like training a transformer
// whose sequence length changes every step: parameters and optimizer
// state that live throughout; per layer, activations kept for the
// backward pass and temporaries freed at once; gradients that live until
// the optimizer step; small requests mixed in. Sizes vary from step to
// step, which is what strands memory in an allocator that cannot merge or
// grow in place.
func syntheticTraining(seed uint64, steps int) *trace.Trace {
	rng := rand.New(rand.NewPCG(seed, 1))
	var sb strings.Builder
	sb.WriteString("# workload synthetic_training\n")
	id := 0
	alloc := func(size uint64) int {
		id++
		fmt.Fprintf(&sb, "a %d %d 0\n", id, size)
		return id
	}
	free := func(id int) { fmt.Fprintf(&sb, "f %d\n", id) }

	const layers, hidden = 12, 1024
	params := []uint64{hidden * hidden * 4 * 3, hidden * hidden * 4, hidden * hidden * 16, hidden * hidden * 16, hidden * 4, hidden * 8}
	var paramIDs []int
	for range layers {
		for _, s := range params {
			paramIDs = append(paramIDs, alloc(s))
		}
	}
	var optimizer []int
	for step := range steps {
		seq := uint64(384 + rng.IntN(256))
		var saved [][]int
		for range layers {
			var keep []int
			keep = append(keep, alloc(seq*hidden*4), alloc(seq*seq*16*2), alloc(seq*hidden*16))
			tmp := alloc(seq * hidden * 4 * 3)
			small := alloc(uint64(512 + rng.IntN(60_000)))
			free(tmp)
			keep = append(keep, small)
			saved = append(saved, keep)
		}
		var grads []int
		for l := layers - 1; l >= 0; l-- {
			g := alloc(seq * hidden * 16)
			for i := range params {
				grads = append(grads, alloc(params[i]))
			}
			free(g)
			for _, a := range saved[l] {
				free(a)
			}
		}
		if step == 0 {
			for _, s := range params {
				for range layers * 2 {
					optimizer = append(optimizer, alloc(s))
				}
			}
		}
		for _, g := range grads {
			free(g)
		}
	}
	for _, a := range append(paramIDs, optimizer...) {
		free(a)
	}
	tr, err := trace.Parse(strings.NewReader(sb.String()))
	if err != nil {
		panic(err)
	}
	tr.Name = "synthetic_training"
	return tr
}

func TestSyntheticTrainingKeepsReservedNearLive(t *testing.T) {
	dev := pooltest.Device(t)
	tr := syntheticTraining(1, 8)
	virtual := replay(t, dev, defaultConfig, tr)
	t.Logf("virtual memory: %v", virtual)
	noTrim := defaultConfig
	noTrim.trim = false
	t.Logf("virtual memory without moving: %v", replay(t, dev, noTrim, tr))
	t.Logf("ordinary segments: %v", replay(t, plainDevice{dev}, defaultConfig, tr))
	assert.LessOrEqual(t, virtual.ReservedPerLive, 1.05)
}

// realTraces are the PyTorch recordings of testdata/traces.
func realTraces(t *testing.T) []*trace.Trace {
	files, _ := filepath.Glob("../../testdata/traces/*_train.trace.gz")
	if len(files) == 0 {
		t.Skip("no traces in testdata/traces")
	}
	var trs []*trace.Trace
	for _, f := range files {
		tr, err := trace.ParseFile(f)
		require.NoError(t, err)
		trs = append(trs, tr)
	}
	return trs
}

// TestRealTracesReserveWithinFivePercentOfLive replays the PyTorch
// training traces on the host backend: the target is peak reserved at most
// 1.05 times peak live with virtual memory. Ordinary segments are logged
// for comparison (they reproduce PyTorch's own figures).
func TestRealTracesReserveWithinFivePercentOfLive(t *testing.T) {
	if testing.Short() {
		t.Skip("replays gigabytes of allocations")
	}
	dev := pooltest.Device(t)
	for _, tr := range realTraces(t) {
		t.Run(tr.Name, func(t *testing.T) {
			res := replay(t, dev, defaultConfig, tr)
			t.Logf("virtual memory: %v (PyTorch %.3f)", res, tr.TorchReservedPerLive())
			t.Logf("ordinary segments: %v", replay(t, plainDevice{dev}, defaultConfig, tr))
			assert.LessOrEqual(t, res.ReservedPerLive, 1.05)
			assert.GreaterOrEqual(t, res.ReservedPerLive, 1.0)
		})
	}
}

// TestTune compares rule variants on every trace; run it with SPLIT_TUNE=1
// and -v when changing a threshold.
func TestTune(t *testing.T) {
	if os.Getenv("SPLIT_TUNE") == "" {
		t.Skip("set SPLIT_TUNE=1 to compare rule variants")
	}
	trs := append(realTraces(t), syntheticTraining(1, 8))
	dev := pooltest.Device(t)
	slack := func(d uint64) func(uint64) uint64 { return func(l uint64) uint64 { return max(l/d, 16<<20) } }
	variants := []struct {
		name string
		dev  backend.Device
		cfg  config
	}{
		{"default", dev, defaultConfig},
		{"no moving", dev, config{largeMinRest: largeMinRest, maxChunk: maxChunk}},
		{"slack 1/64", dev, config{largeMinRest: largeMinRest, maxChunk: maxChunk, trim: true, trimSlack: slack(64)}},
		{"slack 1/16", dev, config{largeMinRest: largeMinRest, maxChunk: maxChunk, trim: true, trimSlack: slack(16)}},
		{"rest 512", dev, config{largeMinRest: minBlock, maxChunk: maxChunk, trim: true, trimSlack: defaultSlack}},
		{"granule chunks", dev, config{largeMinRest: largeMinRest, trim: true, trimSlack: defaultSlack}},
		{"chunk 4", dev, config{largeMinRest: largeMinRest, maxChunk: 4 << 21, trim: true, trimSlack: defaultSlack}},
		{"chunk 10", dev, config{largeMinRest: largeMinRest, maxChunk: 10 << 21, trim: true, trimSlack: defaultSlack}},
		{"chunk 64", dev, config{largeMinRest: largeMinRest, maxChunk: 64 << 21, trim: true, trimSlack: defaultSlack}},
		{"chunk 1k", dev, config{largeMinRest: largeMinRest, maxChunk: 1024 << 21, trim: true, trimSlack: defaultSlack}},
		{"ordinary", plainDevice{dev}, defaultConfig},
	}
	for _, v := range variants {
		for _, tr := range trs {
			t.Logf("%-12s %-20s %v", v.name, tr.Name, replay(t, v.dev, v.cfg, tr))
		}
	}
}
