package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/half"
)

// arrayCase is one line of "gocuda bench arrays": the same operation, on
// the same shape, as the line of ../shared/anchors/arrays.py with the same
// name, so that the two outputs set gocuda beside torch case by case.
type arrayCase struct {
	name string
	// bytes is what arrays.py counts for the case: reads plus writes.
	bytes int64
	// setup makes the case's arrays on s and returns one call and what
	// frees the arrays.
	setup func(s *cuarray.Stream) (run func() error, free func(), err error)
}

// arrayCases are the cases, in arrays.py's order. Each reads a 4096 × 4096
// float32 x of normal numbers (as torch.randn) unless it says otherwise.
// "x > 0" compares x with an array of zeros (cuarray's comparisons take two
// arrays), reading twice the bytes arrays.py counts; the sorts give values
// (Sort) or indices (Argsort), where torch.sort gives both.
var arrayCases = []arrayCase{
	{"copy 4096x4096 f32 (read+write)", 2 * f32Square, square(func(o ops, x, y *f32s) error { return o.Copy(y, x) })},
	{"sum dim=0 (down columns) 4096x4096 f32", f32Square, reduceCase(0)},
	{"sum dim=1 (along rows) 4096x4096 f32", f32Square, reduceCase(1)},
	{"sum all 4096x4096 f32", f32Square, reduceCase(0, 1)},
	{"argmax dim=1 4096x4096 f32", f32Square, square(func(o ops, x, _ *f32s) error {
		r, err := o.ArgMaxAxes(nil, x, []int{1}, false)
		if err == nil {
			r.UnsafeFree()
		}
		return err
	})},
	{"mean dim=0 4096x4096 f32", f32Square, square(func(o ops, x, _ *f32s) error {
		r, err := o.MeanAxes(nil, x, []int{0}, false)
		if err == nil {
			r.UnsafeFree()
		}
		return err
	})},
	{"cumsum dim=1 4096x4096 f32", 2 * f32Square, square(func(o ops, x, y *f32s) error { _, err := o.Cumsum(y, x, 1); return err })},
	{"cumsum dim=0 4096x4096 f32", 2 * f32Square, square(func(o ops, x, y *f32s) error { _, err := o.Cumsum(y, x, 0); return err })},
	{"transpose copy x.t().contiguous() 4096x4096 f32", 2 * f32Square, square(func(o ops, x, y *f32s) error {
		xt, err := x.Transpose()
		if err != nil {
			return err
		}
		return o.Copy(y, xt)
	})},
	{"where(x > 0, x, 0) 4096x4096 f32", 2 * f32Square, withZero(func(o ops, x, y, zero *f32s) error {
		mask, err := o.Greater(nil, x, zero)
		if err != nil {
			return err
		}
		defer mask.UnsafeFree()
		_, err = o.Where(y, mask, x, zero)
		return err
	})},
	{"x > 0 (bool out) 4096x4096 f32", f32Square + f32Square/4, withZero(func(o ops, x, _, zero *f32s) error {
		mask, err := o.Greater(nil, x, zero)
		if err == nil {
			mask.UnsafeFree()
		}
		return err
	})},
	{"to bfloat16 4096x4096", f32Square + f32Square/2, toBFloat16},
	{"exp 4096x4096 f32", 2 * f32Square, square(func(o ops, x, y *f32s) error { _, err := o.Exp(y, x); return err })},
	{"sort 16M f32 (values)", 4 << 24, vector(1<<24, func(o ops, x, y *f32s) error { _, err := o.Sort(y, x, false); return err })},
	{"argsort 16M f32 (indices)", 4 << 24, vector(1<<24, func(o ops, x, _ *f32s) error {
		r, err := o.Argsort(nil, x, false)
		if err == nil {
			r.UnsafeFree()
		}
		return err
	})},
	{"sort per row 4096x4096 f32 (dim=1)", f32Square, square(func(o ops, x, y *f32s) error { _, err := o.Sort(y, x, false); return err })},
	{"topk k=10 per row 4096x4096 f32", f32Square, square(func(o ops, x, _ *f32s) error {
		v, i, err := o.TopK(nil, nil, x, 10, true)
		if err == nil {
			v.UnsafeFree()
			i.UnsafeFree()
		}
		return err
	})},
}

type (
	ops  = cuarray.Ops[float32]
	f32s = cuarray.Array[float32]
)

// f32Square is the bytes of arrays.py's x, a 4096 × 4096 float32 array.
const f32Square = 4096 * 4096 * 4

// toBFloat16 rounds x into a bfloat16 array made once: torch's
// x.to(torch.bfloat16), reading 4 bytes and writing 2 an element.
func toBFloat16(s *cuarray.Stream) (func() error, func(), error) {
	dst, err := cuarray.On[half.BFloat16](s).New(4096, 4096)
	if err != nil {
		return nil, nil, err
	}
	run, free, err := square(func(_ ops, x, _ *f32s) error {
		_, err := cuarray.Convert(s, dst, x)
		return err
	})(s)
	if err != nil {
		dst.UnsafeFree()
		return nil, nil, err
	}
	return run, func() { free(); dst.UnsafeFree() }, nil
}

// reduceCase sums x over axes into an array made once.
func reduceCase(axes ...int) func(s *cuarray.Stream) (func() error, func(), error) {
	return square(func(o ops, x, _ *f32s) error {
		r, err := o.SumAxes(nil, x, axes, false)
		if err == nil {
			r.UnsafeFree()
		}
		return err
	})
}

// square is a case on x, 4096 × 4096 normal numbers, and y of the same
// shape (zeros, for the result).
func square(op func(o ops, x, y *f32s) error) func(s *cuarray.Stream) (func() error, func(), error) {
	return arrays([]int{4096, 4096}, op)
}

// withZero is a square case that also gets zero, a 0-d array of 0 made
// once: the 0 of torch's x > 0 and torch.where(x > 0, x, 0), which the
// comparison and Where read as a scalar (kernels.WithScalars), so that each
// reads x and nothing else of its size. The mask is made each time, as
// torch makes it.
func withZero(op func(o ops, x, y, zero *f32s) error) func(s *cuarray.Stream) (func() error, func(), error) {
	return func(s *cuarray.Stream) (func() error, func(), error) {
		zero, err := cuarray.On[float32](s).Full(0)
		if err != nil {
			return nil, nil, err
		}
		run, free, err := square(func(o ops, x, y *f32s) error { return op(o, x, y, zero) })(s)
		if err != nil {
			zero.UnsafeFree()
			return nil, nil, err
		}
		return run, func() { free(); zero.UnsafeFree() }, nil
	}
}

// vector is a case on x, n normal numbers, and y of n zeros.
func vector(n int, op func(o ops, x, y *f32s) error) func(s *cuarray.Stream) (func() error, func(), error) {
	return arrays([]int{n}, op)
}

func arrays(shape []int, op func(o ops, x, y *f32s) error) func(s *cuarray.Stream) (func() error, func(), error) {
	return func(s *cuarray.Stream) (func() error, func(), error) {
		o := cuarray.On[float32](s)
		x, err := o.New(shape...)
		if err != nil {
			return nil, nil, err
		}
		if err := o.FillRandn(x, 0, 1); err != nil {
			x.UnsafeFree()
			return nil, nil, err
		}
		y, err := o.Zeros(shape...)
		if err != nil {
			x.UnsafeFree()
			return nil, nil, err
		}
		return func() error { return op(o, x, y) }, func() { x.UnsafeFree(); y.UnsafeFree() }, nil
	}
}

func runBenchArrays(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return kindUsage("arrays", benchArrays(ctx, args, stdout, stderr))
}

func benchArrays(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench arrays", "[flags]", "Times cuarray's operations on device 0's default stream, each case as\n"+
		"../shared/anchors/arrays.py times it for torch (same name, shape and byte count):\n"+
		"--iters calls queued back to back between two timing events on the stream\n"+
		"(the GPU's time from the first call's start to the last one's end, as torch.cuda.Event\n"+
		"times them there), median of --repeats, after a warm-up call. GB/s counts reads plus writes (1e9 bytes).", stdout)
	iters := fs.Int("iters", 50, "calls per repeat")
	repeats := fs.Int("repeats", 5, "repeats; the median is kept")
	match := fs.String("match", "", "only the cases whose name contains this")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErrorf("bench arrays takes no arguments, got %q", fs.Args())
	}
	if *iters < 1 || *repeats < 1 {
		return usageErrorf("--iters %d --repeats %d: give positive counts", *iters, *repeats)
	}
	b, err := gocuda.Backend()
	if err != nil {
		return err
	}
	s, err := cuarray.DefaultStream(0)
	if err != nil {
		return err
	}
	prog := newProgress(stderr, *quiet)
	defer prog.done()
	type row struct {
		name string
		us   float64
		gbps float64
	}
	var rows []row
	for i, c := range arrayCases {
		if !strings.Contains(c.name, *match) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		prog.set("bench arrays: %s (case %d of %d)", c.name, i+1, len(arrayCases))
		sec, err := timeCase(s, c, *iters, *repeats)
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		rows = append(rows, row{c.name, sec * 1e6, float64(c.bytes) / sec / 1e9})
	}
	prog.done()
	if len(rows) == 0 {
		return usageErrorf("--match %q matches no case", *match)
	}
	fmt.Fprintf(stdout, "backend %s, %s\n", b.Name(), s.Device().Info())
	fmt.Fprintf(stdout, "%d calls between two timing events, median of %d; GB/s (1e9 bytes): reads plus writes, as arrays.py counts them\n\n", *iters, *repeats)
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%10.1f us\t%8.1f GB/s\n", r.name, r.us, r.gbps)
	}
	return tw.Flush()
}

// timeCase returns the seconds of one call of c: iters calls between two
// timing events recorded on s, as arrays.py times torch (torch.cuda.Event
// around the loop). The host's time would add the first launch's latency
// and the synchronization's wake-up to every repeat, a microsecond a call
// of a 27 µs case at 20 calls.
func timeCase(s *cuarray.Stream, c arrayCase, iters, repeats int) (float64, error) {
	run, free, err := c.setup(s)
	if err != nil {
		return 0, err
	}
	defer free()
	if err := run(); err != nil { // the warm-up: module load, plans, pool
		return 0, err
	}
	if err := s.Synchronize(); err != nil {
		return 0, err
	}
	var ev [2]backend.Event
	for i := range ev {
		if ev[i], err = s.Device().NewEvent(true); err != nil {
			return 0, err
		}
		defer ev[i].Destroy()
	}
	times := make([]time.Duration, repeats)
	for i := range times {
		if err := ev[0].Record(s.Backend()); err != nil {
			return 0, err
		}
		for range iters {
			if err := run(); err != nil {
				return 0, err
			}
		}
		if err := ev[1].Record(s.Backend()); err != nil {
			return 0, err
		}
		if err := ev[1].Synchronize(); err != nil {
			return 0, err
		}
		if times[i], err = ev[1].Elapsed(ev[0]); err != nil {
			return 0, err
		}
	}
	slices.Sort(times)
	return times[len(times)/2].Seconds() / float64(iters), nil
}
