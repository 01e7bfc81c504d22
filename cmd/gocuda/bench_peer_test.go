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
	"github.com/gocuda/gocuda/backend/host"
)

// On the host backend (two devices) the table has a row per size for the
// peer path, says why staged has none, and --json writes the same rows; on
// two GPUs both paths have their rows.
func TestBenchPeerPrintsATableAndWritesJSON(t *testing.T) {
	needTwoDevices(t)
	b, err := gocuda.Backend()
	require.NoError(t, err)
	onHost := b.Name() == "host"
	out := filepath.Join(t.TempDir(), "peer.json")
	code, stdout, stderr := runCLI(t, "bench", "peer", "--sizes", "512B,64KiB", "--iters", "5", "--repeats", "2", "--json", out)
	require.Equal(t, 0, code, stderr)
	assert.Empty(t, stderr, "no progress when stderr is not a terminal")
	assert.Contains(t, stdout, "from device 0: ")
	assert.Contains(t, stdout, "to   device 1: ")
	assert.Contains(t, stdout, "5 copies then one synchronization, best of 2")
	assert.Regexp(t, `\n +size +path +route +GB/s +round trip µs\n`, stdout)
	peerRoute, paths := "memmove", []string{"peer"}
	if !onHost {
		peerRoute, paths = "(peer to peer|via host \\(no peer access\\))", []string{"peer", "staged"}
	}
	for _, size := range []string{"512 B", "64 KiB"} {
		assert.Regexp(t, `\n +`+size+` +peer +`+peerRoute+` +\d+\.\d\d +\d+\.\d\n`, stdout, "a row per size")
		if !onHost {
			assert.Regexp(t, `\n +`+size+` +staged +via host +\d+\.\d\d +\d+\.\d\n`, stdout)
		}
	}
	if onHost {
		assert.NotRegexp(t, `\n +\S+ \S+ +staged `, stdout)
		assert.Contains(t, stdout, "staged: skipped: the host backend's devices share memory")
	}

	buf, err := os.ReadFile(out)
	require.NoError(t, err)
	var rep peerReport
	require.NoError(t, json.Unmarshal(buf, &rep))
	assert.Equal(t, b.Name(), rep.Backend)
	assert.Equal(t, []int{0, 1, 5, 2}, []int{rep.From, rep.To, rep.Iters, rep.Repeats})
	require.Len(t, rep.Rows, 2*len(paths))
	for i, r := range rep.Rows {
		n := []uint64{512, 64 << 10}[i/len(paths)]
		assert.Equal(t, n, r.Bytes)
		assert.Equal(t, paths[i%len(paths)], r.Path)
		assert.Positive(t, r.PipelinedGBps)
		assert.Positive(t, r.RoundTripUs)
		assert.InDelta(t, float64(n)*5/r.PipelinedSeconds/1e9, r.PipelinedGBps, 1e-9*r.PipelinedGBps)
	}
}

// The other direction works too.
func TestBenchPeerFromOneToZero(t *testing.T) {
	needTwoDevices(t)
	code, stdout, stderr := runCLI(t, "bench", "peer", "--sizes", "4KiB", "--iters", "2", "--repeats", "1", "--from", "1", "--to", "0", "--paths", "peer")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "cuarray.Copy from device 1 to device 0, on a stream of device 0")
	assert.Regexp(t, `\n +4\.0 KiB +peer +(memmove|peer to peer|via host) `, stdout)
	assert.NotContains(t, stdout, "staged", "only the paths asked for")
}

func TestBenchPeerRejectsBadArguments(t *testing.T) {
	needTwoDevices(t) // --from and --to are checked against the devices
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--sizes", "big"}, `--sizes "big" is not a size`},
		{[]string{"--sizes", "1.5"}, `--sizes "1.5" is not a size`},
		{[]string{"--paths", "stagd"}, `--paths: no path "stagd"; did you mean "staged"? the paths are peer, staged`},
		{[]string{"--iters", "0"}, "--iters 0: give a positive count"},
		{[]string{"--repeats", "-1"}, "--repeats -1: give a positive count"},
		{[]string{"--to", "0"}, "--from and --to are both 0: give two different devices"},
		{[]string{"--to", "99"}, "--to 99: no such device; this machine's "},
		{[]string{"--from", "-1"}, "--from -1: no such device"},
		{[]string{"--itres", "3"}, `unknown flag "--itres"; did you mean "--iters"?`},
		{[]string{"extra"}, `bench peer takes no arguments`},
	} {
		code, stdout, stderr := runCLI(t, append([]string{"bench", "peer"}, c.args...)...)
		assert.Equal(t, 2, code, c.args)
		assert.Empty(t, stdout, c.args)
		assert.Contains(t, stderr, "gocuda bench: "+c.want, c.args)
		assert.Contains(t, stderr, `run "gocuda bench peer --help" for its flags`, c.args)
		assert.NotContains(t, stderr, `"gocuda bench --help"`, c.args)
		assert.Equal(t, 1, strings.Count(stderr, "--help"), "one hint: %s", stderr)
	}
}

func TestBenchPeerHelpGoesToStdout(t *testing.T) {
	code, stdout, stderr := runCLI(t, "bench", "peer", "--help")
	assert.Equal(t, 0, code)
	assert.Empty(t, stderr)
	assert.Contains(t, stdout, "Usage: gocuda bench peer [flags]")
	for _, f := range []string{"-sizes", "-paths", "-iters", "-repeats", "-from", "-to", "-json", "-quiet"} {
		assert.Contains(t, stdout, f)
	}
}

// One device is not enough, and the error says what the machine has.
func TestBenchPeerNeedsTwoDevices(t *testing.T) {
	err := checkPeerDevices(host.New(host.Options{Devices: 1}), 0, 1)
	require.Error(t, err)
	assert.Equal(t, "needs two devices; this machine's host backend has 1", err.Error())
	var ue usageError
	assert.NotErrorAs(t, err, &ue, "not a typing mistake: exit 1")
	require.NoError(t, checkPeerDevices(host.New(host.Options{Devices: 3}), 2, 0))
}
