package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestUnknownCommandListsTheCommands(t *testing.T) {
	code, _, stderr := runCLI(t, "docter")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `unknown command "docter"`)
	for _, c := range []string{"doctor", "replay", "bench"} {
		assert.Contains(t, stderr, c)
	}
}

func TestNoArgumentsPrintsUsage(t *testing.T) {
	code, _, stderr := runCLI(t)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "Usage: gocuda COMMAND")
}

func TestEachCommandHasHelp(t *testing.T) {
	for _, c := range []string{"doctor", "replay", "bench"} {
		t.Run(c, func(t *testing.T) {
			code, _, stderr := runCLI(t, c, "--help")
			assert.Equal(t, 0, code)
			assert.Contains(t, strings.ToLower(stderr), "usage: gocuda "+c)
		})
	}
}

func TestDoctorReportsBackendAndKnobs(t *testing.T) {
	var out bytes.Buffer
	err := doctor(&out, []string{"GOCUDA_MEMORY_POOL=split", "GOCUDA_HARD_MEMORY_LIMIT=4GiB", "GOCUDA_MEMORY_POL=x"})
	require.NoError(t, err)
	s := out.String()
	assert.Contains(t, s, "CUDA driver")
	assert.Contains(t, s, "Backend")
	assert.Contains(t, s, "pool split")
	assert.Contains(t, s, "hard limit 4.0 GiB")
	assert.Contains(t, s, "GOCUDA_MEMORY_POL is set but gocuda has no such knob")
}

func TestDoctorFailsOnAKnobThatDoesNotParse(t *testing.T) {
	var out bytes.Buffer
	err := doctor(&out, []string{"GOCUDA_MEMORY_POOL=bined"})
	require.Error(t, err)
	assert.Contains(t, out.String(), `GOCUDA_MEMORY_POOL="bined" is not valid: accepted values are cuda, binned, split, simple, none`)
}

func TestBenchPrintsBothTables(t *testing.T) {
	code, stdout, stderr := runCLI(t, "bench", "--pool", "binned,split", "--sizes", "512B,1MiB", "--goroutines", "1,2", "--time", "20ms")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "Cached allocate+free pair")
	assert.Contains(t, stdout, "Throughput")
	assert.Contains(t, stdout, "binned")
	assert.Contains(t, stdout, "split")
}

func TestBenchRejectsUnknownPoolAndBadSizes(t *testing.T) {
	code, _, stderr := runCLI(t, "bench", "--pool", "fancy")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `no pool "fancy"`)
	code, _, stderr = runCLI(t, "bench", "--sizes", "big")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "--sizes")
}
