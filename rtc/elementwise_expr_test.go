package rtc_test

import (
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/rtc"
)

// The body written once: C's statements and functions, computed on a GPU
// by the generated kernel and on the host backend by evaluating the body,
// against values computed here in Go.

// floatInputs are values around the bodies' branches (negative, zero,
// fractions, large), repeated past one evaluation chunk.
func floatInputs() []float32 {
	base := []float32{-100, -3.5, -1, -0.25, 0, 0.5, 1, 2.75, 10, 37}
	out := make([]float32, 1003)
	for i := range out {
		out[i] = base[i%len(base)] * float32(1+i/len(base)%3)
	}
	return out
}

// TestElementwiseBodyFloat: bodies of one float32 input and output.
func TestElementwiseBodyFloat(t *testing.T) {
	needKernels(t)
	rtc.SetKernelCacheDir(t, t.TempDir())
	s := newStream(t, freshPool(t))
	f32 := func(v float64) float32 { return float32(v) }
	tests := []struct {
		name, body string
		want       func(x float32) float32
		rel        float64 // relative error allowed: the math library's ulps
	}{
		{"if else", "if (x > 0) { z = x; } else { z = 0.125f * x; }", func(x float32) float32 {
			if x > 0 {
				return x
			}
			return 0.125 * x
		}, 0},
		{"else if", "if (x < -2) z = -1; else if (x < 2) z = x * x; else z = 4;", func(x float32) float32 {
			switch {
			case x < -2:
				return -1
			case x < 2:
				return x * x
			}
			return 4
		}, 0},
		{"ternary", "z = x >= 0 ? x : -x", func(x float32) float32 { return float32(math.Abs(float64(x))) }, 0},
		{"locals and compound assignment", "float t = x * 2; t += 1; z = t * t", func(x float32) float32 {
			t := x*2 + 1
			return t * t
		}, 0},
		{"output read after set", "z = x; z *= 3; z -= 1", func(x float32) float32 { return x*3 - 1 }, 0},
		{"double literal: a double product", "z = x * 0.1", func(x float32) float32 { return f32(float64(x) * 0.1) }, 0},
		{"math functions", "z = expf(x / 50) + sqrtf(fabsf(x)) - tanhf(x)", func(x float32) float32 {
			return f32(math.Exp(float64(x/50))) + f32(math.Sqrt(math.Abs(float64(x)))) - f32(math.Tanh(float64(x)))
		}, 1e-6},
		{"overloads: exp of a float is expf", "z = log1p(exp(x / 64)) + fmaxf(x, 1)", func(x float32) float32 {
			return f32(math.Log1p(float64(f32(math.Exp(float64(x/64)))))) + max(x, 1)
		}, 1e-6},
		{"float to int truncates", "int k = x; z = k", func(x float32) float32 { return float32(int32(x)) }, 0},
		{"the index", "z = i % 2 == 0 ? x : (float)n", nil, 0},
	}
	xs := floatInputs()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k, err := rtc.NewElementwiseKernel("body", "float32 x", "float32 z", tc.body)
			require.NoError(t, err)
			x := cuarray.Must(cuarray.On[float32](s).FromSlice(xs))
			z := cuarray.Must(rtc.Apply[float32](k, s, x))
			got := read(t, z)
			for i, v := range xs {
				var want float32
				if tc.want != nil {
					want = tc.want(v)
				} else if i%2 == 0 {
					want = v
				} else {
					want = float32(len(xs))
				}
				if tc.rel == 0 {
					require.Equal(t, want, got[i], "x[%d] = %g", i, v)
				} else {
					require.InEpsilon(t, want, got[i], tc.rel, "x[%d] = %g", i, v)
				}
			}
		})
	}
}

// TestElementwiseBodyIntegers: C's integer arithmetic: division and
// remainder truncating toward zero, unsigned char promoted to int in
// arithmetic and wrapped on assignment, mixed types converted.
func TestElementwiseBodyIntegers(t *testing.T) {
	needKernels(t)
	rtc.SetKernelCacheDir(t, t.TempDir())
	s := newStream(t, freshPool(t))
	as := []int32{-7, -7, 7, 7, 100, -100, 0, math.MaxInt32, math.MinInt32, 5}
	bs := []int32{2, -2, 2, -2, 7, 7, 3, 1000, 3, 5}
	t.Run("division", func(t *testing.T) {
		k, err := rtc.NewElementwiseKernel("divmod", "int32 a, int32 b", "int32 q, int32 r, float64 f",
			"q = a / b; r = a % b; f = (double)a / b")
		require.NoError(t, err)
		f := cuarray.On[int32](s)
		outs, err := k.LaunchNew(s, cuarray.Must(f.FromSlice(as)), cuarray.Must(f.FromSlice(bs)))
		require.NoError(t, err)
		q, r, fl := read(t, outs[0].(*cuarray.Array[int32])), read(t, outs[1].(*cuarray.Array[int32])), read(t, outs[2].(*cuarray.Array[float64]))
		for j := range as {
			assert.Equal(t, as[j]/bs[j], q[j], "%d / %d", as[j], bs[j])
			assert.Equal(t, as[j]%bs[j], r[j], "%d %% %d", as[j], bs[j])
			assert.Equal(t, float64(as[j])/float64(bs[j]), fl[j], "(double)%d / %d", as[j], bs[j])
		}
	})
	t.Run("a scalar divisor", func(t *testing.T) {
		k, err := rtc.NewElementwiseKernel("div3", "int64 a, int32 d", "int64 q", "q = a / d + i")
		require.NoError(t, err)
		a := cuarray.Must(cuarray.On[int64](s).FromSlice([]int64{-9, -8, -1, 0, 1, 8, 9, 1 << 40}))
		q := cuarray.Must(rtc.Apply[int64](k, s, a, 3))
		assert.Equal(t, []int64{-3, -1, 2, 3, 4, 7, 9, 1<<40/3 + 7}, read(t, q))
	})
	t.Run("uint8 promotes and wraps", func(t *testing.T) {
		k, err := rtc.NewElementwiseKernel("u8", "uint8 a, uint8 b", "int32 diff, uint8 sum, uint8 mean",
			"diff = a - b; sum = a + b; mean = (a + b) / 2")
		require.NoError(t, err)
		f := cuarray.On[uint8](s)
		outs, err := k.LaunchNew(s, cuarray.Must(f.FromSlice([]uint8{1, 200, 255, 0})), cuarray.Must(f.FromSlice([]uint8{2, 100, 255, 0})))
		require.NoError(t, err)
		assert.Equal(t, []int32{-1, 100, 0, 0}, read(t, outs[0].(*cuarray.Array[int32])), "int arithmetic, not uint8's")
		assert.Equal(t, []uint8{3, 44, 254, 0}, read(t, outs[1].(*cuarray.Array[uint8])), "assignment wraps")
		assert.Equal(t, []uint8{1, 150, 255, 0}, read(t, outs[2].(*cuarray.Array[uint8])), "the sum does not wrap before the division")
	})
}

// TestElementwiseBodyDivisionByZeroOnHost: the host defines what C does
// not (a GPU's quotient is unspecified): 0, in the branch not taken too.
func TestElementwiseBodyDivisionByZeroOnHost(t *testing.T) {
	needHost(t)
	s := newStream(t, freshPool(t))
	k, err := rtc.NewElementwiseKernel("safediv", "int32 a, int32 b", "int32 q, int32 guarded",
		"q = a / b; guarded = b != 0 ? a / b : -1")
	require.NoError(t, err)
	f := cuarray.On[int32](s)
	outs, err := k.LaunchNew(s, cuarray.Must(f.FromSlice([]int32{7, 7, math.MinInt32})), cuarray.Must(f.FromSlice([]int32{0, 2, -1})))
	require.NoError(t, err)
	assert.Equal(t, []int32{0, 3, math.MinInt32}, read(t, outs[0].(*cuarray.Array[int32])))
	assert.Equal(t, []int32{-1, 3, math.MinInt32}, read(t, outs[1].(*cuarray.Array[int32])))
}

// TestElementwiseHostCannotEvaluate: a body the host cannot evaluate
// still makes a kernel (a GPU compiles it); a launch on the host backend
// says where in the body and why, and what to give instead; with a
// HostFunc the kernel runs.
func TestElementwiseHostCannotEvaluate(t *testing.T) {
	needHost(t)
	s := newStream(t, freshPool(t))
	f := cuarray.On[float32](s)
	tests := []struct {
		name, in, body string
		opts           []rtc.Option
		why            string
	}{
		{"a Preamble's function", "float32 x", "z = sq(x)", []rtc.Option{rtc.Preamble("__device__ float sq(float v) { return v * v; }")},
			"(1:5: unknown function sq (did you mean sqrt?)"},
		{"a loop", "float32 x", "for (int k = 0; k < 3; k++) z += x", nil, "(1:1: for statements are not accepted"},
		{"a macro of CompileOptions", "float32 x", "z = x * SCALE", []rtc.Option{rtc.CompileOptions("-DSCALE=2")},
			"(1:9: unknown name SCALE"},
		{"a CUDA intrinsic", "float32 x", "z = __expf(x)", nil, "(1:5: unknown function __expf (did you mean expf?)"},
		{"a parameter named as a function", "float32 exp", "z = exp", nil, "(parameter name exp is reserved"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k, err := rtc.NewElementwiseKernel("k", tc.in, "float32 z", tc.body, tc.opts...)
			require.NoError(t, err, "the kernel may still run on a GPU")
			x, z := cuarray.Must(f.Full(2, 4)), cuarray.Must(f.Zeros(4))
			err = k.Launch(s, x, z)
			require.ErrorIs(t, err, backend.ErrNotSupported)
			assert.ErrorContains(t, err, "rtc: elementwise kernel k: the host backend cannot evaluate its body "+tc.why)
			assert.ErrorContains(t, err, "give NewElementwiseKernel a HostFunc, func(")
			if strings.Contains(tc.name, "Preamble") {
				assert.ErrorContains(t, err, "; the host evaluates the body alone, without its Preamble)")
			} else {
				assert.NotContains(t, err.Error(), "Preamble")
			}

			k, err = rtc.NewElementwiseKernel("k", tc.in, "float32 z", tc.body, append(tc.opts, rtc.HostFunc(func(x, z []float32) {
				for i := range z {
					z[i] = x[i] * x[i]
				}
			}))...)
			require.NoError(t, err)
			require.NoError(t, k.Launch(s, x, z), "the HostFunc runs instead")
			assert.Equal(t, filled[float32](4, 4), read(t, z))
		})
	}
}

// TestElementwiseHostSplitKeepsIndex: a launch split across goroutines,
// and broadcast inputs gathered block by block, give each element its
// index in the whole launch (i) and the launch's count (n), and the values
// of one pass, the same as the Go form's.
func TestElementwiseHostSplitKeepsIndex(t *testing.T) {
	needHost(t)
	// Pieces of at least 1000 elements on 4 goroutines, gathers of 77
	// (crossing rows, and pieces, at odd places).
	rtc.SetElementwiseHostSplit(t, 1000, 77)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	s := newStream(t, freshPool(t))
	f := cuarray.On[float32](s)
	const rows, cols = 37, 301
	body := "idx = i; cnt = n; z = x + 1000 * c + r"
	goFn := func(x, c, r []float32, idx, cnt []int64, z []float32) {
		for i := range z {
			idx[i], cnt[i] = int64(i), int64(len(z))
			z[i] = x[i] + 1000*c[i] + r[i]
		}
	}
	xs, cs, rs := make([]float32, rows*cols), make([]float32, rows), make([]float32, cols)
	for i := range xs {
		xs[i] = float32(i % 7)
	}
	for i := range cs {
		cs[i] = float32(i)
	}
	for i := range rs {
		rs[i] = float32(i) / 4
	}
	x := cuarray.Must(f.FromSlice(xs, rows, cols))
	c := cuarray.Must(f.FromSlice(cs, rows, 1))
	r := cuarray.Must(f.FromSlice(rs, 1, 1, cols))
	want := make([]float32, rows*cols)
	for i := range want {
		want[i] = xs[i] + 1000*cs[i/cols] + rs[i%cols]
	}
	results := map[bool][]float32{}
	eachForm(t, func(t *testing.T, withGo bool) {
		k, err := rtc.NewElementwiseKernel("split", "float32 x, float32 c, float32 r", "int64 idx, int64 cnt, float32 z", body, goForm(withGo, goFn)...)
		require.NoError(t, err)
		outs, err := k.LaunchNew(s, x, c, r)
		require.NoError(t, err)
		idx, cnt, z := outs[0].(*cuarray.Array[int64]), outs[1].(*cuarray.Array[int64]), outs[2].(*cuarray.Array[float32])
		assert.Equal(t, []int{1, rows, cols}, z.Shape())
		gotIdx := read(t, idx)
		for i, v := range gotIdx {
			require.Equal(t, int64(i), v, "i at element %d", i)
		}
		assert.Equal(t, filled[int64](rows*cols, rows*cols), read(t, cnt), "n is the whole launch's count")
		got := read(t, z)
		assert.Equal(t, want, got)
		results[withGo] = got

		// In place, split: x += its row, all arrays but one.
		y := cuarray.Must(f.FromSlice(xs, rows, cols))
		add := newAddEW(t, withGo)
		require.NoError(t, add.Launch(s, y, cuarray.Must(f.FromSlice(rs)), y))
		gotY := read(t, y)
		for i := range want {
			require.Equal(t, xs[i]+rs[i%cols], gotY[i], "element %d", i)
		}
	})
	if len(results) == 2 {
		assert.Equal(t, results[true], results[false], "the body evaluated gives what the Go form gives")
	}
}

// TestElementwiseHostGather: a broadcast input's elements, from any
// element on, through strides of 0 (a fill), 1 (a copy) and others (for
// strided inputs), with carries across dimensions.
func TestElementwiseHostGather(t *testing.T) {
	src := make([]float32, 100)
	for i := range src {
		src[i] = float32(i)
	}
	tests := []struct {
		dims, strides []int
	}{
		{[]int{4, 5}, []int{0, 1}},        // a row
		{[]int{4, 5}, []int{1, 0}},        // a column
		{[]int{3, 4, 5}, []int{20, 0, 1}}, // a row per plane
		{[]int{3, 4, 5}, []int{0, 5, 0}},  // the middle one
		{[]int{6, 7}, []int{1, 3}},        // a stride of 3 inside
		{[]int{2, 3, 4}, []int{2, 0, 12}}, // the innermost strided
		{[]int{17}, []int{2}},             // one dimension
	}
	for _, tc := range tests {
		n := prod(tc.dims)
		want := make([]float32, n)
		idx := make([]int, len(tc.dims))
		for i := range want {
			off := 0
			for d, c := range idx {
				off += c * tc.strides[d]
			}
			want[i] = src[off]
			for d := len(idx) - 1; d >= 0; d-- {
				if idx[d]++; idx[d] < tc.dims[d] {
					break
				}
				idx[d] = 0
			}
		}
		for _, lohi := range [][2]int{{0, n}, {1, n}, {0, 1}, {n - 1, n}, {n / 3, 2 * n / 3}, {3, 3}} {
			lo, hi := lohi[0], lohi[1]
			assert.Equal(t, want[lo:hi], rtc.ElementwiseGather(src, tc.dims, tc.strides, lo, hi), "%v %v [%d, %d)", tc.dims, tc.strides, lo, hi)
		}
	}
}
