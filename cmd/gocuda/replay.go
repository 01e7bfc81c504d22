package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/auto"
	"github.com/gocuda/gocuda/backend/host"
	"github.com/gocuda/gocuda/config"
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

// replayOne replays tr through a fresh pool called name on dev, on fresh
// streams, and closes both.
func replayOne(tr *trace.Trace, name string, dev backend.Device, limits pool.Limits, opt trace.Options) poolResult {
	r := poolResult{Pool: name}
	// The driver's stream-ordered pool exists only on the CUDA backend.
	if _, ok := dev.(backend.StreamOrderedMemory); name == "cuda" && !ok {
		r.Skipped = "needs the CUDA backend's stream-ordered memory; this device has none"
		return r
	}
	// Garbage from the previous replay should not be collected during
	// this one's timed loop.
	runtime.GC()
	p, err := pool.New(name, dev, limits)
	if errors.Is(err, backend.ErrNotSupported) {
		r.Skipped = err.Error()
		return r
	}
	if err != nil {
		r.Error = err.Error()
		return r
	}
	streams := make([]backend.Stream, tr.Streams())
	for i := range streams {
		if streams[i], err = dev.NewStream(); err != nil {
			r.Error = err.Error()
			break
		}
	}
	if r.Error == "" {
		res, err := trace.ReplayWithOptions(tr, p, streams, opt)
		r.fill(res)
		if err != nil {
			r.Error = err.Error()
		}
	}
	if err := p.Close(); err != nil && r.Error == "" {
		r.Error = "close: " + err.Error()
	}
	for _, s := range streams {
		if s != nil {
			_ = s.Destroy()
		}
	}
	return r
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
	Results              []poolResult       `json:"results"`
	// Recommendation is the pool to choose for this trace and why, ""
	// when no replay finished.
	Recommendation string `json:"recommendation,omitempty"`
	Recommended    string `json:"recommended,omitempty"`
}

// tieMargin: reserved/live figures within this share of the lowest are
// a tie, which speed decides. Differences that small are rounding, and
// a pool that calls the driver on every allocation (none) must not win
// on them over one that serves from its cache.
const tieMargin = 0.02

// recommend picks the pool for t among the replays that finished without
// running out of memory: the lowest peak reserved/live, ties (within
// tieMargin) going to the most events/s. It fills t.Recommended and
// t.Recommendation, which gives both figures, and the fastest pool's when
// that is another.
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
	lowest := ok[0].ReservedPerLive
	for _, r := range ok {
		lowest = min(lowest, r.ReservedPerLive)
	}
	best, fastest := -1, 0
	for i, r := range ok {
		if r.EventsPerSec > ok[fastest].EventsPerSec {
			fastest = i
		}
		if r.ReservedPerLive <= lowest*(1+tieMargin) && (best < 0 || r.EventsPerSec > ok[best].EventsPerSec) {
			best = i
		}
	}
	b := ok[best]
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s=%s: it reserves %.3f times the live bytes at its peak", config.EnvPool, b.Pool, b.ReservedPerLive)
	if len(ok) > 1 {
		if b.ReservedPerLive == lowest {
			fmt.Fprintf(&sb, " (the lowest of %d pools)", len(ok))
		} else {
			fmt.Fprintf(&sb, " (within %.0f%% of the lowest, %.3f, and the fastest of those)", 100*tieMargin, lowest)
		}
	}
	fmt.Fprintf(&sb, ", at %.2f M events/s", b.EventsPerSec/1e6)
	if f := ok[fastest]; f.Pool != b.Pool {
		fmt.Fprintf(&sb, "; %s is faster (%.2f M events/s) but reserves %.3f times the live bytes", f.Pool, f.EventsPerSec/1e6, f.ReservedPerLive)
	}
	t.Recommended, t.Recommendation = b.Pool, sb.String()
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
