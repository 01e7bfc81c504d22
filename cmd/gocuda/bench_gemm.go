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
	"unsafe"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/blas"
	"github.com/gocuda/gocuda/half"
)

// gemmCases are what "gocuda bench gemm" times by default, as TYPE:N (an
// n × n × n product) or TYPE:BATCHxN (a strided batch of them): the
// sizes of issue 27's goals, which bench/torch_mm.py times with torch.mm
// and torch.bmm.
const gemmCases = "bf16:8192,f16:8192,tf32:4096,f32:8192,bf16:64x512"

// gemmTypes are the TYPEs: float32 (TF32 off), float32 with TF32 on,
// float16 and bfloat16 (float32 arithmetic, C in the inputs' type).
var gemmTypes = []string{"f32", "tf32", "f16", "bf16"}

// gemmRow is one case: what the table prints and --json writes
// (bench/torch_mm.py --go-json reads it).
type gemmRow struct {
	Case  string `json:"case"`
	Type  string `json:"type"`
	Batch int    `json:"batch"`
	N     int    `json:"n"`
	Iters int    `json:"iters"`
	// Seconds is one product's (or batch's) time: the median repeat's
	// time for Iters of them and one synchronization, over Iters.
	Seconds float64 `json:"seconds"`
	TFLOPS  float64 `json:"tflops"`
}

type gemmReport struct {
	Backend string    `json:"backend"`
	Device  string    `json:"device"`
	Library string    `json:"library"`
	Repeats int       `json:"repeats"`
	Rows    []gemmRow `json:"rows"`
}

// flops is one row's floating-point operations: 2·batch·n³.
func (r *gemmRow) flops() float64 {
	return 2 * float64(r.Batch) * float64(r.N) * float64(r.N) * float64(r.N)
}

func runBenchGemm(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return kindUsage("gemm", benchGemm(ctx, args, stdout, stderr))
}

func benchGemm(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench gemm", "[flags]", "Times package blas's matrix products on device 0: for each case, --iters products\n"+
		"C = A·B of n × n matrices of ones queued back to back on one stream and one\n"+
		"synchronization, median of --repeats, after a warm-up. TYPE is f32 (TF32 off),\n"+
		"tf32 (float32 on TF32 tensor cores), f16 or bf16 (16-bit inputs and C, float32\n"+
		"arithmetic); BATCHxN is a strided batch (GemmStridedBatchedEx). TFLOP/s counts\n"+
		"2·batch·n³. Run bench/torch_mm.py --go-json on --json's file to set them beside\n"+
		"torch.mm and torch.bmm.", stdout)
	cases := fs.String("cases", gemmCases, "TYPE:N or TYPE:BATCHxN cases, comma-separated; TYPE is f32, tf32, f16 or bf16")
	iters := fs.Int("iters", 0, "products per repeat; 0 picks about 2e13 flops a repeat (3 to 2000)")
	repeats := fs.Int("repeats", 5, "repeats; the median is kept")
	jsonOut := fs.String("json", "", "also write the rows to this file as JSON")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErrorf("bench gemm takes no arguments, got %q", fs.Args())
	}
	rows, err := parseGemmCases(*cases)
	if err != nil {
		return err
	}
	if *iters < 0 || *repeats < 1 {
		return usageErrorf("--iters %d --repeats %d: give a positive count of repeats and 0 or more iterations", *iters, *repeats)
	}
	b, err := gocuda.Backend()
	if err != nil {
		return err
	}
	dev, err := b.Device(0)
	if err != nil {
		return err
	}
	rep := gemmReport{Backend: b.Name(), Device: dev.Info().Name, Library: "gonum.org/v1/gonum/blas/gonum", Repeats: *repeats}
	if b.Name() == "cuda" {
		file, err := blas.Library()
		if err != nil {
			return err
		}
		v, _ := blas.Version(dev)
		rep.Library = fmt.Sprintf("cuBLAS %d (%s)", v, file)
	}
	prog := newProgress(stderr, *quiet)
	defer prog.done()
	for i := range rows {
		if err := ctx.Err(); err != nil {
			return err
		}
		r := &rows[i]
		r.Iters = *iters
		if r.Iters == 0 {
			r.Iters = int(min(2000, max(3, 2e13/r.flops())))
		}
		prog.set("bench gemm: %s (case %d of %d)", r.Case, i+1, len(rows))
		if err := timeGemm(dev, r, *repeats); err != nil {
			return fmt.Errorf("%s: %w", r.Case, err)
		}
	}
	prog.done()
	rep.Rows = rows

	fmt.Fprintf(stdout, "backend %s, %s, %s\n", rep.Backend, dev.Info(), rep.Library)
	fmt.Fprintf(stdout, "products of ones queued back to back, one synchronization, median of %d; TFLOP/s counts 2·batch·n³\n\n", *repeats)
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "type\tbatch\tn\titers\tms\tTFLOP/s\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.4f\t%.2f\t\n", r.Type, r.Batch, r.N, r.Iters, r.Seconds*1e3, r.TFLOPS)
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

// parseGemmCases reads --cases.
func parseGemmCases(text string) ([]gemmRow, error) {
	var rows []gemmRow
	for _, c := range strings.Split(text, ",") {
		c = strings.TrimSpace(c)
		typ, size, ok := strings.Cut(c, ":")
		if !ok || !slices.Contains(gemmTypes, typ) {
			return nil, usageErrorf("--cases %q: give TYPE:N or TYPE:BATCHxN, TYPE one of %s, such as bf16:8192 or bf16:64x512",
				c, strings.Join(gemmTypes, ", "))
		}
		r := gemmRow{Case: c, Type: typ, Batch: 1}
		dims := strings.Split(size, "x")
		if len(dims) > 2 {
			return nil, usageErrorf("--cases %q: %q has more than two sizes; give N or BATCHxN", c, size)
		}
		var vals []int
		for _, d := range dims {
			n, err := strconv.Atoi(d)
			if err != nil || n < 1 || n > 1<<20 {
				return nil, usageErrorf("--cases %q: %q is not a size from 1 to %d", c, d, 1<<20)
			}
			vals = append(vals, n)
		}
		r.N = vals[len(vals)-1]
		if len(vals) == 2 {
			r.Batch = vals[0]
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// timeGemm makes r's matrices on a new stream of dev and times r's
// product.
func timeGemm(dev backend.Device, r *gemmRow, repeats int) error {
	s, err := dev.NewStream()
	if err != nil {
		return err
	}
	defer s.Destroy()
	size, one := uint64(4), uint32(0x3f800000) // float32 1
	switch r.Type {
	case "f16":
		size, one = 2, uint32(half.Float16FromFloat32(1))*0x10001
	case "bf16":
		size, one = 2, uint32(half.BFloat16FromFloat32(1))*0x10001
	}
	elems := uint64(r.Batch) * uint64(r.N) * uint64(r.N)
	var ptrs [3]backend.Ptr
	defer func() {
		_ = s.Synchronize()
		for _, p := range ptrs {
			if p != 0 {
				_ = dev.Free(p)
			}
		}
	}()
	words := (elems*size + 3) / 4 // two 16-bit ones a word; an odd count rounds up
	for i := range ptrs {
		if ptrs[i], err = dev.Alloc(4 * words); err != nil {
			return err
		}
		if err := dev.Memset32(ptrs[i], one, words, s); err != nil {
			return err
		}
	}
	// SetTF32 returns the setting it replaced, which the deferred call
	// puts back.
	if r.Type == "tf32" {
		defer blas.SetTF32(blas.SetTF32(true))
	} else if r.Type == "f32" {
		defer blas.SetTF32(blas.SetTF32(false))
	}
	n, st := r.N, r.N*r.N
	a, b, c := ptrs[0], ptrs[1], ptrs[2]
	run := func() error {
		switch {
		case r.Type == "f16" && r.Batch > 1:
			return blas.GemmStridedBatchedEx[half.Float16, half.Float16](dev, s, false, false, n, n, n, 1, a, n, st, b, n, st, 0, c, n, st, r.Batch)
		case r.Type == "f16":
			return blas.GemmEx[half.Float16, half.Float16](dev, s, false, false, n, n, n, 1, a, n, b, n, 0, c, n)
		case r.Type == "bf16" && r.Batch > 1:
			return blas.GemmStridedBatchedEx[half.BFloat16, half.BFloat16](dev, s, false, false, n, n, n, 1, a, n, st, b, n, st, 0, c, n, st, r.Batch)
		case r.Type == "bf16":
			return blas.GemmEx[half.BFloat16, half.BFloat16](dev, s, false, false, n, n, n, 1, a, n, b, n, 0, c, n)
		case r.Batch > 1:
			return blas.GemmStridedBatched[float32](dev, s, false, false, n, n, n, 1, a, n, st, b, n, st, 0, c, n, st, r.Batch)
		}
		return blas.Gemm[float32](dev, s, false, false, n, n, n, 1, a, n, b, n, 0, c, n)
	}
	// The warm-up: cuBLAS's handle and kernel choice, the clocks.
	if err := run(); err != nil {
		return err
	}
	if err := s.Synchronize(); err != nil {
		return err
	}
	if err := checkProduct(dev, s, c, r.Type, n); err != nil {
		return err
	}
	times := make([]time.Duration, repeats)
	for i := range times {
		t0 := time.Now()
		for range r.Iters {
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
	r.Seconds = times[len(times)/2].Seconds() / float64(r.Iters)
	r.TFLOPS = r.flops() / r.Seconds / 1e12
	return nil
}

// checkProduct reads C's first element, which a product of ones makes n:
// float32 sums of ones are exact, and the result is rounded once to C's
// type.
func checkProduct(dev backend.Device, s backend.Stream, c backend.Ptr, typ string, n int) error {
	var got, want float32
	switch typ {
	case "f16", "bf16":
		var h uint16
		if err := dev.CopyDtoH(unsafe.Pointer(&h), c, 2, s); err != nil {
			return err
		}
		if typ == "f16" {
			got, want = half.Float16(h).Float32(), half.Float16FromFloat32(float32(n)).Float32()
		} else {
			got, want = half.BFloat16(h).Float32(), half.BFloat16FromFloat32(float32(n)).Float32()
		}
	default:
		if err := dev.CopyDtoH(unsafe.Pointer(&got), c, 4, s); err != nil {
			return err
		}
		want = float32(n)
	}
	if got != want {
		return fmt.Errorf("the product of ones gave %v in C's first element, not %v", got, want)
	}
	return nil
}
