package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/config"
	"github.com/gocuda/gocuda/cuarray"
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
		for _, overlap := range []bool{true, false} {
			t.Run(fmt.Sprintf("%d ranks, overlap %v", n, overlap), func(t *testing.T) {
				needDevices(t, n)
				cfg := testConfig
				cfg.Overlap = overlap
				rep, err := Run(context.Background(), cfg, Launch{Mode: "goroutines", World: n}, true, io.Discard)
				require.NoError(t, err)
				require.Len(t, rep.Epochs, cfg.Epochs)
				require.Len(t, rep.Single, cfg.Epochs)
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
}

// Overlap moves the all-reduces to another stream and the updates after
// the backward pass, and changes no number: the same sums in the same
// order. (On GPUs, where the kernels are the same too, to float32's last
// bits at most.)
func TestOverlapChangesNoLoss(t *testing.T) {
	needDevices(t, 2)
	losses := map[bool][]float64{}
	for _, overlap := range []bool{true, false} {
		cfg := testConfig
		cfg.Overlap = overlap
		rep, err := Run(context.Background(), cfg, Launch{Mode: "goroutines", World: 2}, false, io.Discard)
		require.NoError(t, err)
		for _, e := range rep.Epochs {
			losses[overlap] = append(losses[overlap], e.Loss)
		}
	}
	if onHost(t) {
		assert.Equal(t, losses[false], losses[true])
		return
	}
	require.Len(t, losses[true], len(losses[false]))
	for i := range losses[true] {
		assert.InEpsilon(t, losses[false][i], losses[true][i], 1e-6, "epoch %d", i+1)
	}
}

func onHost(t *testing.T) bool {
	b, err := gocuda.Backend()
	require.NoError(t, err)
	return b.Name() == "host"
}

// -save-data writes rank 0's initial weights and batches: read back, they
// are the arrays the ranks make from the seed, with the manifest's shapes.
func TestSaveData(t *testing.T) {
	needDevices(t, 2)
	dir := filepath.Join(t.TempDir(), "data") // made by the program
	cfg := testConfig
	cfg.Overlap = true
	cfg.saveData = dir
	_, err := Run(context.Background(), cfg, Launch{Mode: "goroutines", World: 2}, false, io.Discard)
	require.NoError(t, err)

	js, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	require.NoError(t, err)
	var man dataManifest
	require.NoError(t, json.Unmarshal(js, &man))
	assert.Equal(t, dataFormat, man.Format)
	assert.Equal(t, "little", man.ByteOrder)
	want := cfg
	want.saveData = ""
	assert.Equal(t, want, man.Config)
	require.Len(t, man.Layers, cfg.Depth+1)
	require.Len(t, man.Batches, cfg.Steps)

	s, err := cuarray.NewStream(0)
	require.NoError(t, err)
	defer s.Close()
	model, data, err := makeModelAndData(cuarray.On[float32](s), cfg)
	require.NoError(t, err)
	for i, l := range model.Layers {
		checkSaved(t, dir, man.Layers[i].Weight, "float32", l.W)
		checkSaved(t, dir, man.Layers[i].Bias, "float32", l.B)
		assert.Equal(t, l.Relu, man.Layers[i].Relu)
	}
	for i, d := range data {
		checkSaved(t, dir, man.Batches[i].X, "float32", d.X)
		checkSaved(t, dir, man.Batches[i].Labels, "int32", d.Labels)
	}
}

// checkSaved checks that the file sa names holds a's elements, raw and
// little-endian, and that sa has a's shape and dtype.
func checkSaved[T float32 | int32](t *testing.T, dir string, sa savedArray, dtype string, a *cuarray.Array[T]) {
	t.Helper()
	assert.Equal(t, dtype, sa.DType, sa.File)
	assert.Equal(t, a.Shape(), sa.Shape, sa.File)
	raw, err := os.ReadFile(filepath.Join(dir, sa.File))
	require.NoError(t, err)
	require.Len(t, raw, 4*a.Len(), sa.File)
	got := make([]T, a.Len())
	for i := range got {
		u := binary.LittleEndian.Uint32(raw[4*i:])
		switch p := any(&got[i]).(type) {
		case *float32:
			*p = math.Float32frombits(u)
		case *int32:
			*p = int32(u)
		}
	}
	want, err := a.ToSlice()
	require.NoError(t, err)
	assert.Equal(t, want, got, sa.File)
}

// A folder -save-data cannot make fails rank 0 before training, and the
// other ranks stop rather than wait for it.
func TestSaveDataToABadFolder(t *testing.T) {
	needDevices(t, 2)
	file := filepath.Join(t.TempDir(), "a file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	cfg := testConfig
	cfg.saveData = filepath.Join(file, "data")
	_, err := Run(context.Background(), cfg, Launch{Mode: "goroutines", World: 2}, false, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "rank 0")
	assert.Contains(t, err.Error(), "-save-data")
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

// One rank told its place by the launcher's variables: it meets itself
// at the rendezvous (rank 0 serves it; a job of one needs no address) and
// forms its communicator through nccl.JoinFromEnv.
func TestLaunchedRankOfOne(t *testing.T) {
	env := map[string]string{config.EnvRank: "0", config.EnvWorldSize: "1"}
	for k, v := range env {
		t.Setenv(k, v) // JoinFromEnv reads the process's environment
	}
	launch, err := parseLaunch(1, false, lookup(env))
	require.NoError(t, err)
	assert.Equal(t, Launch{Mode: "launcher", Launcher: "gocuda", World: 1}, launch)
	rep, err := Run(context.Background(), testConfig, launch, true, io.Discard)
	require.NoError(t, err)
	assert.Less(t, rep.RelDiff, 1e-4)
}

func lookup(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

// Each launcher's variables give the rank, the world and the device;
// rendezvous.FromEnv's own tests cover its errors in full.
func TestParseLaunch(t *testing.T) {
	at := map[string]string{"MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "29500"}
	env := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range at {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
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
		{"gocuda launch", 1, false, map[string]string{config.EnvRank: "2", config.EnvWorldSize: "4", config.EnvLocalRank: "0", "GOCUDA_RENDEZVOUS": "127.0.0.1:4000", "GOCUDA_JOB": "j"},
			Launch{Mode: "launcher", Launcher: "gocuda", World: 4, Rank: 2, Local: 0}, ""},
		{"torchrun", 1, false, env("RANK", "3", "WORLD_SIZE", "8", "LOCAL_RANK", "3", "TORCHELASTIC_RUN_ID", "none", "TORCHELASTIC_USE_AGENT_STORE", "True"),
			Launch{Mode: "launcher", Launcher: "torchrun", World: 8, Rank: 3, Local: 3}, ""},
		{"srun", 1, false, env("SLURM_PROCID", "5", "SLURM_NTASKS", "16", "SLURM_LOCALID", "1", "SLURM_JOB_ID", "77", "SLURM_STEP_ID", "0"),
			Launch{Mode: "launcher", Launcher: "slurm", World: 16, Rank: 5, Local: 1}, ""},
		{"mpirun", 1, false, env("OMPI_COMM_WORLD_RANK", "1", "OMPI_COMM_WORLD_SIZE", "2", "OMPI_COMM_WORLD_LOCAL_RANK", "1"),
			Launch{Mode: "launcher", Launcher: "openmpi", World: 2, Rank: 1, Local: 1}, ""},
		{"launched and -ranks", 2, true, env("OMPI_COMM_WORLD_RANK", "1", "OMPI_COMM_WORLD_SIZE", "2", "OMPI_COMM_WORLD_LOCAL_RANK", "1"), Launch{}, "both given"},
		{"srun without an address", 1, false, map[string]string{"SLURM_PROCID": "1", "SLURM_NTASKS": "4", "SLURM_LOCALID": "1", "SLURM_STEP_ID": "0"}, Launch{}, "nothing says where rank 0 listens"},
		{"not a number", 1, false, env(config.EnvRank, "two", config.EnvWorldSize, "2"), Launch{}, `GOCUDA_RANK="two"`},
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

	c, _, _, err = parseFlags([]string{"-quick", "-overlap=false", "-save-data", "out"}, true, none)
	require.NoError(t, err)
	want = quickConfig
	want.Overlap, want.saveData = false, "out"
	assert.Equal(t, want, c)
	_, _, _, err = parseFlags([]string{"-overlap=sometimes"}, true, none)
	assert.ErrorContains(t, err, "-overlap")
	_, _, _, err = parseFlags([]string{"-save-data", ""}, true, none)
	assert.ErrorContains(t, err, "-save-data is empty")
	_, _, _, err = parseFlags([]string{"-save-data"}, true, none)
	assert.ErrorContains(t, err, "flag needs an argument")
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

// The program's -json report, from the program itself, with overlap on
// (the default) and off.
func TestJSONReport(t *testing.T) {
	needDevices(t, 2)
	for _, overlap := range []bool{true, false} {
		args := []string{"-json", "-quick", "-epochs", "2", "-steps", "2", "-ranks", "2"}
		if !overlap {
			args = append(args, "-overlap=false")
		}
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), helperEnv+"=1")
		out, err := cmd.Output()
		require.NoError(t, err)
		var rep Report
		require.NoError(t, json.Unmarshal(out, &rep), "output: %s", out)
		assert.Equal(t, Launch{Mode: "goroutines", World: 2}, rep.Launch)
		assert.Equal(t, overlap, rep.Config.Overlap)
		assert.Contains(t, string(out), fmt.Sprintf(`"overlap": %v`, overlap))
		require.Len(t, rep.Epochs, 2)
		require.Len(t, rep.Single, 2)
		assert.Less(t, rep.RelDiff, 1e-4)
	}
}
