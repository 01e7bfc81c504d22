package gocuda

import (
	"bytes"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/config"
	"github.com/gocuda/gocuda/pool"
)

// cacheSome allocates and frees a block of p so that p caches it.
func cacheSome(t *testing.T, p pool.Pool) {
	t.Helper()
	dev := p.Device()
	s, err := dev.NewStream()
	require.NoError(t, err)
	b, err := p.Alloc(1<<20, s)
	require.NoError(t, err)
	require.NoError(t, p.Free(b, s))
	require.NoError(t, s.Synchronize())
}

func TestIdleTrimGivesBackOnlyAfterAWholeIdlePeriod(t *testing.T) {
	c, err := Config()
	require.NoError(t, err)
	dev, err := Device(0)
	require.NoError(t, err)
	p, err := pool.New(c.Pool, dev, pool.Limits{})
	require.NoError(t, err)
	if p.Name() == "none" {
		t.Skip("the none pool caches nothing")
	}
	const period = time.Minute
	tr := &idleTrimmer{period: period, seen: map[pool.Pool]activity{}}
	t0 := time.Now()
	cacheSome(t, p)
	require.NotZero(t, p.Stats().Reserved)

	steps := []struct {
		at      time.Duration
		use     bool // allocate and free before the check
		trimmed bool
	}{
		{0, false, false},          // first sight: starts the clock
		{period / 2, false, false}, // idle, not long enough
		{period - 1, true, false},  // used: the clock restarts
		{period + period/2, false, false},
		{2*period - 2, false, false}, // one nanosecond short
		{2*period - 1, false, true},  // a whole period idle since the use
		{3*period - 1, false, false}, // nothing cached any more
	}
	for i, st := range steps {
		if st.use {
			cacheSome(t, p)
		}
		reserved := p.Stats().Reserved
		got := tr.check(t0.Add(st.at), []pool.Pool{p})
		if st.trimmed {
			assert.Equal(t, reserved, got, "step %d", i)
			assert.Zero(t, p.Stats().Reserved, "step %d: %v", i, p.Stats())
		} else {
			assert.Zero(t, got, "step %d", i)
		}
	}
	require.NoError(t, p.Close())
}

const idleTrimChild = "GOCUDA_TEST_IDLE_TRIM_CHILD"

// TestIdleTrimKnob runs a child process with GOCUDA_IDLE_TRIM set, whose
// device pool must give its cache back on its own.
func TestIdleTrimKnob(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestIdleTrimChild$", "-test.v")
	cmd.Env = append(os.Environ(), idleTrimChild+"=1", config.EnvIdleTrim+"=100ms")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Run(), "child:\n%s", out.String())
	require.Contains(t, out.String(), "--- PASS: TestIdleTrimChild")
}

func TestIdleTrimChild(t *testing.T) {
	if os.Getenv(idleTrimChild) == "" {
		t.Skip("run by TestIdleTrimKnob")
	}
	p, err := Pool(0)
	require.NoError(t, err)
	if p.Name() == "none" {
		return
	}
	cacheSome(t, p)
	require.NotZero(t, p.Stats().Reserved)
	start := time.Now()
	for p.Stats().Reserved != 0 && time.Since(start) < 5*time.Second {
		time.Sleep(10 * time.Millisecond)
	}
	st := p.Stats()
	require.Zero(t, st.Reserved, "GOCUDA_IDLE_TRIM=100ms should have trimmed the idle pool: %v", st)
	require.GreaterOrEqual(t, time.Since(start), 100*time.Millisecond, "trimmed before a whole idle period")
	t.Logf("trimmed after %v", time.Since(start).Round(time.Millisecond))
}
