package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/host"
	"github.com/gocuda/gocuda/internal/trace"
	"github.com/gocuda/gocuda/internal/trace/tracetest"
	"github.com/gocuda/gocuda/pool"
)

// tiny is a nine-event, two-stream synthetic trace whose figures are
// worked out by hand in internal/trace's tests: peak live 4500 bytes, and
// through the test pools a peak reserved of 4608 bytes.
var tiny = filepath.Join("..", "..", "testdata", "traces", "tiny_two_streams.trace.gz")

func init() {
	// The test pools make sure every test here has pools to replay
	// through, whichever real strategies are compiled in.
	tracetest.Register()
}

func replay(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = runReplay(context.Background(), args, &out, &errOut)
	return out.String(), errOut.String(), err
}

func TestReplayPrintsATablePerTraceForEveryPool(t *testing.T) {
	out, _, err := replay(t, tiny)
	require.NoError(t, err)
	t.Log("\n" + out)

	assert.Contains(t, out, "backend ")
	assert.Contains(t, out, "tiny_two_streams ("+tiny+"): 9 events (5 allocs, 4 frees), 2 streams, peak live 4.4 KiB")
	assert.Contains(t, out, "torch: peak allocated 4.5 KiB, peak reserved 6.0 KiB, reserved/live 1.365")
	for _, col := range []string{"pool", "events", "peak live", "peak reserved", "reserved/live", "events/s", "hit rate", "driver allocs"} {
		assert.Contains(t, out, col)
	}
	for _, name := range pool.Registered() {
		assert.Contains(t, out, "\n"+name+" ", "a row for every registered pool")
	}
	// The caching test pool: 4608/4500 reserved/live, 2 hits of 5, 3
	// driver allocations.
	assert.Regexp(t, `\ntest-exact +9 +4\.4 KiB +4\.5 KiB +1\.024 +\d+\.\d\d M +40\.0% +3\n`, out)
	assert.Regexp(t, `\ntest-nocache +9 +4\.4 KiB +4\.5 KiB +1\.024 +\d+\.\d\d M +0\.0% +5\n`, out)
}

func TestReplayThroughOnePool(t *testing.T) {
	out, _, err := replay(t, "--pool", tracetest.NoCacheName, tiny)
	require.NoError(t, err)
	assert.Contains(t, out, "\n"+tracetest.NoCacheName+" ")
	assert.NotContains(t, out, "\n"+tracetest.ExactName+" ")
}

func TestReplayAcceptsFlagsAfterTraces(t *testing.T) {
	out, _, err := replay(t, tiny, "--json", "--pool="+tracetest.ExactName)
	require.NoError(t, err)
	var rep replayReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep.Traces, 1)
	require.Len(t, rep.Traces[0].Results, 1)
	assert.Equal(t, tracetest.ExactName, rep.Traces[0].Results[0].Pool)
}

func TestReplayJSONCarriesExactFigures(t *testing.T) {
	out, _, err := replay(t, "--json", "--streams", tiny, tiny)
	require.NoError(t, err)
	var rep replayReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.NotEmpty(t, rep.Backend)
	require.Len(t, rep.Traces, 2, "one entry per trace argument")
	tr := rep.Traces[0]
	assert.Equal(t, "tiny_two_streams", tr.Name)
	assert.Equal(t, "tiny_two_streams", tr.Workload)
	assert.Equal(t, 9, tr.Events)
	assert.Equal(t, 2, tr.Streams)
	assert.Equal(t, uint64(4500), tr.PeakLive)
	assert.Equal(t, uint64(6144), tr.TorchPeakReserved)
	assert.InDelta(t, 6144.0/4500, tr.TorchReservedPerLive, 1e-9)
	assert.Equal(t, []trace.StreamStat{
		{Number: 0, Allocs: 2, Frees: 2, Bytes: 2000, PeakLive: 1000},
		{Number: 5, Allocs: 3, Frees: 2, Bytes: 6500, PeakLive: 3500},
	}, tr.PerStream)
	byPool := map[string]poolResult{}
	for _, r := range tr.Results {
		byPool[r.Pool] = r
	}
	exact := byPool[tracetest.ExactName]
	assert.Equal(t, 9, exact.Events)
	assert.Equal(t, uint64(4608), exact.PeakReserved)
	assert.InDelta(t, 0.4, exact.HitRate, 1e-9)
	assert.Equal(t, uint64(3), exact.DriverAllocs)
	assert.Equal(t, 1, exact.Leftover)
	assert.Empty(t, exact.Error)
	assert.Positive(t, exact.EventsPerSec)
}

func TestReplayStreamsPrintsPerStreamBreakdown(t *testing.T) {
	out, _, err := replay(t, "--streams", "--pool", tracetest.ExactName, tiny)
	require.NoError(t, err)
	assert.Contains(t, out, "bytes allocated")
	assert.Regexp(t, `\n +5 +3 +2 +6\.3 KiB +3\.4 KiB`, out)
}

func TestReplayRejectsUnknownPoolListingTheRegisteredOnes(t *testing.T) {
	_, _, err := replay(t, "--pool", "bined", tiny)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `no pool "bined"`)
	assert.Contains(t, err.Error(), strings.Join(pool.Registered(), ", "))
}

func TestReplayReportsMissingAndMalformedFiles(t *testing.T) {
	_, _, err := replay(t, "no/such.trace.gz")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no/such.trace.gz")
	assert.ErrorIs(t, err, os.ErrNotExist)

	bad := filepath.Join(t.TempDir(), "bad.trace")
	require.NoError(t, os.WriteFile(bad, []byte("a 1 8 0\nf 1\nf 1\n"), 0o644))
	_, _, err = replay(t, tiny, bad)
	require.Error(t, err)
	assert.Contains(t, err.Error(), bad+" line 3: free of id 1, which was already freed")
}

func TestReplayUsage(t *testing.T) {
	out, errOut, err := replay(t, "--help")
	require.NoError(t, err, "asking for help is not a failure")
	assert.Empty(t, errOut, "help goes to stdout")
	assert.Contains(t, out, "Usage: gocuda replay [flags] TRACE...")
	assert.Contains(t, out, "-pool")
	assert.Contains(t, out, "-plot")
	assert.Contains(t, out, "x axis is the trace's\nevent index", "--help says what the plot's x axis is")

	out, errOut, err = replay(t)
	var ue usageError
	require.ErrorAs(t, err, &ue)
	assert.Contains(t, err.Error(), "no trace given")
	assert.Empty(t, out+errOut, "no usage dump")

	_, _, err = replay(t, "--bogus", tiny)
	require.ErrorAs(t, err, &ue)
	assert.Contains(t, err.Error(), "bogus")
}

func TestReplayHardLimitRunsOutOfMemory(t *testing.T) {
	// 4 KiB holds a1 and a2 (1024 + 3072 bytes) but not a4.
	out, _, err := replay(t, "--hard-limit", "4096", "--pool", tracetest.NoCacheName, tiny)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "1 of 1 replays failed")
	assert.Contains(t, out, "hard limit: 4.0 KiB")
	assert.Contains(t, out, "out of device memory")
	assert.Contains(t, out, "line 7")

	out, _, err = replay(t, "--hard-limit", "4096", "--continue-on-oom", "--pool", tracetest.NoCacheName, tiny)
	require.NoError(t, err)
	assert.Contains(t, out, "1 allocations ran out of memory")

	_, _, err = replay(t, "--hard-limit", "lots", tiny)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `--hard-limit "lots"`)
}

func TestReplaySkipsTheCudaPoolOffTheGPU(t *testing.T) {
	dev, err := host.New(host.Options{TotalMemory: 1 << 30}).Device(0)
	require.NoError(t, err)
	tr, err := trace.ParseFile(tiny)
	require.NoError(t, err)
	r := replayOne(tr, "cuda", dev, pool.Limits{}, trace.Options{})
	assert.Contains(t, r.Skipped, "CUDA backend")
	assert.Empty(t, r.Error, "a skip is a note, not a failure")
}

func TestReplayTakesLimitsFromTheEnvironment(t *testing.T) {
	t.Setenv("GOCUDA_HARD_MEMORY_LIMIT", "4096")
	out, _, err := replay(t, "--continue-on-oom", "--pool", tracetest.NoCacheName, tiny)
	require.NoError(t, err)
	assert.Contains(t, out, "hard limit: 4.0 KiB")
	assert.Contains(t, out, "1 allocations ran out of memory")

	// The flag replaces the environment's hard limit.
	out, _, err = replay(t, "--hard-limit", "1MiB", "--pool", tracetest.NoCacheName, tiny)
	require.NoError(t, err)
	assert.Contains(t, out, "hard limit: 1.0 MiB")
	assert.NotContains(t, out, "out of memory")

	// A soft limit above the flag's hard limit is refused up front.
	t.Setenv("GOCUDA_HARD_MEMORY_LIMIT", "")
	t.Setenv("GOCUDA_SOFT_MEMORY_LIMIT", "8KiB")
	_, _, err = replay(t, "--hard-limit", "4096", tiny)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `GOCUDA_SOFT_MEMORY_LIMIT="8KiB" (8.0 KiB of the replay device's `)
	assert.Contains(t, err.Error(), `) is above --hard-limit "4096" (4.0 KiB)`)

	// Both from the environment: the error names both variables.
	t.Setenv("GOCUDA_HARD_MEMORY_LIMIT", "0.001%")
	t.Setenv("GOCUDA_SOFT_MEMORY_LIMIT", "1%")
	_, _, err = replay(t, tiny)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `GOCUDA_SOFT_MEMORY_LIMIT="1%" is not valid: accepted values are a limit no larger than GOCUDA_HARD_MEMORY_LIMIT="0.001%"`)
}

func TestReplayRealTracesThroughEveryPool(t *testing.T) {
	if testing.Short() {
		t.Skip("replays the real traces through every pool; skipped under -short")
	}
	dir := filepath.Join("..", "..", "testdata", "traces")
	out, _, err := replay(t, filepath.Join(dir, "gpt2_train.trace.gz"), filepath.Join(dir, "resnet50_train.trace.gz"))
	require.NoError(t, err)
	t.Log("\n" + out)
	assert.Contains(t, out, "torch: peak allocated 7.2 GiB, peak reserved 7.5 GiB, reserved/live 1.049")
	assert.Contains(t, out, "torch: peak allocated 5.5 GiB, peak reserved 6.5 GiB, reserved/live 1.218")
	assert.Equal(t, 2, strings.Count(out, "recommended: GOCUDA_MEMORY_POOL="))
	assert.NotContains(t, out, "recommended: GOCUDA_MEMORY_POOL=none", "a driver call per allocation is never the advice")
}

// The recorded training traces (testdata/traces, copies of the shared
// ones), cut to a part of their bytes to stay quick: the advice keeps the
// rule, and none, which calls the driver on every allocation, is never it.
func TestRecommendationOnTheRecordedTraces(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for _, tc := range []struct {
		file  string
		bytes int
	}{{"gpt2_train.trace.gz", 40_000}, {"resnet50_train.trace.gz", 20_000}} {
		data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "traces", tc.file))
		require.NoError(t, err)
		require.Greater(t, len(data), tc.bytes)
		path := filepath.Join(dir, tc.file)
		require.NoError(t, os.WriteFile(path, data[:tc.bytes], 0o644))
		paths = append(paths, path)
	}
	out, _, err := replay(t, append([]string{"--json", "--pool", "split,binned,simple,none"}, paths...)...)
	require.NoError(t, err)
	var rep replayReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep.Traces, 2)
	for _, tr := range rep.Traces {
		t.Run(tr.Name, func(t *testing.T) {
			t.Logf("%d events: %s", tr.Events, tr.Recommendation)
			require.NotNil(t, tr.Cut)
			assert.Greater(t, tr.Events, 5000)
			assert.Equal(t, tr.Events, tr.Cut.Events)
			require.NotEmpty(t, tr.Recommended)
			assert.NotEqual(t, "none", tr.Recommended)
			checkRule(t, &tr)
			for _, r := range tr.Results {
				assert.Positive(t, r.Runs)
				if r.Pool == "none" && r.ReservedPerLive < tr.Results[0].ReservedPerLive {
					assert.Contains(t, tr.Recommendation, "; none would save ")
				}
			}
		})
	}
}

func TestReplayReadsATraceCutAtAnyByte(t *testing.T) {
	data, err := os.ReadFile(tiny)
	require.NoError(t, err)
	dir := t.TempDir()
	// Every byte is cut in internal/trace's tests; here, what the command
	// makes of it, at a spread of bytes and the last.
	for k := 1; k < len(data); k += min(7, max(1, len(data)-1-k)) {
		path := filepath.Join(dir, fmt.Sprintf("cut%d.trace.gz", k))
		require.NoError(t, os.WriteFile(path, data[:k], 0o644))
		out, _, err := replay(t, "--json", "--pool", tracetest.ExactName, path)
		require.NoError(t, err, "cut at byte %d of %d", k, len(data))
		var rep replayReport
		require.NoError(t, json.Unmarshal([]byte(out), &rep))
		tr := rep.Traces[0]
		require.NotNil(t, tr.Cut, "cut at byte %d", k)
		assert.Equal(t, tr.Events, tr.Cut.Events)
		assert.Equal(t, int64(k), tr.Cut.FileBytes)
		require.Len(t, tr.Notes, 1)
		assert.Contains(t, tr.Notes[0], ": replayed what was complete")
		assert.Equal(t, tr.Events, tr.Results[0].Events, "every complete event replayed")
	}
}

func TestReplaySaysWhereACutTraceEnds(t *testing.T) {
	dir := t.TempDir()
	recorded := "# workload w; gocuda pool split; host CPU\n# recorder gocuda pool split device 0\na 1 4096 0\na 2 512 0\nf 1\n"
	tests := []struct {
		name, text string
		notes      []string
	}{
		{"mid-record", recorded + "a 3 10", []string{
			fmt.Sprintf("the trace ends after 3 events, cut mid-record at byte %d: replayed what was complete", len(recorded)),
			"the program did not stop the recording (gocuda.StopTrace) before it ended: the events of its last 100ms or less may be missing"}},
		{"not stopped", recorded, []string{
			"the program did not stop the recording (gocuda.StopTrace) before it ended: the events of its last 100ms or less may be missing"}},
		{"stopped", recorded + "# end allocs 2 frees 1\n", nil},
		{"not recorded by gocuda", "a 1 4096 0\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_")+".trace")
			require.NoError(t, os.WriteFile(path, []byte(tt.text), 0o644))
			out, _, err := replay(t, "--pool", tracetest.ExactName, path)
			require.NoError(t, err)
			for _, n := range tt.notes {
				assert.Contains(t, out, "\n  note: "+n+"\n")
			}
			if tt.notes == nil {
				assert.NotContains(t, out, "\n  note: ")
			}
		})
	}
}

func TestPlotReplayReadsLiveAndReservedAfterEveryEvent(t *testing.T) {
	dev, err := host.New(host.Options{TotalMemory: 1 << 30}).Device(0)
	require.NoError(t, err)
	tr, err := trace.ParseFile(tiny)
	require.NoError(t, err)
	all := []float64{0, 1, 2, 3, 4, 5, 6, 7, 8}
	for _, tc := range []struct {
		name     string
		pool     string
		limits   pool.Limits
		opt      trace.Options
		x        []float64
		live     []uint64
		reserved []uint64
		ooms     []float64
		err      string
	}{
		// Worked by hand from the trace (see the testdata README) with
		// blocks rounded to 256 bytes: a1 1024, a2 3072, a3 1024 (a
		// cache hit on stream 0 for the caching pool), a4 512, a5 3072.
		{name: "caching", pool: tracetest.ExactName, x: all,
			live:     []uint64{1024, 4096, 3072, 4096, 4608, 1536, 512, 3584, 512},
			reserved: []uint64{1024, 4096, 4096, 4096, 4608, 4608, 4608, 4608, 4608}},
		{name: "no cache", pool: tracetest.NoCacheName, x: all,
			live:     []uint64{1024, 4096, 3072, 4096, 4608, 1536, 512, 3584, 512},
			reserved: []uint64{1024, 4096, 3072, 4096, 4608, 1536, 512, 3584, 512}},
		// a4 (event 4) does not fit under 4 KiB: marked, skipped, and
		// with it the free that would have come (it has none).
		{name: "out of memory, going on", pool: tracetest.NoCacheName,
			limits: pool.Limits{Hard: 4096}, opt: trace.Options{ContinueOnOOM: true},
			x:        []float64{0, 1, 2, 3, 5, 6, 7, 8},
			live:     []uint64{1024, 4096, 3072, 4096, 1024, 0, 3072, 0},
			reserved: []uint64{1024, 4096, 3072, 4096, 1024, 0, 3072, 0},
			ooms:     []float64{4}},
		{name: "out of memory, stopping", pool: tracetest.NoCacheName, limits: pool.Limits{Hard: 4096},
			x:        []float64{0, 1, 2, 3},
			live:     []uint64{1024, 4096, 3072, 4096},
			reserved: []uint64{1024, 4096, 3072, 4096},
			ooms:     []float64{4}, err: "out of device memory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := plotReplay(tr, tc.pool, dev, tc.limits, tc.opt)
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, "tiny_two_streams through "+tc.pool, c.Title)
			assert.Equal(t, "trace event", c.XLabel)
			assert.Equal(t, tc.x, c.X)
			assert.Equal(t, tc.live, c.Live)
			assert.Equal(t, tc.reserved, c.Reserved)
			var ooms []float64
			for _, m := range c.Marks {
				assert.Equal(t, pool.EventOOM, m.Kind)
				ooms = append(ooms, m.X)
			}
			assert.Equal(t, tc.ooms, ooms)
		})
	}
}

// svgTexts parses an SVG file as XML, failing on anything not well
// formed, and returns the text of its <text> elements.
func svgTexts(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	dec := xml.NewDecoder(bytes.NewReader(b))
	var texts []string
	in := false
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return texts
		}
		require.NoError(t, err, "the plot is well-formed XML")
		switch el := tok.(type) {
		case xml.StartElement:
			in = el.Name.Local == "text"
		case xml.EndElement:
			in = false
		case xml.CharData:
			if in {
				texts = append(texts, strings.TrimSpace(string(el)))
			}
		}
	}
}

func TestReplayPlotDrawsAPanelPerReplayedPool(t *testing.T) {
	svg := filepath.Join(t.TempDir(), "tiny.svg")
	out, _, err := replay(t, "--plot", svg, tiny)
	require.NoError(t, err)
	panels := 0
	texts := svgTexts(t, svg)
	for _, name := range pool.Registered() {
		title := "tiny_two_streams through " + name
		skipped := regexp.MustCompile(`\n` + regexp.QuoteMeta(name) + ` +skipped`).MatchString(out)
		if !skipped {
			assert.Contains(t, texts, title)
			panels++
		} else {
			assert.NotContains(t, texts, title, "no panel for a skipped pool")
		}
	}
	assert.Contains(t, out, fmt.Sprintf("plot: %s (%d panels: live and reserved bytes over trace events)", svg, panels))
	assert.Contains(t, texts, "trace event")
	assert.Contains(t, texts, "live")
	assert.Contains(t, texts, "reserved")
	ticks := 0
	for _, s := range texts {
		if regexp.MustCompile(`^[0-9.]+ (KiB|MiB)$`).MatchString(s) {
			ticks++
		}
	}
	assert.Positive(t, ticks, "byte ticks in binary units: %q", texts)
}

func TestReplayPlotMarksOutOfMemoryAndKeepsJSONClean(t *testing.T) {
	svg := filepath.Join(t.TempDir(), "oom.svg")
	out, _, err := replay(t, "--json", "--plot", svg, "--hard-limit", "4096", "--continue-on-oom", "--pool", tracetest.NoCacheName, tiny)
	require.NoError(t, err)
	var rep replayReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep), "--plot adds nothing to the JSON on stdout")
	texts := svgTexts(t, svg)
	assert.Contains(t, texts, "tiny_two_streams through "+tracetest.NoCacheName)
	assert.Contains(t, texts, "out of memory")
}

func TestReplayPlotRejectsWhatItCannotWrite(t *testing.T) {
	_, _, err := replay(t, "--plot", "memory.png", tiny)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `--plot "memory.png": the picture is written as SVG; give a file name ending in .svg`)

	_, _, err = replay(t, "--plot", filepath.Join(t.TempDir(), "no", "such", "dir.svg"), "--pool", tracetest.ExactName, tiny)
	require.Error(t, err)
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestReplayPlotWithOnlySkippedPools(t *testing.T) {
	b, err := replayBackend()
	require.NoError(t, err)
	svg := filepath.Join(t.TempDir(), "cuda.svg")
	_, _, err = replay(t, "--plot", svg, "--pool", "cuda", tiny)
	if b.Name() != "host" {
		// The driver's pool runs on the GPU: one panel.
		require.NoError(t, err)
		assert.Contains(t, svgTexts(t, svg), "tiny_two_streams through cuda")
		return
	}
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nothing to draw: every replay was skipped")
	assert.NoFileExists(t, svg)
}

func TestReplayOneSkipsAPoolTheDeviceDoesNotSupport(t *testing.T) {
	const name = "test-unsupported"
	if !slices.Contains(pool.Registered(), name) {
		pool.Register(name, func(backend.Device, *pool.Source) (pool.Pool, error) {
			return nil, fmt.Errorf("no such memory here: %w", backend.ErrNotSupported)
		})
	}
	dev, err := host.New(host.Options{TotalMemory: 1 << 30}).Device(0)
	require.NoError(t, err)
	tr, err := trace.ParseFile(tiny)
	require.NoError(t, err)
	r := replayOne(tr, name, dev, pool.Limits{}, trace.Options{})
	assert.Contains(t, r.Skipped, "no such memory here")
	assert.Empty(t, r.Error)
	assert.Zero(t, r.Runs)
}

func TestReplayOneKeepsTheFastestOfSeveralRuns(t *testing.T) {
	dev, err := host.New(host.Options{TotalMemory: 1 << 30}).Device(0)
	require.NoError(t, err)
	tr, err := trace.ParseFile(tiny)
	require.NoError(t, err)
	r := replayOne(tr, tracetest.ExactName, dev, pool.Limits{}, trace.Options{})
	assert.Empty(t, r.Error)
	assert.Equal(t, timedRuns, r.Runs, "a nine-event replay is far inside the time budget")
	assert.Equal(t, uint64(4608), r.PeakReserved, "the first replay's figures")
	assert.InDelta(t, float64(r.Events)/(float64(r.ElapsedNs)/1e9), r.EventsPerSec, r.EventsPerSec*1e-9)
}
