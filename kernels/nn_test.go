package kernels_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/kernels"
)

// nnShapes: one element; fewer columns than a warp; a column count that is
// not a multiple of the 32-column tile of SumCols; a row longer than a block
// of threads; more rows than a wave of warps; a single column; enough
// elements (77357) that the host backend splits them across goroutines
// mid-row.
var nnShapes = [][2]int{{1, 1}, {3, 10}, {100, 33}, {7, 4099}, {5000, 3}, {300, 1}, {257, 301}}

func TestAddRowVector(t *testing.T) {
	e := newEnv(t)
	runTyped(t, []typed{
		{"float32", func(t *testing.T) { testAddRowVector[float32](t, e) }},
		{"float64", func(t *testing.T) { testAddRowVector[float64](t, e) }},
	})
}

func testAddRowVector[T floatT](t *testing.T, e *env) {
	for _, sh := range nnShapes {
		rows, cols := sh[0], sh[1]
		for _, l := range layouts {
			t.Run(fmt.Sprintf("%dx%d/%s", rows, cols, l.name), func(t *testing.T) {
				x, b := gen[T](e.r, rows*cols, general), gen[T](e.r, cols, general)
				dx, db := upload(t, e, x, l.inOff), upload(t, e, b, false)
				dst := alloc[T](t, e, rows*cols, l.outOff)
				require.NoError(t, kernels.AddRowVector[T](e.dev, e.s, dst.p, dx.p, db.p, rows, cols))
				// One rounding of x + b on every backend: exact comparison.
				checkAll(t, dst.read(t), 0, func(i int) (T, float64) { return x[i] + b[i%cols], 0 })
				// In place.
				require.NoError(t, kernels.AddRowVector[T](e.dev, e.s, dx.p, dx.p, db.p, rows, cols))
				checkAll(t, dx.read(t), 0, func(i int) (T, float64) { return x[i] + b[i%cols], 0 })
			})
		}
	}
}

func TestSumCols(t *testing.T) {
	e := newEnv(t)
	runTyped(t, []typed{
		{"float32", func(t *testing.T) { testSumCols[float32](t, e) }},
		{"float64", func(t *testing.T) { testSumCols[float64](t, e) }},
	})
}

func testSumCols[T floatT](t *testing.T, e *env) {
	is32 := kernels.DTypeOf[T]() == kernels.Float32
	// Tall and narrow shapes are the ones the GPU splits into runs of rows
	// when it has scratch (8192 x 10 is the training example's last layer).
	for _, sh := range append(nnShapes, [2]int{4096, 70}, [2]int{8192, 10}, [2]int{2048, 1024}) {
		rows, cols := sh[0], sh[1]
		x := gen[T](e.r, rows*cols, small)
		dx := upload(t, e, x, true)
		want := make([]float64, cols)
		abs := make([]float64, cols)
		for c := range cols {
			want[c], abs[c] = exactSum(func(yield func(float64) bool) {
				for r := range rows {
					if !yield(float64(x[r*cols+c])) {
						return
					}
				}
			})
		}
		full := kernels.SumColsScratch(e.dev, rows, cols)
		// Full scratch, a third of it (fewer runs), and none (one run).
		for _, bytes := range []int{full, full / 3 &^ 7, 0} {
			t.Run(fmt.Sprintf("%dx%d/scratch-%d", rows, cols, bytes), func(t *testing.T) {
				var scratch kernels.Scratch
				if bytes > 0 {
					scratch = kernels.Scratch{Ptr: alloc[float64](t, e, bytes/8, false).p, Bytes: bytes}
				}
				sums, again := alloc[T](t, e, cols, false), alloc[T](t, e, cols, true)
				require.NoError(t, kernels.SumCols[T](e.dev, e.s, sums.p, dx.p, rows, cols, scratch))
				require.NoError(t, kernels.SumCols[T](e.dev, e.s, again.p, dx.p, rows, cols, scratch))
				got := sums.read(t)
				for c := range cols {
					sumClose(t, float64(got[c]), want[c], abs[c], is32)
				}
				require.Equal(t, got, again.read(t), "the same sums twice should give the same bits")
			})
		}
	}
	t.Run("no-rows", func(t *testing.T) {
		sums := alloc[T](t, e, 5, false)
		require.NoError(t, kernels.SumCols[T](e.dev, e.s, sums.p, 0, 0, 5, kernels.Scratch{}))
		require.Equal(t, []T{0, 0, 0, 0, 0}, sums.read(t))
	})
}

func TestSoftmaxCrossEntropy(t *testing.T) {
	e := newEnv(t)
	runTyped(t, []typed{
		{"float32", func(t *testing.T) { testSoftmaxCrossEntropy[float32](t, e) }},
		{"float64", func(t *testing.T) { testSoftmaxCrossEntropy[float64](t, e) }},
	})
}

// xentRef is the loss and the gradient of one row in float64.
func xentRef[T floatT](row []T, label int, scale float64) (loss float64, grad []float64) {
	m := math.Inf(-1)
	for _, v := range row {
		m = math.Max(m, float64(v))
	}
	var s float64
	for _, v := range row {
		s += math.Exp(float64(v) - m)
	}
	grad = make([]float64, len(row))
	for c, v := range row {
		grad[c] = math.Exp(float64(v)-m) / s
		if c == label {
			grad[c]--
		}
		grad[c] *= scale
	}
	return m + math.Log(s) - float64(row[label]), grad
}

func testSoftmaxCrossEntropy[T floatT](t *testing.T, e *env) {
	// exp and log are within a few ulp of exact on both backends; the loss
	// is a difference of terms up to the row's largest logit.
	rtol := rtolFor[T](2e-6, 1e-13)
	for _, sh := range [][2]int{{1, 1}, {3, 10}, {100, 33}, {4, 4099}, {2000, 10}} {
		rows, cols := sh[0], sh[1]
		for _, big := range []bool{false, true} {
			t.Run(fmt.Sprintf("%dx%d/big=%v", rows, cols, big), func(t *testing.T) {
				x := gen[T](e.r, rows*cols, general)
				if big {
					// exp(±100) overflows float32 (and exp(800) float64):
					// only a softmax that subtracts the row maximum stays
					// finite.
					for i := range x {
						x[i] = x[i]*10 + 80
						if kernels.DTypeOf[T]() == kernels.Float64 {
							x[i] *= 10
						}
					}
				}
				labels := make([]int32, rows)
				for r := range labels {
					labels[r] = int32(e.r.IntN(cols))
				}
				scale := 1 / T(rows)
				dx, dl := upload(t, e, x, true), upload(t, e, labels, false)
				loss, lossOnly, grad := alloc[T](t, e, rows, false), alloc[T](t, e, rows, true), alloc[T](t, e, rows*cols, false)
				require.NoError(t, kernels.SoftmaxCrossEntropy(e.dev, e.s, loss.p, grad.p, dx.p, dl.p, rows, cols, scale))
				require.NoError(t, kernels.SoftmaxCrossEntropy(e.dev, e.s, lossOnly.p, 0, dx.p, dl.p, rows, cols, scale))
				gotLoss, gotGrad := loss.read(t), grad.read(t)
				require.Equal(t, gotLoss, lossOnly.read(t), "the loss should not depend on whether the gradient is asked for")
				wantLoss := make([]float64, rows)
				wantGrad := make([]float64, 0, rows*cols)
				var maxLogit float64
				for r := range rows {
					row := x[r*cols : (r+1)*cols]
					l, g := xentRef(row, int(labels[r]), float64(scale))
					wantLoss[r] = l
					wantGrad = append(wantGrad, g...)
					for _, v := range row {
						maxLogit = math.Max(maxLogit, math.Abs(float64(v)))
					}
				}
				for r, g := range gotLoss {
					require.False(t, math.IsNaN(float64(g)) || math.IsInf(float64(g), 0), "row %d: loss %v", r, g)
					require.GreaterOrEqual(t, float64(g), -rtol*maxLogit, "row %d: cross-entropy is never negative", r)
				}
				checkAll(t, gotLoss, rtol, func(i int) (T, float64) { return T(wantLoss[i]), maxLogit })
				// Gradients lie in [-scale, scale]: compare on that scale.
				checkAll(t, gotGrad, rtol, func(i int) (T, float64) { return T(wantGrad[i]), float64(scale) })
			})
		}
	}
	t.Run("bad-labels-give-NaN", func(t *testing.T) {
		const rows, cols = 4, 5
		x := gen[T](e.r, rows*cols, general)
		labels := []int32{0, cols, -1, cols - 1}
		dx, dl := upload(t, e, x, false), upload(t, e, labels, false)
		loss, grad := alloc[T](t, e, rows, false), alloc[T](t, e, rows*cols, false)
		require.NoError(t, kernels.SoftmaxCrossEntropy(e.dev, e.s, loss.p, grad.p, dx.p, dl.p, rows, cols, T(1)))
		gotLoss, gotGrad := loss.read(t), grad.read(t)
		for r, label := range labels {
			bad := label < 0 || label >= cols
			require.Equal(t, bad, math.IsNaN(float64(gotLoss[r])), "row %d, label %d: loss %v", r, label, gotLoss[r])
			for c := range cols {
				require.Equal(t, bad, math.IsNaN(float64(gotGrad[r*cols+c])), "row %d, label %d: gradient %v", r, label, gotGrad[r*cols+c])
			}
		}
	})
}

// Bad arguments are errors that say what was wrong, returned before
// anything is queued; empty shapes queue nothing and may have nil pointers.
func TestNNArgumentErrors(t *testing.T) {
	e := newEnv(t)
	m := alloc[float32](t, e, 64, false)
	lab := alloc[int32](t, e, 8, false)
	p := m.p
	cases := []struct {
		name string
		err  error
		want error  // nil: no error
		text string // in the message
	}{
		{"AddRowVector negative rows", kernels.AddRowVector[float32](e.dev, e.s, p, p, p, -1, 4), backend.ErrInvalidValue, "negative"},
		{"AddRowVector overflow", kernels.AddRowVector[float32](e.dev, e.s, p, p, p, math.MaxInt/2, 3), backend.ErrInvalidValue, "overflows"},
		{"AddRowVector nil bias", kernels.AddRowVector[float32](e.dev, e.s, p, p, 0, 2, 4), backend.ErrInvalidValue, "pointer b is nil"},
		{"AddRowVector int32", kernels.AddRowVector[int32](e.dev, e.s, p, p, p, 2, 4), kernels.ErrUnsupportedDType, "float32, float64"},
		{"AddRowVector empty", kernels.AddRowVector[float32](e.dev, e.s, 0, 0, 0, 0, 4), nil, ""},
		{"SumCols nil x", kernels.SumCols[float32](e.dev, e.s, p, 0, 2, 4, kernels.Scratch{}), backend.ErrInvalidValue, "pointer x is nil"},
		{"SumCols misaligned", kernels.SumCols[float64](e.dev, e.s, p+4, p, 2, 4, kernels.Scratch{}), backend.ErrInvalidValue, "8-byte aligned"},
		{"SumCols misaligned scratch", kernels.SumCols[float32](e.dev, e.s, p, p, 2, 4, kernels.Scratch{Ptr: p + 4, Bytes: 64}), backend.ErrInvalidValue, "scratch"},
		{"SumCols negative scratch", kernels.SumCols[float32](e.dev, e.s, p, p, 2, 4, kernels.Scratch{Ptr: p, Bytes: -8}), backend.ErrInvalidValue, "not negative"},
		{"SumCols no columns", kernels.SumCols[float32](e.dev, e.s, 0, 0, 7, 0, kernels.Scratch{}), nil, ""},
		{"Softmax no classes", kernels.SoftmaxCrossEntropy(e.dev, e.s, p, 0, p, lab.p, 2, 0, float32(1)), kernels.ErrEmpty, "cols must be at least 1"},
		{"Softmax nil labels", kernels.SoftmaxCrossEntropy(e.dev, e.s, p, 0, p, 0, 2, 3, float32(1)), backend.ErrInvalidValue, "labels is nil"},
		{"Softmax misaligned labels", kernels.SoftmaxCrossEntropy(e.dev, e.s, p, 0, p, lab.p+2, 2, 3, float32(1)), backend.ErrInvalidValue, "4-byte aligned"},
		// float64 logits with int32 labels at a 4-byte (not 8-byte) offset.
		{"Softmax float64 labels at 4 bytes", kernels.SoftmaxCrossEntropy(e.dev, e.s, p, 0, p, lab.p+4, 1, 3, float64(1)), nil, ""},
		{"Softmax no rows", kernels.SoftmaxCrossEntropy(e.dev, e.s, 0, 0, 0, 0, 0, 3, float32(1)), nil, ""},
		{"Softmax nil device", kernels.SoftmaxCrossEntropy(nil, e.s, p, 0, p, lab.p, 2, 3, float32(1)), backend.ErrInvalidValue, "nil device"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.want == nil {
				require.NoError(t, c.err)
				return
			}
			require.Error(t, c.err)
			require.True(t, errors.Is(c.err, c.want), "%v should wrap %v", c.err, c.want)
			require.Contains(t, c.err.Error(), c.text)
		})
	}
	require.NoError(t, e.s.Synchronize())
}
