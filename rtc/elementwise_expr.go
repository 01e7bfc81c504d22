package rtc

import (
	"fmt"
	"strings"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/internal/elemexpr"
	"github.com/gocuda/gocuda/internal/hostpar"
	"github.com/gocuda/gocuda/kernels"
)

// The host backend's evaluation of an elementwise kernel's body, for a
// kernel without a Go form: internal/elemexpr parses and types the body
// once, when the kernel is made, and evaluates it over typed slices. A
// launch is split into contiguous pieces on goroutines (as package
// kernels' host operations are), each piece an EvalAt whose i is the
// element's index in the whole launch and n the launch's count, as on a
// GPU. Inputs of the result's shape and the outputs are the arrays'
// memory; a broadcast input is gathered block by block into a buffer of
// each goroutine's own, so a launch allocates no slice of the result's
// length; a scalar is passed as one value.

// ewHostGrain is the elements per goroutine a launch is split for, and
// ewHostBlock how many a broadcast input is gathered for at a time (a
// buffer that stays in cache). Tests make them small.
var (
	ewHostGrain = 1 << 16
	ewHostBlock = 1 << 12
)

// compileBody is the body for the host's evaluation, with rtc's
// parameters as elemexpr's.
func compileBody(in, out []ewParam, body string) (*elemexpr.Expr, error) {
	params := func(ps []ewParam) []elemexpr.Param {
		var xs []elemexpr.Param
		for _, p := range ps {
			xs = append(xs, elemexpr.Param{Name: p.name, Type: p.typ.expr})
		}
		return xs
	}
	return elemexpr.Compile(params(in), params(out), body)
}

// launchExpr queues the host's evaluation of the body on s's host stream.
func (k *ElementwiseKernel) launchExpr(s *cuarray.Stream, l *ewLaunch) error {
	if k.exprErr != nil {
		why := strings.TrimPrefix(k.exprErr.Error(), "elemexpr: ")
		if k.preamble != "" {
			why += "; the host evaluates the body alone, without its Preamble"
		}
		return k.errorf(backend.ErrNotSupported, "the host backend cannot evaluate its body (%s); give NewElementwiseKernel a HostFunc, %s "+
			"(an input as T takes scalars only; as []T, arrays and scalars, broadcast), or run on a GPU (GOCUDA_BACKEND=cuda)", why, k.hostWant())
	}
	if l.n == 0 {
		return nil
	}
	// The broadcast inputs share one simplified layout, as on a GPU.
	var bcast []int
	var strides [][]int
	for j := range k.in {
		if l.kinds[j] == kindBroadcast {
			bcast = append(bcast, j)
			strides = append(strides, l.strides[j])
		}
	}
	var dims []int
	var st [][]int
	if len(bcast) > 0 {
		dims, st = ewLayout(l.shape, strides)
	}
	return cuarray.WithPointersAs(k.op, s, func(bs backend.Stream, ptrs []backend.Ptr) error {
		hs, err := hostStream(bs)
		if err != nil {
			return err
		}
		ops := make([]ewOperand, len(k.in)+len(k.out))
		for j := range k.in {
			switch l.kinds[j] {
			case kindScalar:
				ops[j] = ewScalarOp{l.scalars[j]}
			case kindFull:
				x := l.inArr[j]
				ops[j] = newEWOperand(l.arrs[x], ptrs[x], nil, nil)
			case kindBroadcast:
				x := l.inArr[j]
				ops[j] = newEWOperand(l.arrs[x], ptrs[x], dims, st[indexOf(bcast, j)])
			}
		}
		nin := len(ptrs) - len(k.out)
		for j := range k.out {
			ops[len(k.in)+j] = newEWOperand(l.arrs[nin+j], ptrs[nin+j], nil, nil)
		}
		e, total := k.expr, int64(l.n)
		return hs.Enqueue(func() {
			hostpar.Split(l.n, ewHostGrain, func(lo, hi int) {
				own := make([]ewOperand, len(ops))
				for j, o := range ops {
					own[j] = o.forWorker()
				}
				// Without broadcast inputs a piece is one EvalAt;
				// with them, one per block of the gather buffers.
				step := hi - lo
				if len(bcast) > 0 {
					step = ewHostBlock
				}
				args := make([]any, len(own))
				for b := lo; b < hi; b += step {
					m := min(step, hi-b)
					for j, o := range own {
						args[j] = o.piece(b, b+m)
					}
					if err := e.EvalAt(int64(b), total, m, args...); err != nil {
						// The arguments are made above from the
						// parameters' own types and the launch's
						// length: an error is a bug here, and the
						// stream has no caller to return it to.
						panic(fmt.Sprintf("rtc: %s: evaluating the body: %v", k.op, err))
					}
				}
			})
		})
	}, l.arrs...)
}

// ewOperand is one argument of the body's evaluation.
type ewOperand interface {
	// piece is the argument for elements lo to hi of the launch, as
	// EvalAt takes it: a scalar, or a slice of hi-lo elements.
	piece(lo, hi int) any
	// forWorker is the operand for one goroutine (its own buffer).
	forWorker() ewOperand
}

// ewScalarOp is a scalar input: one value for every element.
type ewScalarOp struct{ v any }

func (o ewScalarOp) piece(int, int) any   { return o.v }
func (o ewScalarOp) forWorker() ewOperand { return o }

// ewSliceOp is an array of the result's shape: its memory, read or
// written at the element's index.
type ewSliceOp[T any] struct{ s []T }

func (o ewSliceOp[T]) piece(lo, hi int) any { return o.s[lo:hi] }
func (o ewSliceOp[T]) forWorker() ewOperand { return o }

// ewGatherOp is an input broadcast to the result's layout dims (the
// simplified one) through strides, gathered into buf.
type ewGatherOp[T any] struct {
	src           []T
	dims, strides []int
	buf           []T
}

func (o ewGatherOp[T]) forWorker() ewOperand {
	o.buf = make([]T, ewHostBlock)
	return o
}

// piece gathers elements lo to hi: the coordinates of lo by division,
// then runs along the innermost dimension (a copy for a row, a fill for a
// column) with carries into the outer ones.
func (o ewGatherOp[T]) piece(lo, hi int) any {
	dst := o.buf[:hi-lo]
	nd := len(o.dims)
	c := make([]int, nd)
	off := 0
	for d, x := nd-1, lo; d >= 0; d-- {
		c[d] = x % o.dims[d]
		x /= o.dims[d]
		off += c[d] * o.strides[d]
	}
	last, inner := nd-1, o.strides[nd-1]
	for k := 0; k < len(dst); {
		run := min(len(dst)-k, o.dims[last]-c[last])
		switch inner {
		case 1:
			copy(dst[k:k+run], o.src[off:off+run])
		case 0:
			v := o.src[off]
			for r := range dst[k : k+run] {
				dst[k+r] = v
			}
		default:
			for r := range run {
				dst[k+r] = o.src[off+r*inner]
			}
		}
		k += run
		off += run * inner
		c[last] += run
		for d := last; d > 0 && c[d] == o.dims[d]; d-- {
			off -= c[d] * o.strides[d]
			c[d] = 0
			c[d-1]++
			off += o.strides[d-1]
		}
	}
	return dst
}

// newEWOperand is the operand of array g at p, the host backend's
// address of its memory: a slice of it, or with dims a gather through
// strides.
func newEWOperand(g cuarray.Arg, p backend.Ptr, dims, strides []int) ewOperand {
	switch g.DType() {
	case kernels.Float32:
		return ewOperandOf(sliceAt[float32](p, g.Len()), dims, strides)
	case kernels.Float64:
		return ewOperandOf(sliceAt[float64](p, g.Len()), dims, strides)
	case kernels.Int32:
		return ewOperandOf(sliceAt[int32](p, g.Len()), dims, strides)
	case kernels.Int64:
		return ewOperandOf(sliceAt[int64](p, g.Len()), dims, strides)
	case kernels.Uint8:
		return ewOperandOf(sliceAt[uint8](p, g.Len()), dims, strides)
	}
	panic(fmt.Sprintf("rtc: no arrays of %s", g.DType())) // the parameter types are only those
}

func ewOperandOf[T any](s []T, dims, strides []int) ewOperand {
	if dims == nil {
		return ewSliceOp[T]{s}
	}
	return ewGatherOp[T]{src: s, dims: dims, strides: strides}
}
