package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/cufft"
)

// fftCases are what "gocuda bench fft" times by default, as
// OP:SHAPE: cufft's BenchmarkTransforms and bench/torch_fft.py time the
// same (the shape is the real side's for rfft and irfft).
const fftCases = "fft:1048576,fft:1024x1024,ifft:1048576,fft2:4096x4096,rfft:16777216,irfft:16777216"

var fftOps = []string{"fft", "ifft", "fft2", "rfft", "irfft"}

// fftRow is one case: what the table prints and --json writes
// (bench/torch_fft.py --go-json reads it).
type fftRow struct {
	Op    string `json:"op"`
	Shape []int  `json:"shape"`
	// Bytes is one read of the input and one write of the output.
	Bytes int64 `json:"bytes"`
	// Seconds is one transform's time: the median repeat's time for
	// Iters transforms and one synchronization, over Iters.
	Seconds float64 `json:"seconds"`
	GBps    float64 `json:"GBps"`
}

type fftReport struct {
	Backend string   `json:"backend"`
	Device  string   `json:"device"`
	Library string   `json:"library"`
	Iters   int      `json:"iters"`
	Repeats int      `json:"repeats"`
	Rows    []fftRow `json:"rows"`
}

func runBenchFFT(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return kindUsage("fft", benchFFT(ctx, args, stdout, stderr))
}

func benchFFT(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench fft", "[flags]", "Times package cufft's transforms on device 0's default stream: for each case,\n"+
		"--iters transforms queued back to back and one synchronization, median of\n"+
		"--repeats, after a warm-up that makes the plan. GB/s counts one read of the input\n"+
		"and one write of the output (1e9 bytes). Run bench/torch_fft.py --go-json on\n"+
		"--json's file to set them beside torch.fft.", stdout)
	cases := fs.String("cases", fftCases, "OP:SHAPE cases, comma-separated; OP is fft, ifft, fft2, rfft or irfft, SHAPE like 1024x1024")
	iters := fs.Int("iters", 20, "transforms per repeat")
	repeats := fs.Int("repeats", 5, "repeats; the median is kept")
	jsonOut := fs.String("json", "", "also write the rows to this file as JSON")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErrorf("bench fft takes no arguments, got %q", fs.Args())
	}
	rows, err := parseFFTCases(*cases)
	if err != nil {
		return err
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
	rep := fftReport{Backend: b.Name(), Device: s.Device().Info().Name, Library: "gonum.org/v1/gonum/dsp/fourier",
		Iters: *iters, Repeats: *repeats}
	if b.Name() == "cuda" {
		file, err := cufft.Library()
		if err != nil {
			return err
		}
		v, _ := cufft.Version()
		rep.Library = fmt.Sprintf("cuFFT %d (%s)", v, file)
	}
	prog := newProgress(stderr, *quiet)
	defer prog.done()
	for i := range rows {
		if err := ctx.Err(); err != nil {
			return err
		}
		r := &rows[i]
		prog.set("bench fft: %s %s (case %d of %d)", r.Op, shapeText(r.Shape), i+1, len(rows))
		if err := timeFFT(s, r, *iters, *repeats); err != nil {
			return fmt.Errorf("%s %s: %w", r.Op, shapeText(r.Shape), err)
		}
	}
	prog.done()
	rep.Rows = rows

	fmt.Fprintf(stdout, "backend %s, %s, %s\n", rep.Backend, s.Device().Info(), rep.Library)
	fmt.Fprintf(stdout, "%d transforms then one synchronization, median of %d; GB/s (1e9 bytes): one read of the input, one write of the output\n\n",
		*iters, *repeats)
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "op\tshape\tµs\tGB/s\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%.1f\t\n", r.Op, shapeText(r.Shape), r.Seconds*1e6, r.GBps)
	}
	tw.Flush()
	if *jsonOut != "" {
		buf, err := json.MarshalIndent(rep, "", " ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(*jsonOut, append(buf, '\n'), 0o644); err != nil {
			return fmt.Errorf("--json: %w", err)
		}
	}
	return nil
}

// parseFFTCases reads --cases.
func parseFFTCases(text string) ([]fftRow, error) {
	var rows []fftRow
	for _, c := range strings.Split(text, ",") {
		c = strings.TrimSpace(c)
		op, shape, ok := strings.Cut(c, ":")
		if !ok || !slices.Contains(fftOps, op) {
			return nil, usageErrorf("--cases %q: give OP:SHAPE, OP one of %s, SHAPE like 1024x1024", c, strings.Join(fftOps, ", "))
		}
		var dims []int
		for _, d := range strings.Split(shape, "x") {
			n, err := strconv.Atoi(d)
			if err != nil || n < 1 {
				return nil, usageErrorf("--cases %q: %q is not a positive size", c, d)
			}
			dims = append(dims, n)
		}
		if op == "fft2" && len(dims) < 2 {
			return nil, usageErrorf("--cases %q: fft2 transforms the last two dimensions; give at least two, such as 4096x4096", c)
		}
		rows = append(rows, fftRow{Op: op, Shape: dims})
	}
	return rows, nil
}

func shapeText(shape []int) string {
	s := make([]string, len(shape))
	for i, d := range shape {
		s[i] = strconv.Itoa(d)
	}
	return strings.Join(s, "x")
}

// timeFFT makes r's arrays on s and times its transform.
func timeFFT(s *cuarray.Stream, r *fftRow, iters, repeats int) error {
	c := func(shape []int) (*cuarray.Array[complex64], error) { return cuarray.On[complex64](s).Zeros(shape...) }
	f := func(shape []int) (*cuarray.Array[float32], error) { return cuarray.On[float32](s).Zeros(shape...) }
	half := slices.Clone(r.Shape)
	half[len(half)-1] = half[len(half)-1]/2 + 1
	n, nh := int64(1), int64(1)
	for i := range r.Shape {
		n, nh = n*int64(r.Shape[i]), nh*int64(half[i])
	}
	var run func() error
	var free func()
	switch r.Op {
	case "fft", "ifft", "fft2":
		x, err := c(r.Shape)
		if err != nil {
			return err
		}
		y, err := c(r.Shape)
		if err != nil {
			x.UnsafeFree()
			return err
		}
		op := map[string]func(*cuarray.Stream, *cuarray.Array[complex64], *cuarray.Array[complex64]) error{
			"fft": cufft.FFT, "ifft": cufft.IFFT, "fft2": cufft.FFT2}[r.Op]
		run, free, r.Bytes = func() error { return op(s, y, x) }, func() { x.UnsafeFree(); y.UnsafeFree() }, 16*n
	case "rfft":
		x, err := f(r.Shape)
		if err != nil {
			return err
		}
		y, err := c(half)
		if err != nil {
			x.UnsafeFree()
			return err
		}
		run, free, r.Bytes = func() error { return cufft.RFFT(s, y, x) }, func() { x.UnsafeFree(); y.UnsafeFree() }, 4*n+8*nh
	case "irfft":
		x, err := c(half)
		if err != nil {
			return err
		}
		y, err := f(r.Shape)
		if err != nil {
			x.UnsafeFree()
			return err
		}
		run, free, r.Bytes = func() error { return cufft.IRFFT(s, y, x) }, func() { x.UnsafeFree(); y.UnsafeFree() }, 8*nh+4*n
	}
	defer free()
	// The warm-up makes the plan and puts the work area in the pool.
	if err := run(); err != nil {
		return err
	}
	if err := s.Synchronize(); err != nil {
		return err
	}
	times := make([]time.Duration, repeats)
	for i := range times {
		t0 := time.Now()
		for range iters {
			if err := run(); err != nil {
				return err
			}
		}
		if err := s.Synchronize(); err != nil {
			return err
		}
		times[i] = time.Since(t0)
	}
	slices.Sort(times)
	r.Seconds = times[len(times)/2].Seconds() / float64(iters)
	r.GBps = float64(r.Bytes) / r.Seconds / 1e9
	return nil
}
