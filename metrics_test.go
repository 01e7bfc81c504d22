package gocuda

import (
	"bytes"
	"encoding/json"
	"expvar"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/config"
	"github.com/gocuda/gocuda/pool"
)

func TestMetricsAreEveryDevicePoolsFiguresAsJSON(t *testing.T) {
	p, err := Pool(0)
	require.NoError(t, err)
	dev, err := Device(0)
	require.NoError(t, err)
	s, err := dev.NewStream()
	require.NoError(t, err)
	defer func() { assert.NoError(t, s.Destroy()) }()
	b, err := p.Alloc(3<<20, s)
	require.NoError(t, err)
	defer func() { assert.NoError(t, p.Free(b, s)) }()

	js, err := json.Marshal(Metrics())
	require.NoError(t, err)
	var got struct {
		Devices []struct {
			Device         int                `json:"device"`
			Pool           string             `json:"pool"`
			LiveBytes      uint64             `json:"live_bytes"`
			RequestedBytes uint64             `json:"requested_bytes"`
			ReservedBytes  uint64             `json:"reserved_bytes"`
			Events         map[string]float64 `json:"events"`
			Pressure       map[string]float64 `json:"pressure"`
		} `json:"devices"`
	}
	require.NoError(t, json.Unmarshal(js, &got))
	require.NotEmpty(t, got.Devices)
	d := got.Devices[0]
	c, err := Config()
	require.NoError(t, err)
	assert.Equal(t, 0, d.Device)
	assert.Equal(t, c.Pool, d.Pool)
	assert.GreaterOrEqual(t, d.LiveBytes, uint64(3<<20))
	assert.GreaterOrEqual(t, d.RequestedBytes, uint64(3<<20))
	assert.GreaterOrEqual(t, d.ReservedBytes, d.LiveBytes)
	assert.NotNil(t, d.Pressure, "the root package's pools have the pressure layer")
	assert.Contains(t, d.Events, "grow")
	assert.Contains(t, d.Events, "oom_retry")
}

func TestThePackagePublishesNothingInExpvar(t *testing.T) {
	_, err := Pool(0)
	require.NoError(t, err)
	_ = Metrics()
	var names []string
	expvar.Do(func(kv expvar.KeyValue) { names = append(names, kv.Key) })
	assert.ElementsMatch(t, []string{"cmdline", "memstats"}, names,
		"only expvar's own: publishing is observe/expvarmetrics' Publish, which nothing here calls")
}

// debugLogChild is set in the environment of the process that
// TestDebugLogKnob starts.
const debugLogChild = "GOCUDA_TEST_DEBUG_LOG_CHILD"

// TestDebugLogChild runs only in that process: GOCUDA_DEBUG=log is read
// once, when the first pool is made, so the knob needs a process of its
// own.
func TestDebugLogChild(t *testing.T) {
	if os.Getenv(debugLogChild) == "" {
		t.Skip("runs as TestDebugLogKnob's child process")
	}
	// A strategy that takes memory from the driver on first use, so that
	// the allocation below is a growth event.
	p, err := Pool(0)
	require.NoError(t, err)
	dev, err := Device(0)
	require.NoError(t, err)
	s, err := dev.NewStream()
	require.NoError(t, err)
	b, err := p.Alloc(1<<20, s)
	require.NoError(t, err)
	require.NoError(t, p.Free(b, s))
	require.NoError(t, s.Synchronize())
	p.Reclaim(pool.All)
	require.NoError(t, s.Destroy())
}

func TestDebugLogKnob(t *testing.T) {
	for _, tc := range []struct {
		debug string
		lines bool
	}{{"log", true}, {"leaks,log", true}, {"", false}} {
		t.Run("GOCUDA_DEBUG="+tc.debug, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestDebugLogChild$", "-test.v")
			cmd.Env = append(os.Environ(), debugLogChild+"=1", config.EnvDebug+"="+tc.debug)
			var stderr, stdout bytes.Buffer
			cmd.Stderr, cmd.Stdout = &stderr, &stdout
			require.NoError(t, cmd.Run(), "child:\n%s\n%s", stdout.String(), stderr.String())
			require.Contains(t, stdout.String(), "--- PASS: TestDebugLogChild")
			if !tc.lines {
				assert.NotContains(t, stderr.String(), "gocuda: pool")
				return
			}
			assert.Regexp(t, `level=DEBUG msg="gocuda: pool grew" event=grow device=0 bytes=\d+ reserved=\d+`, stderr.String())
			assert.Regexp(t, `msg="gocuda: pool (reclaimed cache|released memory)" event=(reclaim|release) device=0`, stderr.String())
		})
	}
}
