package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/config"
	"github.com/gocuda/gocuda/pool"
)

// benchKinds are what "gocuda bench KIND" times; pools is the default.
var benchKinds = map[string]func(ctx context.Context, args []string, stdout, stderr io.Writer) error{
	"pools":     runBenchPools,
	"peer":      runBenchPeer,
	"allreduce": runBenchAllReduce,
	"fft":       runBenchFFT,
	"arrays":    runBenchArrays,
	"gemm":      runBenchGemm,
	"graphs":    runBenchGraphs,
}

// runBench dispatches on its first argument, a kind of benchmark; with
// none (or flags first) it times the pools, as it always has.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return runBenchPools(ctx, args, stdout, stderr)
	}
	run, ok := benchKinds[args[0]]
	if !ok {
		kinds := slices.Sorted(maps.Keys(benchKinds))
		return usageErrorf("unknown kind %q%s; the kinds are %s (pools when none is given)",
			args[0], didYouMean(args[0], kinds, ""), strings.Join(kinds, ", "))
	}
	return run(ctx, args[1:], stdout, stderr)
}

// kindUsage ends a usage error of "gocuda bench KIND" with that kind's
// help: run's own hint would name "gocuda bench --help", the pools' flags.
// Other errors, and a usage error that names a help already (the flag
// parser's), pass.
func kindUsage(kind string, err error) error {
	var ue usageError
	if !errors.As(err, &ue) || strings.Contains(ue.msg, "--help") {
		return err
	}
	return usageErrorf("%s%s", ue.msg, withHelp("", "gocuda bench "+kind+" --help", " for its flags"))
}

func runBenchPools(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench", "[pools] [flags]", "Times cached allocate+free pairs through each pool on this machine's backend:\n"+
		"one goroutine over sizes, then several goroutines each on its own stream. Each\n"+
		"cell gives the mean over every pair and the p50, p99 and p99.9 of one pair in\n"+
		"every "+strconv.Itoa(sampleEvery)+" timed alone, as the allocator anchors report them. Progress goes\n"+
		"to stderr when it is a terminal.", stdout)
	pools := fs.String("pool", "all", "pool to time, or all (comma-separated list allowed)")
	sizes := fs.String("sizes", "512B,64KiB,1MiB,16MiB,64MiB", "sizes for the one-goroutine table (forms like 512B, 64KiB, 1MiB)")
	gor := fs.String("goroutines", "1,2,4,8,16", "goroutine counts for the throughput table (1 MiB pairs)")
	dur := fs.Duration("time", 300*time.Millisecond, "how long to time each cell")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErrorf("bench takes no arguments, got %q", fs.Args())
	}
	names, err := poolNames(*pools)
	if err != nil {
		return err
	}
	var sz []uint64
	for _, s := range strings.Split(*sizes, ",") {
		n, err := parseSizeFlag("--sizes", s)
		if err != nil {
			return err
		}
		sz = append(sz, n)
	}
	var gs []int
	for _, s := range strings.Split(*gor, ",") {
		g, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || g < 1 {
			return usageErrorf("--goroutines: %q is not a positive count", s)
		}
		gs = append(gs, g)
	}
	if *dur <= 0 {
		return usageErrorf("--time %v: give a positive duration such as 300ms", *dur)
	}
	b, err := gocuda.Backend()
	if err != nil {
		return err
	}
	dev, err := b.Device(0)
	if err != nil {
		return err
	}
	prog := newProgress(stderr, *quiet)
	defer prog.done()
	cells, cell := len(names)*len(sz)+len(names)*len(gs), 0
	fmt.Fprintf(stdout, "backend %s, %s, GOMAXPROCS %d\n", b.Name(), dev.Info(), runtime.GOMAXPROCS(0))
	fmt.Fprintf(stdout, "percentiles: one pair in %d timed alone, each time including one clock read (%.0f ns here)\n\n",
		sampleEvery, float64(clockCost().Nanoseconds()))

	fmt.Fprintln(stdout, "Cached allocate+free pair, one goroutine, one stream (ns per pair)")
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "pool\tsize\tmean\tp50\tp99\tp99.9\tsamples\t")
	var skipped []string
	var usable []string
	for _, name := range names {
		var rows []string
		ok := true
		for _, s := range sz {
			if err := ctx.Err(); err != nil {
				return err
			}
			cell++
			prog.set("bench: %s, %s pairs (cell %d of %d)", name, humanize.IBytes(s), cell, cells)
			r, err := pairLatency(dev, name, s, *dur)
			if err != nil {
				skipped = append(skipped, fmt.Sprintf("%s: %v", name, err))
				ok = false
				break
			}
			rows = append(rows, fmt.Sprintf("%s\t%s\t%.0f\t%s\t", name, humanize.IBytes(s), r.meanNs(), r.percentiles()))
		}
		if ok {
			usable = append(usable, name)
			for _, row := range rows {
				fmt.Fprintln(tw, row)
			}
		} else {
			cells -= len(gs) // its throughput cells will not run
		}
	}
	prog.done()
	tw.Flush()

	fmt.Fprintln(stdout, "\nThroughput, 1 MiB pairs, each goroutine on its own stream (million pairs/s in total; ns per pair)")
	tw = tabwriter.NewWriter(stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "pool\tgoroutines\tM pairs/s\tp50\tp99\tp99.9\tsamples\t")
	for _, name := range usable {
		for _, g := range gs {
			if err := ctx.Err(); err != nil {
				return err
			}
			cell++
			prog.set("bench: %s, goroutines %d (cell %d of %d)", name, g, cell, cells)
			rate, r, err := throughput(dev, name, g, 1<<20, *dur)
			if err != nil {
				return fmt.Errorf("pool %s, %d goroutines: %w", name, g, err)
			}
			fmt.Fprintf(tw, "%s\t%d\t%.2f\t%s\t\n", name, g, rate/1e6, r.percentiles())
		}
	}
	prog.done()
	tw.Flush()
	for _, s := range skipped {
		fmt.Fprintf(stdout, "skipped %s\n", s)
	}
	return nil
}

// sampleEvery: one pair in this many is timed on its own for the
// percentiles. Reading the clock around every pair would add a clock read
// (tens of ns) to pairs that take tens of ns; one in 32 adds under 1 ns to
// the mean.
const sampleEvery = 32

// pairTimes is one cell's timing: n pairs in elapsed, and the times of
// the pairs timed alone.
type pairTimes struct {
	n       int
	elapsed time.Duration
	samples []time.Duration
}

func (r *pairTimes) meanNs() float64 { return float64(r.elapsed.Nanoseconds()) / float64(r.n) }

// percentiles is the p50, p99 and p99.9 columns and the sample count, tab
// separated, each the sample at rank (n-1)·p of the sorted samples, as the
// anchors compute them.
func (r *pairTimes) percentiles() string {
	if len(r.samples) == 0 {
		return "-\t-\t-\t0"
	}
	slices.Sort(r.samples)
	pct := func(p float64) int64 { return r.samples[int(float64(len(r.samples)-1)*p)].Nanoseconds() }
	return fmt.Sprintf("%d\t%d\t%d\t%d", pct(.5), pct(.99), pct(.999), len(r.samples))
}

// clockCost is the median time of an empty timed section: what each
// sample includes besides its pair.
func clockCost() time.Duration {
	d := make([]time.Duration, 1001)
	for i := range d {
		t0 := time.Now()
		d[i] = time.Since(t0)
	}
	slices.Sort(d)
	return d[len(d)/2]
}

// poolNames expands "all" to every registered strategy and checks each
// name of a comma-separated list, suggesting the nearest for a typo.
func poolNames(spec string) ([]string, error) {
	reg := pool.Registered()
	if len(reg) == 0 {
		return nil, errors.New("no pools are compiled into this program")
	}
	if spec == "all" || spec == "" {
		return reg, nil
	}
	var out []string
	for _, n := range strings.Split(spec, ",") {
		n = strings.TrimSpace(n)
		if !slices.Contains(reg, n) {
			return nil, usageErrorf("no pool %q%s the pools are %s, or all", n, orColon(didYouMean(n, reg, "")), strings.Join(reg, ", "))
		}
		out = append(out, n)
	}
	return out, nil
}

// orColon ends a suggestion so that a sentence can follow it.
func orColon(suggestion string) string {
	if suggestion == "" {
		return ":"
	}
	return suggestion
}

// parseSizeFlag reads the size given to a flag with the knobs' parser
// (config.ParseSize), so that every size gocuda reads means the same: "1.5"
// is refused rather than read as 1 byte.
func parseSizeFlag(flag, s string) (uint64, error) {
	n, err := config.ParseSize(s)
	if err == nil && n == 0 {
		err = errors.New("a size must be at least 1 byte")
	}
	if err != nil {
		return 0, usageErrorf("%s %q is not a size: %v; use forms like 512B, 64KiB, 1MiB, 1.5GiB", flag, strings.TrimSpace(s), err)
	}
	return n, nil
}

// pairLatency times alloc+free of size on one stream after one warm-up
// pair so that the block is cached.
func pairLatency(dev backend.Device, name string, size uint64, d time.Duration) (pairTimes, error) {
	p, err := pool.New(name, dev, pool.Limits{})
	if err != nil {
		return pairTimes{}, err
	}
	defer p.Close()
	s, err := dev.NewStream()
	if err != nil {
		return pairTimes{}, err
	}
	defer s.Destroy()
	return pairs(p, s, size, d)
}

// pairs runs alloc+free pairs on s for about d, timing one in sampleEvery
// on its own.
func pairs(p pool.Pool, s backend.Stream, size uint64, d time.Duration) (pairTimes, error) {
	b, err := p.Alloc(size, s) // warm: the pool caches it
	if err != nil {
		return pairTimes{}, err
	}
	if err := p.Free(b, s); err != nil {
		return pairTimes{}, err
	}
	const batch = 1024 // a multiple of sampleEvery
	r := pairTimes{samples: make([]time.Duration, 0, 1<<14)}
	start := time.Now()
	for {
		for i := 0; i < batch; i++ {
			var t0 time.Time
			timed := i%sampleEvery == 0
			if timed {
				t0 = time.Now()
			}
			b, err := p.Alloc(size, s)
			if err != nil {
				return pairTimes{}, err
			}
			if err := p.Free(b, s); err != nil {
				return pairTimes{}, err
			}
			if timed {
				r.samples = append(r.samples, time.Since(t0))
			}
		}
		r.n += batch
		if el := time.Since(start); el >= d {
			r.elapsed = el
			return r, s.Synchronize()
		}
	}
}

// throughput runs g goroutines, each with its own stream, for about d and
// returns total pairs per second and every goroutine's samples together.
func throughput(dev backend.Device, name string, g int, size uint64, d time.Duration) (float64, pairTimes, error) {
	p, err := pool.New(name, dev, pool.Limits{})
	if err != nil {
		return 0, pairTimes{}, err
	}
	defer p.Close()
	streams := make([]backend.Stream, g)
	for i := range streams {
		if streams[i], err = dev.NewStream(); err != nil {
			return 0, pairTimes{}, err
		}
		defer streams[i].Destroy()
	}
	var wg sync.WaitGroup
	res := make([]pairTimes, g)
	errs := make([]error, g)
	start := time.Now()
	for i := 0; i < g; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			res[i], errs[i] = pairs(p, streams[i], size, d)
		}(i)
	}
	wg.Wait()
	el := time.Since(start)
	var all pairTimes
	for i := range res {
		if errs[i] != nil {
			return 0, pairTimes{}, errs[i]
		}
		all.n += res[i].n
		all.samples = append(all.samples, res[i].samples...)
	}
	all.elapsed = el
	return float64(all.n) / el.Seconds(), all, nil
}
