package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/pool"
)

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench", "[flags]", "Times cached allocate+free pairs through each pool on this machine's backend:\none goroutine over sizes, then several goroutines each on its own stream.", stdout)
	pools := fs.String("pool", "all", "pool to time, or all (comma-separated list allowed)")
	sizes := fs.String("sizes", "512B,64KiB,1MiB,16MiB,64MiB", "sizes for the one-goroutine table")
	gor := fs.String("goroutines", "1,2,4,8,16", "goroutine counts for the throughput table (1 MiB pairs)")
	dur := fs.Duration("time", 300*time.Millisecond, "how long to time each cell")
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
		n, err := humanize.ParseBytes(strings.TrimSpace(s))
		if err != nil || n == 0 {
			return usageErrorf("--sizes: %q is not a size (use forms like 512B, 1MiB)", s)
		}
		sz = append(sz, n)
	}
	var gs []int
	for _, s := range strings.Split(*gor, ",") {
		var g int
		if _, err := fmt.Sscanf(strings.TrimSpace(s), "%d", &g); err != nil || g < 1 {
			return usageErrorf("--goroutines: %q is not a positive count", s)
		}
		gs = append(gs, g)
	}
	b, err := gocuda.Backend()
	if err != nil {
		return err
	}
	dev, err := b.Device(0)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "backend %s, %s, GOMAXPROCS %d\n\n", b.Name(), dev.Info(), runtime.GOMAXPROCS(0))

	fmt.Fprintln(stdout, "Cached allocate+free pair, one goroutine, one stream (ns per pair)")
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "pool\t")
	for _, s := range sz {
		fmt.Fprintf(tw, "%s\t", humanize.IBytes(s))
	}
	fmt.Fprintln(tw)
	var skipped []string
	var usable []string
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return err
		}
		row := []string{name}
		ok := true
		for _, s := range sz {
			ns, err := pairLatency(dev, name, s, *dur)
			if err != nil {
				skipped = append(skipped, fmt.Sprintf("%s: %v", name, err))
				ok = false
				break
			}
			row = append(row, fmt.Sprintf("%.0f", ns))
		}
		if ok {
			usable = append(usable, name)
			fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
		}
	}
	tw.Flush()

	fmt.Fprintln(stdout, "\nThroughput, 1 MiB pairs, each goroutine on its own stream (million pairs/s, total)")
	tw = tabwriter.NewWriter(stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "pool\t")
	for _, g := range gs {
		fmt.Fprintf(tw, "%d\t", g)
	}
	fmt.Fprintln(tw)
	for _, name := range usable {
		row := []string{name}
		for _, g := range gs {
			if err := ctx.Err(); err != nil {
				return err
			}
			rate, err := throughput(dev, name, g, 1<<20, *dur)
			if err != nil {
				return fmt.Errorf("pool %s, %d goroutines: %w", name, g, err)
			}
			row = append(row, fmt.Sprintf("%.2f", rate/1e6))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	tw.Flush()
	for _, s := range skipped {
		fmt.Fprintf(stdout, "skipped %s\n", s)
	}
	return nil
}

// poolNames expands "all" to every registered strategy.
func poolNames(spec string) ([]string, error) {
	reg := pool.Registered()
	if spec == "all" {
		return reg, nil
	}
	var out []string
	for _, n := range strings.Split(spec, ",") {
		n = strings.TrimSpace(n)
		if i := sort.SearchStrings(reg, n); i == len(reg) || reg[i] != n {
			return nil, usageErrorf("no pool %q: the pools are %s, or all", n, strings.Join(reg, ", "))
		}
		out = append(out, n)
	}
	return out, nil
}

// pairLatency times alloc+free of size on one stream after one warm-up pair
// so that the block is cached, and returns nanoseconds per pair.
func pairLatency(dev backend.Device, name string, size uint64, d time.Duration) (float64, error) {
	p, err := pool.New(name, dev, pool.Limits{})
	if err != nil {
		return 0, err
	}
	defer p.Close()
	s, err := dev.NewStream()
	if err != nil {
		return 0, err
	}
	defer s.Destroy()
	n, el, err := pairs(p, s, size, d)
	if err != nil {
		return 0, err
	}
	return float64(el.Nanoseconds()) / float64(n), nil
}

// pairs runs alloc+free pairs on s for about d and returns how many ran.
func pairs(p pool.Pool, s backend.Stream, size uint64, d time.Duration) (int, time.Duration, error) {
	b, err := p.Alloc(size, s) // warm: the pool caches it
	if err != nil {
		return 0, 0, err
	}
	if err := p.Free(b, s); err != nil {
		return 0, 0, err
	}
	n, batch := 0, 1000
	start := time.Now()
	for {
		for i := 0; i < batch; i++ {
			b, err := p.Alloc(size, s)
			if err != nil {
				return 0, 0, err
			}
			if err := p.Free(b, s); err != nil {
				return 0, 0, err
			}
		}
		n += batch
		if el := time.Since(start); el >= d {
			return n, el, s.Synchronize()
		}
	}
}

// throughput runs g goroutines, each with its own stream, for about d and
// returns total pairs per second.
func throughput(dev backend.Device, name string, g int, size uint64, d time.Duration) (float64, error) {
	p, err := pool.New(name, dev, pool.Limits{})
	if err != nil {
		return 0, err
	}
	defer p.Close()
	streams := make([]backend.Stream, g)
	for i := range streams {
		if streams[i], err = dev.NewStream(); err != nil {
			return 0, err
		}
		defer streams[i].Destroy()
	}
	var wg sync.WaitGroup
	counts := make([]int, g)
	errs := make([]error, g)
	start := time.Now()
	for i := 0; i < g; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			counts[i], _, errs[i] = pairs(p, streams[i], size, d)
		}(i)
	}
	wg.Wait()
	el := time.Since(start)
	total := 0
	for i := range counts {
		if errs[i] != nil {
			return 0, errs[i]
		}
		total += counts[i]
	}
	return float64(total) / el.Seconds(), nil
}
