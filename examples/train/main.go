package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/examples/internal/mlp"
	"github.com/gocuda/gocuda/gcpressure"
	"github.com/gocuda/gocuda/observe"
	"github.com/gocuda/gocuda/observe/timelinesvg"
)

// Config is the run's size and settings. Every field has a flag, and the
// TRAIN_<NAME> environment variable (TRAIN_EPOCHS=3) sets its default.
type Config struct {
	Epochs  int     `json:"epochs"`
	Steps   int     `json:"steps_per_epoch"` // also the number of distinct batches
	Batch   int     `json:"batch"`
	In      int     `json:"in"`
	Width   int     `json:"width"`
	Depth   int     `json:"depth"` // hidden layers
	Classes int     `json:"classes"`
	LR      float64 `json:"lr"`
	Mom     float64 `json:"momentum"`
	Seed    uint64  `json:"seed"`
	// HostHeap is the bytes of linked Go records kept live for the run
	// (-host-heap; hostheap.go says why): 0 for none.
	HostHeap uint64 `json:"host_heap_bytes"`
	// Plot, when set, is an SVG file for the memory timeline: live and
	// reserved bytes over the run, collections and out-of-memory retries
	// marked.
	Plot string `json:"-"`
	// Graph trains on the step captured once into a CUDA graph
	// (cuarray.Capture) and replayed (-graph): each step copies its batch
	// into the graph's input arrays and launches it. The losses are
	// eager's.
	Graph bool `json:"graph"`
	// BF16 runs the matrix products in bfloat16 on the tensor cores, from
	// float32 master weights (-bf16, mlp.MLP.StepBF16), as PyTorch's
	// autocast does: bench/pytorch_train.py --precision bfloat16.
	BF16 bool `json:"bf16"`
}

// defaultConfig is the H100 run: each step allocates 1.20 GiB of fresh
// arrays (README.md has the sum), so under a 4 GiB limit the garbage of
// four steps is more than the limit, and the 40 steps of a run make twelve
// times the limit in garbage.
var defaultConfig = Config{Epochs: 5, Steps: 8, Batch: 4096, In: 1024, Width: 4096, Depth: 4, Classes: 10, LR: 0.01, Mom: 0.9, Seed: 1}

// quickConfig runs in seconds on the host backend, for CI.
var quickConfig = Config{Epochs: 4, Steps: 8, Batch: 128, In: 32, Width: 64, Depth: 2, Classes: 10, LR: 0.05, Mom: 0.9, Seed: 1}

// hostConfig is the model sizes taken on the host backend when no size is
// given: the H100 model would take hours there, silent between epochs.
// About two seconds an epoch on two shared cores (measured 2026-11-24,
// 9.5 s for the run).
var hostConfig = Config{Epochs: 5, Steps: 8, Batch: 512, In: 256, Width: 512, Depth: 2, Classes: 10}

// sizeFlags are the settings that size the run; giving any of them (flag
// or TRAIN_ variable) keeps the preset's sizes on every backend.
var sizeFlags = []string{"epochs", "steps", "batch", "in", "width", "depth", "classes"}

// runOpts are the flags that shape the output, not the model.
type runOpts struct {
	json bool // the report as JSON on stdout, progress on stderr
	// quiet: no progress on stderr with -json.
	quiet bool
	// autoSize: neither -quick nor a size was given, so the host backend
	// takes hostConfig's sizes.
	autoSize bool
}

// withSizes is c with the sizes of preset.
func (c Config) withSizes(preset Config) Config {
	c.Epochs, c.Steps, c.Batch, c.In = preset.Epochs, preset.Steps, preset.Batch, preset.In
	c.Width, c.Depth, c.Classes = preset.Width, preset.Depth, preset.Classes
	return c
}

// Epoch is one epoch's figures.
type Epoch struct {
	Epoch   int     `json:"epoch"`
	Seconds float64 `json:"seconds"`
	Loss    float64 `json:"loss"` // mean over the epoch's examples
}

// Report is what the program prints, and with -json prints as JSON.
type Report struct {
	Backend string  `json:"backend"`
	Device  string  `json:"device"`
	Pool    string  `json:"pool"`
	Config  Config  `json:"config"`
	Epochs  []Epoch `json:"epochs"`
	// TrainSeconds is every epoch's time; StepMs the time per step after
	// the first epoch (its first steps pay for warm-up: cuBLAS handles,
	// module loads, the pool's first growth), or over all steps when there
	// is one epoch. bench/pytorch_train.py reports the same two.
	TrainSeconds float64 `json:"train_seconds"`
	StepMs       float64 `json:"step_ms"`
	StepBytes    int64   `json:"step_bytes"` // fresh arrays per step
	// GCEarly, GCPercent and HardLimit are the knobs as gocuda parsed
	// them (GCPercent -1: the pacer is off).
	GCEarly   bool   `json:"gc_early"`
	GCPercent int    `json:"gc_percent"`
	HardLimit uint64 `json:"hard_limit_bytes"`
	// The pressure layer's figures over the epochs (data making excluded),
	// from gcpressure.Stats.
	Collections      int     `json:"collections"`
	EarlyCollections int     `json:"early_collections"`
	CollectSeconds   float64 `json:"collect_seconds"`
	CollectShare     float64 `json:"collect_share"` // of TrainSeconds
	// WaitSeconds is how long allocations waited for collections (the
	// pacer's target, the pressure rules near the limit, the ladder).
	WaitSeconds  float64 `json:"wait_seconds"`
	OOMRetries   uint64  `json:"oom_retries"`
	OOMFailures  uint64  `json:"oom_failures"`
	PeakReserved uint64  `json:"peak_reserved_bytes"` // whole run
	// PeakLive is the most device bytes any collection of the run left
	// live (gcpressure.Stats.PeakLiveAfterGC): the live set as collections
	// sample it, a lower bound of its true peak. 0 when nothing collected.
	PeakLive uint64 `json:"peak_live_bytes"`
	// The pacer's part (GOCUDA_GC_PERCENT) over the epochs: collections,
	// the bytes the pool gave back to the driver after them, and its
	// target at the end.
	PacerCollections int    `json:"pacer_collections"`
	PacerReclaimed   uint64 `json:"pacer_reclaimed_bytes"`
	PacerTarget      uint64 `json:"pacer_target_bytes"`
}

func main() {
	cfg, opts, err := parseFlags(os.Args[1:])
	if err != nil {
		log.Fatal(err)
	}
	// Epochs are printed as they end: on stdout, or with -json on stderr
	// when it is a terminal.
	var progress io.Writer = os.Stdout
	if opts.json {
		progress = io.Discard
		if !opts.quiet && isTerminal(os.Stderr) {
			progress = os.Stderr
		}
	}
	if opts.autoSize {
		if b, err := gocuda.Backend(); err == nil && b.Name() == "host" {
			cfg = cfg.withSizes(hostConfig)
			fmt.Fprintln(progress, "host backend: a host-sized model (give -width, -batch, ... or -quick to choose)")
		}
	}
	var tl *observe.Timeline
	if cfg.Plot != "" {
		// Started before the first allocation so the plot has the whole run.
		if tl, err = gocuda.StartTimeline(observe.TimelineOptions{}); err != nil {
			log.Fatal(err)
		}
	}
	rep, err := Run(cfg, progress)
	if err != nil {
		log.Fatal(err)
	}
	if tl != nil {
		tl.Stop()
		if err := writePlot(tl, cfg); err != nil {
			log.Fatal(err)
		}
	}
	if opts.json {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			log.Fatal(err)
		}
	}
	// With GOCUDA_TRACE set, this writes out the end of the trace (a
	// program that returns from main can defer it instead).
	if err := gocuda.StopTrace(); err != nil {
		log.Fatal(err)
	}
}

// parseFlags reads the flags. -hard-limit and -gc-early set gocuda's
// environment variables, which gocuda reads on first use: that is why
// they are set here, before anything touches the device.
func parseFlags(args []string) (Config, runOpts, error) {
	var opts runOpts
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	quick := fs.Bool("quick", envBool("TRAIN_QUICK"), "a small model that runs in seconds on the host backend (CI)")
	fs.BoolVar(&opts.json, "json", false, "print the report as JSON on stdout; each epoch goes to stderr as it ends, when stderr is a terminal")
	fs.BoolVar(&opts.quiet, "quiet", false, "with -json, print no epochs on stderr")
	plot := fs.String("plot", "", "write the memory timeline (live and reserved bytes, collections marked) to this SVG file")
	hardLimit := fs.String("hard-limit", "", "sets GOCUDA_HARD_MEMORY_LIMIT (4GiB, 12.5GB, 80%); empty leaves the environment's")
	gcEarly := fs.String("gc-early", "", "sets GOCUDA_GC_EARLY (true or false); empty leaves the environment's (default on)")
	gcPercent := fs.String("gc-percent", "", "sets GOCUDA_GC_PERCENT (100, 50, off): the pacer; empty leaves the environment's (default 100)")
	hostHeap := fs.String("host-heap", os.Getenv("TRAIN_HOST_HEAP"), "keep this much of linked Go records live (256MiB, 1GB), as the rest of a Go program would: every collection marks them (TRAIN_HOST_HEAP)")
	c := defaultConfig
	fs.IntVar(&c.Epochs, "epochs", 0, "epochs (TRAIN_EPOCHS)")
	fs.IntVar(&c.Steps, "steps", 0, "steps per epoch, each on its own batch (TRAIN_STEPS)")
	fs.IntVar(&c.Batch, "batch", 0, "examples per batch (TRAIN_BATCH)")
	fs.IntVar(&c.In, "in", 0, "input features (TRAIN_IN)")
	fs.IntVar(&c.Width, "width", 0, "hidden layer width (TRAIN_WIDTH)")
	fs.IntVar(&c.Depth, "depth", 0, "hidden layers (TRAIN_DEPTH)")
	fs.IntVar(&c.Classes, "classes", 0, "classes (TRAIN_CLASSES)")
	fs.Float64Var(&c.LR, "lr", 0, "SGD learning rate (TRAIN_LR)")
	fs.Float64Var(&c.Mom, "momentum", -1, "SGD momentum (TRAIN_MOMENTUM)")
	fs.Uint64Var(&c.Seed, "seed", 0, "random seed for weights and data (TRAIN_SEED)")
	fs.BoolVar(&c.Graph, "graph", envBool("TRAIN_GRAPH"), "train on the step captured once into a graph (cuarray.Capture) and replayed: one launch a step (TRAIN_GRAPH)")
	fs.BoolVar(&c.BF16, "bf16", envBool("TRAIN_BF16"), "matrix products in bfloat16 with float32 accumulation and float32 master weights, as torch.autocast(bfloat16) (TRAIN_BF16)")
	if err := fs.Parse(args); err != nil {
		return c, opts, err
	}
	if fs.NArg() > 0 {
		return c, opts, fmt.Errorf("train: unexpected arguments %q; every setting is a flag (-h lists them)", fs.Args())
	}

	// A setting comes from its flag, else TRAIN_<NAME>, else the preset
	// (-quick's or the default).
	base := defaultConfig
	if *quick {
		base = quickConfig
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	opts.autoSize = !*quick
	for _, name := range sizeFlags {
		if set[name] || os.Getenv("TRAIN_"+upper(name)) != "" {
			opts.autoSize = false
		}
	}
	ints := []struct {
		name string
		v    *int
		def  int
	}{
		{"epochs", &c.Epochs, base.Epochs}, {"steps", &c.Steps, base.Steps}, {"batch", &c.Batch, base.Batch},
		{"in", &c.In, base.In}, {"width", &c.Width, base.Width}, {"depth", &c.Depth, base.Depth},
		{"classes", &c.Classes, base.Classes},
	}
	for _, s := range ints {
		if set[s.name] {
			continue
		}
		v, err := envInt("TRAIN_"+upper(s.name), s.def)
		if err != nil {
			return c, opts, err
		}
		*s.v = v
	}
	var err error
	if !set["lr"] {
		if c.LR, err = envFloat("TRAIN_LR", base.LR); err != nil {
			return c, opts, err
		}
	}
	if !set["momentum"] {
		if c.Mom, err = envFloat("TRAIN_MOMENTUM", base.Mom); err != nil {
			return c, opts, err
		}
	}
	if !set["seed"] {
		seed, err := envInt("TRAIN_SEED", int(base.Seed))
		if err != nil {
			return c, opts, err
		}
		c.Seed = uint64(seed)
	}
	if err := c.check(); err != nil {
		return c, opts, err
	}
	if *plot != "" && !strings.HasSuffix(*plot, ".svg") {
		return c, opts, fmt.Errorf("train: -plot %q: the timeline is drawn as SVG; give a file name ending in .svg", *plot)
	}
	c.Plot = *plot
	if *hostHeap != "" {
		n, err := humanize.ParseBytes(*hostHeap)
		if err != nil {
			return c, opts, fmt.Errorf("train: -host-heap %q is not a size; give bytes with a unit, such as 256MiB or 1GB", *hostHeap)
		}
		c.HostHeap = n
	}
	if *hardLimit != "" {
		os.Setenv("GOCUDA_HARD_MEMORY_LIMIT", *hardLimit)
	}
	if *gcEarly != "" {
		os.Setenv("GOCUDA_GC_EARLY", *gcEarly)
	}
	if *gcPercent != "" {
		os.Setenv("GOCUDA_GC_PERCENT", *gcPercent)
	}
	return c, opts, nil
}

// isTerminal reports whether f is a character device, as a terminal is.
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func (c Config) check() error {
	for _, s := range []struct {
		name string
		v    int
	}{{"epochs", c.Epochs}, {"steps", c.Steps}, {"batch", c.Batch}, {"in", c.In}, {"width", c.Width}, {"depth", c.Depth}, {"classes", c.Classes}} {
		if s.v < 1 {
			return fmt.Errorf("train: -%s is %d; it must be at least 1", s.name, s.v)
		}
	}
	if c.Classes < 2 {
		return fmt.Errorf("train: -classes is %d; a classifier needs at least 2", c.Classes)
	}
	if !(c.LR > 0) {
		return fmt.Errorf("train: -lr is %v; it must be positive", c.LR)
	}
	if !(c.Mom >= 0 && c.Mom < 1) {
		return fmt.Errorf("train: -momentum is %v; it must be in [0, 1)", c.Mom)
	}
	return nil
}

// Run trains the model of cfg on device 0, printing progress to w, and
// returns the figures.
func Run(cfg Config, w io.Writer) (*Report, error) {
	gcfg, err := gocuda.Config() // fails on a knob that does not parse
	if err != nil {
		return nil, err
	}
	b, err := gocuda.Backend()
	if err != nil {
		return nil, err
	}
	dev, err := gocuda.Device(0)
	if err != nil {
		return nil, err
	}
	p, err := gocuda.Pool(0)
	if err != nil {
		return nil, err
	}
	pressure, ok := gcpressure.For(p)
	if !ok {
		return nil, errors.New("train: device 0's pool has no pressure layer, so there are no collection figures to report")
	}
	rep := &Report{Backend: b.Name(), Device: dev.Info().Name, Pool: p.Name(), Config: cfg,
		GCEarly: gcfg.GCEarly, GCPercent: pressure.PressureStats().GCPercent, HardLimit: p.Stats().HardLimit}
	fmt.Fprintf(w, "%s %q, pool %s, hard limit %s, early GC %v, pacer %s\n", rep.Backend, rep.Device, rep.Pool, limitString(rep.HardLimit), rep.GCEarly,
		pacerString(rep.GCPercent))

	// One stream for everything: work on it runs in the order it is queued.
	// A graph is captured on a stream of its own, not a default stream.
	s, err := cuarray.DefaultStream(0)
	if cfg.Graph {
		s, err = cuarray.NewStream(0)
	}
	if err != nil {
		return nil, err
	}
	if cfg.Graph {
		defer s.Close()
	}
	f := cuarray.On[float32](s)
	r := rand.New(rand.NewPCG(cfg.Seed, 0x5eed))
	data, err := mlp.MakeData(f, r, cfg.Steps, cfg.Batch, cfg.In, cfg.Classes)
	if err != nil {
		return nil, fmt.Errorf("train: making the data: %w", err)
	}
	model, err := mlp.NewMLP(f, r, cfg.In, cfg.Width, cfg.Depth, cfg.Classes, float32(cfg.LR), float32(cfg.Mom))
	if err != nil {
		return nil, fmt.Errorf("train: making the model: %w", err)
	}
	fmt.Fprintf(w, "MLP %d → %d×%d → %d, batch %d, %d steps × %d epochs\n", cfg.In, cfg.Depth, cfg.Width, cfg.Classes, cfg.Batch, cfg.Steps, cfg.Epochs)
	step := model.Step
	if cfg.BF16 {
		step = model.StepBF16
		fmt.Fprintln(w, "matrix products in bfloat16 (float32 accumulation, float32 master weights)")
	}
	var graph *graphStep
	if cfg.Graph {
		if graph, err = newGraphStep(f, step, cfg); err != nil {
			return nil, err
		}
		defer graph.close()
		fmt.Fprintln(w, "the step is captured into a graph after the first, eager, step, and replayed")
	}
	heap := makeHostHeap(cfg.HostHeap, r)
	if cfg.HostHeap > 0 {
		fmt.Fprintf(w, "host heap: %d linked records, %s\n", heap.len(), humanize.IBytes(cfg.HostHeap))
	}

	// The data and the model are made: collections before this point are
	// not training's.
	runtime.GC()
	before := pressure.PressureStats()
	start := time.Now()
	var firstEpoch time.Duration
	for e := range cfg.Epochs {
		t0 := time.Now()
		// The per-example losses add up on the device; reading them once
		// an epoch is the only time the host waits for the GPU.
		total, err := f.Zeros(cfg.Batch)
		if graph != nil {
			total, err = graph.total, f.Fill(graph.total, 0)
		}
		if err != nil {
			return nil, err
		}
		for _, batch := range data {
			if graph != nil {
				if err := graph.step(batch); err != nil {
					return nil, fmt.Errorf("train: epoch %d: %w", e+1, err)
				}
				continue
			}
			loss, err := step(batch.X, batch.Labels)
			if err != nil {
				return nil, fmt.Errorf("train: epoch %d: %w", e+1, err)
			}
			if _, err := f.Axpy(total, 1, loss, total); err != nil {
				return nil, err
			}
		}
		sum, err := f.Sum(total) // waits for the epoch's work
		if err != nil {
			return nil, err
		}
		d := time.Since(t0)
		if e == 0 {
			firstEpoch = d
		}
		ep := Epoch{Epoch: e + 1, Seconds: d.Seconds(), Loss: float64(sum) / float64(cfg.Batch*cfg.Steps)}
		rep.Epochs = append(rep.Epochs, ep)
		fmt.Fprintf(w, "epoch %d: %7.3fs  %7.2f ms/step  loss %.4f\n", ep.Epoch, ep.Seconds,
			1e3*ep.Seconds/float64(cfg.Steps), ep.Loss)
	}
	train := time.Since(start)
	after := pressure.PressureStats()
	runtime.KeepAlive(heap) // live, and marked by every collection, until training ends

	rep.TrainSeconds = train.Seconds()
	steady, steps := train, cfg.Epochs*cfg.Steps
	if cfg.Epochs > 1 {
		steady, steps = train-firstEpoch, (cfg.Epochs-1)*cfg.Steps
	}
	rep.StepMs = 1e3 * steady.Seconds() / float64(steps)
	rep.StepBytes = model.StepBytes()
	rep.Collections = after.Collections() - before.Collections()
	rep.EarlyCollections = after.EarlyCollections - before.EarlyCollections
	collect := after.CollectTime() - before.CollectTime()
	rep.CollectSeconds = collect.Seconds()
	rep.CollectShare = collect.Seconds() / train.Seconds()
	rep.WaitSeconds = (after.Waited - before.Waited).Seconds()
	rep.OOMRetries = after.OOMRetries - before.OOMRetries
	rep.OOMFailures = after.OOMFailures - before.OOMFailures
	rep.PeakReserved = after.PeakReserved
	rep.PeakLive = after.PeakLiveAfterGC
	rep.PacerCollections = after.PacerCollections - before.PacerCollections
	rep.PacerReclaimed = after.PacerReclaimed - before.PacerReclaimed
	rep.PacerTarget = after.PacerTarget

	fmt.Fprintf(w, "trained in %.3fs, %.2f ms/step after the first epoch; each step allocates %s\n",
		rep.TrainSeconds, rep.StepMs, humanize.IBytes(uint64(rep.StepBytes)))
	fmt.Fprintf(w, "collections %d (%d pacer, %d early), %.3fs = %.2f%% of training, waited %.3fs; OOM retries %d, failures %d; peak reserved %s, peak live %s\n",
		rep.Collections, rep.PacerCollections, rep.EarlyCollections, rep.CollectSeconds, 100*rep.CollectShare, rep.WaitSeconds,
		rep.OOMRetries, rep.OOMFailures, humanize.IBytes(rep.PeakReserved), humanize.IBytes(rep.PeakLive))
	return rep, nil
}

func pacerString(percent int) string {
	if percent == gcpressure.PacerOff {
		return "off"
	}
	return strconv.Itoa(percent) + "%"
}

func limitString(b uint64) string {
	if b == 0 {
		return "none"
	}
	return humanize.IBytes(b)
}

func upper(s string) string {
	out := []byte(s)
	for i, c := range out {
		if 'a' <= c && c <= 'z' {
			out[i] = c - 'a' + 'A'
		}
	}
	return string(out)
}

func envInt(name string, def int) (int, error) {
	v, ok := os.LookupEnv(name)
	if !ok || v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("train: %s=%q is not an integer", name, v)
	}
	return n, nil
}

func envFloat(name string, def float64) (float64, error) {
	v, ok := os.LookupEnv(name)
	if !ok || v == "" {
		return def, nil
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, fmt.Errorf("train: %s=%q is not a number", name, v)
	}
	return x, nil
}

// envBool is a flag default: an unparsable value is reported by flag
// parsing of the flag itself, so here it counts as unset.
func envBool(name string) bool {
	v, err := strconv.ParseBool(os.Getenv(name))
	return err == nil && v
}

// writePlot draws the timeline into cfg.Plot.
func writePlot(tl *observe.Timeline, cfg Config) error {
	f, err := os.Create(cfg.Plot)
	if err != nil {
		return err
	}
	title := fmt.Sprintf("examples/train: batch %d, width %d, depth %d, %s=%s, %s=%s", cfg.Batch, cfg.Width, cfg.Depth,
		"GOCUDA_HARD_MEMORY_LIMIT", os.Getenv("GOCUDA_HARD_MEMORY_LIMIT"), "GOCUDA_GC_EARLY", os.Getenv("GOCUDA_GC_EARLY"))
	if err := timelinesvg.WriteTimeline(f, tl, title); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
