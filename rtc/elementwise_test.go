package rtc_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/internal/testsupport/testhook"
	"github.com/gocuda/gocuda/kernels"
	"github.com/gocuda/gocuda/rtc"
)

// The elementwise tests run on both backends: on a GPU the generated CUDA
// code (GOCUDA_BACKEND=cuda, skipped without NVRTC), on the host backend
// both ways a kernel runs there: its Go form (HostFunc), and without one
// the host's evaluation of its body. The expected values are computed
// here, independently of all three.

// eachForm runs f for a kernel made with its Go form (withGo) and
// without, so that the host backend evaluates its body; on a GPU, where
// both run the same generated code, once.
func eachForm(t *testing.T, f func(t *testing.T, withGo bool)) {
	t.Helper()
	forms := []struct {
		name   string
		withGo bool
	}{{"HostFunc", true}, {"body", false}}
	if onGPU(t) {
		forms = forms[:1]
	}
	for _, fm := range forms {
		t.Run(fm.name, func(t *testing.T) { f(t, fm.withGo) })
	}
}

// goForm is the options of a kernel made with its Go form fn, or without.
func goForm(withGo bool, fn any) []rtc.Option {
	if withGo {
		return []rtc.Option{rtc.HostFunc(fn)}
	}
	return nil
}

func newAxpyEW(t testing.TB, withGo bool) *rtc.ElementwiseKernel {
	t.Helper()
	k, err := rtc.NewElementwiseKernel("ew_axpy", "float32 a, float32 x, float32 y", "float32 z", "z = a * x + y",
		goForm(withGo, func(a float32, x, y, z []float32) {
			for i := range z {
				z[i] = a*x[i] + y[i]
			}
		})...)
	require.NoError(t, err)
	require.Equal(t, withGo, k.HasHost())
	return k
}

// newAddEW is x + y for any of the inputs as arrays or scalars, broadcast.
func newAddEW(t testing.TB, withGo bool) *rtc.ElementwiseKernel {
	t.Helper()
	k, err := rtc.NewElementwiseKernel("ew_add", "float32 x, float32 y", "float32 z", "z = x + y",
		goForm(withGo, func(x, y, z []float32) {
			for i := range z {
				z[i] = x[i] + y[i]
			}
		})...)
	require.NoError(t, err)
	return k
}

func TestElementwiseAxpyScalarsAndArrays(t *testing.T) {
	needKernels(t)
	rtc.SetKernelCacheDir(t, t.TempDir())
	eachForm(t, axpyScalarsAndArrays)
}

func axpyScalarsAndArrays(t *testing.T, withGo bool) {
	s := newStream(t, freshPool(t))
	f := cuarray.On[float32](s)
	k := newAxpyEW(t, withGo)
	// Lengths around the vector width (4 float32) and the grid.
	for _, n := range []int{0, 1, 3, 4, 5, 1023, 1 << 20} {
		x := cuarray.Must(f.FromSlice(iota[float32](n)))
		y := cuarray.Must(f.Full(1, n))
		z := cuarray.Must(f.New(n))
		require.NoError(t, k.Launch(s, float32(2), x, y, z), "n=%d", n)
		want := make([]float32, n)
		for i, v := range iota[float32](n) {
			want[i] = 2*v + 1
		}
		assert.Equal(t, want, read(t, z), "n=%d", n)

		// In place: y as an input and the output; an untyped constant
		// (float64, int) for the scalar.
		require.NoError(t, k.Launch(s, 2.0, x, y, y), "n=%d", n)
		require.NoError(t, k.Launch(s, -2, x, y, y), "n=%d", n)
		assert.Equal(t, filled[float32](n, 1), read(t, y), "n=%d in place", n)
	}

	// Views at an odd offset take the unvectorized loop.
	const n = 1001
	base := cuarray.Must(f.FromSlice(iota[float32](n + 1)))
	x := cuarray.Must(base.View(1, n))
	z := cuarray.Must(f.New(n))
	require.NoError(t, k.Launch(nil, float32(3), x, 0.5, z), "y as a scalar, the default stream")
	want := make([]float32, n)
	for i := range want {
		want[i] = 3*float32((i+1)%100) + 0.5
	}
	assert.Equal(t, want, read(t, z))

	// The allocating forms.
	z2 := cuarray.Must(rtc.Apply[float32](k, s, float32(3), x, float32(0.5)))
	assert.Equal(t, []int{n}, z2.Shape())
	assert.Equal(t, want, read(t, z2))
	outs, err := k.LaunchNew(s, float32(1), float32(2), float32(3))
	require.NoError(t, err)
	require.Len(t, outs, 1)
	zero := outs[0].(*cuarray.Array[float32])
	assert.Empty(t, zero.Shape(), "scalars only give a zero-dimensional result")
	assert.Equal(t, []float32{5}, read(t, zero))
}

func TestElementwiseBroadcasts(t *testing.T) {
	needKernels(t)
	rtc.SetKernelCacheDir(t, t.TempDir())
	eachForm(t, broadcasts)
}

func broadcasts(t *testing.T, withGo bool) {
	s := newStream(t, freshPool(t))
	f := cuarray.On[float32](s)
	k := newAddEW(t, withGo)
	seq := func(n int, scale float32) []float32 {
		out := make([]float32, n)
		for i := range out {
			out[i] = scale * float32(i+1)
		}
		return out
	}
	// at is a shape's element at the result's coordinates, broadcast.
	at := func(data []float32, shape, out []int, idx []int) float32 {
		off, acc := 0, 1
		for d := len(shape) - 1; d >= 0; d-- {
			if shape[d] != 1 {
				off += idx[len(out)-len(shape)+d] * acc
			}
			acc *= shape[d]
		}
		return data[off]
	}
	tests := []struct{ a, b []int }{
		{[]int{5, 7}, []int{7}},                // a row to every row
		{[]int{5, 7}, []int{5, 1}},             // a column to every column
		{[]int{1, 7}, []int{5, 1}},             // an outer sum
		{[]int{7}, []int{5, 7}},                // the small one first
		{[]int{3, 1, 4}, []int{2, 1}},          // three dimensions
		{[]int{2, 3, 1, 5}, []int{1, 3, 4, 1}}, // four, none mergeable
		{[]int{300, 33}, []int{33}},            // more than a wave of small rows
		{[]int{1}, []int{6}},                   // one value against a vector
		{[]int{}, []int{2, 2}},                 // zero-dimensional against a matrix
		{[]int{0, 3}, []int{3}},                // empty
		// Eight dimensions that do not merge: more than one launch
		// takes (six), so the outer two are looped.
		{[]int{2, 1, 2, 1, 2, 1, 2, 1}, []int{1, 3, 1, 2, 1, 3, 1, 2}},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.a, "+", tc.b), func(t *testing.T) {
			out, err := cuarray.BroadcastShapes(tc.a, tc.b)
			require.NoError(t, err)
			na, nb, n := prod(tc.a), prod(tc.b), prod(out)
			da, db := seq(na, 1), seq(nb, 1000)
			// Reshape, since FromSlice takes no dimensions as one of len(data).
			a := cuarray.Must(cuarray.Must(f.FromSlice(da)).Reshape(tc.a...))
			b := cuarray.Must(cuarray.Must(f.FromSlice(db)).Reshape(tc.b...))
			require.Len(t, a.Shape(), len(tc.a))
			z := cuarray.Must(f.New(out...))
			require.NoError(t, k.Launch(s, a, b, z))
			want := make([]float32, n)
			idx := make([]int, len(out))
			for i := range want {
				want[i] = at(da, tc.a, out, idx) + at(db, tc.b, out, idx)
				for d := len(out) - 1; d >= 0; d-- {
					if idx[d]++; idx[d] < out[d] {
						break
					}
					idx[d] = 0
				}
			}
			assert.Equal(t, want, read(t, z))
			// The same through Apply, which makes z of the result's shape.
			z2 := cuarray.Must(rtc.Apply[float32](k, s, a, b))
			assert.Equal(t, out, z2.Shape())
			assert.Equal(t, want, read(t, z2))
		})
	}
}

func prod(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// TestElementwiseShapeErrors: the built-in operations' rules. Operands
// that do not broadcast are an error even with equal lengths, and the
// output must have exactly the result's shape.
func TestElementwiseShapeErrors(t *testing.T) {
	s := newStream(t, freshPool(t))
	f := cuarray.On[float32](s)
	k := newAddEW(t, true)
	m23, m32 := cuarray.Must(f.Zeros(2, 3)), cuarray.Must(f.Zeros(3, 2))
	row, v6 := cuarray.Must(f.Zeros(3)), cuarray.Must(f.Zeros(6))
	tests := []struct {
		name string
		args []any
		text string
	}{
		{"[2 3]+[3 2]", []any{m23, m32, cuarray.Must(f.Zeros(2, 3))}, "inputs x float32[2 3] and y float32[3 2] do not broadcast"},
		{"[2 3]+[2]", []any{m23, cuarray.Must(f.Zeros(2)), m23}, "do not broadcast"},
		{"output flat", []any{m23, row, v6}, "output z float32[6] does not have the shape [2 3] the inputs broadcast to"},
		{"output of the small input's shape", []any{m23, row, row}, "output z float32[3] does not have the shape [2 3]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := k.Launch(s, tc.args...)
			require.ErrorIs(t, err, cuarray.ErrShape)
			assert.ErrorContains(t, err, tc.text)
			assert.ErrorContains(t, err, "elementwise kernel ew_add")
		})
	}
	_, err := rtc.Apply[float32](k, s, m23, m32)
	require.ErrorIs(t, err, cuarray.ErrShape)
	assert.ErrorContains(t, err, "inputs x float32[2 3] and y float32[3 2] do not broadcast")

	// Of three inputs, the message names the first pair that does not
	// broadcast, and why.
	err = newAxpyEW(t, true).Launch(s, m23, row, cuarray.Must(f.Zeros(2)), cuarray.Must(f.Zeros(2, 3)))
	require.ErrorIs(t, err, cuarray.ErrShape)
	assert.ErrorContains(t, err, "inputs a float32[2 3] and y float32[2] do not broadcast: dimension 1 of the result would be 3 in one and 2 in the other")
}

// TestElementwiseEveryType: each parameter type, as arrays and as scalars,
// with C's arithmetic matching Go's (uint8 wraps, as its assignment in C
// truncates).
func TestElementwiseEveryType(t *testing.T) {
	needKernels(t)
	rtc.SetKernelCacheDir(t, t.TempDir())
	s := newStream(t, freshPool(t))
	eachForm(t, func(t *testing.T, withGo bool) {
		t.Run("float32", func(t *testing.T) { everyType[float32](t, s, withGo) })
		t.Run("float64", func(t *testing.T) { everyType[float64](t, s, withGo) })
		t.Run("int32", func(t *testing.T) { everyType[int32](t, s, withGo) })
		t.Run("int64", func(t *testing.T) { everyType[int64](t, s, withGo) })
		t.Run("uint8", func(t *testing.T) { everyType[uint8](t, s, withGo) })
	})
}

func everyType[T int32 | int64 | float32 | float64 | uint8](t *testing.T, s *cuarray.Stream, withGo bool) {
	name := kernels.DTypeOf[T]().String()
	k, err := rtc.NewElementwiseKernel("ew_"+name, name+" x, "+name+" y, "+name+" c", name+" z", "z = x * c + y",
		goForm(withGo, func(x, y []T, c T, z []T) {
			for i := range z {
				z[i] = x[i]*c + y[i]
			}
		})...)
	require.NoError(t, err)
	f := cuarray.On[T](s)
	const n = 1000
	xs, ys := make([]T, n), make([]T, n)
	for i := range xs {
		xs[i], ys[i] = T(i%50), T(i%7)
	}
	x, y := cuarray.Must(f.FromSlice(xs)), cuarray.Must(f.FromSlice(ys))
	z := cuarray.Must(f.New(n))
	require.NoError(t, k.Launch(s, x, y, T(6), z))
	want := make([]T, n)
	for i := range want {
		want[i] = xs[i]*6 + ys[i] // uint8: 49*6 + 6 wraps
	}
	assert.Equal(t, want, read(t, z))
	// x as a scalar; y broadcast from one element.
	require.NoError(t, k.Launch(s, T(3), y, T(2), z))
	for i := range want {
		want[i] = 6 + ys[i]
	}
	assert.Equal(t, want, read(t, z))
	one := cuarray.Must(f.FromSlice([]T{5}, 1))
	require.NoError(t, k.Launch(s, x, one, T(2), z))
	for i := range want {
		want[i] = xs[i]*2 + 5
	}
	assert.Equal(t, want, read(t, z))
}

func TestElementwiseTwoOutputs(t *testing.T) {
	needKernels(t)
	rtc.SetKernelCacheDir(t, t.TempDir())
	eachForm(t, twoOutputs)
}

func twoOutputs(t *testing.T, withGo bool) {
	s := newStream(t, freshPool(t))
	k, err := rtc.NewElementwiseKernel("ew_sumdiff", "float64 x, int32 y", "float64 sum, int64 idx", "sum = x + y; idx = i * 10 + n",
		goForm(withGo, func(x []float64, y []int32, sum []float64, idx []int64) {
			for i := range sum {
				sum[i] = x[i] + float64(y[i])
				idx[i] = int64(i*10 + len(sum))
			}
		})...)
	require.NoError(t, err)
	x := cuarray.Must(cuarray.On[float64](s).FromSlice([]float64{0.5, 1.5, 2.5, 3.5, 4.5, 5.5}, 2, 3))
	y := cuarray.Must(cuarray.On[int32](s).FromSlice([]int32{10, 20}, 2, 1))
	outs, err := k.LaunchNew(s, x, y)
	require.NoError(t, err)
	require.Len(t, outs, 2)
	sum, idx := outs[0].(*cuarray.Array[float64]), outs[1].(*cuarray.Array[int64])
	assert.Equal(t, []int{2, 3}, sum.Shape())
	assert.Equal(t, []float64{10.5, 11.5, 12.5, 23.5, 24.5, 25.5}, read(t, sum))
	assert.Equal(t, []int64{6, 16, 26, 36, 46, 56}, read(t, idx), "i and n are the result's index and count")
	_, err = rtc.Apply[float64](k, s, x, y)
	assert.ErrorContains(t, err, "Apply[float64] needs a kernel of one float64 output")
}

// TestElementwiseOrdersArraysAcrossStreams: like every operation, a
// generated kernel on one stream waits for its inputs' earlier work on
// another behind slow (spinning) work, and later work elsewhere waits for
// it, with no synchronization written by the test.
func TestElementwiseOrdersArraysAcrossStreams(t *testing.T) {
	needKernels(t)
	rtc.SetKernelCacheDir(t, t.TempDir())
	eachForm(t, ordersArraysAcrossStreams)
}

func ordersArraysAcrossStreams(t *testing.T, withGo bool) {
	p := freshPool(t)
	sa, sb := newStream(t, p), newStream(t, p)
	fa, fb := cuarray.On[float32](sa), cuarray.On[float32](sb)
	dev := p.Device()
	const n = 1 << 16
	k := newAxpyEW(t, withGo)
	warm := cuarray.Must(fb.Zeros(n))
	require.NoError(t, k.Launch(sb, float32(1), warm, warm, cuarray.Must(fb.New(n))),
		"compiled (the kinds used below) before the timing matters")

	// Before: x is written on A behind slow work; the kernel on B reads it.
	x := cuarray.Must(fa.New(n))
	require.NoError(t, testhook.Spin(dev, sa.Backend(), 200*time.Millisecond))
	require.NoError(t, fa.Fill(x, 3))
	y := cuarray.Must(fb.Full(1, n))
	z := cuarray.Must(fb.New(n))
	require.NoError(t, k.Launch(sb, float32(2), x, y, z))
	assert.Equal(t, filled[float32](n, 7), read(t, z), "the kernel ran before x was written")

	// After: the kernel on B runs behind slow work; an operation on A
	// reading its output, and the host's read, wait for it.
	require.NoError(t, testhook.Spin(dev, sb.Backend(), 200*time.Millisecond))
	require.NoError(t, k.Launch(sb, float32(1), x, z, z))
	w := cuarray.Must(fa.New(n))
	_, err := fa.AddScalar(w, z, 1)
	require.NoError(t, err)
	assert.Equal(t, filled[float32](n, 11), read(t, w), "A read z before the kernel on B wrote it")
}

// TestElementwiseCompilesOncePerKinds: on a GPU, each combination of
// input kinds is compiled once, however often it is launched, and a new
// combination compiles once more.
func TestElementwiseCompilesOncePerKinds(t *testing.T) {
	if !onGPU(t) {
		t.Skip("compiles for a GPU")
	}
	needKernels(t)
	c := rtc.SetKernelCacheDir(t, t.TempDir())
	s := newStream(t, freshPool(t))
	f := cuarray.On[float32](s)
	k := newAxpyEW(t, true)
	x, y, z := cuarray.Must(f.Ones(4, 8)), cuarray.Must(f.Ones(4, 8)), cuarray.Must(f.New(4, 8))
	for range 5 {
		require.NoError(t, k.Launch(s, float32(2), x, y, z))
	}
	assert.Equal(t, map[string]string{"saa/0": "built"}, rtc.ElementwiseSpecs(k))
	assert.Len(t, c.Files(), 1)
	row := cuarray.Must(f.Ones(8))
	for range 3 {
		require.NoError(t, k.Launch(s, float32(2), x, row, z))
		require.NoError(t, k.Launch(s, x, x, y, z))
	}
	assert.Equal(t, map[string]string{"saa/0": "built", "sab/2": "built", "aaa/0": "built"}, rtc.ElementwiseSpecs(k),
		"[4 8] + [8] is a kernel of two dimensions")
	assert.Len(t, c.Files(), 3)
	assert.Equal(t, filled[float32](32, 2), read(t, z))

	// A second kernel of the same text shares the compiled code.
	k2 := newAxpyEW(t, true)
	require.NoError(t, k2.Launch(s, float32(2), x, y, z))
	assert.Equal(t, map[string]string{"saa/0": "memory"}, rtc.ElementwiseSpecs(k2))
}

func TestElementwiseLayoutMergesAndDrops(t *testing.T) {
	tests := []struct {
		shape   []int
		strides [][]int
		dims    []int
		st      [][]int
	}{
		{[]int{4, 8}, [][]int{{0, 1}}, []int{4, 8}, [][]int{{0, 1}}},       // a row
		{[]int{4, 8}, [][]int{{1, 0}}, []int{4, 8}, [][]int{{1, 0}}},       // a column
		{[]int{4, 1, 8}, [][]int{{0, 0, 1}}, []int{4, 8}, [][]int{{0, 1}}}, // a 1 dropped
		{[]int{2, 3, 8}, [][]int{{0, 0, 1}}, []int{6, 8}, [][]int{{0, 1}}}, // broadcast dims merge
		{[]int{2, 3, 8}, [][]int{{24, 8, 1}}, []int{48}, [][]int{{1}}},     // contiguous: one
		{[]int{2, 3, 4}, [][]int{{4, 0, 1}, {0, 1, 0}}, []int{2, 3, 4}, [][]int{{4, 0, 1}, {0, 1, 0}}},
	}
	for _, tc := range tests {
		dims, st := rtc.ElementwiseLayout(tc.shape, tc.strides)
		assert.Equal(t, tc.dims, dims, "%v %v", tc.shape, tc.strides)
		assert.Equal(t, tc.st, st, "%v %v", tc.shape, tc.strides)
	}
}

func TestNewElementwiseKernelErrors(t *testing.T) {
	tests := []struct {
		name, in, out, body string
		opts                []rtc.Option
		text                string
	}{
		{"kernel name", "float32 x", "float32 z", "z = x", nil, `kernel name "1k" is not a C identifier`},
		{"C type", "float x", "float32 z", "z = x", nil, `parameter x has type "float": did you mean float32?`},
		{"unknown type", "float16 x", "float32 z", "z = x", nil, `type "float16": unknown type; the types are Go's float32, float64, int32, int64 or uint8`},
		{"complex", "complex64 x", "float32 z", "z = x", nil, "complex64 arrays have no C arithmetic here"},
		{"placeholder", "T x", "T z", "z = x", nil, "type placeholders are not supported"},
		{"raw", "raw float32 x", "float32 z", "z = x", nil, "raw (indexed) arrays are not supported"},
		{"no name", "float32", "float32 z", "z = 1", nil, `parameter 0 "float32" needs a type and a name`},
		{"stray comma", "float32 x,", "float32 z", "z = x", nil, "parameter 1 is empty (a stray comma?)"},
		{"three words", "const float32 x", "float32 z", "z = x", nil, `has 3 words`},
		{"not an identifier", "float32 2x", "float32 z", "z = 1", nil, `name "2x" is not a C identifier`},
		{"underscore", "float32 _x", "float32 z", "z = 1", nil, `name "_x" starts with _`},
		{"i", "float32 i", "float32 z", "z = 1", nil, `name "i" is reserved`},
		{"keyword", "float32 x", "float32 float", "float = x", nil, `name "float" is reserved`},
		{"builtin", "float32 threadIdx", "float32 z", "z = 1", nil, `name "threadIdx" is reserved`},
		{"twice", "float32 x", "float32 x", "x = x", nil, `parameter name "x" is used twice`},
		{"no outputs", "float32 x", " ", "x", nil, "no outputs"},
		{"empty body", "float32 x", "float32 z", " \n", nil, "empty body"},
		{"too many", strings.Repeat("float32 x, ", 0) + manyParams(24), "float32 z", "z = 0", nil, "25 inputs and outputs; at most 24"},
		{"host not func", "float32 x", "float32 z", "z = x", []rtc.Option{rtc.HostFunc(1)}, "HostFunc takes a func"},
		{"host count", "float32 x", "float32 z", "z = x", []rtc.Option{rtc.HostFunc(func(x []float32) {})},
			"takes 1 parameters; it must take 2, the inputs then the outputs: func(x float32 or []float32, z []float32)"},
		{"host input type", "float32 x", "float32 z", "z = x", []rtc.Option{rtc.HostFunc(func(x []float64, z []float32) {})},
			"parameter 0 (input x) is []float64; it must be float32 or []float32"},
		{"host output scalar", "float32 x", "float32 z", "z = x", []rtc.Option{rtc.HostFunc(func(x []float32, z float32) {})},
			"parameter 1 (output z) is float32; it must be []float32"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name := "k"
			if tc.name == "kernel name" {
				name = "1k"
			}
			k, err := rtc.NewElementwiseKernel(name, tc.in, tc.out, tc.body, tc.opts...)
			require.ErrorIs(t, err, backend.ErrInvalidValue)
			assert.ErrorContains(t, err, tc.text)
			assert.Nil(t, k)
		})
	}
	_, err := rtc.NewKernel("k", saxpySrc, rtc.Preamble("int x;"))
	assert.ErrorContains(t, err, "Preamble is an option of NewElementwiseKernel")

	k, err := rtc.NewElementwiseKernel("k", "  float32   a,int64 b  ", "uint8 z", "z = a + b")
	require.NoError(t, err)
	assert.Equal(t, "elementwise kernel k(float32 a, int64 b) -> (uint8 z)", k.String())
	assert.False(t, k.HasHost())
	assert.Equal(t, "k", k.Name())
	k, err = rtc.NewElementwiseKernel("iota", "", "int64 z", "z = i")
	require.NoError(t, err, "no inputs")
	assert.Equal(t, "elementwise kernel iota() -> (int64 z)", k.String())
}

func manyParams(n int) string {
	var ps []string
	for i := range n {
		ps = append(ps, fmt.Sprintf("float32 x%d", i))
	}
	return strings.Join(ps, ", ")
}

// TestElementwiseLaunchErrors: misuse is an error naming the parameter and
// what it accepts, before anything is queued.
func TestElementwiseLaunchErrors(t *testing.T) {
	s := newStream(t, freshPool(t))
	f := cuarray.On[float32](s)
	x, z := cuarray.Must(f.Zeros(8)), cuarray.Must(f.Zeros(8))
	x64 := cuarray.Must(cuarray.On[float64](s).Zeros(8))
	freed := cuarray.Must(f.Zeros(8))
	freed.UnsafeFree()
	big := cuarray.Must(f.Zeros(16))
	k := newAxpyEW(t, true)
	tests := []struct {
		name string
		args []any
		is   error
		text string
	}{
		{"count", []any{float32(1), x, z}, backend.ErrInvalidValue, "3 arguments; it takes 4, the inputs then the outputs"},
		{"input type", []any{float32(1), x64, x, z}, kernels.ErrUnsupportedDType, "input x is declared float32 but is a float64[8] array"},
		{"output type", []any{float32(1), x, x, x64}, kernels.ErrUnsupportedDType, "output z is declared float32"},
		{"output a scalar", []any{float32(1), x, x, float32(0)}, backend.ErrInvalidValue, "output z is a float32; outputs are arrays"},
		{"scalar of another type", []any{int32(1), x, x, z}, backend.ErrInvalidValue, "input a: 1 (int32) is not a float32"},
		{"wrapped array", []any{float32(1), cuarray.In(x), x, z}, backend.ErrInvalidValue, "is an In, Out or InOut argument; pass the *Array itself"},
		{"nil scalar", []any{nil, x, x, z}, backend.ErrInvalidValue, "input a: nil"},
		{"freed", []any{float32(1), freed, x, z}, cuarray.ErrFreed, "input x"},
		{"overlap", []any{float32(1), x, cuarray.Must(big.View(0, 8)), cuarray.Must(big.View(4, 8))}, cuarray.ErrShape,
			"output z float32[8] overlaps input y float32[8] in memory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := k.Launch(s, tc.args...)
			require.ErrorIs(t, err, tc.is)
			assert.ErrorContains(t, err, tc.text)
		})
	}

	ints, err := rtc.NewElementwiseKernel("ints", "uint8 a, int32 b", "int32 z", "z = a + b")
	require.NoError(t, err)
	zi := cuarray.Must(cuarray.On[int32](s).Zeros(2))
	for _, tc := range []struct {
		a, b any
		text string
	}{
		{300, int32(1), "300 (int) does not fit a uint8"},
		{-1, int32(1), "does not fit a uint8"},
		{uint8(1), 2.5, "2.5 (float64) is not a whole number a int32 holds"},
		{uint8(1), 1 << 40, "does not fit a int32"},
	} {
		err := ints.Launch(s, tc.a, tc.b, zi)
		require.ErrorIs(t, err, backend.ErrInvalidValue)
		assert.ErrorContains(t, err, tc.text)
	}
}

// TestElementwiseHostForm: a Go form that takes an input as a scalar
// refuses an array there, naming the parameter.
func TestElementwiseHostForm(t *testing.T) {
	needHost(t)
	s := newStream(t, freshPool(t))
	x, z := cuarray.Must(cuarray.On[float32](s).Ones(4)), cuarray.Must(cuarray.On[float32](s).Zeros(4))
	err := newAxpyEW(t, true).Launch(s, x, x, x, z)
	require.ErrorIs(t, err, backend.ErrInvalidValue)
	assert.ErrorContains(t, err, "input a is an array, but the HostFunc func(float32, []float32, []float32, []float32) takes it as a float32 (a scalar)")
	// Without the Go form the body takes a as an array like any input.
	require.NoError(t, newAxpyEW(t, false).Launch(s, x, x, x, z))
	assert.Equal(t, filled[float32](4, 2), read(t, z))
}
