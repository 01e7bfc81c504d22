package kernels

import (
	"math"

	"github.com/gocuda/gocuda/backend"
)

// The host backend's reductions over axes. Two loop shapes, as on a GPU:
// along rows (the innermost reduced dimension is walked for each output,
// contiguously when its stride is 1) and down columns (when the kept
// innermost dimension is contiguous and the reduced one is not: a row of
// accumulators, one a column, is folded with each reduced row in turn, so
// memory is read in order). Work is split across goroutines by outputs
// (hostpar.Split), and each output is reduced in one fixed order, so the
// result does not depend on the number of CPUs.
//
// Each operation is a small set of typed closures that fold a whole run of
// elements (a row, or a row into the column accumulators), so the call
// through a function value is paid once a run, not once an element.

// reduceFns is one reduction over one element type: S is its accumulator.
type reduceFns[S any] struct {
	ident S
	// row folds n elements of x from off, stride apart, whose reduced
	// indices start at r0, into *acc.
	row func(acc *S, off, n, stride, r0 int)
	// col folds x[off:off+len(acc)] into acc elementwise; r is their
	// reduced index.
	col func(acc []S, off, r int)
	// finish writes output o.
	finish func(o int, acc S)
}

// hostReduceAxes runs op on the host over p's layout.
func hostReduceAxes(op ReduceOp, dt DType, dst, x backend.Ptr, p *reducePlan) {
	switch dt {
	case Float32:
		reduceRealOf[float32](op, dst, x, p)
	case Float64:
		reduceRealOf[float64](op, dst, x, p)
	case Int32:
		reduceRealOf[int32](op, dst, x, p)
	case Int64:
		reduceRealOf[int64](op, dst, x, p)
	case Uint8:
		reduceRealOf[uint8](op, dst, x, p)
	case Int8:
		reduceRealOf[int8](op, dst, x, p)
	case Int16:
		reduceRealOf[int16](op, dst, x, p)
	case Uint32:
		reduceRealOf[uint32](op, dst, x, p)
	case Complex64:
		reduceComplex(op, dst, x, p)
	}
}

func isFloat[T realNumber]() bool {
	var z T
	switch any(z).(type) {
	case float32, float64:
		return true
	}
	return false
}

func reduceRealOf[T realNumber](op ReduceOp, dstp, xp backend.Ptr, p *reducePlan) {
	var x []T // nil when nothing is reduced: xp may be nil then
	if p.nred > 0 {
		x = hostView[T](xp, p.extent)
	}
	switch op {
	case ReduceSum, ReduceProd:
		if isFloat[T]() {
			d := hostView[T](dstp, p.nout)
			runReduce(p, foldFns[T, float64](op, x, func(o int, a float64) { d[o] = T(a) }))
		} else {
			d := hostView[int64](dstp, p.nout)
			runReduce(p, foldFns[T, int64](op, x, func(o int, a int64) { d[o] = a }))
		}
	case ReduceMean:
		n := float64(p.nred)
		if isFloat[T]() {
			d := hostView[T](dstp, p.nout)
			runReduce(p, foldFns[T, float64](ReduceSum, x, func(o int, a float64) { d[o] = T(a / n) }))
		} else {
			d := hostView[float64](dstp, p.nout)
			runReduce(p, foldFns[T, float64](ReduceSum, x, func(o int, a float64) { d[o] = a / n }))
		}
	case ReduceMax, ReduceMin:
		d := hostView[T](dstp, p.nout)
		runReduce(p, extremumFns(op == ReduceMax, x, d))
	case ReduceArgMax, ReduceArgMin:
		d := hostView[int64](dstp, p.nout)
		runReduce(p, argFns(op == ReduceArgMax, x, d))
	case ReduceAny, ReduceAll:
		d := hostView[uint8](dstp, p.nout)
		runReduce(p, truthFns(op == ReduceAll, x, func(v T) bool { return v != 0 }, d))
	}
}

// foldFns sums (ReduceSum) or multiplies (ReduceProd) in the accumulator
// A: float64 for floats, int64 (wrapping) for integers.
func foldFns[T realNumber, A float64 | int64](op ReduceOp, x []T, finish func(int, A)) reduceFns[A] {
	if op == ReduceProd {
		return reduceFns[A]{
			ident: 1,
			row: func(acc *A, off, n, stride, _ int) {
				a := *acc
				if stride == 1 {
					for _, v := range x[off : off+n] {
						a *= A(v)
					}
				} else {
					for i := range n {
						a *= A(x[off+i*stride])
					}
				}
				*acc = a
			},
			col: func(acc []A, off, _ int) {
				for j, v := range x[off : off+len(acc)] {
					acc[j] *= A(v)
				}
			},
			finish: finish,
		}
	}
	return reduceFns[A]{
		row: func(acc *A, off, n, stride, _ int) {
			a := *acc
			if stride == 1 {
				for _, v := range x[off : off+n] {
					a += A(v)
				}
			} else {
				for i := range n {
					a += A(x[off+i*stride])
				}
			}
			*acc = a
		},
		col: func(acc []A, off, _ int) {
			for j, v := range x[off : off+len(acc)] {
				acc[j] += A(v)
			}
		},
		finish: finish,
	}
}

// lowestOf and highestOf are Max's and Min's identities: -Inf and +Inf for
// floats, the ends of the range for integers.
func lowestOf[T realNumber]() T {
	var z T
	var v any
	switch any(z).(type) {
	case float32:
		v = float32(math.Inf(-1))
	case float64:
		v = math.Inf(-1)
	case int32:
		v = int32(math.MinInt32)
	case int64:
		v = int64(math.MinInt64)
	case uint8:
		v = uint8(0)
	case int8:
		v = int8(math.MinInt8)
	case int16:
		v = int16(math.MinInt16)
	case uint32:
		v = uint32(0)
	}
	return v.(T)
}

func highestOf[T realNumber]() T {
	var z T
	var v any
	switch any(z).(type) {
	case float32:
		v = float32(math.Inf(1))
	case float64:
		v = math.Inf(1)
	case int32:
		v = int32(math.MaxInt32)
	case int64:
		v = int64(math.MaxInt64)
	case uint8:
		v = uint8(math.MaxUint8)
	case int8:
		v = int8(math.MaxInt8)
	case int16:
		v = int16(math.MaxInt16)
	case uint32:
		v = uint32(math.MaxUint32)
	}
	return v.(T)
}

// extremumFns: Max or Min, NaN winning whatever the order (replaces).
func extremumFns[T realNumber](isMax bool, x, d []T) reduceFns[T] {
	ident := highestOf[T]()
	if isMax {
		ident = lowestOf[T]()
	}
	return reduceFns[T]{
		ident: ident,
		row: func(acc *T, off, n, stride, _ int) {
			m := *acc
			for i := range n {
				if v := x[off+i*stride]; replaces(isMax, m, v) {
					m = v
				}
			}
			*acc = m
		},
		col: func(acc []T, off, _ int) {
			for j, v := range x[off : off+len(acc)] {
				if replaces(isMax, acc[j], v) {
					acc[j] = v
				}
			}
		},
		finish: func(o int, m T) { d[o] = m },
	}
}

// arg is ArgMax's and ArgMin's accumulator: the best value so far and its
// reduced index (-1 before the first element).
type arg[T realNumber] struct {
	v T
	i int
}

// better reports whether v at a later index replaces the best so far a:
// only when strictly better, or NaN where a is not, so ties and later NaNs
// keep the first index.
func better[T realNumber](isMax bool, a arg[T], v T) bool {
	switch {
	case a.i < 0:
		return true
	case a.v != a.v:
		return false
	case v != v:
		return true
	case isMax:
		return v > a.v
	}
	return v < a.v
}

func argFns[T realNumber](isMax bool, x []T, d []int64) reduceFns[arg[T]] {
	return reduceFns[arg[T]]{
		ident: arg[T]{i: -1},
		row: func(acc *arg[T], off, n, stride, r0 int) {
			a := *acc
			i := 0
			if a.i < 0 && n > 0 {
				a, i = arg[T]{x[off], r0}, 1
			}
			if a.v != a.v {
				*acc = a // a NaN is final
				return
			}
			// The common case in one tight loop: strictly better, or the
			// first NaN, which ends the row.
			bv, bi := a.v, a.i
			for ; i < n; i++ {
				v := x[off+i*stride]
				if isMax && v > bv || !isMax && v < bv {
					bv, bi = v, r0+i
				} else if v != v {
					bv, bi = v, r0+i
					break
				}
			}
			*acc = arg[T]{bv, bi}
		},
		col: func(acc []arg[T], off, r int) {
			for j, v := range x[off : off+len(acc)] {
				if better(isMax, acc[j], v) {
					acc[j] = arg[T]{v, r}
				}
			}
		},
		finish: func(o int, a arg[T]) { d[o] = int64(a.i) },
	}
}

// truthFns: Any (all false) or All (all true), an element true when
// nonzero.
func truthFns[T any](all bool, x []T, nonzero func(T) bool, d []uint8) reduceFns[bool] {
	return reduceFns[bool]{
		ident: all,
		row: func(acc *bool, off, n, stride, _ int) {
			if *acc != all {
				return // decided
			}
			for i := range n {
				if nonzero(x[off+i*stride]) != all {
					*acc = !all
					return
				}
			}
		},
		col: func(acc []bool, off, _ int) {
			for j, v := range x[off : off+len(acc)] {
				if nonzero(v) != all {
					acc[j] = !all
				}
			}
		},
		finish: func(o int, b bool) {
			d[o] = 0
			if b {
				d[o] = 1
			}
		},
	}
}

func reduceComplex(op ReduceOp, dstp, xp backend.Ptr, p *reducePlan) {
	var x []complex64 // nil when nothing is reduced: xp may be nil then
	if p.nred > 0 {
		x = hostView[complex64](xp, p.extent)
	}
	d := hostView[complex64](dstp, p.nout)
	switch op {
	case ReduceSum, ReduceMean:
		n := complex(float64(p.nred), 0)
		finish := func(o int, a complex128) { d[o] = complex64(a) }
		if op == ReduceMean {
			finish = func(o int, a complex128) { d[o] = complex64(a / n) }
		}
		runReduce(p, reduceFns[complex128]{
			row: func(acc *complex128, off, n, stride, _ int) {
				a := *acc
				for i := range n {
					a += complex128(x[off+i*stride])
				}
				*acc = a
			},
			col: func(acc []complex128, off, _ int) {
				for j, v := range x[off : off+len(acc)] {
					acc[j] += complex128(v)
				}
			},
			finish: finish,
		})
	case ReduceProd:
		runReduce(p, reduceFns[complex128]{
			ident: 1,
			row: func(acc *complex128, off, n, stride, _ int) {
				a := *acc
				for i := range n {
					a *= complex128(x[off+i*stride])
				}
				*acc = a
			},
			col: func(acc []complex128, off, _ int) {
				for j, v := range x[off : off+len(acc)] {
					acc[j] *= complex128(v)
				}
			},
			finish: func(o int, a complex128) { d[o] = complex64(a) },
		})
	case ReduceAny, ReduceAll:
		runReduce(p, truthFns(op == ReduceAll, x, func(v complex64) bool { return v != 0 }, hostView[uint8](dstp, p.nout)))
	}
}

// runReduce reduces every output of p with f: down columns when the kept
// innermost dimension is contiguous and the reduced innermost is not,
// else along rows.
func runReduce[S any](p *reducePlan, f reduceFns[S]) {
	if p.nred == 0 {
		for o := range p.nout {
			f.finish(o, f.ident)
		}
		return
	}
	nk, nr := len(p.oshape), len(p.rshape)
	if nk > 0 && p.ostr[nk-1] == 1 && (nr == 0 || p.rstr[nr-1] != 1) {
		runCols(p, f)
		return
	}
	runRows(p, f)
}

// offsetOf is the offset of index i (row-major over shape) through
// strides.
func offsetOf(i int, shape, strides []int) int {
	off := 0
	for k := len(shape) - 1; k >= 0 && i > 0; k-- {
		off += i % shape[k] * strides[k]
		i /= shape[k]
	}
	return off
}

func runRows[S any](p *reducePlan, f reduceFns[S]) {
	nr := len(p.rshape)
	rn, rs := 1, 0 // the innermost reduced dimension, walked by row
	if nr > 0 {
		rn, rs = p.rshape[nr-1], p.rstr[nr-1]
	}
	outerShape, outerStr := p.rshape[:max(nr-1, 0)], p.rstr[:max(nr-1, 0)]
	rows := p.nred / rn
	parallel(p.nout*p.nred, func(lo, hi int) {
		for o := lo / p.nred; o < hi/p.nred; o++ {
			base := offsetOf(o, p.oshape, p.ostr)
			acc := f.ident
			for q := range rows {
				f.row(&acc, base+offsetOf(q, outerShape, outerStr), rn, rs, q*rn)
			}
			f.finish(o, acc)
		}
	})
}

func runCols[S any](p *reducePlan, f reduceFns[S]) {
	nk := len(p.oshape)
	inner := p.oshape[nk-1]
	outerShape, outerStr := p.oshape[:nk-1], p.ostr[:nk-1]
	parallel(p.nout*p.nred, func(lo, hi int) {
		o0, o1 := lo/p.nred, hi/p.nred
		var acc []S
		for o := o0; o < o1; {
			g, c0 := o/inner, o%inner
			c1 := min(inner, c0+(o1-o))
			base := offsetOf(g, outerShape, outerStr) + c0
			acc = append(acc[:0], make([]S, c1-c0)...)
			for j := range acc {
				acc[j] = f.ident
			}
			for r := range p.nred {
				f.col(acc, base+offsetOf(r, p.rshape, p.rstr), r)
			}
			for j, a := range acc {
				f.finish(g*inner+c0+j, a)
			}
			o += c1 - c0
		}
	})
}
