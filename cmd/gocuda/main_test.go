package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/config"
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
		{[]string{"replay", "--pol", "split"}, `gocuda replay: unknown flag "--pol"; did you mean "--pool"? run "gocuda replay --help" for its flags`},
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

func TestEveryCommandsHelpGoesToStdoutWithExitZero(t *testing.T) {
	for _, tc := range []struct{ cmd, flag string }{
		{"doctor", ""}, {"status", "-warmup"}, {"bench", "-quiet"}, {"replay", "-quiet"},
	} {
		for _, args := range [][]string{{tc.cmd, "--help"}, {tc.cmd, "-h"}, {tc.cmd, "-help"}, {"help", tc.cmd}} {
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				code, stdout, stderr := runCLI(t, args...)
				assert.Equal(t, 0, code)
				assert.Empty(t, stderr)
				assert.Contains(t, stdout, "Usage: gocuda "+tc.cmd)
				assert.Contains(t, stdout, tc.flag)
			})
		}
	}
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		code, stdout, stderr := runCLI(t, args...)
		assert.Equal(t, 0, code)
		assert.Empty(t, stderr)
		assert.Contains(t, stdout, "Usage: gocuda COMMAND")
	}
}

func TestUsageMistakesExitTwoWithOneLineAndTheHelpToRun(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"replay"}, "gocuda replay: no trace given: name one or more trace files"},
		{[]string{"replay", "--pol", "split", tiny}, `gocuda replay: unknown flag "--pol"; did you mean "--pool"?`},
		{[]string{"replay", "--pool", "bined", tiny}, `gocuda replay: no pool "bined"; did you mean "binned"? the pools are `},
		{[]string{"replay", "--hard-limit", "lots", tiny}, `gocuda replay: --hard-limit "lots": `},
		{[]string{"replay", "--plot", "x.png", tiny}, `--plot "x.png": the picture is written as SVG`},
		{[]string{"bench", "--pool", "splt"}, `gocuda bench: no pool "splt"; did you mean "split"?`},
		{[]string{"bench", "--qiet"}, `unknown flag "--qiet"; did you mean "--quiet"?`},
		{[]string{"bench", "--time", "0s"}, "--time 0s: give a positive duration"},
		{[]string{"status", "--size", "1.5"}, `gocuda status: --size "1.5" is not a size: a plain byte count must be a whole number`},
		{[]string{"doctor", "extra"}, `doctor takes no arguments, got ["extra"]`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.args...)
			assert.Equal(t, 2, code)
			assert.Empty(t, stdout)
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			require.LessOrEqual(t, len(lines), 2, "the mistake and the help to run, no usage dump:\n%s", stderr)
			assert.Contains(t, lines[0], tc.want)
			assert.Contains(t, stderr, `"gocuda `+tc.args[0]+` --help"`)
		})
	}
}

func TestAMissingTraceFileIsOneLineAndExitOne(t *testing.T) {
	code, stdout, stderr := runCLI(t, "replay", "no/such.trace.gz")
	assert.Equal(t, 1, code)
	assert.Empty(t, stdout)
	assert.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
	assert.Contains(t, stderr, "gocuda replay: ")
	assert.Contains(t, stderr, "no/such.trace.gz")
}

func TestSizesAreReadAsTheKnobsReadThem(t *testing.T) {
	for _, tc := range []struct {
		size string
		ok   string // the warm-up line when accepted
		bad  string // the error when refused
	}{
		{"1.5KiB", "arrays of 1.5 KiB", ""},
		{"2048", "arrays of 2.0 KiB", ""},
		{"1 MiB", "arrays of 1.0 MiB", ""},
		{"1.5", "", "a plain byte count must be a whole number"},
		{"0", "", "a size must be at least 1 byte"},
		{"-1KiB", "", "a size must be a positive number of bytes"},
		{"big", "", `--size "big" is not a size`},
	} {
		t.Run(tc.size, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "status", "--warmup", "1", "--size", tc.size)
			if tc.bad != "" {
				assert.Equal(t, 2, code)
				assert.Contains(t, stderr, tc.bad)
				return
			}
			require.Equal(t, 0, code, stderr)
			assert.Contains(t, stdout, tc.ok)
		})
	}
	code, _, stderr := runCLI(t, "bench", "--sizes", "512B,1.5", "--pool", "split")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `--sizes "1.5" is not a size: a plain byte count must be a whole number`)
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

func TestDoctorReportsBackendAndKnobs(t *testing.T) {
	var out bytes.Buffer
	err := doctor(&out, []string{"GOCUDA_MEMORY_POOL=split", "GOCUDA_HARD_MEMORY_LIMIT=4GiB", "GOCUDA_MEMORY_POL=x"})
	require.NoError(t, err)
	s := out.String()
	assert.Contains(t, s, "CUDA driver")
	assert.Contains(t, s, "NVRTC (compiles cuarray.NewKernel's source)\n  ")
	assert.Contains(t, s, "cuBLAS (Gemm, MatMul and Gemv on the GPU)\n  ")
	assert.Contains(t, s, "cuRAND (Rand, Randn, FillRand and FillRandn on the GPU)\n  ")
	assert.Contains(t, s, "NCCL (collectives across GPUs, package nccl)\n  ")
	if os.Getenv(config.EnvBackend) == "cuda" {
		// The GPU machines have both: a search that misses them is a bug.
		assert.Regexp(t, `cuBLAS \(Gemm, MatMul and Gemv on the GPU\)\n  \S*libcublas\.so\S*, cuBLAS \d+\.\d+\.\d+\n`, s)
		assert.Regexp(t, `cuRAND \(Rand, Randn, FillRand and FillRandn on the GPU\)\n  \S*libcurand\.so\S*, cuRAND \d+\.\d+\.\d+\n`, s)
		assert.Regexp(t, `NCCL \(collectives across GPUs, package nccl\)\n  \S*libnccl\.so\S*, NCCL 2\.\d+\.\d+\n`, s)
	}
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

func TestBenchPrintsBothTablesWithPercentiles(t *testing.T) {
	code, stdout, stderr := runCLI(t, "bench", "--pool", "binned,split", "--sizes", "512B,1MiB", "--goroutines", "1,2", "--time", "20ms")
	require.Equal(t, 0, code, stderr)
	assert.Empty(t, stderr, "no progress when stderr is not a terminal")
	assert.Contains(t, stdout, "Cached allocate+free pair")
	assert.Contains(t, stdout, "Throughput")
	assert.Regexp(t, `percentiles: one pair in 32 timed alone, each time including one clock read \(\d+ ns here\)`, stdout)
	assert.Regexp(t, `\n +pool +size +mean +p50 +p99 +p99\.9 +samples\n`, stdout)
	assert.Regexp(t, `\n +pool +goroutines +M pairs/s +p50 +p99 +p99\.9 +samples\n`, stdout)
	for _, pool := range []string{"binned", "split"} {
		for _, size := range []string{"512 B", "1.0 MiB"} {
			assert.Regexp(t, `\n +`+pool+` +`+size+` +\d+ +\d+ +\d+ +\d+ +\d+\n`, stdout, "a row per pool and size")
		}
		for _, g := range []string{"1", "2"} {
			assert.Regexp(t, `\n +`+pool+` +`+g+` +\d+\.\d\d +\d+ +\d+ +\d+ +\d+\n`, stdout, "a row per pool and goroutine count")
		}
	}
}

func TestPercentilesTakeTheRankOfTheSortedSamples(t *testing.T) {
	r := pairTimes{n: 2000, elapsed: 2000 * 3 * time.Microsecond}
	for i := 1000; i >= 1; i-- {
		r.samples = append(r.samples, time.Duration(i))
	}
	assert.Equal(t, "500\t990\t999\t1000", r.percentiles())
	assert.Equal(t, 3000.0, r.meanNs())
	assert.Equal(t, "-\t-\t-\t0", (&pairTimes{}).percentiles())
}

func TestBenchRejectsUnknownPoolAndBadSizes(t *testing.T) {
	code, _, stderr := runCLI(t, "bench", "--pool", "fancy")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `no pool "fancy"`)
	code, _, stderr = runCLI(t, "bench", "--sizes", "big")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "--sizes")
}
