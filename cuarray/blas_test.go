package cuarray_test

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/internal/testsupport/blasref"
	"github.com/gocuda/gocuda/internal/testsupport/testhook"
	"github.com/gocuda/gocuda/kernels"
)

// The reference is the schoolbook product in float64 on the host.
func naiveGemm[T float32 | float64](ta, tb bool, alpha T, a []T, ar, ac int, b []T, br, bc int, beta T, c []T) []T {
	m, k := ar, ac
	if ta {
		m, k = ac, ar
	}
	n := bc
	if tb {
		n = br
	}
	return blasref.Gemm(ta, tb, m, n, k, alpha, a, ac, b, bc, beta, c, n)
}

func randoms[T float32 | float64](rng *rand.Rand, n int) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = T(rng.Float64()*2 - 1)
	}
	return out
}

func requireClose[T float32 | float64](t *testing.T, want, got []T, tol float64) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		if d := math.Abs(float64(want[i]) - float64(got[i])); !(d <= tol*max(1, math.Abs(float64(want[i])))) {
			t.Fatalf("element %d: want %v, got %v (difference %g, tolerance %g)", i, want[i], got[i], d, tol)
		}
	}
}

func TestMatMulSmallExact(t *testing.T) {
	a := cuarray.Must(cuarray.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3))
	b := cuarray.Must(cuarray.FromSlice([]float32{7, 8, 9, 10, 11, 12}, 3, 2))
	c := cuarray.Must(cuarray.Zeros[float32](2, 2))
	require.NoError(t, errOf(cuarray.MatMul(c, a, b)))
	assert.Equal(t, []float32{58, 64, 139, 154}, read(t, c))

	// a·aᵀ through Gemm's flags, accumulating onto c with beta = 1.
	require.NoError(t, errOf(cuarray.Gemm(c, false, true, 1, a, a, 1)))
	assert.Equal(t, []float32{58 + 14, 64 + 32, 139 + 32, 154 + 77}, read(t, c))
}

type gemmShape struct {
	ta, tb      bool
	m, n, k     int
	alpha, beta float64
}

func TestGemmAgainstNaive(t *testing.T) {
	cases := []gemmShape{
		{m: 4, n: 4, k: 4, alpha: 1},
		{m: 3, n: 5, k: 7, alpha: 1},
		{ta: true, m: 3, n: 5, k: 7, alpha: 1},
		{tb: true, m: 3, n: 5, k: 7, alpha: 1},
		{ta: true, tb: true, m: 6, n: 2, k: 9, alpha: 1},
		{m: 33, n: 17, k: 65, alpha: -0.5, beta: 2},
		{ta: true, tb: true, m: 40, n: 70, k: 3, alpha: 3, beta: 1},
		{m: 3, n: 4, k: 0, alpha: 1, beta: 2},
		{m: 1, n: 1, k: 100, alpha: 1},
	}
	for _, tc := range cases {
		name := fmtCase(tc)
		t.Run(name+"/float32", func(t *testing.T) { gemmAgainstNaive[float32](t, tc, 1e-5) })
		t.Run(name+"/float64", func(t *testing.T) { gemmAgainstNaive[float64](t, tc, 1e-12) })
	}
}

func fmtCase(tc gemmShape) string {
	s := ""
	if tc.ta {
		s += "aT"
	}
	if tc.tb {
		s += "bT"
	}
	return s + "_" + strconv.Itoa(tc.m) + "x" + strconv.Itoa(tc.n) + "x" + strconv.Itoa(tc.k)
}

func gemmAgainstNaive[T float32 | float64](t *testing.T, tc gemmShape, tol float64) {
	rng := rand.New(rand.NewPCG(uint64(tc.m*1000+tc.n), uint64(tc.k)))
	ar, ac, br, bc := blasref.Shapes(tc.ta, tc.tb, tc.m, tc.n, tc.k)
	ha, hb, hc := randoms[T](rng, ar*ac), randoms[T](rng, br*bc), randoms[T](rng, tc.m*tc.n)
	a := cuarray.Must(cuarray.FromSlice(ha, ar, ac))
	b := cuarray.Must(cuarray.FromSlice(hb, br, bc))
	c := cuarray.Must(cuarray.FromSlice(hc, tc.m, tc.n))
	require.NoError(t, errOf(cuarray.Gemm(c, tc.ta, tc.tb, T(tc.alpha), a, b, T(tc.beta))))
	// The GPU may fuse multiply-adds and sum in another order: a
	// tolerance relative to the size of the terms.
	requireClose(t, naiveGemm(tc.ta, tc.tb, T(tc.alpha), ha, ar, ac, hb, br, bc, T(tc.beta), hc), read(t, c), tol*float64(max(tc.k, 1)))
}

func TestGemvBothWays(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const m, n = 37, 11
	ha := randoms[float64](rng, m*n)
	a := cuarray.Must(cuarray.FromSlice(ha, m, n))
	for _, trans := range []bool{false, true} {
		lenX, lenY := n, m
		if trans {
			lenX, lenY = m, n
		}
		hx, hy := randoms[float64](rng, lenX), randoms[float64](rng, lenY)
		x := cuarray.Must(cuarray.FromSlice(hx))
		y := cuarray.Must(cuarray.FromSlice(hy))
		require.NoError(t, errOf(cuarray.Gemv(y, trans, 2, a, x, -1)))
		// y as a lenY × 1 product: op(a)·x with x a lenX × 1 matrix.
		want := naiveGemm(trans, false, 2, ha, m, n, hx, lenX, 1, -1, hy)
		requireClose(t, want, read(t, y), 1e-12*n)
	}
}

func TestGemvFloat32OnAStream(t *testing.T) {
	s := newStream(t, freshPool(t))
	f := cuarray.On[float32](s)
	a := cuarray.Must(f.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3))
	x := cuarray.Must(f.FromSlice([]float32{1, 0, -1}))
	y := cuarray.Must(f.Full(100, 2))
	require.NoError(t, errOf(f.Gemv(y, false, 1, a, x, 0.5)))
	assert.Equal(t, []float32{-2 + 50, -2 + 50}, read(t, y))
	xt := cuarray.Must(f.FromSlice([]float32{1, 1}))
	yt := cuarray.Must(f.New(3))
	require.NoError(t, errOf(f.Gemv(yt, true, 1, a, xt, 0))) // beta 0: yt's garbage is not read
	assert.Equal(t, []float32{5, 7, 9}, read(t, yt))
}

// TestGemmOnViews multiplies arrays that start inside their buffers: rows
// sliced from a larger matrix and a reshaped vector, writing into a slice
// of another matrix whose other rows must stay untouched.
func TestGemmOnViews(t *testing.T) {
	big := cuarray.Must(cuarray.FromSlice(iota[float64](8*5), 8, 5))
	a := cuarray.Must(big.Slice(3, 6)) // rows 3..5: a 3 × 5 at an offset
	flat := cuarray.Must(cuarray.FromSlice(iota[float64](20)))
	b := cuarray.Must(cuarray.Must(flat.View(10, 10)).Reshape(5, 2)) // elements 10..19 as 5 × 2
	out := cuarray.Must(cuarray.Full[float64](-7, 6, 2))
	c := cuarray.Must(out.Slice(2, 5))
	require.NoError(t, errOf(cuarray.MatMul(c, a, b)))

	ha, hb := iota[float64](40)[15:30], iota[float64](20)[10:]
	want := append(filled[float64](4, -7), naiveGemm(false, false, 1, ha, 3, 5, hb, 5, 2, 0, nil)...)
	want = append(want, filled[float64](2, -7)...)
	assert.Equal(t, want, read(t, out))
}

func TestBLASErrors(t *testing.T) {
	f32 := func(shape ...int) *cuarray.Array[float32] { return cuarray.Must(cuarray.Zeros[float32](shape...)) }
	a34, b52, c32 := f32(3, 4), f32(5, 2), f32(3, 2)
	freed := f32(4, 2)
	freed.UnsafeFree()
	big := f32(6, 4)
	top, bottom := cuarray.Must(big.Slice(0, 3)), cuarray.Must(big.Slice(2, 5))
	sq := f32(4, 4)
	i32 := cuarray.Must(cuarray.Zeros[int32](2, 2))
	cases := []struct {
		name string
		err  error
		is   error
		want []string
	}{
		{"inner dimensions", errOf(cuarray.MatMul(c32, a34, b52)), cuarray.ErrShape,
			[]string{"MatMul: a is [3 4], b is [5 2]: inner dimensions 4 and 5 differ"}},
		{"inner dimensions transposed", errOf(cuarray.Gemm(c32, true, false, 1, a34, b52, 0)), cuarray.ErrShape,
			[]string{"a is [3 4] (transposed: [4 3]), b is [5 2]: inner dimensions 3 and 5 differ"}},
		{"result shape", errOf(cuarray.MatMul(f32(3, 3), a34, f32(4, 2))), cuarray.ErrShape,
			[]string{"the product is [3 2], but c is [3 3]"}},
		{"not 2-D", errOf(cuarray.MatMul(c32, f32(3, 4, 1), b52)), cuarray.ErrShape,
			[]string{"a is [3 4 1]: it must be a 2-D matrix"}},
		{"gemv x length", errOf(cuarray.Gemv(f32(3), false, 1, a34, f32(3), 0)), cuarray.ErrShape,
			[]string{"Gemv: a is [3 4], x is [3]: inner dimensions 4 and 3 differ"}},
		{"gemv y length", errOf(cuarray.Gemv(f32(3), true, 1, a34, f32(3), 0)), cuarray.ErrShape,
			[]string{"the product is [4], but y is [3]"}},
		{"gemv x 2-D", errOf(cuarray.Gemv(f32(3), false, 1, a34, f32(4, 1), 0)), cuarray.ErrShape,
			[]string{"x is [4 1]: it must be a 1-D vector"}},
		{"int32", errOf(cuarray.MatMul(i32, i32, i32)), kernels.ErrUnsupportedDType,
			[]string{"MatMul does not take int32; it takes float32, float64"}},
		{"freed operand", errOf(cuarray.MatMul(c32, f32(3, 4), freed)), cuarray.ErrFreed,
			[]string{"MatMul: b float32[4 2]"}},
		{"nil operand", errOf(cuarray.Gemm(c32, false, false, 1, nil, b52, 0)), backend.ErrInvalidValue,
			[]string{"a is a nil array"}},
		{"in place", errOf(cuarray.MatMul(sq, sq, f32(4, 4))), cuarray.ErrShape,
			[]string{"c float32[4 4] shares memory with a float32[4 4]"}},
		{"partial overlap", errOf(cuarray.MatMul(cuarray.Must(bottom.Reshape(4, 3)), f32(4, 4), cuarray.Must(top.Reshape(4, 3)))), cuarray.ErrShape,
			[]string{"shares memory with b"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.ErrorIs(t, tc.err, tc.is)
			for _, w := range tc.want {
				assert.Contains(t, tc.err.Error(), w)
			}
		})
	}
}

func TestGemmArraysOfDifferentDevices(t *testing.T) {
	twoDevices(t)
	s1, err := cuarray.DefaultStream(1)
	require.NoError(t, err)
	a := cuarray.Must(cuarray.Zeros[float32](2, 2))
	b := cuarray.Must(cuarray.On[float32](s1).Zeros(2, 2))
	_, err = cuarray.MatMul(cuarray.Must(cuarray.Zeros[float32](2, 2)), a, b)
	require.ErrorIs(t, err, cuarray.ErrDevice)
	assert.Contains(t, err.Error(), "c is on device 0, b on device 1")
}

// TestGemmCrossStream writes a on stream A behind slow work, then
// multiplies on stream B with no synchronization written by the test.
func TestGemmCrossStream(t *testing.T) {
	p := freshPool(t)
	sa, sb := newStream(t, p), newStream(t, p)
	fa, fb := cuarray.On[float32](sa), cuarray.On[float32](sb)
	const n = 64
	a := cuarray.Must(fa.New(n, n))
	require.NoError(t, testhook.Spin(p.Device(), sa.Backend(), 200*time.Millisecond))
	require.NoError(t, fa.Fill(a, 2))

	ones := cuarray.Must(fb.Ones(n, n))
	c := cuarray.Must(fb.New(n, n))
	require.NoError(t, errOf(fb.MatMul(c, a, ones))) // B waits for A's fill
	assert.Equal(t, filled[float32](n*n, 2*n), read(t, c))

	// And back: A overwrites a after B's slow read of it.
	require.NoError(t, testhook.Spin(p.Device(), sb.Backend(), 100*time.Millisecond))
	require.NoError(t, errOf(fb.Gemm(c, true, false, 1, a, ones, 0)))
	require.NoError(t, fa.Fill(a, -1))
	assert.Equal(t, filled[float32](n*n, 2*n), read(t, c))
}
