package cuarray_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/half"
	"github.com/gocuda/gocuda/kernels"
)

// gemmExRef is op(a)·op(b) in float64 from a and b (row-major r×c each,
// widened already), the reference GemmEx's float32 sums are held to.
func gemmExRef(a []float32, ar, ac int, b []float32, br, bc int, transA, transB bool) (out []float64, m, n int) {
	at := func(i, j int) float64 {
		if transA {
			return float64(a[j*ac+i])
		}
		return float64(a[i*ac+j])
	}
	bt := func(i, j int) float64 {
		if transB {
			return float64(b[j*bc+i])
		}
		return float64(b[i*bc+j])
	}
	m, k, n := ar, ac, bc
	if transA {
		m, k = ac, ar
	}
	if transB {
		n = br
	}
	out = make([]float64, m*n)
	for i := range m {
		for j := range n {
			var s float64
			for l := range k {
				s += at(i, l) * bt(l, j)
			}
			out[i*n+j] = s
		}
	}
	return out, m, n
}

func bf16s(v []float32) []half.BFloat16 {
	out := make([]half.BFloat16, len(v))
	half.BFloat16sFromFloat32s(out, v)
	return out
}

func f16s(v []float32) []half.Float16 {
	out := make([]half.Float16, len(v))
	half.Float16sFromFloat32s(out, v)
	return out
}

func TestGemmExMatchesAFloat64ReferenceForBFloat16AndFloat16(t *testing.T) {
	for _, tc := range []struct {
		name           string
		m, k, n        int
		transA, transB bool
	}{
		{"plain", 5, 7, 3, false, false},
		{"a transposed", 4, 9, 6, true, false},
		{"b transposed", 3, 8, 5, false, true},
		{"both, one column", 6, 11, 1, true, true},
		{"k of 1", 2, 1, 4, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ar, ac := tc.m, tc.k
			if tc.transA {
				ar, ac = ac, ar
			}
			br, bc := tc.k, tc.n
			if tc.transB {
				br, bc = bc, br
			}
			av, bv := make([]float32, ar*ac), make([]float32, br*bc)
			for i := range av {
				av[i] = half.BFloat16FromFloat32(float32(i%13)/7 - 0.8).Float32()
			}
			for i := range bv {
				bv[i] = half.BFloat16FromFloat32(float32(i%11)/5 - 1.1).Float32()
			}
			want, m, n := gemmExRef(av, ar, ac, bv, br, bc, tc.transA, tc.transB)

			a := cuarray.Must(cuarray.FromSlice(bf16s(av), ar, ac))
			b := cuarray.Must(cuarray.FromSlice(bf16s(bv), br, bc))
			c, err := cuarray.GemmEx[float32](nil, nil, tc.transA, tc.transB, 1, a, b, 0)
			require.NoError(t, err)
			assert.Equal(t, []int{m, n}, c.Shape())
			got := cuarray.Must(c.ToSlice())
			for i := range want {
				assert.InDelta(t, want[i], got[i], 1e-5*(1+math.Abs(want[i])), "element %d", i)
			}

			// bfloat16 out: the float32 result rounded once.
			cb, err := cuarray.GemmEx[half.BFloat16](nil, nil, tc.transA, tc.transB, 1, a, b, 0)
			require.NoError(t, err)
			gotb := cuarray.Must(cb.ToSlice())
			for i := range want {
				assert.InDelta(t, want[i], float64(gotb[i].Float32()), 0x1p-8*(1e-3+math.Abs(want[i])), "element %d", i)
			}

			// float16 operands, alpha and beta into a given dst.
			ah := cuarray.Must(cuarray.FromSlice(f16s(av), ar, ac))
			bh := cuarray.Must(cuarray.FromSlice(f16s(bv), br, bc))
			dst := cuarray.Must(cuarray.Full[float32](1, m, n))
			_, err = cuarray.GemmEx(nil, dst, tc.transA, tc.transB, 2, ah, bh, 0.5)
			require.NoError(t, err)
			goth := cuarray.Must(dst.ToSlice())
			for i := range want {
				assert.InDelta(t, 2*want[i]+0.5, goth[i], 2e-3*(1+math.Abs(want[i])), "element %d", i)
			}
		})
	}
}

func TestGemmExTakesTransposedViewsAsFlags(t *testing.T) {
	av := []float32{1, 2, 3, 4, 5, 6} // 2×3
	a := cuarray.Must(cuarray.FromSlice(bf16s(av), 2, 3))
	at := cuarray.Must(a.Transpose()) // 3×2 view
	c, err := cuarray.GemmEx[float32](nil, nil, false, false, 1, at, a, 0)
	require.NoError(t, err)
	want, _, _ := gemmExRef(av, 2, 3, av, 2, 3, true, false)
	got := cuarray.Must(c.ToSlice())
	for i := range want {
		assert.InDelta(t, want[i], got[i], 1e-6, "element %d", i)
	}
}

func TestGemmExRefusesBadInputClearly(t *testing.T) {
	a := cuarray.Must(cuarray.Zeros[half.BFloat16](2, 3))
	b := cuarray.Must(cuarray.Zeros[half.BFloat16](4, 2))
	_, err := cuarray.GemmEx[float32](nil, nil, false, false, 1, a, b, 0)
	require.ErrorIs(t, err, cuarray.ErrShape)
	assert.ErrorContains(t, err, "inner dimensions 3 and 4 differ")

	f := cuarray.Must(cuarray.Zeros[float32](2, 2))
	_, err = cuarray.GemmEx[float32](nil, nil, false, false, 1, f, f, 0)
	require.ErrorIs(t, err, kernels.ErrUnsupportedDType)
	assert.ErrorContains(t, err, "use Gemm")

	h := cuarray.Must(cuarray.Zeros[half.Float16](2, 2))
	_, err = cuarray.GemmEx[half.BFloat16](nil, nil, false, false, 1, h, h, 0)
	require.ErrorIs(t, err, kernels.ErrUnsupportedDType)

	sq := cuarray.Must(cuarray.Zeros[half.BFloat16](2, 2))
	_, err = cuarray.GemmEx[float32](nil, nil, false, false, 1, sq, sq, 1)
	assert.ErrorContains(t, err, "beta is 1 with a nil dst")

	small := cuarray.Must(cuarray.Zeros[float32](3, 3))
	_, err = cuarray.GemmEx(nil, small, false, false, 1, sq, sq, 0)
	require.ErrorIs(t, err, cuarray.ErrShape)
	assert.ErrorContains(t, err, "the product is [2 2], but dst is [3 3]")
}
