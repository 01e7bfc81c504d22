package main

import (
	"fmt"
	"io"
	"log"
	"math"
	"os"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/rtc"
)

// clampScaleSrc is a fused clamp and scale: one pass over memory, not three.
const clampScaleSrc = `
extern "C" __global__ void clamp_scale(float *y, const float *x, float lo, float hi, float scale, long long n) {
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
	     i += (long long)gridDim.x * blockDim.x)
		y[i] = fminf(fmaxf(x[i], lo), hi) * scale;
}
`

// clampScaleGo is clamp_scale for the host backend: the same parameters,
// arrays as slices.
func clampScaleGo(y, x []float32, lo, hi, scale float32, n int64) {
	for i := range n {
		y[i] = min(max(x[i], lo), hi) * scale
	}
}

func main() {
	if err := run(os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(w io.Writer) error {
	const rows, cols = 4, 1001 // x[500] is 0
	b, err := gocuda.Backend()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "backend: %s\n", b.Name())

	// x runs from -10 to 10 along each row; row r has beta = r+1.
	xs := make([]float32, rows*cols)
	for i := range xs {
		xs[i] = -10 + 20*float32(i%cols)/(cols-1)
	}
	betas := []float32{1, 2, 3, 4}
	x, err := cuarray.FromSlice(xs, rows, cols)
	if err != nil {
		return err
	}
	beta, err := cuarray.FromSlice(betas, rows, 1)
	if err != nil {
		return err
	}

	// 1. CUDA C source with its Go form.
	clamp, err := rtc.NewKernel("clamp_scale", clampScaleSrc, rtc.HostFunc(clampScaleGo))
	if err != nil {
		return err
	}
	y, err := cuarray.Zeros[float32](rows, cols)
	if err != nil {
		return err
	}
	n := x.Len()
	err = clamp.Launch(nil, rtc.Linear(n), cuarray.Out(y), cuarray.In(x), float32(-1), float32(2), float32(0.5), int64(n))
	if err != nil {
		return err
	}
	got, err := y.ToSlice()
	if err != nil {
		return err
	}
	worst := compare(got, xs, func(i int) float64 { return min(max(float64(xs[i]), -1), 2) * 0.5 })
	fmt.Fprintf(w, "clamp_scale: y[0] = %g, y[%d] = %g, y[%d] = %g; largest error against Go %.2g\n",
		got[0], cols/2, got[cols/2], cols-1, got[cols-1], worst)
	if worst > 0 {
		return fmt.Errorf("clamp_scale differs from Go by %g", worst)
	}

	// 2. An elementwise kernel from an expression; beta broadcasts. The
	// body runs on either backend: no Go form to write.
	softplus, err := rtc.NewElementwiseKernel("softplus", "float32 x, float32 beta", "float32 y",
		"y = beta * x > 20.0f ? x : log1pf(expf(beta * x)) / beta")
	if err != nil {
		return err
	}
	sp, err := rtc.Apply[float32](softplus, nil, x, beta) // a new [rows cols] array
	if err != nil {
		return err
	}
	got, err = sp.ToSlice()
	if err != nil {
		return err
	}
	worst = compare(got, xs, func(i int) float64 {
		bt := float64(betas[i/cols])
		return math.Log1p(math.Exp(bt*float64(xs[i]))) / bt
	})
	for r := range rows {
		fmt.Fprintf(w, "softplus beta=%g: y(-10) = %.3g, y(0) = %.4g, y(10) = %.5g\n",
			betas[r], got[r*cols], got[r*cols+cols/2], got[r*cols+cols-1])
	}
	fmt.Fprintf(w, "softplus: largest relative error against Go %.2g\n", worst)
	// float32 with the CUDA math library's expf and log1pf: a few ulp.
	if worst > 1e-5 {
		return fmt.Errorf("softplus differs from Go by %g", worst)
	}
	return nil
}

// compare is the largest relative difference between got and want(i).
func compare(got, xs []float32, want func(i int) float64) float64 {
	worst := 0.0
	for i := range xs {
		wv := want(i)
		d := math.Abs(float64(got[i])-wv) / max(math.Abs(wv), 1e-30)
		worst = max(worst, d)
	}
	return worst
}
