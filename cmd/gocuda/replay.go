package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/auto"
	"github.com/gocuda/gocuda/backend/host"
	"github.com/gocuda/gocuda/config"
	"github.com/gocuda/gocuda/internal/recorder"
	"github.com/gocuda/gocuda/internal/trace"
	"github.com/gocuda/gocuda/observe"
	"github.com/gocuda/gocuda/observe/timelinesvg"
	"github.com/gocuda/gocuda/pool"

	// Pools register themselves when imported; replay offers every one
	// compiled in.
	// The root package imports every strategy, which registers itself.
	_ "github.com/gocuda/gocuda"
)

const replayUsage = `Replays recorded allocation traces (a <id> <bytes> <stream> / f <id> lines,
gzip or plain text; see testdata/traces/README.md) through one memory pool or
every registered one, each on a fresh pool, on the backend GOCUDA_BACKEND
selects, and prints per trace: events, the trace's peak of live requested
bytes, the pool's peak reserved bytes, peak reserved over peak live (lower
is better: the excess is lost to rounding, fragmentation and caching),
events per second, cache hit rate and driver allocations. Block memory is
never touched.

Every pool gets the soft and hard limits of GOCUDA_SOFT_MEMORY_LIMIT and
GOCUDA_HARD_MEMORY_LIMIT (shares are of the replay device), --hard-limit
replacing the latter; GOCUDA_MEMORY_POOL does not apply, --pool picks. On the
host backend the device is 1 TiB of address space, backed only where touched.
Flags may come before or after the traces.

--plot FILE.svg draws, for each trace and pool, the pool's live bytes (its
blocks' sizes) and reserved bytes after every event, in a second, untimed
replay, so the figures above are not slowed by it. The x axis is the trace's
event index: traces record the order of events, not their times, and a
replay runs far faster than the recorded program did. Each line keeps at
most 1024 points, a point the maximum over the events it stands for, so no
peak is lost; allocations that run out of memory are marked.

A trace cut short (recorded by a program that ended without
gocuda.StopTrace, or copied while it was written) is read up to its last
complete record and replayed that far; a note says where it ends.

Events per second are the best of up to 5 replays (each on a fresh pool,
within a quarter of a second of replaying), the other figures the first's.
The recommended pool is, of the pools that replayed the whole trace at
least a third as fast as the fastest one (a time per allocation at most 3
times the fastest's), the one that reserves the least at its peak, pools
within 2% of that going to the faster; the line says what the pool that
reserves least and the fastest one would trade, where they are others.

Progress (the trace being read, the pool replaying it) goes to stderr when
it is a terminal and the run takes over a second; --quiet turns it off.`

// replayHostMemory is the host device's size for replays: larger than any
// trace's peak, and free, because the host backend maps memory without
// backing (MAP_NORESERVE) and replay never touches a block.
const replayHostMemory = 1 << 40

// replayFlags are the command's options once parsed.
type replayFlags struct {
	pool          string
	perStream     bool
	json          bool
	hardLimit     string
	continueOnOOM bool
	plot          string
	quiet         bool
	traces        []string
}

// parseReplayFlags parses the command line. --help prints the usage on
// stdout and returns flag.ErrHelp; mistakes are usage errors (exit 2)
// that name the nearest flag.
func parseReplayFlags(args []string, stdout io.Writer) (*replayFlags, error) {
	f := &replayFlags{}
	fs := newFlags("replay", "[flags] TRACE...", replayUsage, stdout)
	fs.StringVar(&f.pool, "pool", "all", "the pool to replay through, or all registered pools (comma-separated list allowed)")
	fs.BoolVar(&f.perStream, "streams", false, "also print each trace stream's allocations, bytes and peak live bytes")
	fs.BoolVar(&f.json, "json", false, "print the results as JSON instead of tables")
	fs.StringVar(&f.hardLimit, "hard-limit", "", `hard memory limit for each pool ("16GiB", "80%" of the device, "none"); default GOCUDA_HARD_MEMORY_LIMIT, else none`)
	fs.BoolVar(&f.continueOnOOM, "continue-on-oom", false, "count allocations that run out of memory and go on, instead of stopping that replay")
	fs.StringVar(&f.plot, "plot", "", "draw each replay's live and reserved bytes over the trace's events into this SVG file")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress on stderr")
	// flag stops at the first non-flag argument; parse again after each
	// trace so that "gocuda replay a.trace.gz --json" works too.
	rest := args
	for {
		if err := fs.parse(rest); err != nil {
			return nil, err
		}
		rest = fs.Args()
		if len(rest) == 0 {
			break
		}
		f.traces = append(f.traces, rest[0])
		rest = rest[1:]
	}
	if len(f.traces) == 0 {
		return nil, usageErrorf("no trace given: name one or more trace files (testdata/traces/README.md has the format)")
	}
	if f.plot != "" && !strings.EqualFold(filepath.Ext(f.plot), ".svg") {
		return nil, usageErrorf("--plot %q: the picture is written as SVG; give a file name ending in .svg", f.plot)
	}
	return f, nil
}

// runReplay is "gocuda replay": see replayUsage.
func runReplay(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parseReplayFlags(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return nil // usage was asked for and printed
	}
	if err != nil {
		return err
	}

	names, err := poolNames(f.pool)
	if err != nil {
		return err
	}
	prog := newProgress(stderr, f.quiet)
	defer prog.done()
	// Parse every trace first, so that a missing or malformed file is
	// reported before minutes of replays, not after.
	traces := make([]*trace.Trace, len(f.traces))
	for i, path := range f.traces {
		prog.set("replay: reading %s (%d of %d)", path, i+1, len(f.traces))
		if traces[i], err = trace.ParseFile(path); err != nil {
			return fmt.Errorf("%w", err)
		}
	}

	b, err := replayBackend()
	if err != nil {
		return fmt.Errorf("%w", err)
	}
	dev, err := b.Device(0)
	if err != nil {
		return fmt.Errorf("%w", err)
	}
	limits, err := replayLimits(f.hardLimit, dev.Info().TotalMemory)
	if err != nil {
		return err
	}

	report := replayReport{Backend: b.Name(), Device: dev.Info().Name, DeviceMemory: dev.Info().TotalMemory,
		SoftLimit: limits.Soft, HardLimit: limits.Hard}
	if !f.json {
		// Before the replays, so a long run shows at once where it runs.
		fmt.Fprintf(stdout, "backend %s: %s, %s\n", report.Backend, report.Device, humanize.IBytes(report.DeviceMemory))
	}
	failed := 0
	var charts []observe.Chart
	for i, tr := range traces {
		tres := newTraceReport(tr, f.traces[i], f.perStream)
		for _, name := range names {
			if err := ctx.Err(); err != nil {
				return err
			}
			opt := trace.Options{ContinueOnOOM: f.continueOnOOM}
			prog.set("replay: %s through %s (trace %d of %d)", tres.Name, name, i+1, len(traces))
			r := replayOne(tr, name, dev, limits, opt)
			if r.Error != "" {
				failed++
			}
			tres.Results = append(tres.Results, r)
			if f.plot != "" && r.Skipped == "" {
				// A failure was reported by the timed replay above; the
				// chart shows what happened up to it.
				c, _ := plotReplay(tr, name, dev, limits, opt)
				charts = append(charts, c)
			}
		}
		recommend(&tres)
		report.Traces = append(report.Traces, tres)
		if !f.json {
			prog.done()
			fmt.Fprintln(stdout)
			printTraceTable(stdout, &tres, &report)
		}
	}
	prog.done()
	if f.plot != "" {
		if err := writePlot(f.plot, charts); err != nil {
			return err
		}
		if !f.json {
			panels := "panels"
			if len(charts) == 1 {
				panels = "panel"
			}
			fmt.Fprintf(stdout, "\nplot: %s (%d %s: live and reserved bytes over trace events)\n", f.plot, len(charts), panels)
		}
	}
	if f.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(report); err != nil {
			return err
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d replays failed (each one's error is in the output)", failed, len(names)*len(traces))
	}
	return nil
}

// replayLimits are the limits every replayed pool gets: the soft and hard
// limits of the environment (GOCUDA_SOFT_MEMORY_LIMIT,
// GOCUDA_HARD_MEMORY_LIMIT; a knob is never ignored silently), with
// --hard-limit, when given, in place of the environment's hard limit.
// Shares ("80%") are of the replay device's memory.
func replayLimits(hardFlag string, total uint64) (pool.Limits, error) {
	cfg, err := config.FromEnv()
	if err != nil {
		return pool.Limits{}, fmt.Errorf("%w", err)
	}
	if hardFlag == "" {
		soft, hard, err := cfg.ResolveLimits(total, 0)
		return pool.Limits{Soft: soft, Hard: hard}, err
	}
	l, err := config.ParseLimit(hardFlag)
	if err != nil {
		return pool.Limits{}, usageErrorf("--hard-limit %q: %v (accepted: %s)", hardFlag, err, config.LimitForms)
	}
	limits := pool.Limits{Soft: cfg.SoftLimit.Resolve(total), Hard: l.Resolve(total)}
	if limits.Hard > 0 && limits.Soft > limits.Hard {
		return limits, fmt.Errorf("%s=%q (%s of the replay device's %s) is above --hard-limit %q (%s): lower the one or raise the other",
			config.EnvSoftLimit, cfg.Set[config.EnvSoftLimit], humanize.IBytes(limits.Soft), humanize.IBytes(total),
			hardFlag, humanize.IBytes(limits.Hard))
	}
	return limits, nil
}

// replayBackend is the backend GOCUDA_BACKEND selects, except that a host
// backend is replaced by one with a 1 TiB device: the default host device
// is as large as the machine's RAM, which real traces' peaks can exceed,
// while replay needs address space only.
func replayBackend() (backend.Backend, error) {
	b, err := auto.Default()
	if err != nil {
		return nil, err
	}
	if b.Name() == "host" {
		return host.New(host.Options{TotalMemory: replayHostMemory}), nil
	}
	return b, nil
}

// Timing: a replay of a real trace by a caching pool takes a few
// milliseconds, where a collection or a busy core changes its speed by
// half (single replays on the 2-core host put split at 1.0 to 3.1 times
// binned's time). Each pool replays the trace again, on a fresh pool,
// until timedRuns replays or timedBudget of replaying, and keeps the
// fastest: noise only ever slows a replay down.
const (
	timedRuns   = 5
	timedBudget = 250 * time.Millisecond
)

// replayOne replays tr through a fresh pool called name on dev, on fresh
// streams, closing both, up to timedRuns times (see timedBudget): the
// figures are the first replay's, the speed the fastest replay's.
func replayOne(tr *trace.Trace, name string, dev backend.Device, limits pool.Limits, opt trace.Options) poolResult {
	r := poolResult{Pool: name}
	// The driver's stream-ordered pool exists only on the CUDA backend.
	if _, ok := dev.(backend.StreamOrderedMemory); name == "cuda" && !ok {
		r.Skipped = "needs the CUDA backend's stream-ordered memory; this device has none"
		return r
	}
	var spent time.Duration
	for r.Runs < timedRuns && (r.Runs == 0 || spent < timedBudget) {
		res, err := replayFresh(tr, name, dev, limits, opt)
		if r.Runs == 0 {
			var np noPoolError
			if errors.As(err, &np) && errors.Is(err, backend.ErrNotSupported) {
				r.Skipped = err.Error()
				return r
			}
			r.fill(res)
			if err != nil {
				r.Error = err.Error()
				return r
			}
		} else if err != nil {
			break // the first replay's figures stand
		}
		r.Runs++
		spent += res.Elapsed
		if res.EventsPerSec > r.EventsPerSec {
			r.ElapsedNs, r.EventsPerSec = int64(res.Elapsed/time.Nanosecond), res.EventsPerSec
		}
	}
	return r
}

// noPoolError is pool.New's error: the pool could not be made, which for
// a pool this device does not support is a skip, not a failure.
type noPoolError struct{ err error }

func (e noPoolError) Error() string { return e.err.Error() }
func (e noPoolError) Unwrap() error { return e.err }

// replayFresh is one replay of tr through a fresh pool called name, on
// fresh streams, closing both; a pool that could not be made is a
// noPoolError.
func replayFresh(tr *trace.Trace, name string, dev backend.Device, limits pool.Limits, opt trace.Options) (res trace.Result, err error) {
	// Garbage from the previous replay should not be collected during
	// this one's timed loop.
	runtime.GC()
	p, err := pool.New(name, dev, limits)
	if err != nil {
		return res, noPoolError{err}
	}
	streams := make([]backend.Stream, tr.Streams())
	defer func() {
		if cerr := p.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close: %w", cerr)
		}
		for _, s := range streams {
			if s != nil {
				_ = s.Destroy()
			}
		}
	}()
	for i := range streams {
		if streams[i], err = dev.NewStream(); err != nil {
			return res, err
		}
	}
	return trace.ReplayWithOptions(tr, p, streams, opt)
}

// plotSamples is the most points a --plot line keeps: twice what the
// picture's 7-inch data area shows apart (about 500 points), few enough
// that a 35 k-event trace through every pool makes an SVG of a few hundred
// kilobytes rather than megabytes.
const plotSamples = 1024

// plotReplay replays tr once more through a fresh pool called name, untimed,
// reading the pool's live and reserved bytes after every event, and returns
// them as a chart over event indices, with out-of-memory allocations
// marked. It follows trace.ReplayWithOptions: the same streams, the same
// handling of out-of-memory allocations, leftovers freed at the end; the
// returned error is the one that stopped it, the chart holding what came
// before.
func plotReplay(tr *trace.Trace, name string, dev backend.Device, limits pool.Limits, opt trace.Options) (c observe.Chart, err error) {
	c = observe.Chart{Title: tr.Name + " through " + name, XLabel: "trace event"}
	if tr.Name == "" {
		c.Title = name
	}
	series, err := observe.NewSeries(plotSamples)
	if err != nil {
		return c, err
	}
	// Named results: the samples go into the chart on every return.
	defer func() {
		for _, smp := range series.Samples() {
			c.X = append(c.X, float64(smp.X))
			c.Live = append(c.Live, smp.Live)
			c.Reserved = append(c.Reserved, smp.Reserved)
		}
	}()
	p, err := pool.New(name, dev, limits)
	if err != nil {
		return c, err
	}
	streams := make([]backend.Stream, tr.Streams())
	blocks := make([]*pool.Block, tr.Slots)
	defer func() {
		for _, b := range blocks {
			if b != nil {
				_ = p.Free(b, b.Stream)
			}
		}
		_ = p.Close()
		for _, s := range streams {
			if s != nil {
				_ = s.Destroy()
			}
		}
	}()
	for i := range streams {
		if streams[i], err = dev.NewStream(); err != nil {
			return c, err
		}
	}
	for i := range tr.Events {
		e := &tr.Events[i]
		s := streams[e.Stream]
		if e.Op == trace.Alloc {
			b, err := p.Alloc(e.Size, s)
			if errors.Is(err, backend.ErrOutOfMemory) {
				c.Marks = append(c.Marks, observe.ChartMark{X: float64(i), Kind: pool.EventOOM})
				if opt.ContinueOnOOM {
					continue
				}
			}
			if err != nil {
				return c, err
			}
			blocks[e.Slot] = b
		} else if b := blocks[e.Slot]; b != nil {
			blocks[e.Slot] = nil
			if err := p.Free(b, s); err != nil {
				return c, err
			}
		}
		// Stats sums the pool's per-stream figures, taking each stream's
		// lock: too dear for the timed loop, which is why this replay is
		// a second one.
		st := p.Stats()
		series.Add(int64(i), st.Live, st.Reserved)
	}
	return c, nil
}

// writePlot draws the charts into path, replacing it.
func writePlot(path string, charts []observe.Chart) error {
	if len(charts) == 0 {
		return fmt.Errorf("--plot %s: nothing to draw: every replay was skipped", path)
	}
	var buf bytes.Buffer
	if err := timelinesvg.Write(&buf, "", charts...); err != nil {
		return fmt.Errorf("--plot %s: %w", path, err)
	}
	// Drawn in memory first, so a failure leaves no half-written file.
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("--plot: %w", err)
	}
	return nil
}

// replayReport is what --json prints.
type replayReport struct {
	Backend      string        `json:"backend"`
	Device       string        `json:"device"`
	DeviceMemory uint64        `json:"device_memory"`
	SoftLimit    uint64        `json:"soft_limit,omitempty"`
	HardLimit    uint64        `json:"hard_limit,omitempty"`
	Traces       []traceReport `json:"traces"`
}

type traceReport struct {
	Name                 string             `json:"name"`
	Path                 string             `json:"path"`
	Workload             string             `json:"workload,omitempty"`
	Events               int                `json:"events"`
	Allocs               int                `json:"allocs"`
	Frees                int                `json:"frees"`
	Streams              int                `json:"streams"`
	PeakLive             uint64             `json:"peak_live"`
	TorchPeakAllocated   uint64             `json:"torch_peak_allocated,omitempty"`
	TorchPeakReserved    uint64             `json:"torch_peak_reserved,omitempty"`
	TorchReservedPerLive float64            `json:"torch_reserved_per_live,omitempty"`
	PerStream            []trace.StreamStat `json:"per_stream,omitempty"`
	// Cut says where a trace cut short ends (see trace.Cut).
	Cut *trace.Cut `json:"cut,omitempty"`
	// Notes are what the reader should know about the trace itself: where
	// it was cut, a recording that was not stopped.
	Notes   []string     `json:"notes,omitempty"`
	Results []poolResult `json:"results"`
	// Recommendation is the pool to choose for this trace and why, ""
	// when no replay finished.
	Recommendation string `json:"recommendation,omitempty"`
	Recommended    string `json:"recommended,omitempty"`
}

// speedFactor is how much slower than the fastest pool a pool may replay
// a trace and still be recommended: a time per allocation at most
// speedFactor times the fastest's. It sits in the gap between two kinds
// of pool. Those that serve from a cache replay the recorded training
// traces within 2.6 times of each other (the driver's pool the slowest,
// on the H100; 2.3 on the 2-core host, best of timedRuns), and the
// project itself took split over binned at about twice binned's time per
// cached allocation, for memory. Those that call the driver on most
// allocations (none; split where the host backend must copy memory) are
// 16 to 500 times slower, and a few percent of memory never pays for
// that. Within the factor memory decides: it is what users run out of.
const speedFactor = 3

// tieMargin: reserved/live figures within this share of the lowest are
// a tie, which speed decides. Differences that small are rounding.
const tieMargin = 0.02

// recommend picks the pool for t among the replays that finished without
// running out of memory: of those within speedFactor of the fastest, the
// one with the lowest peak reserved/live, ties (within tieMargin) going to
// the faster. none is a candidate only when no other pool is within the
// factor: its cost is a driver call on every allocation, which a replay on
// the host backend does not time (loaded, a short trace put it within the
// factor there). It fills t.Recommended and t.Recommendation, one line with
// the pool's figures and the trade-off against the pool that reserves
// least and the fastest one, where those are others:
//
//	GOCUDA_MEMORY_POOL=split: 1.032x live at 0.89 M events/s; none would save 3 % of memory at 45x the time per allocation; simple is 1.29x as fast but reserves 21 % more memory
func recommend(t *traceReport) {
	var ok []poolResult
	for _, r := range t.Results {
		if r.Skipped == "" && r.Error == "" && r.OOMs == 0 && r.Events == t.Events && r.ReservedPerLive > 0 {
			ok = append(ok, r)
		}
	}
	if len(ok) == 0 {
		return
	}
	fastest, leanest := ok[0], ok[0]
	for _, r := range ok {
		if r.EventsPerSec > fastest.EventsPerSec {
			fastest = r
		}
		if r.ReservedPerLive < leanest.ReservedPerLive ||
			(r.ReservedPerLive == leanest.ReservedPerLive && r.EventsPerSec > leanest.EventsPerSec) {
			leanest = r
		}
	}
	var quick []poolResult // never empty: fastest is in it
	for _, r := range ok {
		if r.EventsPerSec*speedFactor >= fastest.EventsPerSec {
			quick = append(quick, r)
		}
	}
	if i := slices.IndexFunc(quick, func(r poolResult) bool { return r.Pool == "none" }); i >= 0 && len(quick) > 1 {
		quick = slices.Delete(quick, i, i+1)
	}
	lowest := quick[0].ReservedPerLive
	for _, r := range quick {
		lowest = min(lowest, r.ReservedPerLive)
	}
	b := quick[0]
	for _, r := range quick {
		if r.ReservedPerLive <= lowest*(1+tieMargin) && (b.ReservedPerLive > lowest*(1+tieMargin) || r.EventsPerSec > b.EventsPerSec) {
			b = r
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s=%s: %.3fx live at %.2f M events/s", config.EnvPool, b.Pool, b.ReservedPerLive, b.EventsPerSec/1e6)
	if l := leanest; l.ReservedPerLive < b.ReservedPerLive {
		fmt.Fprintf(&sb, "; %s would save %s of memory at %s the time per allocation",
			l.Pool, percent(1-l.ReservedPerLive/b.ReservedPerLive), times(b.EventsPerSec, l.EventsPerSec))
	}
	if f := fastest; f.EventsPerSec > b.EventsPerSec && f.ReservedPerLive > b.ReservedPerLive {
		fmt.Fprintf(&sb, "; %s is %s as fast but reserves %s more memory",
			f.Pool, times(f.EventsPerSec, b.EventsPerSec), percent(f.ReservedPerLive/b.ReservedPerLive-1))
	}
	t.Recommended, t.Recommendation = b.Pool, sb.String()
}

// percent writes a share as "3 %", or "0.4 %" below one percent.
func percent(x float64) string {
	if x*100 < 1 {
		return fmt.Sprintf("%.1f %%", x*100)
	}
	return fmt.Sprintf("%.0f %%", x*100)
}

// times writes a over b as "1.29x", or "45x" from ten up; "many times"
// when b is 0 (a replay too short to time).
func times(a, b float64) string {
	switch x := a / b; {
	case b == 0:
		return "many times"
	case x >= 10:
		return fmt.Sprintf("%.0fx", math.Round(x))
	default:
		return fmt.Sprintf("%.2fx", x)
	}
}

func newTraceReport(tr *trace.Trace, path string, perStream bool) traceReport {
	live, _ := trace.PeakLive(tr)
	r := traceReport{
		Name: tr.Name, Path: path, Workload: tr.Meta["workload"],
		Events: len(tr.Events), Allocs: tr.Allocs, Frees: tr.Frees, Streams: tr.Streams(),
		PeakLive:           live,
		TorchPeakAllocated: tr.TorchPeakAllocated, TorchPeakReserved: tr.TorchPeakReserved,
		TorchReservedPerLive: tr.TorchReservedPerLive(),
	}
	if perStream {
		r.PerStream = trace.StreamStats(tr)
	}
	if tr.Cut != nil {
		r.Cut = tr.Cut
		r.Notes = append(r.Notes, tr.Cut.String()+": replayed what was complete")
	}
	if tr.Meta["recorder"] == "gocuda" && !tr.Ended {
		r.Notes = append(r.Notes, fmt.Sprintf("the program did not stop the recording (gocuda.StopTrace) before it ended: "+
			"the events of its last %v or less may be missing", recorder.FlushPeriod))
	}
	return r
}

type poolResult struct {
	Pool            string  `json:"pool"`
	Skipped         string  `json:"skipped,omitempty"`
	Error           string  `json:"error,omitempty"`
	Events          int     `json:"events"`
	ElapsedNs       int64   `json:"elapsed_ns"`
	EventsPerSec    float64 `json:"events_per_sec"`
	PeakLive        uint64  `json:"peak_live"`
	PeakReserved    uint64  `json:"peak_reserved"`
	ReservedPerLive float64 `json:"reserved_per_live"`
	HitRate         float64 `json:"hit_rate"`
	DriverAllocs    uint64  `json:"driver_allocs"`
	DriverFrees     uint64  `json:"driver_frees"`
	OOMs            int     `json:"ooms,omitempty"`
	Leftover        int     `json:"leftover"`
	// Runs is how many timed replays events_per_sec is the best of.
	Runs int `json:"runs,omitempty"`
}

func (r *poolResult) fill(res trace.Result) {
	r.Events = res.Events
	r.ElapsedNs = int64(res.Elapsed / time.Nanosecond)
	r.EventsPerSec = res.EventsPerSec
	r.PeakLive = res.PeakLive
	r.PeakReserved = res.PeakReserved
	r.ReservedPerLive = res.ReservedPerLive
	r.HitRate = res.HitRate
	r.DriverAllocs, r.DriverFrees = res.DriverAllocs, res.DriverFrees
	r.OOMs = res.OOMs
	r.Leftover = res.Leftover
}

// printTraceTable prints one trace's header lines and its table of pools.
func printTraceTable(w io.Writer, t *traceReport, rep *replayReport) {
	stream := "streams"
	if t.Streams == 1 {
		stream = "stream"
	}
	fmt.Fprintf(w, "%s (%s): %d events (%d allocs, %d frees), %d %s, peak live %s\n",
		t.Name, t.Path, t.Events, t.Allocs, t.Frees, t.Streams, stream, humanize.IBytes(t.PeakLive))
	for _, n := range t.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	if t.TorchPeakReserved > 0 {
		fmt.Fprintf(w, "torch: peak allocated %s, peak reserved %s, reserved/live %.3f\n",
			humanize.IBytes(t.TorchPeakAllocated), humanize.IBytes(t.TorchPeakReserved), t.TorchReservedPerLive)
	} else {
		fmt.Fprintln(w, "torch: no figures in the trace header")
	}
	if rep.SoftLimit > 0 {
		fmt.Fprintf(w, "soft limit: %s\n", humanize.IBytes(rep.SoftLimit))
	}
	if rep.HardLimit > 0 {
		fmt.Fprintf(w, "hard limit: %s\n", humanize.IBytes(rep.HardLimit))
	}
	if len(t.PerStream) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "stream\tallocs\tfrees\tbytes allocated\tpeak live\t")
		for _, s := range t.PerStream {
			fmt.Fprintf(tw, "%d\t%d\t%d\t%s\t%s\t\n", s.Number, s.Allocs, s.Frees, humanize.IBytes(s.Bytes), humanize.IBytes(s.PeakLive))
		}
		tw.Flush()
	}

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "pool\tevents\tpeak live\tpeak reserved\treserved/live\tevents/s\thit rate\tdriver allocs")
	var notes []string
	for _, r := range t.Results {
		if r.Skipped != "" {
			// Every cell filled: a short line would end tabwriter's
			// column block and misalign the rows after it.
			fmt.Fprintf(tw, "%s\tskipped\t-\t-\t-\t-\t-\t-\n", r.Pool)
			notes = append(notes, fmt.Sprintf("%s: skipped: %s", r.Pool, r.Skipped))
			continue
		}
		if r.Events == 0 && r.Error != "" {
			fmt.Fprintf(tw, "%s\tfailed\t-\t-\t-\t-\t-\t-\n", r.Pool)
		} else {
			// Events/s always in millions, so the column compares at a
			// glance (the target for the best pool is 5 M on the host).
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%.3f\t%.2f M\t%.1f%%\t%d\n", r.Pool, r.Events,
				humanize.IBytes(r.PeakLive), humanize.IBytes(r.PeakReserved), r.ReservedPerLive,
				r.EventsPerSec/1e6, 100*r.HitRate, r.DriverAllocs)
		}
		if r.OOMs > 0 {
			notes = append(notes, fmt.Sprintf("%s: %d allocations ran out of memory", r.Pool, r.OOMs))
		}
		if r.Error != "" {
			notes = append(notes, fmt.Sprintf("%s: %s", r.Pool, r.Error))
		}
	}
	tw.Flush()
	for _, n := range notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	if t.Recommendation != "" {
		fmt.Fprintf(w, "recommended: %s\n", t.Recommendation)
	}
}
