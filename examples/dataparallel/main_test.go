package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/config"
	"github.com/gocuda/gocuda/nccl"
)

// The tests run on the backend gocuda picks: the host backend here (several
// ranks, a host device each), the GPU with GOCUDA_BACKEND=cuda (as many
// ranks as GPUs; the others skip).

// testConfig is quickConfig made shorter: the host's two cores are shared.
var testConfig = Config{Epochs: 3, Steps: 4, Batch: 64, In: 32, Width: 64, Depth: 2, Classes: 10, LR: 0.05, Mom: 0.9, Seed: 1}

func needDevices(t *testing.T, n int) {
	b, err := gocuda.Backend()
	require.NoError(t, err)
	if b.Name() != "host" && b.DeviceCount() < n {
		t.Skipf("%d ranks need %d GPUs; this machine has %d", n, n, b.DeviceCount())
	}
}

func TestRanksMatchSingleDeviceTraining(t *testing.T) {
	for _, n := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("%d ranks", n), func(t *testing.T) {
			needDevices(t, n)
			rep, err := Run(context.Background(), testConfig, Launch{Mode: "goroutines", World: n}, true, io.Discard)
			require.NoError(t, err)
			require.Len(t, rep.Epochs, testConfig.Epochs)
			require.Len(t, rep.Single, testConfig.Epochs)
			for i, e := range rep.Epochs {
				// float32 sums in another order: the shards' gradients
				// are averaged, not summed over one batch.
				assert.InEpsilon(t, rep.Single[i].Loss, e.Loss, 1e-4, "epoch %d", i+1)
			}
			assert.Less(t, rep.RelDiff, 1e-4)
			assert.Less(t, rep.Epochs[len(rep.Epochs)-1].Loss, rep.Epochs[0].Loss, "the loss should fall")
		})
	}
}

// A rank that fails makes the others stop with an error, not wait for it
// forever; the error is the failing rank's.
func TestAFailingRankStopsTheOthers(t *testing.T) {
	for _, n := range []int{2, 4} {
		t.Run(fmt.Sprintf("%d ranks", n), func(t *testing.T) {
			needDevices(t, n)
			cfg := testConfig
			cfg.failRank, cfg.failStep = n-1, 3
			done := make(chan error, 1)
			go func() {
				_, err := Run(context.Background(), cfg, Launch{Mode: "goroutines", World: n}, false, io.Discard)
				done <- err
			}()
			select {
			case err := <-done:
				require.Error(t, err)
				assert.ErrorIs(t, err, errInjected)
				assert.Contains(t, err.Error(), fmt.Sprintf("rank %d", n-1))
			case <-time.After(time.Minute):
				t.Fatal("the other ranks still wait for the failed one after a minute")
			}
		})
	}
}

// The caller's context bounds the run: done before the ranks finish, they
// stop with the communicator aborted.
func TestRunStopsWhenItsContextIsDone(t *testing.T) {
	needDevices(t, 2)
	ctx, cancel := context.WithCancelCause(context.Background())
	cause := errors.New("the operator stopped the run")
	cancel(cause)
	_, err := Run(ctx, testConfig, Launch{Mode: "goroutines", World: 2}, false, io.Discard)
	require.Error(t, err)
	assert.ErrorIs(t, err, nccl.ErrAborted)
	assert.ErrorIs(t, err, cause)
}

// One rank told its place by the launcher's variables, with an id made in
// this process (on the host backend, ranks are of one process).
func TestLaunchedRankOfOne(t *testing.T) {
	b, err := gocuda.Backend()
	require.NoError(t, err)
	id, err := nccl.NewUniqueID(b)
	require.NoError(t, err)
	env := map[string]string{config.EnvRank: "0", config.EnvWorldSize: "1", config.EnvNCCLID: id.String()}
	l, err := parseLaunch(1, false, lookup(env))
	require.NoError(t, err)
	assert.Equal(t, Launch{Mode: "launcher", World: 1, id: id}, l)
	rep, err := Run(context.Background(), testConfig, l, true, io.Discard)
	require.NoError(t, err)
	assert.Less(t, rep.RelDiff, 1e-4)
}

func lookup(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

func TestParseLaunch(t *testing.T) {
	id := nccl.UniqueID{1, 2, 3}
	good := map[string]string{config.EnvRank: "2", config.EnvWorldSize: "4", config.EnvNCCLID: id.String()}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for a, b := range good {
			m[a] = b
		}
		if v == "" {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	cases := []struct {
		name    string
		ranks   int
		set     bool
		env     map[string]string
		want    Launch
		wantErr string
	}{
		{"nothing: one rank", 1, false, nil, Launch{Mode: "single", World: 1}, ""},
		{"-ranks", 4, true, nil, Launch{Mode: "goroutines", World: 4}, ""},
		{"-ranks 0", 0, true, nil, Launch{}, "-ranks 0"},
		{"launched", 1, false, good, Launch{Mode: "launcher", World: 4, Rank: 2, Local: 2, id: id}, ""},
		{"launched with a local rank", 1, false, with(config.EnvLocalRank, "0"), Launch{Mode: "launcher", World: 4, Rank: 2, Local: 0, id: id}, ""},
		{"launched and -ranks", 2, true, good, Launch{}, "both given"},
		{"no world size", 1, false, with(config.EnvWorldSize, ""), Launch{}, "GOCUDA_WORLD_SIZE is not set"},
		{"no id", 1, false, with(config.EnvNCCLID, ""), Launch{}, "GOCUDA_NCCL_ID is not set"},
		{"bad id", 1, false, with(config.EnvNCCLID, "xyz"), Launch{}, "hexadecimal"},
		{"rank past the world", 1, false, with(config.EnvRank, "4"), Launch{}, "ranks are 0 to"},
		{"not a number", 1, false, with(config.EnvRank, "two"), Launch{}, `GOCUDA_RANK="two"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseLaunch(tc.ranks, tc.set, lookup(tc.env))
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestParseFlags(t *testing.T) {
	none := lookup(nil)
	c, l, opts, err := parseFlags([]string{"-quick", "-ranks", "4", "-width", "16"}, true, none)
	require.NoError(t, err)
	want := quickConfig
	want.Width = 16
	assert.Equal(t, want, c)
	assert.Equal(t, Launch{Mode: "goroutines", World: 4}, l)
	assert.True(t, opts.compare)

	c, _, _, err = parseFlags(nil, true, none)
	require.NoError(t, err)
	assert.Equal(t, hostConfig, c)
	c, _, _, err = parseFlags(nil, false, none)
	require.NoError(t, err)
	assert.Equal(t, defaultConfig, c)

	_, _, _, err = parseFlags([]string{"-quick", "-ranks", "3"}, true, none)
	assert.ErrorContains(t, err, "multiple of 3")
	_, _, _, err = parseFlags([]string{"extra"}, true, none)
	assert.ErrorContains(t, err, "unexpected arguments")
}

// helperEnv marks the test binary re-run as the example's main.
const helperEnv = "DATAPARALLEL_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		os.Args = append([]string{"dataparallel"}, os.Args[1:]...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// The program's -json report, from the program itself.
func TestJSONReport(t *testing.T) {
	needDevices(t, 2)
	cmd := exec.Command(os.Args[0], "-json", "-quick", "-epochs", "2", "-steps", "2", "-ranks", "2")
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	out, err := cmd.Output()
	require.NoError(t, err)
	var rep Report
	require.NoError(t, json.Unmarshal(out, &rep), "output: %s", out)
	assert.Equal(t, Launch{Mode: "goroutines", World: 2}, rep.Launch)
	require.Len(t, rep.Epochs, 2)
	require.Len(t, rep.Single, 2)
	assert.Less(t, rep.RelDiff, 1e-4)
}
