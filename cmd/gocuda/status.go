package main

import (
	"context"
	"fmt"
	"io"

	"github.com/dustin/go-humanize"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/memprof"
)

func runStatus(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("status", "[flags]", "Prints each device's memory and pool usage (gocuda.PoolStatus): the driver's\n"+
		"effective usage, the pool's live, reserved and cached bytes, peaks, counts and\n"+
		"limits. A fresh process has no pool yet, so --warmup allocates arrays first:\n"+
		"the first --keep stay live, the others are freed as soon as they are made\n"+
		"(the pool caches them).", stdout)
	warmup := fs.Int("warmup", 0, "allocate this many arrays through cuarray on --device before printing")
	size := fs.String("size", "1MiB", "size of each warm-up array (forms like 512B, 64KiB, 1MiB, 1.5GiB; as the limit knobs read them)")
	keep := fs.Int("keep", 0, "leave this many of the warm-up arrays live (at most --warmup)")
	device := fs.Int("device", 0, "device the warm-up allocates on")
	leaks := fs.Bool("leaks", false, "trace the warm-up's allocations and print the live buffers by allocation site")
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErrorf("status takes no arguments, got %q", fs.Args())
	}
	n, err := parseSizeFlag("--size", *size)
	if err != nil {
		return err
	}
	if *warmup < 0 || *keep < 0 || *keep > *warmup {
		return usageErrorf("--warmup %d --keep %d: both must be at least 0, and --keep at most --warmup", *warmup, *keep)
	}
	if *leaks {
		memprof.Enable()
		defer memprof.Disable()
	}
	live, err := warm(ctx, *device, *warmup, *keep, int(n))
	defer func() {
		for _, a := range live {
			a.UnsafeFree()
		}
	}()
	if err != nil {
		return err
	}
	if *warmup > 0 {
		fmt.Fprintf(stdout, "Warm-up: %d arrays of %s on device %d, %d kept live\n\n", *warmup, humanize.IBytes(n), *device, *keep)
	}
	if err := gocuda.WritePoolStatus(stdout); err != nil {
		return err
	}
	if *leaks {
		fmt.Fprintln(stdout)
		return memprof.WriteReport(stdout, memprof.ReportOptions{Depth: 4})
	}
	return nil
}

// warm allocates count byte arrays of n bytes on device: the first keep
// stay live and are returned for the caller to free after printing; the
// rest are freed one by one, so that the pool serves them from its cache
// as a training loop's temporaries would be.
func warm(ctx context.Context, device, count, keep, n int) ([]*cuarray.Array[uint8], error) {
	if count == 0 {
		return nil, nil
	}
	s, err := cuarray.DefaultStream(device)
	if err != nil {
		return nil, err
	}
	var live []*cuarray.Array[uint8]
	for i := 0; i < count; i++ {
		if err := ctx.Err(); err != nil {
			return live, err
		}
		a, err := cuarray.On[uint8](s).New(n)
		if err != nil {
			return live, fmt.Errorf("warm-up array %d of %d: %w", i+1, count, err)
		}
		if i < keep {
			live = append(live, a)
		} else {
			a.UnsafeFree()
		}
	}
	return live, nil
}
