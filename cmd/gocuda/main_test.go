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
	for _, c := range []string{"doctor", "replay", "bench", "status"} {
		assert.Contains(t, stderr, c)
	}
}

func TestUnknownCommandSaysWhatToTypeInstead(t *testing.T) {
	for _, tc := range []struct{ typed, want string }{
		{"stauts", `unknown command "stauts"; did you mean "status"? run "gocuda --help"`},
		{"docter", `unknown command "docter"; did you mean "doctor"? run "gocuda --help"`},
		{"bnch", `unknown command "bnch"; did you mean "bench"? run "gocuda --help"`},
		{"rep", `unknown command "rep"; did you mean "replay"? run "gocuda --help"`},
		{"xyzzy", `unknown command "xyzzy"; run "gocuda --help"`},
	} {
		t.Run(tc.typed, func(t *testing.T) {
			code, _, stderr := runCLI(t, tc.typed)
			assert.Equal(t, 2, code)
			assert.Contains(t, stderr, tc.want)
		})
	}
}

func TestUnknownFlagSaysWhatToTypeInstead(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"status", "--stze", "1MiB"}, `gocuda status: unknown flag "--stze"; did you mean "--size"? run "gocuda status --help" for its flags`},
		{[]string{"status", "-warmpu", "3"}, `unknown flag "--warmpu"; did you mean "--warmup"?`},
		{[]string{"bench", "--sizs", "1MiB"}, `gocuda bench: unknown flag "--sizs"; did you mean "--sizes"? run "gocuda bench --help" for its flags`},
		{[]string{"doctor", "--verbose"}, `gocuda doctor: unknown flag "--verbose"; run "gocuda doctor --help" for its flags`},
		{[]string{"status", "--warmup", "many"}, `invalid value "many" for flag -warmup`},
		{[]string{"replay", "--pol", "split"}, `run "gocuda replay --help"`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.args...)
			assert.Equal(t, 2, code)
			assert.Contains(t, stderr, tc.want)
			assert.Empty(t, stdout)
		})
	}
}

func TestNoArgumentsPrintsUsage(t *testing.T) {
	code, _, stderr := runCLI(t)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "Usage: gocuda COMMAND")
}

func TestEachCommandHasHelp(t *testing.T) {
	for _, tc := range []struct{ cmd, flag string }{
		{"doctor", ""}, {"status", "-warmup"}, {"bench", "-sizes"}, {"replay", "-pool"},
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			for _, help := range []string{"--help", "-h"} {
				code, stdout, stderr := runCLI(t, tc.cmd, help)
				assert.Equal(t, 0, code)
				text := stdout + stderr // replay writes its help to stderr
				assert.Contains(t, strings.ToLower(text), "usage: gocuda "+tc.cmd)
				assert.Contains(t, text, tc.flag)
			}
		})
	}
	code, stdout, _ := runCLI(t, "--help")
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "status")
}

func TestStatusPrintsPoolStatusAfterWarmup(t *testing.T) {
	code, stdout, stderr := runCLI(t, "status", "--warmup", "4", "--keep", "1", "--size", "64KiB")
	require.Equal(t, 0, code, stderr)
	for _, want := range []string{
		"Warm-up: 4 arrays of 64 KiB on device 0, 1 kept live",
		"Device 0: ", "Effective memory usage: ", "Memory pool usage: ", "Memory limit: ",
	} {
		assert.Contains(t, stdout, want)
	}
	assert.NotContains(t, stdout, "Live device memory by allocation site")
}

func TestStatusWithLeaksNamesTheWarmupsAllocationSite(t *testing.T) {
	code, stdout, stderr := runCLI(t, "status", "--warmup", "3", "--keep", "2", "--size", "4KiB", "--leaks")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "Live device memory by allocation site, leak tracing on")
	// The first frame shown is the warm-up's own allocation (the package
	// is "main" in the binary, its import path in tests).
	assert.Regexp(t, `allocated at\n    \(\d+ gocuda frames above\)\n    \S+\.warm\n        \S+cmd/gocuda/status\.go:\d+\n`, stdout)
}

func TestStatusRejectsBadArguments(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--size", "big"}, `--size "big" is not a size`},
		{[]string{"--size", "0"}, `--size "0" is not a size`},
		{[]string{"--warmup", "1", "--keep", "3"}, "--keep at most --warmup"},
		{[]string{"--warmup", "-1"}, "must be at least 0"},
		{[]string{"now"}, `status takes no arguments, got ["now"]`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, stderr := runCLI(t, append([]string{"status"}, tc.args...)...)
			assert.Equal(t, 2, code)
			assert.Contains(t, stderr, tc.want)
			assert.Contains(t, stderr, `run "gocuda status --help"`)
		})
	}
}

func TestEditDistanceCountsSwapsAsOneStep(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"status", "status", 0}, {"stauts", "status", 1}, {"statu", "status", 1},
		{"sttus", "status", 1}, {"bench", "doctor", 6}, {"", "abc", 3},
	} {
		assert.Equal(t, tc.want, editDistance(tc.a, tc.b), "%q %q", tc.a, tc.b)
		assert.Equal(t, tc.want, editDistance(tc.b, tc.a), "%q %q", tc.b, tc.a)
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
