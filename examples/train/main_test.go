package main

import (
	"encoding/json"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests run on the backend gocuda picks: the host backend here, the GPU
// with GOCUDA_BACKEND=cuda.

func TestQuickRunLossFalls(t *testing.T) {
	rep, err := Run(quickConfig, io.Discard)
	require.NoError(t, err)
	require.Len(t, rep.Epochs, quickConfig.Epochs)
	first, last := rep.Epochs[0].Loss, rep.Epochs[len(rep.Epochs)-1].Loss
	// Ten classes: an untrained model is near ln 10 ≈ 2.30.
	assert.InDelta(t, 2.3, first, 0.3, "first epoch's loss")
	assert.Less(t, last, 0.85*first, "the loss should fall: %+v", rep.Epochs)
	for i := 1; i < len(rep.Epochs); i++ {
		assert.Less(t, rep.Epochs[i].Loss, rep.Epochs[i-1].Loss, "epoch %d", i+1)
	}
	assert.Positive(t, rep.StepBytes)
	assert.Zero(t, rep.OOMFailures)
}

// helperEnv marks the test binary re-run as the example's main.
const helperEnv = "TRAIN_TEST_AS_MAIN"

func TestBFloat16RunEndsWithinTwoPercentOfFloat32(t *testing.T) {
	f32, err := Run(quickConfig, io.Discard)
	require.NoError(t, err)
	cfg := quickConfig
	cfg.BF16 = true
	b16, err := Run(cfg, io.Discard)
	require.NoError(t, err)
	require.Len(t, b16.Epochs, cfg.Epochs)
	last := func(r *Report) float64 { return r.Epochs[len(r.Epochs)-1].Loss }
	// Issue 27: the bfloat16 run's last loss within 2 % of float32's.
	assert.InEpsilon(t, last(f32), last(b16), 0.02, "float32 %+v, bfloat16 %+v", f32.Epochs, b16.Epochs)
	assert.Less(t, last(b16), 0.85*b16.Epochs[0].Loss, "the bfloat16 loss should fall: %+v", b16.Epochs)
	assert.True(t, b16.Config.BF16)
	assert.NotEqual(t, last(f32), last(b16), "bfloat16 products round: the losses cannot be float32's to the bit")
}

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		os.Args = append([]string{"train"}, os.Args[1:]...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runMain runs the example as its own process (gocuda reads its knobs once
// a process), with the flags given, and decodes its -json report.
func runMain(t *testing.T, args ...string) *Report {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-json"}, args...)...)
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	require.NoError(t, err, "train %v", args)
	var rep Report
	require.NoError(t, json.Unmarshal(out, &rep), "output: %s", out)
	return &rep
}

// Under a hard limit smaller than the garbage of the run, training
// completes with early collection on and with it off (then through the
// out-of-memory retry), and learns the same: the collector only decides
// when memory comes back, never what is computed.
func TestQuickRunUnderHardLimit(t *testing.T) {
	// 16 MiB leaves the pool room for its granules on a GPU too; 80 steps
	// of 294 KiB are 23 MiB of garbage.
	const limit = 16 << 20
	args := []string{"-quick", "-epochs", "10", "-hard-limit", "16MiB"}
	on := runMain(t, append(args, "-gc-early=true")...)
	off := runMain(t, append(args, "-gc-early=false")...)
	for _, rep := range []*Report{on, off} {
		require.Equal(t, uint64(limit), rep.HardLimit)
		garbage := rep.StepBytes * int64(rep.Config.Epochs*rep.Config.Steps)
		require.Greater(t, garbage, int64(limit), "the run's garbage should exceed the limit")
		assert.Zero(t, rep.OOMFailures, "gc_early=%v", rep.GCEarly)
		assert.Positive(t, rep.Collections, "gc_early=%v: memory past the limit can only come back by collecting", rep.GCEarly)
		assert.LessOrEqual(t, rep.PeakReserved, uint64(limit))
		assert.Positive(t, rep.PeakLive, "gc_early=%v: collections ran, so the report has the live bytes they left", rep.GCEarly)
		assert.LessOrEqual(t, rep.PeakLive, rep.PeakReserved)
	}
	assert.True(t, on.GCEarly)
	assert.False(t, off.GCEarly)
	assert.Zero(t, off.EarlyCollections)
	assert.Positive(t, off.OOMRetries, "with early collection off, memory comes back through the retry")
	require.Len(t, off.Epochs, len(on.Epochs))
	for i := range on.Epochs {
		assert.InEpsilon(t, on.Epochs[i].Loss, off.Epochs[i].Loss, 1e-5, "epoch %d", i+1)
	}
}

// The stand-in heap holds its size in records, every one reachable from
// the index and linked to an earlier one.
func TestHostHeapHoldsLinkedRecords(t *testing.T) {
	h := makeHostHeap(1<<20, rand.New(rand.NewPCG(1, 2)))
	require.Equal(t, (1<<20)/recordBytes, h.len())
	for i, rec := range h.index {
		require.NotNil(t, rec)
		require.NotEmpty(t, rec.key)
		if i > 0 {
			require.NotNil(t, rec.next, "record %d", i)
		}
	}
	assert.Zero(t, makeHostHeap(0, rand.New(rand.NewPCG(1, 2))).len())
}

func TestParseFlags(t *testing.T) {
	// parseFlags sets these; t.Setenv restores them afterwards.
	t.Setenv("GOCUDA_HARD_MEMORY_LIMIT", os.Getenv("GOCUDA_HARD_MEMORY_LIMIT"))
	t.Setenv("GOCUDA_GC_EARLY", os.Getenv("GOCUDA_GC_EARLY"))
	cases := []struct {
		name    string
		env     map[string]string
		args    []string
		check   func(t *testing.T, c Config)
		wantErr string
	}{
		{"defaults", nil, nil, func(t *testing.T, c Config) { assert.Equal(t, defaultConfig, c) }, ""},
		{"quick", nil, []string{"-quick"}, func(t *testing.T, c Config) { assert.Equal(t, quickConfig, c) }, ""},
		{"flag over quick", nil, []string{"-quick", "-width", "32"}, func(t *testing.T, c Config) {
			assert.Equal(t, 32, c.Width)
			assert.Equal(t, quickConfig.Batch, c.Batch)
		}, ""},
		{"env", map[string]string{"TRAIN_EPOCHS": "2", "TRAIN_LR": "0.5", "TRAIN_QUICK": "true"}, nil, func(t *testing.T, c Config) {
			assert.Equal(t, 2, c.Epochs)
			assert.Equal(t, 0.5, c.LR)
			assert.Equal(t, quickConfig.Width, c.Width)
		}, ""},
		{"flag over env", map[string]string{"TRAIN_EPOCHS": "2"}, []string{"-epochs", "3"}, func(t *testing.T, c Config) { assert.Equal(t, 3, c.Epochs) }, ""},
		{"limit and gc", nil, []string{"-hard-limit", "4GiB", "-gc-early=false"}, func(t *testing.T, c Config) {
			assert.Equal(t, "4GiB", os.Getenv("GOCUDA_HARD_MEMORY_LIMIT"))
			assert.Equal(t, "false", os.Getenv("GOCUDA_GC_EARLY"))
		}, ""},
		{"bad env", map[string]string{"TRAIN_BATCH": "lots"}, nil, nil, `TRAIN_BATCH="lots" is not an integer`},
		{"zero depth", nil, []string{"-depth", "0"}, nil, "-depth is 0; it must be at least 1"},
		{"one class", nil, []string{"-classes", "1"}, nil, "at least 2"},
		{"momentum", nil, []string{"-momentum", "1"}, nil, "[0, 1)"},
		{"stray argument", nil, []string{"fast"}, nil, "unexpected arguments"},
		{"host heap", nil, []string{"-host-heap", "256MiB"}, func(t *testing.T, c Config) { assert.Equal(t, uint64(256<<20), c.HostHeap) }, ""},
		{"host heap from env", map[string]string{"TRAIN_HOST_HEAP": "1GB"}, nil, func(t *testing.T, c Config) { assert.Equal(t, uint64(1e9), c.HostHeap) }, ""},
		{"bad host heap", nil, []string{"-host-heap", "lots"}, nil, `-host-heap "lots" is not a size`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, k := range []string{"TRAIN_EPOCHS", "TRAIN_LR", "TRAIN_QUICK", "TRAIN_BATCH", "TRAIN_HOST_HEAP"} {
				t.Setenv(k, c.env[k])
			}
			cfg, _, err := parseFlags(c.args)
			if c.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), c.wantErr)
				return
			}
			require.NoError(t, err)
			c.check(t, cfg)
		})
	}
}

// With no size given the run is sized by backend (hostConfig on the host);
// any size, from a flag or TRAIN_ variable, or -quick keeps the preset.
func TestAutoSizeOnlyWhenNoSizeIsGiven(t *testing.T) {
	t.Setenv("GOCUDA_HARD_MEMORY_LIMIT", os.Getenv("GOCUDA_HARD_MEMORY_LIMIT"))
	t.Setenv("GOCUDA_GC_EARLY", os.Getenv("GOCUDA_GC_EARLY"))
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		auto bool
	}{
		{"nothing", nil, nil, true},
		{"settings that do not size", nil, []string{"-lr", "0.02", "-seed", "3", "-json", "-hard-limit", "1GiB"}, true},
		{"quick", nil, []string{"-quick"}, false},
		{"width flag", nil, []string{"-width", "128"}, false},
		{"epochs flag", nil, []string{"-epochs", "2"}, false},
		{"batch from the environment", map[string]string{"TRAIN_BATCH": "64"}, nil, false},
		{"quick from the environment", map[string]string{"TRAIN_QUICK": "1"}, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"TRAIN_QUICK", "TRAIN_BATCH"} {
				t.Setenv(k, tc.env[k])
			}
			_, opts, err := parseFlags(tc.args)
			require.NoError(t, err)
			assert.Equal(t, tc.auto, opts.autoSize)
		})
	}
}

func TestWithSizesKeepsTheOtherSettings(t *testing.T) {
	c := defaultConfig
	c.LR, c.Seed, c.Plot = 0.5, 7, "x.svg"
	got := c.withSizes(hostConfig)
	assert.Equal(t, hostConfig.Width, got.Width)
	assert.Equal(t, hostConfig.Batch, got.Batch)
	assert.Equal(t, hostConfig.Epochs, got.Epochs)
	assert.Equal(t, 0.5, got.LR)
	assert.Equal(t, uint64(7), got.Seed)
	assert.Equal(t, "x.svg", got.Plot)
	assert.NoError(t, got.check())
}

// -graph trains on the captured step: the same losses as eager, bit for
// bit (the same kernels on the same values in the same order).
func TestGraphTrainsWithEagersLosses(t *testing.T) {
	eager, err := Run(quickConfig, io.Discard)
	require.NoError(t, err)
	cfg := quickConfig
	cfg.Graph = true
	graph, err := Run(cfg, io.Discard)
	require.NoError(t, err)
	require.Len(t, graph.Epochs, len(eager.Epochs))
	for i := range eager.Epochs {
		assert.Equal(t, eager.Epochs[i].Loss, graph.Epochs[i].Loss, "epoch %d", i+1)
	}
	assert.True(t, graph.Config.Graph)
}
