package cuarray

import (
	"fmt"

	"github.com/gocuda/gocuda/half"
	"github.com/gocuda/gocuda/kernels"
)

// Operations on float16 and bfloat16 arrays that have no kernel of their
// own (issue 27): each widens its half operands exactly into float32 (or
// float64, for sums: the accumulator then rounds once) temporaries with
// Convert, runs the wider type's operation, and rounds the result once to
// the half type. The elementwise arithmetic, broadcasting, Axpy, Scale,
// ReluGrad, Take, Scatter, Concat, Arange, Linspace and Eye have native
// kernels (kernels/cuda/half_ops.cuh) and never come here. docs/half.md
// lists which is which.
//
// The temporaries go back to the pool (UnsafeFree) as soon as the work
// using them is queued, on every path, errors included: the pool's frees
// are ordered on the stream, so nothing reuses them before that work runs.

// isHalf reports whether T is half.Float16 or half.BFloat16.
func isHalf[T Elem]() bool {
	dt := kernels.DTypeOf[T]()
	return dt == kernels.Float16 || dt == kernels.BFloat16
}

// halfFrom64 rounds f once to the half type T (to nearest, ties to even).
func halfFrom64[T Elem](f float64) T {
	var v T
	switch p := any(&v).(type) {
	case *half.Float16:
		*p = half.Float16FromFloat64(f)
	case *half.BFloat16:
		*p = half.BFloat16FromFloat64(f)
	}
	return v
}

// halfTo32 widens the half value v to float32 exactly.
func halfTo32[T Elem](v T) float32 {
	switch h := any(v).(type) {
	case half.Float16:
		return h.Float32()
	case half.BFloat16:
		return h.Float32()
	}
	return 0
}

// widenHalf returns x's elements converted exactly to W (float32 or
// float64) in a new contiguous array on o's stream, a view packed first
// (Convert takes contiguous arrays). The caller frees the result.
func widenHalf[W, T Elem](o Ops[T], op, name string, x *Array[T]) (*Array[W], error) {
	if err := x.check(op, name); err != nil {
		return nil, err
	}
	if !x.contiguous() {
		c, err := o.Contiguous(x)
		if err != nil {
			return nil, fmt.Errorf("cuarray: %s: packing %s %s: %w", op, name, x, err)
		}
		defer c.UnsafeFree()
		x = c
	}
	w, err := Convert[W](o.s, nil, x)
	if err != nil {
		return nil, fmt.Errorf("cuarray: %s: widening %s %s to %s: %w", op, name, x, kernels.DTypeOf[W](), err)
	}
	return w, nil
}

// narrowHalf rounds r into dst once (a nil dst is made on o's stream) and
// returns dst.
func narrowHalf[T, W Elem](o Ops[T], op string, dst *Array[T], r *Array[W]) (*Array[T], error) {
	d, err := Convert(o.s, dst, r)
	if err != nil {
		return nil, fmt.Errorf("cuarray: %s: rounding the %s result to %s: %w", op, kernels.DTypeOf[W](), kernels.DTypeOf[T](), err)
	}
	return d, nil
}

// widenAll widens each array (names in order) and returns them with a
// function freeing them; on an error nothing stays allocated.
func widenAll[W, T Elem](o Ops[T], op string, names []string, xs ...*Array[T]) ([]*Array[W], func(), error) {
	ws := make([]*Array[W], 0, len(xs))
	free := func() {
		for _, w := range ws {
			w.UnsafeFree()
		}
	}
	for i, x := range xs {
		w, err := widenHalf[W](o, op, names[i], x)
		if err != nil {
			free()
			return nil, func() {}, err
		}
		ws = append(ws, w)
	}
	return ws, free, nil
}

// sumHalf is Sum through float64: the sum accumulates in float64 and
// rounds once.
func sumHalf[T Elem](o Ops[T], x *Array[T]) (T, error) {
	w, err := widenHalf[float64](o, "Sum", "x", x)
	if err != nil {
		return zero[T](), err
	}
	defer w.UnsafeFree()
	s, err := Ops[float64](o).Sum(w)
	return halfFrom64[T](s), err
}

// extremumHalf is Max or Min through float32 (exact: the result is one of
// the widened elements; a NaN comes back as 0x7fff).
func extremumHalf[T Elem](o Ops[T], op string, x *Array[T]) (T, error) {
	w, err := widenHalf[float32](o, op, "x", x)
	if err != nil {
		return zero[T](), err
	}
	defer w.UnsafeFree()
	f := Ops[float32](o)
	var m float32
	if op == "Max" {
		m, err = f.Max(w)
	} else {
		m, err = f.Min(w)
	}
	return halfFrom64[T](float64(m)), err
}

// dotHalf is Dot through float64: products exact, the sum accumulated in
// float64 and rounded once.
func dotHalf[T Elem](o Ops[T], x, y *Array[T]) (T, error) {
	ws, free, err := widenAll[float64](o, "Dot", []string{"x", "y"}, x, y)
	if err != nil {
		return zero[T](), err
	}
	defer free()
	d, err := Ops[float64](o).Dot(ws[0], ws[1])
	return halfFrom64[T](d), err
}

// scanHalf is Cumsum and Cumprod through float64 (each running sum or
// product accumulated in float64 and rounded once), Cummax and Cummin
// through float32 (exact).
func scanHalf[T Elem](o Ops[T], k kernels.ScanOp, dst, x *Array[T], axis int) (*Array[T], error) {
	if k == kernels.CumSum || k == kernels.CumProd {
		return scanHalfIn[float64](o, k, dst, x, axis)
	}
	return scanHalfIn[float32](o, k, dst, x, axis)
}

func scanHalfIn[W, T Elem](o Ops[T], k kernels.ScanOp, dst, x *Array[T], axis int) (*Array[T], error) {
	op := k.String()
	if err := x.check(op, "x"); err != nil {
		return nil, err
	}
	if _, err := normAxis(op, axis, int(x.ndim), "x "+x.String()); err != nil {
		return nil, err
	}
	if err := halfDst(op, dst, x); err != nil {
		return nil, err
	}
	w, err := widenHalf[W](o, op, "x", x)
	if err != nil {
		return nil, err
	}
	defer w.UnsafeFree()
	r, err := Ops[W](o).scan(k, nil, w, axis)
	if err != nil {
		return nil, err
	}
	defer r.UnsafeFree()
	return narrowHalf(o, op, dst, r)
}

// halfDst checks a non-nil dst that must have x's shape, before any
// temporary is made.
func halfDst[T Elem](op string, dst, x *Array[T]) error {
	if dst == nil {
		return nil
	}
	if err := dst.check(op, "dst"); err != nil {
		return err
	}
	return sameShapeAs(op, "dst", dst, "x", x)
}

// sortHalf is Sort through float32: widening keeps the order (and -0 and
// +0 apart), so the sorted float32 values round back exactly; a NaN comes
// back as 0x7fff.
func sortHalf[T Elem](o Ops[T], dst, x *Array[T], descending bool) (*Array[T], error) {
	const op = "Sort"
	if _, _, err := lastAxis(op, x); err != nil {
		return nil, err
	}
	if err := halfDst(op, dst, x); err != nil {
		return nil, err
	}
	w, err := widenHalf[float32](o, op, "x", x)
	if err != nil {
		return nil, err
	}
	defer w.UnsafeFree()
	if _, err := Ops[float32](o).Sort(w, w, descending); err != nil {
		return nil, err
	}
	return narrowHalf(o, op, dst, w)
}

// argsortHalf is Argsort of the widened values: the same order, so the
// same indices.
func argsortHalf[T Elem](o Ops[T], dst *Array[int64], x *Array[T], descending bool) (*Array[int64], error) {
	const op = "Argsort"
	if _, _, err := lastAxis(op, x); err != nil {
		return nil, err
	}
	w, err := widenHalf[float32](o, op, "x", x)
	if err != nil {
		return nil, err
	}
	defer w.UnsafeFree()
	return Ops[float32](o).Argsort(dst, w, descending)
}

// topKHalf is TopK of the widened values, the values rounded back
// (exactly; a NaN as 0x7fff).
func topKHalf[T Elem](o Ops[T], values *Array[T], indices *Array[int64], x *Array[T], k int, largest bool) (*Array[T], *Array[int64], error) {
	const op = "TopK"
	_, n, err := lastAxis(op, x)
	if err != nil {
		return nil, nil, err
	}
	if k < 0 || k > n {
		return nil, nil, fmt.Errorf("cuarray: %s: k = %d is outside [0, %d], the length of x %s's last axis: %w", op, k, n, x, ErrShape)
	}
	if values != nil {
		if err := values.check(op, "values"); err != nil {
			return nil, nil, err
		}
		shape := x.Shape()
		shape[len(shape)-1] = k
		if !sameDims(values.shape(), shape) {
			return nil, nil, fmt.Errorf("cuarray: %s: values %s must have the shape %v (x %s with k = %d last): %w", op, values, shape, x, k, ErrShape)
		}
		if overlaps(values, x) {
			return nil, nil, fmt.Errorf("cuarray: %s: values %s shares memory with x %s: %w", op, values, x, ErrShape)
		}
	}
	w, err := widenHalf[float32](o, op, "x", x)
	if err != nil {
		return nil, nil, err
	}
	defer w.UnsafeFree()
	v32, idx, err := Ops[float32](o).TopK(nil, indices, w, k, largest)
	if err != nil {
		return nil, nil, err
	}
	defer v32.UnsafeFree()
	v, err := narrowHalf(o, op, values, v32)
	if err != nil {
		if indices == nil {
			idx.UnsafeFree()
		}
		return nil, nil, err
	}
	return v, idx, nil
}

// scatterAddHalf is ScatterAdd through float32: dst and src widened, the
// additions in float32 (atomic on a GPU, in index order on the host),
// dst rounded once at the end.
func scatterAddHalf[T Elem](o Ops[T], dst, src *Array[T], indices *Array[int64], axis int) (*Array[T], error) {
	const op = "ScatterAdd"
	// Checked on the half arrays first, so that errors name them and no
	// temporary is made.
	if _, err := o.scatterLayout(op, dst, src, indices, axis); err != nil {
		return nil, err
	}
	ws, free, err := widenAll[float32](o, op, []string{"dst", "src"}, dst, src)
	if err != nil {
		return nil, err
	}
	defer free()
	if _, err := Ops[float32](o).ScatterAdd(ws[0], ws[1], indices, axis); err != nil {
		return nil, err
	}
	return narrowHalf(o, op, dst, ws[0])
}

// gemmHalf is Gemm and MatMul of one half type: GemmEx, float32 products
// and sums on the tensor cores, the result rounded once to T.
func gemmHalf[T Elem](o Ops[T], op string, transA, transB bool, alpha T, a, b *Array[T], beta T, c *Array[T]) error {
	if err := c.check(op, "c"); err != nil {
		return err
	}
	if _, err := GemmEx[T, T](o.s, c, transA, transB, halfTo32(alpha), a, b, halfTo32(beta)); err != nil {
		return fmt.Errorf("cuarray: %s of %s: %w", op, kernels.DTypeOf[T](), err)
	}
	return nil
}

// gemvHalf is Gemv through float32: a, x and y widened, float32's Gemv,
// y rounded once.
func gemvHalf[T Elem](o Ops[T], trans bool, alpha T, a, x *Array[T], beta T, y *Array[T]) error {
	const op, names = "Gemv", "y,a,x"
	for i, arr := range [...]*Array[T]{y, a, x} {
		if err := arr.check(op, role(names, i)); err != nil {
			return err
		}
	}
	if _, _, err := gemvShapes(op, trans, a, x, y); err != nil {
		return err
	}
	if err := noOverlap(op, names, y, a, x); err != nil {
		return err
	}
	ws, free, err := widenAll[float32](o, op, []string{"y", "a", "x"}, y, a, x)
	if err != nil {
		return err
	}
	defer free()
	if _, err := Ops[float32](o).Gemv(ws[0], trans, halfTo32(alpha), ws[1], ws[2], halfTo32(beta)); err != nil {
		return err
	}
	_, err = narrowHalf(o, op, y, ws[0])
	return err
}

// fillRandomHalf draws float32 values (uniform in (0, 1], or normal with
// mean and stddev) and rounds each once into dst.
func fillRandomHalf[T Elem](o Ops[T], op string, dst *Array[T], normal bool, mean, stddev T) error {
	w, err := widenHalf[float32](o, op, "dst", dst) // dst's shape; its values are overwritten
	if err != nil {
		return err
	}
	defer w.UnsafeFree()
	f := Ops[float32](o)
	if normal {
		err = f.FillRandn(w, halfTo32(mean), halfTo32(stddev))
	} else {
		err = f.FillRand(w)
	}
	if err != nil {
		return err
	}
	_, err = narrowHalf(o, op, dst, w)
	return err
}

// sumRowsColsHalf is SumRows or SumCols through float64: each sum
// accumulates in float64 and rounds once.
func sumRowsColsHalf[T Elem](o Ops[T], op string, dst, x *Array[T]) error {
	ws, free, err := widenAll[float64](o, op, []string{"dst", "x"}, dst, x)
	if err != nil {
		return err
	}
	defer free()
	f := Ops[float64](o)
	if op == "SumRows" {
		_, err = f.SumRows(ws[0], ws[1])
	} else {
		_, err = f.SumCols(ws[0], ws[1])
	}
	if err != nil {
		return err
	}
	_, err = narrowHalf(o, op, dst, ws[0])
	return err
}
