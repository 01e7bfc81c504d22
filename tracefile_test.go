package gocuda

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/host"
	"github.com/gocuda/gocuda/config"
	"github.com/gocuda/gocuda/internal/trace"
	"github.com/gocuda/gocuda/pool"
)

// traceChild names how TestTraceChild, run in a child process by
// TestTraceWithoutStopTraceReplays, ends: GOCUDA_TRACE is read once per
// process, and ending the process is what is tested.
const traceChild = "GOCUDA_TEST_TRACE_CHILD"

// childExit is the child's exit status when it ends itself with os.Exit,
// so that the parent can tell it from a failed test (1).
const childExit = 7

// Allocations the child makes before it waits for them to reach the file,
// and after (at its very end, where nothing flushes them unless it stops
// the trace).
const childAllocs, childLate = 100, 10

// TestTraceChild runs only as TestTraceWithoutStopTraceReplays's child.
func TestTraceChild(t *testing.T) {
	mode := os.Getenv(traceChild)
	if mode == "" {
		t.Skip("runs as TestTraceWithoutStopTraceReplays's child process")
	}
	p, err := Pool(0)
	require.NoError(t, err)
	s, err := p.Device().NewStream()
	require.NoError(t, err)
	alloc := func(i int) {
		b, err := p.Alloc(uint64(4096*(i+1)), s)
		require.NoError(t, err)
		if i%2 == 0 {
			require.NoError(t, p.Free(b, s))
		}
	}
	for i := range childAllocs {
		alloc(i)
	}
	// Nothing here flushes: the events reach the file because the
	// recorder's writer puts them there, as in a program that runs on.
	path := os.Getenv(config.EnvTrace)
	start := time.Now()
	for {
		tr, err := trace.ParseFile(path)
		require.NoError(t, err)
		if tr.Allocs == childAllocs && tr.Frees == childAllocs/2 {
			break
		}
		require.Less(t, time.Since(start), 10*time.Second, "the events did not reach the file")
		time.Sleep(5 * time.Millisecond)
	}
	for i := range childLate {
		alloc(childAllocs + i)
	}
	switch mode {
	case "exit":
		os.Exit(childExit)
	case "panic":
		panic("the program crashes while recording")
	case "stop":
		require.NoError(t, StopTrace())
		os.Exit(childExit)
	}
	t.Fatalf("unknown mode %q", mode)
}

func TestTraceWithoutStopTraceReplays(t *testing.T) {
	tests := []struct {
		mode  string
		exit  int // the child's exit status
		ended bool
	}{
		{"exit", childExit, false},
		{"panic", 2, false}, // the status of an unrecovered panic
		{"stop", childExit, true},
	}
	for _, tt := range tests {
		for _, file := range []string{"t.trace", "t.trace.gz"} {
			t.Run(tt.mode+"/"+file, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), file)
				cmd := exec.Command(os.Args[0], "-test.run=^TestTraceChild$")
				cmd.Env = append(withoutKnobs(os.Environ()), traceChild+"="+tt.mode,
					config.EnvBackend+"=host", config.EnvTrace+"="+path)
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &out
				err := cmd.Run()
				var ee *exec.ExitError
				require.True(t, errors.As(err, &ee), "the child ends itself: %v\n%s", err, out.String())
				require.Equal(t, tt.exit, ee.ExitCode(), "child:\n%s", out.String())

				tr, err := trace.ParseFile(path)
				require.NoError(t, err)
				t.Logf("%d allocs, %d frees; cut: %v; ended: %v", tr.Allocs, tr.Frees, tr.Cut, tr.Ended)
				assert.Equal(t, tt.ended, tr.Ended)
				if tt.ended {
					assert.Equal(t, childAllocs+childLate, tr.Allocs, "StopTrace writes out the last events")
					assert.Nil(t, tr.Cut)
				} else {
					// Everything up to the last flush; the last events
					// only if a flush came before the exit.
					assert.GreaterOrEqual(t, tr.Allocs, childAllocs)
					assert.LessOrEqual(t, tr.Allocs, childAllocs+childLate)
					if filepath.Ext(file) == ".gz" {
						require.NotNil(t, tr.Cut, "a gzip stream that was never ended is cut")
						assert.Equal(t, len(tr.Events), tr.Cut.Events)
					}
				}
				replayed(t, tr)
			})
		}
	}
}

// replayed replays tr through a fresh split pool to its end.
func replayed(t *testing.T, tr *trace.Trace) {
	t.Helper()
	dev, err := host.New(host.Options{TotalMemory: 1 << 34}).Device(0)
	require.NoError(t, err)
	p, err := pool.New("split", dev, pool.Limits{})
	require.NoError(t, err)
	streams := make([]backend.Stream, tr.Streams())
	for i := range streams {
		streams[i], err = dev.NewStream()
		require.NoError(t, err)
	}
	res, err := trace.Replay(tr, p, streams)
	require.NoError(t, err)
	assert.Equal(t, len(tr.Events), res.Events)
	assert.Equal(t, tr.Allocs-tr.Frees, res.Leftover)
	require.NoError(t, p.Close())
}

func TestStopTraceWithoutTraceDoesNothing(t *testing.T) {
	c, err := Config()
	require.NoError(t, err)
	if c.Trace != "" {
		t.Skip("GOCUDA_TRACE is set for this run")
	}
	assert.NoError(t, StopTrace())
}
