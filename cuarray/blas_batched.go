package cuarray

import (
	"fmt"
	"slices"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/blas"
)

// GemmBatched sets dst[i] = alpha·op(a[i])·op(b[i]) + beta·dst[i] for each
// i of a batch, in one strided-batched cuBLAS call (torch.bmm and
// torch.baddbmm): a is batch × m × k (batch × k × m with transA), b batch
// × k × n (batch × n × k with transB) and dst batch × m × n. A 2-D a or b
// is one matrix used for every product of the batch (a broadcast); at
// least one of them is 3-D and gives the batch. A nil dst makes a new
// batch × m × n array on the stream (beta does not apply: it starts at
// zero) and returns it; dst may not share memory with a or b. Only
// float32 and float64; float32 follows blas.SetTF32 and GOCUDA_TF32.
func GemmBatched[T Elem](dst *Array[T], transA, transB bool, alpha T, a, b *Array[T], beta T) (*Array[T], error) {
	return Ops[T]{}.GemmBatched(dst, transA, transB, alpha, a, b, beta)
}

// GemmBatched is the package-level GemmBatched on o's stream.
func (o Ops[T]) GemmBatched(dst *Array[T], transA, transB bool, alpha T, a, b *Array[T], beta T) (*Array[T], error) {
	const op, names = "GemmBatched", "dst,a,b"
	if err := floatDType[T](op); err != nil {
		return nil, err
	}
	for i, arr := range [...]*Array[T]{a, b} {
		if err := arr.check(op, role(names, i+1)); err != nil {
			return nil, err
		}
	}
	g, err := batchedShapes(op, transA, transB, a, b)
	if err != nil {
		return nil, err
	}
	want := []int{g.batch, g.m, g.n}
	if dst != nil {
		if err := dst.check(op, "dst"); err != nil {
			return nil, err
		}
		if sh := dst.shape(); !slices.Equal(sh, want) {
			return nil, fmt.Errorf("cuarray: %s: dst is %s; the products of %s and %s are %s: %w",
				op, fmtShape(sh), described("a", a, transA), described("b", b, transB), fmtShape(want), ErrShape)
		}
		if err := noOverlap(op, names, dst, a, b); err != nil {
			return nil, err
		}
	} else {
		// Allocated only once every argument is known good; a new array
		// is not read (beta 0), so it need not be filled.
		s, err := o.newStream()
		if err != nil {
			return nil, fmt.Errorf("cuarray: %s: %w", op, err)
		}
		if dst, err = newArray[T](op, s, want); err != nil {
			return nil, err
		}
		var zero T
		beta = zero
		if err := o.gemmBatched(dst, transA, transB, alpha, a, b, beta, g); err != nil {
			dst.UnsafeFree()
			return nil, err
		}
		return dst, nil
	}
	if err := o.gemmBatched(dst, transA, transB, alpha, a, b, beta, g); err != nil {
		return nil, err
	}
	return dst, nil
}

func (o Ops[T]) gemmBatched(dst *Array[T], transA, transB bool, alpha T, a, b *Array[T], beta T, g batchGeom) error {
	return o.do("GemmBatched", "dst,a,b", true, func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr) error {
		if f32, ok := asF32(alpha, beta); ok {
			return blas.GemmStridedBatched(dev, s, transA, transB, g.m, g.n, g.k, f32[0], p[1], g.lda, g.strideA,
				p[2], g.ldb, g.strideB, f32[1], p[0], max(1, g.n), g.m*g.n, g.batch)
		}
		f64 := asF64(alpha, beta)
		return blas.GemmStridedBatched(dev, s, transA, transB, g.m, g.n, g.k, f64[0], p[1], g.lda, g.strideA,
			p[2], g.ldb, g.strideB, f64[1], p[0], max(1, g.n), g.m*g.n, g.batch)
	}, dst, a, b)
}

// batchGeom is a batched product's sizes, leading dimensions and strides
// (0 for a 2-D operand, used for every product).
type batchGeom struct {
	batch, m, n, k   int
	lda, ldb         int
	strideA, strideB int
}

// batchedShapes checks a's and b's shapes and works out the product's.
func batchedShapes[T Elem](op string, transA, transB bool, a, b *Array[T]) (batchGeom, error) {
	var g batchGeom
	sa, sb := a.shape(), b.shape()
	for _, x := range []struct {
		name string
		sh   []int
	}{{"a", sa}, {"b", sb}} {
		if len(x.sh) != 2 && len(x.sh) != 3 {
			return g, fmt.Errorf("cuarray: %s: %s is %s: it must be a batch of matrices (3-D) or one matrix (2-D) for every product: %w",
				op, x.name, fmtShape(x.sh), ErrShape)
		}
	}
	if len(sa) == 2 && len(sb) == 2 {
		return g, fmt.Errorf("cuarray: %s: a is %s and b is %s: at least one must be a 3-D batch; for one product use Gemm: %w",
			op, fmtShape(sa), fmtShape(sb), ErrShape)
	}
	if len(sa) == 3 && len(sb) == 3 && sa[0] != sb[0] {
		return g, fmt.Errorf("cuarray: %s: a is %s and b is %s: batches of %d and %d; they must be the same size: %w",
			op, fmtShape(sa), fmtShape(sb), sa[0], sb[0], ErrShape)
	}
	mat := func(sh []int) (rows, cols, stride int) {
		rows, cols = sh[len(sh)-2], sh[len(sh)-1]
		if len(sh) == 3 {
			g.batch, stride = sh[0], rows*cols
		}
		return rows, cols, stride
	}
	ar, ac, strideA := mat(sa)
	br, bc, strideB := mat(sb)
	g.m, g.k = ar, ac
	if transA {
		g.m, g.k = ac, ar
	}
	kb, n := br, bc
	if transB {
		kb, n = bc, br
	}
	if kb != g.k {
		return g, fmt.Errorf("cuarray: %s: %s and %s: op(a) has %d columns and op(b) %d rows; they must agree: %w",
			op, described("a", a, transA), described("b", b, transB), g.k, kb, ErrShape)
	}
	g.n = n
	g.lda, g.ldb = max(1, ac), max(1, bc)
	g.strideA, g.strideB = strideA, strideB
	return g, nil
}
