package cuarray_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/internal/testsupport/testhook"
	"github.com/gocuda/gocuda/kernels"
)

func randFloats[T float32 | float64](r *rand.Rand, n int, scale float64) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = T((r.Float64()*2 - 1) * scale)
	}
	return out
}

// TestDenseLayerOps runs one dense layer's forward and backward pieces on
// arrays and compares each with a loop over the same host data.
func TestDenseLayerOps(t *testing.T) {
	t.Run("float32", func(t *testing.T) { testDenseLayerOps[float32](t, 1e-5) })
	t.Run("float64", func(t *testing.T) { testDenseLayerOps[float64](t, 1e-12) })
}

func testDenseLayerOps[T float32 | float64](t *testing.T, tol float64) {
	const rows, cols = 37, 45
	r := rand.New(rand.NewPCG(1, 2))
	f := cuarray.On[T](newStream(t, freshPool(t)))
	xs, bs, dys := randFloats[T](r, rows*cols, 4), randFloats[T](r, cols, 4), randFloats[T](r, rows*cols, 1)
	x := cuarray.Must(f.FromSlice(xs, rows, cols))
	b := cuarray.Must(f.FromSlice(bs))
	dy := cuarray.Must(f.FromSlice(dys, rows, cols))

	z := cuarray.Must(f.New(rows, cols))
	require.NoError(t, errOf(f.AddRowVector(z, x, b)))
	dz := cuarray.Must(f.New(rows, cols))
	require.NoError(t, errOf(f.ReluGrad(dz, z, dy)))
	db := cuarray.Must(f.New(cols))
	require.NoError(t, errOf(f.SumCols(db, dz)))
	dr := cuarray.Must(f.New(rows))
	require.NoError(t, errOf(f.SumRows(dr, dz)))

	// A nil dst makes each result: what the dst got, of the layer's shape.
	for _, c := range []struct {
		name      string
		got, want *cuarray.Array[T]
	}{
		{"AddRowVector", cuarray.Must(f.AddRowVector(nil, x, b)), z},
		{"ReluGrad", cuarray.Must(f.ReluGrad(nil, z, dy)), dz},
		{"SumCols", cuarray.Must(f.SumCols(nil, dz)), db},
		{"SumRows", cuarray.Must(f.SumRows(nil, dz)), dr},
	} {
		assert.Equal(t, c.want.Shape(), c.got.Shape(), c.name)
		assert.Equal(t, read(t, c.want), read(t, c.got), c.name)
	}

	gotZ, gotDz, gotDb, gotDr := read(t, z), read(t, dz), read(t, db), read(t, dr)
	wantDz := make([]T, rows*cols)
	wantDb, wantDr := make([]float64, cols), make([]float64, rows)
	for i := range xs {
		rr, c := i/cols, i%cols
		require.Equal(t, xs[i]+bs[c], gotZ[i], "z[%d]", i)
		if gotZ[i] > 0 {
			wantDz[i] = dys[i]
		}
		wantDb[c] += float64(wantDz[i])
		wantDr[rr] += float64(wantDz[i])
	}
	require.Equal(t, wantDz, gotDz)
	for c, w := range wantDb {
		assert.InDelta(t, w, float64(gotDb[c]), tol*(1+math.Abs(w)), "db[%d]", c)
	}
	for rr, w := range wantDr {
		assert.InDelta(t, w, float64(gotDr[rr]), tol*(1+math.Abs(w)), "dr[%d]", rr)
	}
}

// SumCols of a tall, narrow batch (the shape for which the GPU splits the
// rows into runs and takes scratch from the array's pool) gives the column
// sums, and leaves the pool with only the arrays live: the scratch went
// back.
func TestSumColsOfATallBatchGivesBackItsScratch(t *testing.T) {
	const rows, cols = 4096, 100
	r := rand.New(rand.NewPCG(5, 6))
	p := freshPool(t)
	f := cuarray.On[float32](newStream(t, p))
	xs := randFloats[float32](r, rows*cols, 1)
	x := cuarray.Must(f.FromSlice(xs, rows, cols))
	db := cuarray.Must(f.New(cols))
	before := p.Stats()
	require.NoError(t, errOf(f.SumCols(db, x)))
	got := read(t, db) // waits for the stream
	want := make([]float64, cols)
	for i, v := range xs {
		want[i%cols] += float64(v)
	}
	for c, w := range want {
		assert.InDelta(t, w, float64(got[c]), 1e-5*(1+math.Abs(w)), "db[%d]", c)
	}
	after := p.Stats()
	assert.Equal(t, before.Live, after.Live, "live bytes after SumCols: its scratch should be back in the pool")
	assert.Equal(t, after.Allocs-before.Allocs, after.Frees-before.Frees, "every scratch allocation freed")
	runtime.KeepAlive(x)
}

// TestSoftmaxCrossEntropyGradient checks the gradient against central
// differences of the mean loss, on logits large enough that a softmax
// without the row maximum would overflow.
func TestSoftmaxCrossEntropyGradient(t *testing.T) {
	const rows, classes = 6, 7
	r := rand.New(rand.NewPCG(3, 4))
	f := cuarray.On[float64](newStream(t, freshPool(t)))
	xs := randFloats[float64](r, rows*classes, 3)
	for i := range xs {
		xs[i] += 800 // exp(800) is +Inf in float64
	}
	ls := make([]int32, rows)
	for i := range ls {
		ls[i] = int32(r.IntN(classes))
	}
	labels := cuarray.Must(cuarray.On[int32](f.Stream()).FromSlice(ls))
	meanLoss := func(xs []float64) float64 {
		logits := cuarray.Must(f.FromSlice(xs, rows, classes))
		loss := cuarray.Must(f.New(rows))
		require.NoError(t, f.SoftmaxCrossEntropy(loss, nil, logits, labels, 0))
		s, err := f.Sum(loss)
		require.NoError(t, err)
		return s / rows
	}
	logits := cuarray.Must(f.FromSlice(xs, rows, classes))
	loss, grad := cuarray.Must(f.New(rows)), cuarray.Must(f.New(rows, classes))
	require.NoError(t, f.SoftmaxCrossEntropy(loss, grad, logits, labels, 1.0/rows))
	g := read(t, grad)
	for _, l := range read(t, loss) {
		require.False(t, math.IsNaN(l) || math.IsInf(l, 0), "loss %v", l)
	}
	const h = 1e-4
	for i := range xs {
		plus, minus := append([]float64(nil), xs...), append([]float64(nil), xs...)
		plus[i] += h
		minus[i] -= h
		num := (meanLoss(plus) - meanLoss(minus)) / (2 * h)
		assert.InDelta(t, num, g[i], 1e-6, "d loss / d logits[%d]", i)
	}
}

// TestSoftmaxCrossEntropyWaitsForLabels writes the labels on one stream
// behind slow work and computes the loss on another with no
// synchronization in the test: the loss must see the new labels.
func TestSoftmaxCrossEntropyWaitsForLabels(t *testing.T) {
	p := freshPool(t)
	sa, sb := newStream(t, p), newStream(t, p)
	const rows, classes = 64, 3
	labels := cuarray.Must(cuarray.On[int32](sa).Zeros(rows))
	require.NoError(t, testhook.Spin(p.Device(), sa.Backend(), 200*time.Millisecond))
	require.NoError(t, cuarray.On[int32](sa).Fill(labels, 2))

	fb := cuarray.On[float32](sb)
	xs := make([]float32, rows*classes)
	for i := range xs {
		xs[i] = float32(i % classes) // class 2 is the likeliest
	}
	logits := cuarray.Must(fb.FromSlice(xs, rows, classes))
	loss := cuarray.Must(fb.New(rows))
	require.NoError(t, fb.SoftmaxCrossEntropy(loss, nil, logits, labels, 1))
	want := float32(math.Log(1 + math.Exp(-1) + math.Exp(-2))) // label 2; label 0 would give 2 more
	for i, l := range read(t, loss) {
		require.InDelta(t, want, l, 1e-6, "row %d", i)
	}
}

func TestNNShapeErrors(t *testing.T) {
	f := cuarray.On[float32](newStream(t, freshPool(t)))
	fi := cuarray.On[int32](f.Stream())
	m := cuarray.Must(f.Zeros(4, 3))
	m2 := cuarray.Must(f.Zeros(4, 3))
	vec3, vec4, vec5 := cuarray.Must(f.Zeros(3)), cuarray.Must(f.Zeros(4)), cuarray.Must(f.Zeros(5))
	labels := cuarray.Must(fi.Zeros(4))
	freed := cuarray.Must(fi.Zeros(4))
	freed.UnsafeFree()
	whole := cuarray.Must(f.Zeros(16))
	lossView := cuarray.Must(whole.View(0, 4))
	gradView := cuarray.Must(cuarray.Must(whole.View(2, 12)).Reshape(4, 3))

	cases := []struct {
		name string
		err  error
		want error
		text string
	}{
		{"AddRowVector 1-D x", errOf(f.AddRowVector(vec3, vec3, vec3)), cuarray.ErrShape, "2-D"},
		{"AddRowVector bias length", errOf(f.AddRowVector(m, m, vec4)), cuarray.ErrShape, "x's columns, 3"},
		{"AddRowVector dst shape", errOf(f.AddRowVector(cuarray.Must(m.Reshape(3, 4)), m, vec3)), cuarray.ErrShape, "must have the shape of x"},
		{"SumCols dst length", errOf(f.SumCols(vec4, m)), cuarray.ErrShape, "x's columns"},
		{"SumRows dst length", errOf(f.SumRows(vec3, m)), cuarray.ErrShape, "x's rows"},
		{"ReluGrad lengths", errOf(f.ReluGrad(vec3, m, m)), cuarray.ErrShape, "equal lengths"},
		{"Softmax loss length", f.SoftmaxCrossEntropy(vec5, nil, m, labels, 1), cuarray.ErrShape, "logits' rows"},
		{"Softmax labels length", f.SoftmaxCrossEntropy(vec4, nil, m, cuarray.Must(fi.Zeros(5)), 1), cuarray.ErrShape, "one class a row"},
		{"Softmax nil labels", f.SoftmaxCrossEntropy(vec4, nil, m, nil, 1), backend.ErrInvalidValue, "labels is a nil array"},
		{"Softmax freed labels", f.SoftmaxCrossEntropy(vec4, nil, m, freed, 1), cuarray.ErrFreed, "labels"},
		{"Softmax in place", f.SoftmaxCrossEntropy(vec4, m, m, labels, 1), cuarray.ErrShape, "shares memory with logits"},
		{"Softmax gradient over loss", f.SoftmaxCrossEntropy(lossView, gradView, m2, labels, 1), cuarray.ErrShape, "shares memory with loss"},
		{"Softmax int32 logits", cuarray.On[int32](nil).SoftmaxCrossEntropy(labels, nil, cuarray.Must(fi.Zeros(4, 3)), labels, 1), kernels.ErrUnsupportedDType, "float32, float64"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Error(t, c.err)
			require.True(t, errors.Is(c.err, c.want), "%v should wrap %v", c.err, c.want)
			require.Contains(t, c.err.Error(), c.text)
		})
	}
}

// A batch of two examples over three classes: the loss of each row and the
// gradient of the mean loss with respect to the logits.
func ExampleSoftmaxCrossEntropy() {
	logits := cuarray.Must(cuarray.FromSlice([]float32{
		0, 0, 0, // all classes alike: loss ln 3
		2, 0, 0, // class 0 likelier
	}, 2, 3))
	labels := cuarray.Must(cuarray.FromSlice([]int32{1, 0}))
	loss := cuarray.Must(cuarray.New[float32](2))
	grad := cuarray.Must(cuarray.New[float32](2, 3))
	if err := cuarray.SoftmaxCrossEntropy(loss, grad, logits, labels, 1.0/2); err != nil {
		panic(err)
	}
	l := cuarray.Must(loss.ToSlice())
	g := cuarray.Must(grad.ToSlice())
	fmt.Printf("loss %.4f %.4f\n", l[0], l[1])
	fmt.Printf("grad %.4f %.4f %.4f\n", g[0], g[1], g[2])
	fmt.Printf("     %.4f %.4f %.4f\n", g[3], g[4], g[5])
	// Output:
	// loss 1.0986 0.2395
	// grad 0.1667 -0.3333 0.1667
	//      -0.1065 0.0533 0.0533
}
