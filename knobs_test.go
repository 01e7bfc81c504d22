package gocuda

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/config"
	"github.com/gocuda/gocuda/gcpressure"
)

// knobsChild names the case TestKnobsChild runs in the child process that
// TestKnobsAtFirstUse starts: the knobs are read once per process.
const knobsChild = "GOCUDA_TEST_KNOBS_CHILD"

// TestKnobsChild runs only as TestKnobsAtFirstUse's child. It prints a
// marker before the first use, so the parent can tell what was said at
// import from what was said at first use.
func TestKnobsChild(t *testing.T) {
	mode := os.Getenv(knobsChild)
	if mode == "" {
		t.Skip("runs as TestKnobsAtFirstUse's child process")
	}
	fmt.Fprintln(os.Stderr, "MARK first use")
	_, poolErr := Pool(0)
	_, backendErr := Backend()
	_, againErr := Pool(0)
	switch mode {
	case "ok":
		require.NoError(t, poolErr)
		require.NoError(t, backendErr)
		require.NoError(t, againErr)
	case "fail":
		// A knob that does not parse: every call fails with the same
		// error, and the program goes on.
		require.Error(t, backendErr)
		var e *config.Error
		require.ErrorAs(t, backendErr, &e)
		fallthrough
	case "pool-fail":
		// Limits that contradict each other on the device: the backend
		// works, every pool fails.
		require.Error(t, poolErr)
		require.Error(t, againErr)
		var e *config.Error
		require.ErrorAs(t, poolErr, &e)
		fmt.Fprintln(os.Stderr, "POOL ERROR:", poolErr)
	}
}

func TestKnobsAtFirstUse(t *testing.T) {
	tests := []struct {
		name, mode string
		env        []string
		want       []string // in the child's stderr after the marker
		once       string   // said exactly once, after the marker
	}{
		{
			name: "misspelt knob is a warning naming the nearest knob",
			mode: "ok",
			env:  []string{"GOCUDA_MEMROY_POOL=binned"},
			want: []string{"WARN gocuda: GOCUDA_MEMROY_POOL is set but gocuda has no such knob, so it has no effect; did you mean GOCUDA_MEMORY_POOL? variable=GOCUDA_MEMROY_POOL"},
			once: "GOCUDA_MEMROY_POOL is set",
		},
		{
			name: "soft share above hard bytes names both variables and values",
			mode: "pool-fail",
			env:  []string{config.EnvSoftLimit + "=80%", config.EnvHardLimit + "=1KiB"},
			want: []string{`POOL ERROR: gocuda: device 0: GOCUDA_SOFT_MEMORY_LIMIT="80%" is not valid: accepted values are a limit no larger than GOCUDA_HARD_MEMORY_LIMIT="1KiB" (on device 0, of `,
				" 80% is ", " and 1KiB is 1.0 KiB)"},
		},
		{
			name: "a value that does not parse fails every call",
			mode: "fail",
			env:  []string{config.EnvPool + "=bined"},
			want: []string{`POOL ERROR: GOCUDA_MEMORY_POOL="bined" is not valid: accepted values are cuda, binned, split, simple, none (off is none)`},
		},
		{
			name: "a zero hard limit fails every call",
			mode: "fail",
			env:  []string{config.EnvHardLimit + "=0"},
			want: []string{`POOL ERROR: GOCUDA_HARD_MEMORY_LIMIT="0" is not valid`, `for no limit write "none" or "off"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestKnobsChild$", "-test.v")
			// The soft limit is only checked against the hard limit on a
			// device: the child's backend is the host, whatever the parent's.
			cmd.Env = append(withoutKnobs(os.Environ()), knobsChild+"="+tt.mode, config.EnvBackend+"=host")
			cmd.Env = append(cmd.Env, tt.env...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			require.NoError(t, cmd.Run(), "child:\n%s\n%s", stdout.String(), stderr.String())
			require.Contains(t, stdout.String(), "--- PASS: TestKnobsChild")
			before, after, ok := strings.Cut(stderr.String(), "MARK first use\n")
			require.True(t, ok, stderr.String())
			assert.NotContains(t, before, "GOCUDA_", "nothing is said at import")
			for _, w := range tt.want {
				assert.Contains(t, after, w)
			}
			if tt.once != "" {
				assert.Equal(t, 1, strings.Count(after, tt.once), "said once:\n%s", after)
			} else {
				assert.NotContains(t, after, "no such knob")
			}
		})
	}
}

// withoutKnobs drops the GOCUDA_ variables of the test's own environment,
// so that a child sees only its case's knobs.
func withoutKnobs(environ []string) []string {
	var out []string
	for _, kv := range environ {
		if !strings.HasPrefix(kv, "GOCUDA_") {
			out = append(out, kv)
		}
	}
	return out
}

// GOCUDA_GC_PERCENT is parsed by config and passed to gcpressure as it is:
// the two packages' values must mean the same.
func TestGCPercentValuesAgreeBetweenConfigAndGCPressure(t *testing.T) {
	assert.Equal(t, gcpressure.DefaultGCPercent, config.DefaultGCPercent)
	assert.Equal(t, gcpressure.PacerOff, config.GCPercentOff)
	assert.Equal(t, gcpressure.MaxGCPercent, config.MaxGCPercent)
}
