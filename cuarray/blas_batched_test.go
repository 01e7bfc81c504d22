package cuarray_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/internal/testsupport/blasref"
	"github.com/gocuda/gocuda/kernels"
)

// batchRef is the schoolbook reference, one product of the batch at a
// time; a 2-D operand (stride 0) serves every product.
func batchRef[T float32 | float64](ta, tb bool, batch, m, n, k int, alpha T, a []T, sa int, b []T, sb int, beta T, c []T) []T {
	out := make([]T, 0, len(c))
	lda, ldb := k, n
	if ta {
		lda = m
	}
	if tb {
		ldb = k
	}
	for i := range batch {
		out = append(out, blasref.Gemm(ta, tb, m, n, k, alpha, a[i*sa:], lda, b[i*sb:], ldb, beta, c[i*m*n:(i+1)*m*n], n)...)
	}
	return out
}

func TestGemmBatchedMatchesReference(t *testing.T) {
	for _, tc := range []struct {
		name        string
		ta, tb      bool
		batch       int
		m, n, k     int
		aBatch      bool // a is 3-D (else one matrix for every product)
		bBatch      bool
		alpha, beta float64
		allocate    bool
	}{
		{name: "plain", batch: 3, m: 5, n: 7, k: 4, aBatch: true, bBatch: true, alpha: 1},
		{name: "transposed, alpha beta", ta: true, tb: true, batch: 4, m: 3, n: 6, k: 9, aBatch: true, bBatch: true, alpha: -0.5, beta: 2},
		{name: "one b for every product", batch: 5, m: 6, n: 2, k: 3, aBatch: true, alpha: 1, beta: 1},
		{name: "one a for every product", ta: true, batch: 2, m: 4, n: 5, k: 7, bBatch: true, alpha: 2},
		{name: "new dst", batch: 3, m: 2, n: 3, k: 4, aBatch: true, bBatch: true, alpha: 1, beta: 5, allocate: true},
		{name: "k 0 scales dst", batch: 2, m: 3, n: 2, k: 0, aBatch: true, bBatch: true, alpha: 1, beta: 3},
	} {
		t.Run(tc.name+"/float32", func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(tc.m), uint64(tc.batch)))
			runBatched[float32](t, rng, tc.ta, tc.tb, tc.batch, tc.m, tc.n, tc.k, tc.aBatch, tc.bBatch, float32(tc.alpha), float32(tc.beta), tc.allocate)
		})
		t.Run(tc.name+"/float64", func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(tc.m), uint64(tc.batch)))
			runBatched(t, rng, tc.ta, tc.tb, tc.batch, tc.m, tc.n, tc.k, tc.aBatch, tc.bBatch, tc.alpha, tc.beta, tc.allocate)
		})
	}
}

func runBatched[T float32 | float64](t *testing.T, rng *rand.Rand, ta, tb bool, batch, m, n, k int, aBatch, bBatch bool, alpha, beta T, allocate bool) {
	ashape, bshape := []int{m, k}, []int{k, n}
	if ta {
		ashape = []int{k, m}
	}
	if tb {
		bshape = []int{n, k}
	}
	sa, sb := 0, 0
	if aBatch {
		ashape, sa = append([]int{batch}, ashape...), m*k
	}
	if bBatch {
		bshape, sb = append([]int{batch}, bshape...), k*n
	}
	count := func(sh []int) int {
		p := 1
		for _, d := range sh {
			p *= d
		}
		return p
	}
	av, bv, cv := randoms[T](rng, count(ashape)), randoms[T](rng, count(bshape)), randoms[T](rng, batch*m*n)
	a := cuarray.Must(cuarray.FromSlice(av, ashape...))
	b := cuarray.Must(cuarray.FromSlice(bv, bshape...))
	var dst *cuarray.Array[T]
	if !allocate {
		dst = cuarray.Must(cuarray.FromSlice(cv, batch, m, n))
	} else {
		clear(cv) // a new dst starts at zero: beta does not apply
	}
	got, err := cuarray.GemmBatched(dst, ta, tb, alpha, a, b, beta)
	require.NoError(t, err)
	if !allocate {
		assert.Same(t, dst, got, "a given dst is written and returned")
	}
	assert.Equal(t, []int{batch, m, n}, got.Shape())
	want := batchRef(ta, tb, batch, m, n, k, alpha, av, sa, bv, sb, beta, cv)
	requireClose(t, want, read(t, got), 1e-5)
}

func TestGemmBatchedRefusesBadShapesAndTypes(t *testing.T) {
	a3 := cuarray.Must(cuarray.Zeros[float32](2, 3, 4))
	b3 := cuarray.Must(cuarray.Zeros[float32](2, 4, 5))
	b5 := cuarray.Must(cuarray.Zeros[float32](5, 4, 5))
	a2 := cuarray.Must(cuarray.Zeros[float32](3, 4))
	b2 := cuarray.Must(cuarray.Zeros[float32](4, 5))
	bad := cuarray.Must(cuarray.Zeros[float32](2, 3, 3))
	v := cuarray.Must(cuarray.Zeros[float32](4))
	for _, tc := range []struct {
		name string
		call func() (*cuarray.Array[float32], error)
		want string
	}{
		{"both 2-D", func() (*cuarray.Array[float32], error) { return cuarray.GemmBatched(nil, false, false, 1, a2, b2, 0) },
			"a is [3 4] and b is [4 5]: at least one must be a 3-D batch; for one product use Gemm"},
		{"batches differ", func() (*cuarray.Array[float32], error) { return cuarray.GemmBatched(nil, false, false, 1, a3, b5, 0) },
			"batches of 2 and 5; they must be the same size"},
		{"inner sizes differ", func() (*cuarray.Array[float32], error) { return cuarray.GemmBatched(nil, true, false, 1, a3, b3, 0) },
			"op(a) has 3 columns and op(b) 4 rows"},
		{"a vector", func() (*cuarray.Array[float32], error) { return cuarray.GemmBatched(nil, false, false, 1, v, b3, 0) },
			"a is [4]: it must be a batch of matrices (3-D) or one matrix (2-D)"},
		{"dst of the wrong shape", func() (*cuarray.Array[float32], error) { return cuarray.GemmBatched(bad, false, false, 1, a3, b3, 0) },
			"dst is [2 3 3]; the products of a is [2 3 4] and b is [2 4 5] are [2 3 5]"},
		{"dst is an input", func() (*cuarray.Array[float32], error) {
			sq := cuarray.Must(cuarray.Zeros[float32](2, 3, 3))
			return cuarray.GemmBatched(sq, false, false, 1, sq, sq, 0)
		}, "shares memory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.call()
			require.ErrorIs(t, err, cuarray.ErrShape)
			assert.Nil(t, got)
			assert.Contains(t, err.Error(), "cuarray: GemmBatched: ")
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	i3 := cuarray.Must(cuarray.Zeros[int32](2, 2, 2))
	_, err := cuarray.GemmBatched(nil, false, false, 1, i3, i3, 0)
	require.ErrorIs(t, err, kernels.ErrUnsupportedDType)
	assert.Contains(t, err.Error(), "GemmBatched does not take int32; it takes float32, float64")
}

// TestGemmBatchedGivesBackANewDstOnError: a nil dst is made only after the
// shapes are checked, and given back when the product then fails (here:
// operands on another device than the stream's).
func TestGemmBatchedGivesBackANewDstOnError(t *testing.T) {
	s1, err := cuarray.DefaultStream(1)
	if err != nil {
		t.Skipf("needs a second device: %v", err)
	}
	p := freshPool(t)
	s := newStream(t, p)
	a := cuarray.Must(cuarray.On[float32](s1).Zeros(2, 3, 4))
	b := cuarray.Must(cuarray.On[float32](s1).Zeros(2, 4, 5))
	before := p.Stats()
	got, err := cuarray.On[float32](s).GemmBatched(nil, false, false, 1, a, b, 0)
	require.ErrorIs(t, err, cuarray.ErrDevice)
	assert.Nil(t, got)
	after := p.Stats()
	assert.Equal(t, before.Allocs+1, after.Allocs, "dst was made once the shapes were known good")
	assert.Equal(t, after.Allocs-before.Allocs, after.Frees-before.Frees, "and given back")

	_, err = cuarray.On[float32](s).GemmBatched(nil, true, false, 1, a, b, 0)
	require.ErrorIs(t, err, cuarray.ErrShape)
	assert.Equal(t, after.Allocs, p.Stats().Allocs, "nothing is made for shapes that do not fit")
}
