package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda"
)

// needTwoDevices skips on a machine of one GPU (the host backend has two).
func needTwoDevices(t *testing.T) {
	b, err := gocuda.Backend()
	require.NoError(t, err)
	if b.DeviceCount() < 2 {
		t.Skipf("needs two devices; the %s backend has %d", b.Name(), b.DeviceCount())
	}
}

// On the host backend (two devices) one process drives both ranks: a row
// per size and registration, and --json writes the same rows with
// nccl-tests' bandwidths. On GPUs it needs two.
func TestBenchAllReducePrintsATableAndWritesJSON(t *testing.T) {
	needTwoDevices(t)
	out := filepath.Join(t.TempDir(), "ar.json")
	code, stdout, stderr := runCLI(t, "bench", "allreduce", "--sizes", "1KiB,64KiB", "--iters", "3", "--warmup", "1", "--json", out)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "all-reduce, float32 sum in place: 2 ranks (one process) on ")
	assert.Regexp(t, `\n +bytes +registered +time \(us\) +algbw \(GB/s\) +busbw \(GB/s\)\n`, stdout)
	for _, row := range []string{`1024 +false`, `1024 +true`, `65536 +false`, `65536 +true`} {
		assert.Regexp(t, `\n +`+row+` +\d+\.\d +\d+\.\d +\d+\.\d\n`, stdout)
	}
	buf, err := os.ReadFile(out)
	require.NoError(t, err)
	var rep allReduceReport
	require.NoError(t, json.Unmarshal(buf, &rep))
	assert.Equal(t, "one process", rep.Mode)
	assert.Equal(t, 2, rep.Ranks)
	require.Len(t, rep.Rows, 4)
	for _, r := range rep.Rows {
		assert.Positive(t, r.Seconds)
		assert.InDelta(t, float64(r.Bytes)/r.Seconds/1e9, r.AlgBW, 1e-9*r.AlgBW)
		assert.InDelta(t, r.AlgBW, r.BusBW, 1e-9*r.AlgBW, "two ranks: busbw = algbw·2(n-1)/n = algbw")
	}
}

// A launched rank joins through the launcher's variables: a job of one
// rank runs on the host backend too (rank 0 serves the rendezvous on a
// free loopback port: a job of one needs no address).
func TestBenchAllReduceAsALaunchedRank(t *testing.T) {
	t.Setenv("GOCUDA_RANK", "0")
	t.Setenv("GOCUDA_WORLD_SIZE", "1")
	code, stdout, stderr := runCLI(t, "bench", "allreduce", "--sizes", "4KiB", "--iters", "2", "--register", "off")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "1 ranks (a process per rank)")
	assert.Regexp(t, `\n +4096 +false `, stdout)

	code, _, stderr = runCLI(t, "bench", "allreduce", "--ranks", "2")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "a launched process is the one rank the launcher gave it")
}

func TestBenchAllReduceRejectsBadArguments(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--ranks", "99"}, "--ranks 99: this machine's "},
		{[]string{"--sizes", "1KiB,6B"}, `--sizes "6B": the buffers are float32`},
		{[]string{"--sizes", "lots"}, `--sizes "lots" is not a size`},
		{[]string{"--iters", "0"}, "give at least one timed all-reduce"},
		{[]string{"--register", "maybe"}, `--register "maybe": give on, off or both`},
		{[]string{"extra"}, "bench allreduce takes no arguments"},
		{[]string{"--itres", "3"}, `unknown flag "--itres"; did you mean "--iters"?`},
	} {
		code, _, stderr := runCLI(t, append([]string{"bench", "allreduce"}, c.args...)...)
		assert.Equal(t, 2, code, "%v", c.args)
		assert.Contains(t, stderr, c.want, "%v", c.args)
		assert.Contains(t, stderr, `run "gocuda bench allreduce --help" for its flags`, "%v", c.args)
		assert.Equal(t, 1, strings.Count(stderr, "--help"), "one hint: %s", stderr)
	}
}
