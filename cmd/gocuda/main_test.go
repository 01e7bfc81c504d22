package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

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

// A flag is echoed as it was typed ("-x" stays "-x"), with the nearest
// flag written the same way.
func TestUnknownFlagSaysWhatToTypeInstead(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"status", "--stze", "1MiB"}, `gocuda status: unknown flag "--stze"; did you mean "--size"? run "gocuda status --help" for its flags`},
		{[]string{"status", "-warmpu", "3"}, `gocuda status: unknown flag "-warmpu"; did you mean "-warmup"? run "gocuda status --help" for its flags`},
		{[]string{"status", "-x"}, `gocuda status: unknown flag "-x"; run "gocuda status --help" for its flags`},
		{[]string{"status", "--x"}, `gocuda status: unknown flag "--x"; run "gocuda status --help" for its flags`},
		{[]string{"status", "--warmup", "2", "-x=1"}, `gocuda status: unknown flag "-x"; run "gocuda status --help" for its flags`},
		{[]string{"status", "--size", "-x", "--x"}, `gocuda status: unknown flag "--x"; run "gocuda status --help" for its flags`},
		{[]string{"bench", "--sizs", "1MiB"}, `gocuda bench: unknown flag "--sizs"; did you mean "--sizes"? run "gocuda bench --help" for its flags`},
		{[]string{"doctor", "--verbos"}, `gocuda doctor: unknown flag "--verbos"; did you mean "--verbose"? run "gocuda doctor --help" for its flags`},
		{[]string{"version", "-v"}, `gocuda version: unknown flag "-v"; run "gocuda version --help" for its flags`},
		{[]string{"replay", "--pol", "split"}, `gocuda replay: unknown flag "--pol"; did you mean "--pool"? run "gocuda replay --help" for its flags`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.args...)
			assert.Equal(t, 2, code)
			assert.Equal(t, tc.want+"\n", stderr)
			assert.Empty(t, stdout)
		})
	}
}

// A refused value is told in plain words naming the forms accepted, never
// in the parser's ("parse error", strconv's, time's).
func TestFlagValuesAreRefusedInPlainWords(t *testing.T) {
	const sizes = "use forms like 512B, 64KiB, 1MiB, 1.5GiB"
	const durations = "is not a duration: use forms like 300ms, 2s or 1m30s"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"status", "--warmup", "many"}, `gocuda status: --warmup "many" is not a whole number; run "gocuda status --help" for its flags`},
		{[]string{"status", "-keep=1.5"}, `gocuda status: -keep "1.5" is not a whole number; run "gocuda status --help" for its flags`},
		{[]string{"status", "--warmup", "99999999999999999999"}, `gocuda status: --warmup "99999999999999999999" is out of range; run "gocuda status --help" for its flags`},
		{[]string{"status", "--leaks=maybe"}, `gocuda status: --leaks "maybe" is not true or false; run "gocuda status --help" for its flags`},
		{[]string{"status", "--size"}, `gocuda status: --size needs a value; run "gocuda status --help" for its flags`},
		{[]string{"status", "---size", "1"}, `gocuda status: "---size" is not a flag: a flag is -name or --name; run "gocuda status --help" for its flags`},
		{[]string{"status", "--size=abc"}, `gocuda status: --size "abc" is not a size: a size starts with a number; ` + sizes + "\n" + `run "gocuda status --help" for its flags and arguments`},
		{[]string{"status", "--size", "4 parsecs"}, `gocuda status: --size "4 parsecs" is not a size: unknown unit "parsecs": the units are B, KiB, MiB, GiB, TiB, PiB, EiB, kB, MB, GB, TB, PB, EB; ` + sizes + "\n" + `run "gocuda status --help" for its flags and arguments`},
		{[]string{"status", "--size", "1.2.3MiB"}, `gocuda status: --size "1.2.3MiB" is not a size: "1.2.3" is not a number; ` + sizes + "\n" + `run "gocuda status --help" for its flags and arguments`},
		{[]string{"bench", "--time=abc"}, `gocuda bench: --time "abc" ` + durations + `; run "gocuda bench --help" for its flags`},
		{[]string{"bench", "-time", "5"}, `gocuda bench: -time "5" ` + durations + `; run "gocuda bench --help" for its flags`},
		{[]string{"bench", "--time", "-1s"}, `gocuda bench: --time -1s: give a positive duration such as 300ms` + "\n" + `run "gocuda bench --help" for its flags and arguments`},
		{[]string{"bench", "--sizes", "1MiB,lots"}, `gocuda bench: --sizes "lots" is not a size: a size starts with a number; ` + sizes + "\n" + `run "gocuda bench --help" for its flags and arguments`},
		{[]string{"launch", "--grace", "soon", "x"}, `gocuda launch: --grace "soon" ` + durations + `; run "gocuda launch --help" for its flags`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.args...)
			assert.Equal(t, 2, code)
			assert.Empty(t, stdout)
			assert.Equal(t, tc.want+"\n", stderr)
			for _, internal := range []string{"strconv", "time:", "parse error", "invalid syntax", "invalid value", "flag provided"} {
				assert.NotContains(t, stderr, internal)
			}
		})
	}
}

func TestTypedFlagIsTheFlagAsWritten(t *testing.T) {
	for _, tc := range []struct {
		read []string
		name string
		want string
	}{
		{[]string{"-x"}, "x", "-x"},
		{[]string{"--x=1"}, "x", "--x"},
		{[]string{"--size", "-x", "--x"}, "x", "--x"},
		{[]string{"---x"}, "x", "--x"}, // not a flag's spelling: the usual form
		{nil, "x", "--x"},
	} {
		assert.Equal(t, tc.want, typedFlag(tc.read, tc.name), "%q", tc.read)
	}
}

func TestNoArgumentsPrintsUsage(t *testing.T) {
	code, _, stderr := runCLI(t)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "Usage: gocuda COMMAND")
}

func TestEveryCommandsHelpGoesToStdoutWithExitZero(t *testing.T) {
	for _, tc := range []struct{ cmd, flag string }{
		{"doctor", "-verbose"}, {"status", "-warmup"}, {"bench", "-quiet"}, {"replay", "-quiet"}, {"version", ""},
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
		{[]string{"version", "now"}, `gocuda version: version takes no arguments, got ["now"]`},
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
