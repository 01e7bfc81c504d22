package blas_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/blas"
	"github.com/gocuda/gocuda/config"
	"github.com/gocuda/gocuda/half"
	"github.com/gocuda/gocuda/internal/testsupport/blasref"
)

// elem is every element type the tests move to and from a device.
type elem interface{ blas.Float | blas.HalfOut }

// uploadAny is upload for any element type.
func uploadAny[T elem](t testing.TB, dev backend.Device, s backend.Stream, data []T) backend.Ptr {
	t.Helper()
	var z T
	size := uint64(len(data)) * uint64(unsafe.Sizeof(z))
	p, err := dev.Alloc(max(size, 8))
	require.NoError(t, err)
	t.Cleanup(func() {
		assert.NoError(t, s.Synchronize())
		assert.NoError(t, dev.Free(p))
	})
	if len(data) > 0 {
		require.NoError(t, dev.CopyHtoD(p, unsafe.Pointer(&data[0]), size, s))
	}
	return p
}

func downloadAny[T elem](t testing.TB, dev backend.Device, s backend.Stream, p backend.Ptr, n int) []T {
	t.Helper()
	out := make([]T, n)
	if n > 0 {
		var z T
		require.NoError(t, dev.CopyDtoH(unsafe.Pointer(&out[0]), p, uint64(n)*uint64(unsafe.Sizeof(z)), s))
	}
	return out
}

// f64 widens any element exactly.
func f64[T elem](v T) float64 {
	switch x := any(v).(type) {
	case half.Float16:
		return x.Float64()
	case half.BFloat16:
		return x.Float64()
	case float32:
		return float64(x)
	case float64:
		return x
	}
	panic("unreachable")
}

// round rounds a float64 to T once.
func round[T elem](v float64) T {
	var z T
	switch any(z).(type) {
	case half.Float16:
		return any(half.Float16FromFloat64(v)).(T)
	case half.BFloat16:
		return any(half.BFloat16FromFloat64(v)).(T)
	case float32:
		return any(float32(v)).(T)
	}
	return any(v).(T)
}

// unitRoundoff is half an ulp of 1 in T, relative: what rounding one
// result to T may cost.
func unitRoundoff[T elem]() float64 {
	var z T
	switch any(z).(type) {
	case half.Float16:
		return 0x1p-11
	case half.BFloat16:
		return 0x1p-8
	case float32:
		return 0x1p-24
	}
	return 0x1p-53
}

// storedHalf is a rows × cols row-major matrix with rows ld apart of
// random values (normal, so with fractions that float16 and bfloat16
// must round); the padding holds pad.
func storedHalf[T elem](rng *rand.Rand, rows, cols, ld int, pad T) []T {
	n := 0
	if rows > 0 {
		n = (rows-1)*ld + cols
	}
	out := make([]T, n)
	for i := range out {
		if i%ld < cols {
			out[i] = round[T](rng.NormFloat64())
		} else {
			out[i] = pad
		}
	}
	return out
}

type exCase struct {
	name             string
	ta, tb           bool
	m, n, k          int
	alpha, beta      float64
	padA, padB, padC int
	nanC             bool
	batch            int // 0: one GemmEx; else GemmStridedBatchedEx
	broadcastB       bool
	extraStride      int // elements between one batch's C and the next's
}

var exCases = []exCase{
	{name: "square", m: 8, n: 8, k: 8, alpha: 1},
	{name: "odd sizes", m: 13, n: 7, k: 29, alpha: 1},
	{name: "transA", ta: true, m: 5, n: 9, k: 11, alpha: 1},
	{name: "transB", tb: true, m: 5, n: 9, k: 11, alpha: 1},
	{name: "both transposed, padded", ta: true, tb: true, m: 6, n: 3, k: 17, alpha: 1, padA: 3, padB: 1, padC: 2},
	{name: "alpha beta", m: 9, n: 4, k: 6, alpha: -0.75, beta: 1.5},
	{name: "beta 0 ignores NaN in C", m: 4, n: 5, k: 3, alpha: 2, nanC: true},
	{name: "k 0 scales C by beta", m: 3, n: 5, k: 0, alpha: 1, beta: -2, padC: 1},
	{name: "k 0 beta 0 zeroes C", m: 3, n: 4, k: 0, alpha: 1, nanC: true, padC: 2},
	{name: "k 0 beta 1 keeps C", m: 2, n: 2, k: 0, alpha: 1, beta: 1},
	{name: "m 0", m: 0, n: 3, k: 4, alpha: 1},
	{name: "larger than a tile", tb: true, m: 67, n: 131, k: 257, alpha: 0.5, beta: 0.25, padA: 1},
	{name: "batched", m: 7, n: 5, k: 9, alpha: 1, beta: 0.5, batch: 3},
	{name: "batched transposed padded", ta: true, tb: true, m: 4, n: 6, k: 5, alpha: -1, beta: 2, padA: 2, padB: 1, padC: 3, batch: 4},
	{name: "batched, one B for all", m: 5, n: 3, k: 7, alpha: 1, batch: 3, broadcastB: true},
	{name: "batched, gaps between Cs", m: 3, n: 3, k: 3, alpha: 1, beta: 1, batch: 2, extraStride: 5},
	{name: "batched k 0", m: 3, n: 2, k: 0, alpha: 1, beta: 3, batch: 2},
	{name: "batch 0", m: 3, n: 3, k: 3, alpha: 1, batch: -1},
}

// TestGemmExMatchesFloat64Reference runs every input and output type
// GemmEx takes against a float64 product of the same (exactly widened)
// inputs, within the tolerance docs/half.md states.
func TestGemmExMatchesFloat64Reference(t *testing.T) {
	dev := device(t, 0)
	s := stream(t, dev)
	for _, tc := range exCases {
		t.Run(tc.name+"/float16", func(t *testing.T) { runEx[half.Float16, half.Float16](t, dev, s, tc) })
		t.Run(tc.name+"/float16 to float32", func(t *testing.T) { runEx[half.Float16, float32](t, dev, s, tc) })
		t.Run(tc.name+"/bfloat16", func(t *testing.T) { runEx[half.BFloat16, half.BFloat16](t, dev, s, tc) })
		t.Run(tc.name+"/bfloat16 to float32", func(t *testing.T) { runEx[half.BFloat16, float32](t, dev, s, tc) })
	}
}

// TestGemmStridedBatchedMatchesReference is the float32 and float64
// batched product against the schoolbook reference, one product at a
// time, with TF32 off (the default).
func TestGemmStridedBatchedMatchesReference(t *testing.T) {
	dev := device(t, 0)
	s := stream(t, dev)
	for _, tc := range exCases {
		if tc.batch == 0 {
			continue
		}
		t.Run(tc.name+"/float32", func(t *testing.T) { runEx[float32, float32](t, dev, s, tc) })
		t.Run(tc.name+"/float64", func(t *testing.T) { runEx[float64, float64](t, dev, s, tc) })
	}
}

func runEx[T, C elem](t *testing.T, dev backend.Device, s backend.Stream, tc exCase) {
	rng := rand.New(rand.NewPCG(uint64(tc.m*1000+tc.n), uint64(tc.k*10+tc.batch+3)))
	ar, ac, br, bc := blasref.Shapes(tc.ta, tc.tb, tc.m, tc.n, tc.k)
	lda, ldb, ldc := max(1, ac)+tc.padA, max(1, bc)+tc.padB, max(1, tc.n)+tc.padC
	batch := max(tc.batch, 1)
	if tc.batch < 0 {
		batch = 0
	}
	span := func(rows, cols, ld int) int {
		if rows == 0 || cols == 0 {
			return 0
		}
		return (rows-1)*ld + cols
	}
	sa, sb, sc := span(ar, ac, lda)+1, span(br, bc, ldb), span(tc.m, tc.n, ldc)+tc.extraStride
	if tc.broadcastB {
		sb = 0
	}
	mk := func(rows, cols, ld, stride int, pad float64) (out []T) {
		for i := range max(batch, 1) {
			one := storedHalf(rng, rows, cols, ld, round[T](pad))
			if i > 0 && stride == 0 {
				break
			}
			out = append(out, one...)
			for len(out) < (i+1)*stride {
				out = append(out, round[T](pad))
			}
		}
		return out
	}
	a := mk(ar, ac, lda, sa, math.NaN()) // NaN between rows and batches: reading it shows
	b := mk(br, bc, ldb, sb, math.NaN())
	var c []C
	for i := range max(batch, 1) {
		one := storedHalf(rng, tc.m, tc.n, ldc, round[C](12345)) // the padding must survive
		if tc.nanC {
			for j := range one {
				if j%ldc < tc.n {
					one[j] = round[C](math.NaN())
				}
			}
		}
		c = append(c, one...)
		for len(c) < (i+1)*sc {
			c = append(c, round[C](12345))
		}
	}
	pa, pb, pc := uploadAny(t, dev, s, a), uploadAny(t, dev, s, b), uploadAny(t, dev, s, c)
	var err error
	switch {
	case tc.batch == 0:
		err = gemmEx[T, C](dev, s, tc, pa, lda, pb, ldb, pc, ldc)
	default:
		err = gemmBatched[T, C](dev, s, tc, pa, lda, sa, pb, ldb, sb, pc, ldc, sc, batch)
	}
	require.NoError(t, err)
	got := downloadAny[C](t, dev, s, pc, len(c))

	for i := range batch {
		for r := range tc.m {
			for j := range tc.n {
				var sum, mag float64
				for l := range tc.k {
					ai, bi := r*lda+l, l*ldb+j
					if tc.ta {
						ai = l*lda + r
					}
					if tc.tb {
						bi = j*ldb + l
					}
					x, y := f64(a[i*sa+ai]), f64(b[i*sb+bi])
					sum += x * y
					mag += math.Abs(x * y)
				}
				ci := i*sc + r*ldc + j
				want := tc.alpha * sum
				mag *= math.Abs(tc.alpha)
				if tc.beta != 0 {
					want += tc.beta * f64(c[ci])
					mag += math.Abs(tc.beta * f64(c[ci]))
				}
				// float32 arithmetic over k terms, then rounding to C's type:
				// of the result, and (cuBLAS's epilogue for a bfloat16 C on the
				// H100) of alpha·AB or beta·C before they are added.
				tol := float64(tc.k+2)*0x1p-24*mag + unitRoundoff[C]()*(math.Abs(want)+mag)
				if unitRoundoff[T]() == 0x1p-53 {
					tol = float64(tc.k+2)*0x1p-53*mag + 1e-300
				}
				g := f64(got[ci])
				if math.IsNaN(g) || math.Abs(g-want) > tol {
					t.Fatalf("batch %d element (%d, %d): want %v ± %.3g, got %v", i, r, j, want, tol, g)
				}
			}
		}
	}
	// Nothing outside the Cs was written.
	for i, v := range got {
		within := false
		for bi := range batch {
			off := i - bi*sc
			if off >= 0 && off < span(tc.m, tc.n, ldc) && off%ldc < tc.n {
				within = true
			}
		}
		if !within {
			require.Equal(t, f64(c[i]), f64(v), "C's element %d lies outside every product's C", i)
		}
	}
}

// gemmEx and gemmBatched call the function for T and C: GemmEx for the
// 16-bit types, and the batched forms.
func gemmEx[T, C elem](dev backend.Device, s backend.Stream, tc exCase, a backend.Ptr, lda int, b backend.Ptr, ldb int, c backend.Ptr, ldc int) error {
	al, be := float32(tc.alpha), float32(tc.beta)
	switch any(*new(T)).(type) {
	case half.Float16:
		switch any(*new(C)).(type) {
		case half.Float16:
			return blas.GemmEx[half.Float16, half.Float16](dev, s, tc.ta, tc.tb, tc.m, tc.n, tc.k, al, a, lda, b, ldb, be, c, ldc)
		case float32:
			return blas.GemmEx[half.Float16, float32](dev, s, tc.ta, tc.tb, tc.m, tc.n, tc.k, al, a, lda, b, ldb, be, c, ldc)
		}
	case half.BFloat16:
		switch any(*new(C)).(type) {
		case half.BFloat16:
			return blas.GemmEx[half.BFloat16, half.BFloat16](dev, s, tc.ta, tc.tb, tc.m, tc.n, tc.k, al, a, lda, b, ldb, be, c, ldc)
		case float32:
			return blas.GemmEx[half.BFloat16, float32](dev, s, tc.ta, tc.tb, tc.m, tc.n, tc.k, al, a, lda, b, ldb, be, c, ldc)
		}
	}
	return fmt.Errorf("no GemmEx for %T to %T", *new(T), *new(C))
}

func gemmBatched[T, C elem](dev backend.Device, s backend.Stream, tc exCase, a backend.Ptr, lda, sa int, b backend.Ptr, ldb, sb int, c backend.Ptr, ldc, sc, batch int) error {
	al, be := float32(tc.alpha), float32(tc.beta)
	switch any(*new(T)).(type) {
	case half.Float16:
		switch any(*new(C)).(type) {
		case half.Float16:
			return blas.GemmStridedBatchedEx[half.Float16, half.Float16](dev, s, tc.ta, tc.tb, tc.m, tc.n, tc.k, al, a, lda, sa, b, ldb, sb, be, c, ldc, sc, batch)
		case float32:
			return blas.GemmStridedBatchedEx[half.Float16, float32](dev, s, tc.ta, tc.tb, tc.m, tc.n, tc.k, al, a, lda, sa, b, ldb, sb, be, c, ldc, sc, batch)
		}
	case half.BFloat16:
		switch any(*new(C)).(type) {
		case half.BFloat16:
			return blas.GemmStridedBatchedEx[half.BFloat16, half.BFloat16](dev, s, tc.ta, tc.tb, tc.m, tc.n, tc.k, al, a, lda, sa, b, ldb, sb, be, c, ldc, sc, batch)
		case float32:
			return blas.GemmStridedBatchedEx[half.BFloat16, float32](dev, s, tc.ta, tc.tb, tc.m, tc.n, tc.k, al, a, lda, sa, b, ldb, sb, be, c, ldc, sc, batch)
		}
	case float32:
		return blas.GemmStridedBatched[float32](dev, s, tc.ta, tc.tb, tc.m, tc.n, tc.k, al, a, lda, sa, b, ldb, sb, be, c, ldc, sc, batch)
	case float64:
		return blas.GemmStridedBatched[float64](dev, s, tc.ta, tc.tb, tc.m, tc.n, tc.k, tc.alpha, a, lda, sa, b, ldb, sb, tc.beta, c, ldc, sc, batch)
	}
	return fmt.Errorf("no batched product for %T to %T", *new(T), *new(C))
}

// TestTF32IsOffUnlessAskedFor: with GOCUDA_TF32 unset a process starts
// with TF32 off, as PyTorch's allow_tf32.
func TestTF32IsOffUnlessAskedFor(t *testing.T) {
	if _, set := os.LookupEnv(config.EnvTF32); set {
		t.Skipf("%s is set in this environment", config.EnvTF32)
	}
	assert.False(t, blas.TF32())
}

// TestTF32RoundsInputsOnlyWhereItRuns: 1 + 2^-20 is a float32 that TF32's
// 10 fraction bits round to 1. Off, every backend multiplies in float32
// and keeps it; on, a GPU of compute capability 8.0 or newer gives 1, and
// the host backend and older GPUs still keep it.
func TestTF32RoundsInputsOnlyWhereItRuns(t *testing.T) {
	dev := device(t, 0)
	s := stream(t, dev)
	was := blas.TF32()
	t.Cleanup(func() { blas.SetTF32(was) })
	// n × n products of x (not a TF32 number: 10 bits of mantissa) and 1:
	// n·x in float32, every partial sum exact, and n with TF32. cuBLAS takes TF32 as a
	// permission, and uses tensor cores only where its heuristics pick
	// them: a 1 × 1 product ran in full float32 on the H100 (2026-11-26),
	// so this one is large enough for them.
	const n, x = 128, 1 + 0x1p-12
	a := upload(t, dev, s, slices.Repeat([]float32{x}, n*n))
	b := upload(t, dev, s, slices.Repeat([]float32{1}, n*n))
	c := upload(t, dev, s, make([]float32, 2*n*n))
	tensor := blas.TensorCoresOf(dev.Info().Major, dev.Info().Minor).TF32 && dev.Info().Major > 0
	for _, on := range []bool{false, true} {
		blas.SetTF32(on)
		require.NoError(t, blas.Gemm[float32](dev, s, false, false, n, n, n, 1, a, n, b, n, 0, c, n))
		require.NoError(t, blas.GemmStridedBatched[float32](dev, s, false, false, n, n, n, 1, a, n, 0, b, n, 0, 0, c+4*n*n, n, n*n, 1))
		want := float32(n * x)
		if on && tensor {
			want = n
		}
		got := download[float32](t, dev, s, c, 2*n*n)
		bad := slices.IndexFunc(got, func(v float32) bool { return v != want })
		assert.Equal(t, -1, bad, "TF32 %v on %s: want every element %v, element %d is %v", on, dev.Info(), want, bad, got[max(bad, 0)])
	}
}

// TestGemmExArgumentErrors: what GemmEx and the batched forms refuse, with
// errors naming the argument and what is accepted; C is left as it was.
func TestGemmExArgumentErrors(t *testing.T) {
	dev := device(t, 0)
	s := stream(t, dev)
	orig := make([]half.BFloat16, 64)
	for i := range orig {
		orig[i] = half.BFloat16FromFloat32(float32(i))
	}
	p := uploadAny(t, dev, s, orig)
	type bf = half.BFloat16
	type fp = half.Float16
	cases := []struct {
		name string
		call func() error
		want []string
	}{
		{"float16 inputs cannot write bfloat16", func() error { return blas.GemmEx[fp, bf](dev, s, false, false, 2, 2, 2, 1, p, 2, p, 2, 0, p, 2) },
			[]string{"GemmEx float16 to bfloat16", "float16 inputs give float16 or float32", "mixed 16-bit types are not supported"}},
		{"bfloat16 inputs cannot write float16", func() error {
			return blas.GemmStridedBatchedEx[bf, fp](dev, s, false, false, 2, 2, 2, 1, p, 2, 4, p, 2, 4, 0, p, 2, 4, 2)
		}, []string{"GemmStridedBatchedEx bfloat16 to float16", "mixed 16-bit types"}},
		{"negative k", func() error { return blas.GemmEx[bf, bf](dev, s, false, false, 2, 2, -1, 1, p, 2, p, 2, 0, p, 2) },
			[]string{"GemmEx bfloat16: k = -1", "between 0 and"}},
		{"lda below columns", func() error { return blas.GemmEx[bf, float32](dev, s, false, false, 2, 2, 3, 1, p, 2, p, 2, 0, p, 2) },
			[]string{"GemmEx bfloat16 to float32: lda = 2 for A", "at least max(1, 3)"}},
		{"misaligned 16-bit A", func() error { return blas.GemmEx[bf, bf](dev, s, false, false, 2, 2, 2, 1, p+1, 2, p, 2, 0, p, 2) },
			[]string{"pointer A", "not 2-byte aligned", "bfloat16 elements"}},
		{"misaligned float32 C", func() error { return blas.GemmEx[bf, float32](dev, s, false, false, 2, 2, 2, 1, p, 2, p, 2, 0, p+2, 2) },
			[]string{"pointer C", "not 4-byte aligned", "float32 elements"}},
		{"nil B", func() error { return blas.GemmEx[fp, fp](dev, s, false, false, 2, 2, 2, 1, p, 2, 0, 2, 0, p, 2) },
			[]string{"pointer B is nil"}},
		{"negative batch", func() error {
			return blas.GemmStridedBatchedEx[bf, bf](dev, s, false, false, 2, 2, 2, 1, p, 2, 4, p, 2, 4, 0, p, 2, 4, -1)
		}, []string{"batch = -1", "between 0 and"}},
		{"negative stride", func() error {
			return blas.GemmStridedBatched[float32](dev, s, false, false, 2, 2, 2, 1, p, 2, -4, p, 2, 4, 0, p, 2, 4, 2)
		}, []string{"GemmStridedBatched float32: strideA = -4", "0 or more"}},
		{"overlapping outputs", func() error {
			return blas.GemmStridedBatchedEx[bf, bf](dev, s, false, false, 2, 3, 2, 1, p, 2, 4, p, 3, 6, 0, p, 4, 4, 2)
		}, []string{"strideC = 4", "the 2 outputs would overlap", "C spans 7 elements (2 × 3, ldc = 4)"}},
		{"a batch beyond memory", func() error {
			return blas.GemmStridedBatched[float64](dev, s, false, false, 2, 2, 2, 1, p, 2, 1<<60, p, 2, 4, 0, p, 2, 4, 2)
		}, []string{"A's batch of 2", "more than any device holds"}},
		{"nil stream", func() error { return blas.GemmEx[bf, bf](dev, nil, false, false, 2, 2, 2, 1, p, 2, p, 2, 0, p, 2) },
			[]string{"nil device or stream"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			require.ErrorIs(t, err, backend.ErrInvalidValue)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.Equal(t, orig, downloadAny[half.BFloat16](t, dev, s, p, len(orig)), "memory is untouched after an error")
		})
	}
}
