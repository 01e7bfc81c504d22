package cuarray_test

import (
	"fmt"
	"math"
	"math/cmplx"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/cuarray"
)

// model is the plain-Go reference of a strided view: the parent's elements
// and the view's element offset, shape and strides.
type model struct {
	off            int
	shape, strides []int
}

func modelOf(shape []int) model {
	st := make([]int, len(shape))
	acc := 1
	for i := len(shape) - 1; i >= 0; i-- {
		st[i] = acc
		acc *= shape[i]
	}
	return model{0, slices.Clone(shape), st}
}

func (m model) n() int {
	n := 1
	for _, d := range m.shape {
		n *= d
	}
	return n
}

// at is the parent index of the view's k'th element in row-major order.
func (m model) at(k int) int {
	o := m.off
	for i := len(m.shape) - 1; i >= 0; i-- {
		o += k % m.shape[i] * m.strides[i]
		k /= m.shape[i]
	}
	return o
}

// elems are the view's elements of parent data, in row-major order.
func elems[T any](m model, data []T) []T {
	out := make([]T, m.n())
	for k := range out {
		out[k] = data[m.at(k)]
	}
	return out
}

func (m model) permute(axes ...int) model {
	r := model{m.off, make([]int, len(axes)), make([]int, len(axes))}
	for i, a := range axes {
		r.shape[i], r.strides[i] = m.shape[a], m.strides[a]
	}
	return r
}

func (m model) slice(axis, start, stop, step int) model {
	if axis < 0 {
		axis += len(m.shape)
	}
	r := model{m.off, slices.Clone(m.shape), slices.Clone(m.strides)}
	r.shape[axis] = (stop - start + step - 1) / step
	if r.shape[axis] > 0 {
		r.off += start * m.strides[axis]
	}
	r.strides[axis] *= step
	return r
}

func (m model) broadcast(shape ...int) model {
	r := model{m.off, slices.Clone(shape), make([]int, len(shape))}
	pad := len(shape) - len(m.shape)
	for i, d := range m.shape {
		if d != 1 {
			r.strides[pad+i] = m.strides[i]
		}
	}
	return r
}

// step is one view-making call, applied alike to an array and its model.
type step struct {
	name  string
	array func(*cuarray.Array[float64]) (*cuarray.Array[float64], error)
	model func(model) model
}

func permute(axes ...int) step {
	return step{fmt.Sprintf("Permute%v", axes),
		func(a *cuarray.Array[float64]) (*cuarray.Array[float64], error) { return a.Permute(axes...) },
		func(m model) model { return m.permute(axes...) }}
}

func transpose() step {
	return step{"Transpose", (*cuarray.Array[float64]).Transpose, func(m model) model { return m.permute(1, 0) }}
}

func sliceAxis(axis, start, stop, st int) step {
	return step{fmt.Sprintf("SliceAxis(%d,%d,%d,%d)", axis, start, stop, st),
		func(a *cuarray.Array[float64]) (*cuarray.Array[float64], error) {
			return a.SliceAxis(axis, start, stop, st)
		},
		func(m model) model { return m.slice(axis, start, stop, st) }}
}

func broadcastTo(shape ...int) step {
	return step{fmt.Sprintf("BroadcastTo%v", shape),
		func(a *cuarray.Array[float64]) (*cuarray.Array[float64], error) { return a.BroadcastTo(shape...) },
		func(m model) model { return m.broadcast(shape...) }}
}

// layout is a parent shape and the steps that make a view of it.
type layout struct {
	name       string
	parent     []int
	steps      []step
	contiguous bool // whether the view is contiguous
	writable   bool // whether it can be a destination
}

// layouts are the views every test runs over: contiguous, transposed,
// permuted 3-D and 4-D, stepped slices, broadcast, empty, one element, odd
// and prime sizes.
var layouts = []layout{
	{"contiguous", []int{3, 5}, nil, true, true},
	{"transposed", []int{7, 5}, []step{transpose()}, false, true},
	{"transposed, prime", []int{37, 41}, []step{transpose()}, false, true},
	{"transposed, tile-sized", []int{64, 96}, []step{transpose()}, false, true},
	{"permuted 3-D", []int{2, 3, 4}, []step{permute(2, 0, 1)}, false, true},
	{"permuted 3-D, batched transpose", []int{3, 33, 17}, []step{permute(0, 2, 1)}, false, true},
	{"permuted 4-D", []int{2, 3, 4, 5}, []step{permute(3, 1, 0, 2)}, false, true},
	{"stepped slice", []int{9, 8}, []step{sliceAxis(1, 1, 8, 3)}, false, true},
	{"rows with a step", []int{11, 3}, []step{sliceAxis(0, 2, 11, 2)}, false, true},
	{"slice of a transpose", []int{6, 7}, []step{transpose(), sliceAxis(0, 1, 6, 2)}, false, true},
	{"negative axis", []int{4, 6}, []step{sliceAxis(-1, 0, 6, 4)}, false, true},
	{"whole rows (contiguous)", []int{6, 4}, []step{sliceAxis(0, 1, 4, 1)}, true, true},
	{"broadcast row", []int{5}, []step{broadcastTo(3, 5)}, false, false},
	{"broadcast column", []int{4, 1}, []step{broadcastTo(2, 4, 3)}, false, false},
	{"broadcast of a transpose", []int{3, 2}, []step{transpose(), broadcastTo(4, 2, 3)}, false, false},
	{"empty", []int{4, 5}, []step{sliceAxis(1, 2, 2, 1), transpose()}, true, true},
	{"one element", []int{3, 4}, []step{sliceAxis(0, 1, 2, 1), sliceAxis(1, 3, 4, 2), transpose()}, true, true},
	{"permuted with dimensions of 1", []int{1, 5, 1, 3}, []step{permute(2, 3, 0, 1)}, false, true},
}

// parentData is parent elements that differ from one another.
func parentData(n int) []float64 {
	d := make([]float64, n)
	for i := range d {
		d[i] = float64(i)*0.5 - 7
	}
	return d
}

// build makes l's view of a new parent array of data, and its model.
func (l layout) build(t testing.TB, data []float64) (parent, view *cuarray.Array[float64], m model) {
	t.Helper()
	parent = cuarray.Must(cuarray.FromSlice(data, l.parent...))
	view, m = parent, modelOf(l.parent)
	for _, s := range l.steps {
		v, err := s.array(view)
		require.NoError(t, err, s.name)
		view, m = v, s.model(m)
	}
	return parent, view, m
}

func TestViewsReadTheirElementsInRowMajorOrder(t *testing.T) {
	for _, l := range layouts {
		t.Run(l.name, func(t *testing.T) {
			n := modelOf(l.parent).n()
			data := parentData(n)
			_, v, m := l.build(t, data)
			want := elems(m, data)
			assert.Equal(t, m.shape, v.Shape())
			assert.Equal(t, len(want), v.Len())
			assert.Equal(t, l.contiguous, v.IsContiguous())
			if !l.contiguous {
				assert.Equal(t, m.strides, v.Strides())
			}
			assert.Equal(t, want, read(t, v), "ToSlice")
			got := make([]float64, len(want))
			require.NoError(t, v.CopyTo(got))
			assert.Equal(t, want, got, "CopyTo")

			c, err := cuarray.Contiguous(v)
			require.NoError(t, err)
			assert.True(t, c.IsContiguous())
			assert.Equal(t, m.shape, c.Shape())
			assert.Equal(t, want, read(t, c), "Contiguous")
			// Printing a view prints what printing its packed copy does.
			assert.Equal(t, fmt.Sprint(c), fmt.Sprint(v))
			assert.Equal(t, fmt.Sprintf("%+.2f", c), fmt.Sprintf("%+.2f", v))

			if len(want) > 0 {
				defer cuarray.SetScalarIndexing("allow")()
				idx := make([]int, len(m.shape))
				for i, d := range m.shape {
					idx[i] = d - 1
				}
				x, err := v.At(idx...)
				require.NoError(t, err)
				assert.Equal(t, want[len(want)-1], x, "At of the last element")
			}
		})
	}
}

func TestContiguousOfAContiguousArrayIsANewReferenceToIt(t *testing.T) {
	a := cuarray.Must(cuarray.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3))
	c, err := cuarray.Contiguous(a)
	require.NoError(t, err)
	require.NotSame(t, a, c)
	require.NoError(t, cuarray.Fill(c, 9))
	assert.Equal(t, filled(6, float32(9)), read(t, a), "no copy: c shares a's buffer")
	c.UnsafeFree()
	assert.Equal(t, filled(6, float32(9)), read(t, a), "freeing c leaves a")
}

// TestViewsOfEveryElementSize packs and transposes arrays of elements of 1,
// 2, 4 and 8 bytes (the copy kernels move elements by size; bool, int8,
// int16 and uint32 run on another type's kernels of their size).
func TestViewsOfEveryElementSize(t *testing.T) {
	t.Run("bool", func(t *testing.T) { checkTransposeOf[bool](t) })
	t.Run("uint8", func(t *testing.T) { checkTransposeOf[uint8](t) })
	t.Run("int8", func(t *testing.T) { checkTransposeOf[int8](t) })
	t.Run("int16", func(t *testing.T) { checkTransposeOf[int16](t) })
	t.Run("uint32", func(t *testing.T) { checkTransposeOf[uint32](t) })
	t.Run("int32", func(t *testing.T) { checkTransposeOf[int32](t) })
	t.Run("float32", func(t *testing.T) { checkTransposeOf[float32](t) })
	t.Run("int64", func(t *testing.T) { checkTransposeOf[int64](t) })
	t.Run("complex64", func(t *testing.T) { checkTransposeOf[complex64](t) })
}

func checkTransposeOf[T cuarray.Elem](t *testing.T) {
	for _, sh := range [][2]int{{1, 1}, {3, 7}, {31, 33}, {64, 32}, {97, 5}} {
		r, c := sh[0], sh[1]
		data := iota[T](r * c)
		a := cuarray.Must(cuarray.FromSlice(data, r, c))
		at := cuarray.Must(a.Transpose())
		want := make([]T, r*c)
		for i := range r {
			for j := range c {
				want[j*r+i] = data[i*c+j]
			}
		}
		got := cuarray.Must(cuarray.Contiguous(at))
		assert.Equal(t, want, read(t, got), "%dx%d", r, c)
		// And back into a transposed destination.
		back := cuarray.Must(cuarray.Zeros[T](r, c))
		require.NoError(t, cuarray.Copy(cuarray.Must(back.Transpose()), got))
		assert.Equal(t, data, read(t, back), "%dx%d written through a transpose", r, c)
	}
}

// opCase is an operation run on views and on their packed copies; the
// results must agree.
type opCase struct {
	name string
	// run runs the operation on operands x (the layout's view) and y (a
	// second array of x's shape and layout) into a new result array, or
	// returns its scalar result as a one-element slice.
	run func(x, y *cuarray.Array[float64]) ([]float64, error)
	// only2D: the operation takes matrices only.
	only2D bool
}

func newLike(x *cuarray.Array[float64]) *cuarray.Array[float64] {
	return cuarray.Must(cuarray.New[float64](x.Shape()...))
}

func toSlice(a *cuarray.Array[float64], err error) ([]float64, error) {
	if err != nil {
		return nil, err
	}
	return a.ToSlice()
}

func into(x *cuarray.Array[float64], f func(dst *cuarray.Array[float64]) error) ([]float64, error) {
	dst := newLike(x)
	if err := f(dst); err != nil {
		return nil, err
	}
	return dst.ToSlice()
}

func scalarOf(v float64, err error) ([]float64, error) { return []float64{v}, err }

var opCases = []opCase{
	{"Add", func(x, y *cuarray.Array[float64]) ([]float64, error) {
		return into(x, func(d *cuarray.Array[float64]) error { return errOf(cuarray.Add(d, x, y)) })
	}, false},
	{"Sub of a packed and a view", func(x, y *cuarray.Array[float64]) ([]float64, error) {
		yc := cuarray.Must(cuarray.Contiguous(y))
		return into(x, func(d *cuarray.Array[float64]) error { return errOf(cuarray.Sub(d, yc, x)) })
	}, false},
	{"Mul", func(x, y *cuarray.Array[float64]) ([]float64, error) {
		return into(x, func(d *cuarray.Array[float64]) error { return errOf(cuarray.Mul(d, x, y)) })
	}, false},
	{"Div", func(x, y *cuarray.Array[float64]) ([]float64, error) {
		return into(x, func(d *cuarray.Array[float64]) error { return errOf(cuarray.Div(d, x, y)) })
	}, false},
	{"Add", func(x, y *cuarray.Array[float64]) ([]float64, error) { return toSlice(cuarray.Add(nil, x, y)) }, false},
	{"Add broadcasting a view's last row", func(x, y *cuarray.Array[float64]) ([]float64, error) {
		sh := y.Shape()
		if len(sh) == 0 || sh[0] == 0 {
			return toSlice(cuarray.Add(nil, x, y))
		}
		row := cuarray.Must(y.SliceAxis(0, sh[0]-1, sh[0], 1))
		return toSlice(cuarray.Add(nil, x, row))
	}, false},
	{"AddScalar", func(x, _ *cuarray.Array[float64]) ([]float64, error) {
		return into(x, func(d *cuarray.Array[float64]) error { return errOf(cuarray.AddScalar(d, x, 1.5)) })
	}, false},
	{"MulScalar", func(x, _ *cuarray.Array[float64]) ([]float64, error) { return toSlice(cuarray.MulScalar(nil, x, -2)) }, false},
	{"Exp", func(x, _ *cuarray.Array[float64]) ([]float64, error) {
		return into(x, func(d *cuarray.Array[float64]) error { return errOf(cuarray.Exp(d, x)) })
	}, false},
	{"Relu", func(x, _ *cuarray.Array[float64]) ([]float64, error) { return toSlice(cuarray.Relu(nil, x)) }, false},
	{"Copy", func(x, _ *cuarray.Array[float64]) ([]float64, error) {
		return into(x, func(d *cuarray.Array[float64]) error { return cuarray.Copy(d, x) })
	}, false},
	{"Clone", func(x, _ *cuarray.Array[float64]) ([]float64, error) { return toSlice(cuarray.Ops[float64]{}.Clone(x)) }, false},
	{"Axpy into a packed y", func(x, y *cuarray.Array[float64]) ([]float64, error) {
		yc := cuarray.Must(cuarray.Contiguous(y))
		yc = cuarray.Must(cuarray.Ops[float64]{}.Clone(yc))
		if _, err := cuarray.Axpy(yc, 2, x, yc); err != nil {
			return nil, err
		}
		return yc.ToSlice()
	}, false},
	{"Axpy", func(x, y *cuarray.Array[float64]) ([]float64, error) { return toSlice(cuarray.Axpy(nil, 0.5, x, y)) }, false},
	{"Sum", func(x, _ *cuarray.Array[float64]) ([]float64, error) { return scalarOf(cuarray.Sum(x)) }, false},
	{"Max", func(x, _ *cuarray.Array[float64]) ([]float64, error) {
		if x.Len() == 0 {
			return nil, nil
		}
		return scalarOf(cuarray.Max(x))
	}, false},
	{"Dot", func(x, y *cuarray.Array[float64]) ([]float64, error) { return scalarOf(cuarray.Dot(x, y)) }, false},
	{"MatMul of x and yᵀ", func(x, y *cuarray.Array[float64]) ([]float64, error) {
		return toSlice(cuarray.MatMul(nil, x, cuarray.Must(y.Transpose())))
	}, true},
	{"Gemm transA", func(x, y *cuarray.Array[float64]) ([]float64, error) {
		return toSlice(cuarray.Gemm(nil, true, false, 1.5, x, y, 0))
	}, true},
	{"Gemv with a stepped vector", func(x, _ *cuarray.Array[float64]) ([]float64, error) {
		c := x.Shape()[1]
		vec := cuarray.Must(cuarray.Must(cuarray.FromSlice(parentData(2*c+1))).SliceAxis(0, 1, 2*c+1, 2))
		out := cuarray.Must(cuarray.Zeros[float64](x.Shape()[0]))
		if _, err := cuarray.Gemv(out, false, 1, x, vec, 0); err != nil {
			return nil, err
		}
		return out.ToSlice()
	}, true},
	{"SumRows", func(x, _ *cuarray.Array[float64]) ([]float64, error) {
		out := cuarray.Must(cuarray.New[float64](x.Shape()[0]))
		if _, err := cuarray.SumRows(out, x); err != nil {
			return nil, err
		}
		return out.ToSlice()
	}, true},
	{"SumCols", func(x, _ *cuarray.Array[float64]) ([]float64, error) {
		out := cuarray.Must(cuarray.New[float64](x.Shape()[1]))
		if _, err := cuarray.SumCols(out, x); err != nil {
			return nil, err
		}
		return out.ToSlice()
	}, true},
	{"AddRowVector", func(x, y *cuarray.Array[float64]) ([]float64, error) {
		if x.Len() == 0 {
			return nil, nil
		}
		b := cuarray.Must(cuarray.Contiguous(y))
		b = cuarray.Must(b.Reshape(-1))
		b = cuarray.Must(b.View(0, x.Shape()[1]))
		return into(x, func(d *cuarray.Array[float64]) error { return errOf(cuarray.AddRowVector(d, x, b)) })
	}, true},
	{"ReluGrad", func(x, y *cuarray.Array[float64]) ([]float64, error) {
		return into(x, func(d *cuarray.Array[float64]) error { return errOf(cuarray.ReluGrad(d, x, y)) })
	}, false},
	{"SoftmaxCrossEntropy", func(x, _ *cuarray.Array[float64]) ([]float64, error) {
		rows, cols := x.Shape()[0], x.Shape()[1]
		if rows == 0 || cols == 0 {
			return nil, nil
		}
		lab := make([]int32, 2*rows)
		for i := range lab {
			lab[i] = int32(i % cols)
		}
		// Strided labels: every other one.
		labels := cuarray.Must(cuarray.Must(cuarray.FromSlice(lab)).SliceAxis(0, 0, 2*rows, 2))
		loss := cuarray.Must(cuarray.New[float64](rows))
		dl := newLike(x)
		if err := cuarray.SoftmaxCrossEntropy(loss, dl, x, labels, 1); err != nil {
			return nil, err
		}
		ls, err := loss.ToSlice()
		if err != nil {
			return nil, err
		}
		ds, err := dl.ToSlice()
		return append(ls, ds...), err
	}, true},
}

// TestEveryOperationOnViews runs each operation on every layout and on the
// layout's packed copies: the results must be the same.
func TestEveryOperationOnViews(t *testing.T) {
	for _, l := range layouts {
		for _, oc := range opCases {
			t.Run(l.name+"/"+oc.name, func(t *testing.T) {
				data := parentData(modelOf(l.parent).n())
				_, x, m := l.build(t, data)
				if oc.only2D && len(m.shape) != 2 {
					t.Skip("a 2-D operation")
				}
				data2 := make([]float64, len(data))
				for i, v := range data {
					data2[i] = math.Sin(v) + 2 // no zeros to divide by
				}
				_, y, _ := l.build(t, data2)
				got, err := oc.run(x, y)
				require.NoError(t, err)
				xc, yc := cuarray.Must(cuarray.Contiguous(x)), cuarray.Must(cuarray.Contiguous(y))
				want, err := oc.run(xc, yc)
				require.NoError(t, err)
				assert.InDeltaSlice(t, want, got, 1e-9)
				// The views read the same parents afterwards: nothing wrote them.
				assert.Equal(t, elems(m, data), read(t, x))
			})
		}
	}
}

// dstCase is an operation writing into a destination array.
type dstCase struct {
	name string
	run  func(dst, x *cuarray.Array[float64]) error
	want func(old, x float64) float64
}

var dstCases = []dstCase{
	{"Fill", func(d, _ *cuarray.Array[float64]) error { return cuarray.Fill(d, 3) }, func(_, _ float64) float64 { return 3 }},
	{"Copy", func(d, x *cuarray.Array[float64]) error { return cuarray.Copy(d, x) }, func(_, x float64) float64 { return x }},
	{"Add in place", func(d, x *cuarray.Array[float64]) error { return errOf(cuarray.Add(d, d, x)) }, func(o, x float64) float64 { return o + x }},
	{"MulScalar", func(d, x *cuarray.Array[float64]) error { return errOf(cuarray.MulScalar(d, x, 2)) }, func(_, x float64) float64 { return 2 * x }},
	{"Tanh", func(d, x *cuarray.Array[float64]) error { return errOf(cuarray.Tanh(d, x)) }, func(_, x float64) float64 { return math.Tanh(x) }},
	{"Axpy", func(d, x *cuarray.Array[float64]) error { return errOf(cuarray.Axpy(d, 2, x, d)) }, func(o, x float64) float64 { return o + 2*x }},
	{"Scale", func(d, _ *cuarray.Array[float64]) error { return errOf(cuarray.Scale(d, -1, d)) }, func(o, _ float64) float64 { return -o }},
}

// TestWritingIntoViews writes through every writable layout: the view's
// elements of the parent get the result, the parent's others keep their
// values; a broadcast view as a destination is an error.
func TestWritingIntoViews(t *testing.T) {
	for _, l := range layouts {
		for _, dc := range dstCases {
			t.Run(l.name+"/"+dc.name, func(t *testing.T) {
				data := parentData(modelOf(l.parent).n())
				parent, dst, m := l.build(t, data)
				x := cuarray.Must(cuarray.FromSlice(parentData(m.n() + 3)[3:], m.shape...))
				err := dc.run(dst, x)
				if !l.writable {
					require.ErrorIs(t, err, cuarray.ErrShape)
					assert.ErrorContains(t, err, "broadcast view")
					assert.Equal(t, data, read(t, parent), "nothing written")
					return
				}
				require.NoError(t, err)
				want := slices.Clone(data)
				xs := read(t, x)
				for k := range m.n() {
					want[m.at(k)] = dc.want(data[m.at(k)], xs[k])
				}
				assert.InDeltaSlice(t, want, read(t, parent), 1e-12)
			})
		}
	}
}

func TestWritingIntoStridedViewsOfOtherOperations(t *testing.T) {
	a := cuarray.Must(cuarray.FromSlice([]float64{1, 2, 3, 4, 5, 6}, 2, 3))
	b := cuarray.Must(cuarray.FromSlice([]float64{1, 0, 0, 1, 1, 1}, 3, 2))
	c := cuarray.Must(cuarray.Zeros[float64](2, 2))
	// c = aᵀ-free MatMul into a transposed c: cᵀ = a·b, so c = (a·b)ᵀ.
	require.NoError(t, errOf(cuarray.MatMul(cuarray.Must(c.Transpose()), a, b)))
	assert.Equal(t, []float64{4, 10, 5, 11}, read(t, c))

	rows := cuarray.Must(cuarray.Zeros[float64](4))
	even := cuarray.Must(rows.SliceAxis(0, 0, 4, 2))
	require.NoError(t, errOf(cuarray.SumRows(even, a)))
	assert.Equal(t, []float64{6, 0, 15, 0}, read(t, rows))

	// The gradient of SoftmaxCrossEntropy into a transposed view.
	logits := cuarray.Must(cuarray.FromSlice([]float64{1, 2, 3, 1, 1, 1}, 2, 3))
	labels := cuarray.Must(cuarray.FromSlice([]int32{2, 0}))
	loss := cuarray.Must(cuarray.New[float64](2))
	want := cuarray.Must(cuarray.New[float64](2, 3))
	require.NoError(t, cuarray.SoftmaxCrossEntropy(loss, want, logits, labels, 1))
	gT := cuarray.Must(cuarray.Zeros[float64](3, 2))
	require.NoError(t, cuarray.SoftmaxCrossEntropy(loss, cuarray.Must(gT.Transpose()), logits, labels, 1))
	got := cuarray.Must(cuarray.Contiguous(cuarray.Must(gT.Transpose())))
	assert.InDeltaSlice(t, read(t, want), read(t, got), 1e-12)
}

func TestSetAtThroughAView(t *testing.T) {
	defer cuarray.SetScalarIndexing("allow")()
	a := cuarray.Must(cuarray.Zeros[float32](2, 3))
	at := cuarray.Must(a.Transpose())
	require.NoError(t, at.SetAt(7, 2, 1))
	assert.Equal(t, []float32{0, 0, 0, 0, 0, 7}, read(t, a))
	v, err := at.At(2, 1)
	require.NoError(t, err)
	assert.Equal(t, float32(7), v)
	bc := cuarray.Must(cuarray.Must(cuarray.Zeros[float32](3)).BroadcastTo(2, 3))
	err = bc.SetAt(1, 0, 0)
	require.ErrorIs(t, err, cuarray.ErrShape)
	assert.ErrorContains(t, err, "SetAt[0 0]")
}

func TestViewsOfViewsAndOverlappingCopies(t *testing.T) {
	// Copy between interleaved views of one buffer: odd columns onto even
	// ones (their extents overlap; their elements do not).
	a := cuarray.Must(cuarray.FromSlice([]int32{0, 1, 2, 3, 4, 5, 6, 7}, 2, 4))
	even := cuarray.Must(a.SliceAxis(1, 0, 4, 2))
	odd := cuarray.Must(a.SliceAxis(1, 1, 4, 2))
	require.NoError(t, cuarray.Copy(even, odd))
	assert.Equal(t, []int32{1, 1, 3, 3, 5, 5, 7, 7}, read(t, a))
	// A square matrix onto its own transpose: a real overlap, through a
	// temporary copy.
	sq := cuarray.Must(cuarray.FromSlice([]int32{1, 2, 3, 4}, 2, 2))
	require.NoError(t, cuarray.Copy(sq, cuarray.Must(sq.Transpose())))
	assert.Equal(t, []int32{1, 3, 2, 4}, read(t, sq))
	// In-place Add of a matrix and its transpose.
	m := cuarray.Must(cuarray.FromSlice([]float32{1, 2, 3, 4}, 2, 2))
	require.NoError(t, errOf(cuarray.Add(m, m, cuarray.Must(m.Transpose()))))
	assert.Equal(t, []float32{2, 5, 5, 8}, read(t, m))
	// And into the transpose of its own input: computed from the old values.
	m2 := cuarray.Must(cuarray.FromSlice([]float32{1, 2, 3, 4}, 2, 2))
	require.NoError(t, errOf(cuarray.Add(cuarray.Must(m2.Transpose()), m2, m2)))
	assert.Equal(t, []float32{2, 6, 4, 8}, read(t, m2))
	// Slice of a view (the first-axis Slice too).
	p := cuarray.Must(cuarray.FromSlice(iota[float64](24), 2, 3, 4))
	v := cuarray.Must(p.Permute(2, 1, 0))
	s := cuarray.Must(v.Slice(1, 3))
	assert.Equal(t, []int{2, 3, 2}, s.Shape())
	assert.Equal(t, elems(modelOf([]int{2, 3, 4}).permute(2, 1, 0).slice(0, 1, 3, 1), iota[float64](24)), read(t, s))
}

func TestComplexViews(t *testing.T) {
	data := []complex64{1 + 1i, 2, 3 - 2i, 4i, 5, 6 + 6i}
	a := cuarray.Must(cuarray.FromSlice(data, 2, 3))
	at := cuarray.Must(a.Transpose())
	got := read(t, cuarray.Must(cuarray.Add(nil, at, at)))
	want := []complex64{2 + 2i, 8i, 4, 10, 6 - 4i, 12 + 12i}
	for i := range want {
		assert.InDelta(t, 0, cmplx.Abs(complex128(got[i]-want[i])), 1e-6)
	}
}

func TestViewErrors(t *testing.T) {
	a := cuarray.Must(cuarray.FromSlice(iota[float32](24), 2, 3, 4))
	m := cuarray.Must(cuarray.FromSlice(iota[float32](6), 2, 3))
	mt := cuarray.Must(m.Transpose())
	row := cuarray.Must(cuarray.FromSlice(iota[float32](3), 3))
	bc := cuarray.Must(row.BroadcastTo(2, 3))
	freed := cuarray.Must(cuarray.New[float32](2, 2))
	freed.UnsafeFree()
	cases := []struct {
		name string
		err  func() error
		want []string
	}{
		{"Transpose of 3-D", func() error { _, err := a.Transpose(); return err }, []string{"Transpose", "float32[2 3 4]", "3 dimensions", "Permute"}},
		{"Transpose of 1-D", func() error { _, err := row.Transpose(); return err }, []string{"Transpose", "float32[3]"}},
		{"Permute, repeated axis", func() error { _, err := a.Permute(1, 1, 0); return err }, []string{"Permute(1, 1, 0)", "float32[2 3 4]", "axis 1 appears more than once"}},
		{"Permute, axis out of range", func() error { _, err := a.Permute(0, 3, 1); return err }, []string{"Permute(0, 3, 1)", "axis 3 is out of range", "0…2"}},
		{"Permute, too few axes", func() error { _, err := a.Permute(0, 1); return err }, []string{"Permute(0, 1)", "2 axes for 3 dimensions"}},
		{"SliceAxis, step 0", func() error { _, err := a.SliceAxis(1, 0, 3, 0); return err }, []string{"SliceAxis(1, 0, 3, 0)", "float32[2 3 4]", "step 0", "≥ 1"}},
		{"SliceAxis, negative step", func() error { _, err := a.SliceAxis(1, 2, 0, -1); return err }, []string{"step -1", "reversed views are not supported"}},
		{"SliceAxis, stop past the end", func() error { _, err := a.SliceAxis(2, 0, 5, 1); return err }, []string{"SliceAxis(2, 0, 5, 1)", "0 ≤ start ≤ stop ≤ 4", "axis 2"}},
		{"SliceAxis, axis out of range", func() error { _, err := a.SliceAxis(-4, 0, 1, 1); return err }, []string{"axis -4 is out of range"}},
		{"BroadcastTo, incompatible", func() error { _, err := a.BroadcastTo(2, 5, 4); return err }, []string{"BroadcastTo[2 5 4]", "float32[2 3 4]", "3", "5"}},
		{"BroadcastTo, fewer dimensions", func() error { _, err := a.BroadcastTo(3, 4); return err }, []string{"BroadcastTo[3 4]", "broadcast to [2 3 4]"}},
		{"Reshape of a strided view", func() error { _, err := mt.Reshape(6); return err }, []string{"Reshape", "float32[3 2]", "strided view", "Contiguous"}},
		{"View of a strided view", func() error { _, err := mt.View(0, 2); return err }, []string{"View(0, 2)", "strided view"}},
		{"Fill of a broadcast view", func() error { return cuarray.Fill(bc, 1) }, []string{"Fill", "dst float32[2 3]", "broadcast view"}},
		{"Copy into a broadcast view", func() error { return cuarray.Copy(bc, m) }, []string{"Copy", "dst", "broadcast view"}},
		{"Add into a broadcast view", func() error { return errOf(cuarray.Add(bc, m, m)) }, []string{"Add", "broadcast view"}},
		{"WithPointers of a strided view", func() error {
			return cuarray.WithPointers(nil, func(backend.Stream, []backend.Ptr) error { return nil }, cuarray.In(mt))
		}, []string{"WithPointers", "argument 0 float32[3 2]", "strided view", "Contiguous"}},
		{"Permute of a freed array", func() error { _, err := freed.Permute(1, 0); return err }, []string{"Permute", "UnsafeFree"}},
		{"Contiguous of a freed view", func() error { _, err := cuarray.Contiguous(freed); return err }, []string{"Contiguous", "UnsafeFree"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.err()
			require.Error(t, err)
			if c.name != "Permute of a freed array" && c.name != "Contiguous of a freed view" {
				assert.ErrorIs(t, err, cuarray.ErrShape)
			} else {
				assert.ErrorIs(t, err, cuarray.ErrFreed)
			}
			for _, w := range c.want {
				assert.ErrorContains(t, err, w)
			}
		})
	}
}

// FuzzViews builds a view by a sequence of Permute, SliceAxis and
// BroadcastTo calls decoded from the input, over a small parent, and checks
// its elements, its packed copy, a strided Add and a write through it
// against the model.
func FuzzViews(f *testing.F) {
	f.Add([]byte{3, 4, 2, 0, 1, 0, 1, 2, 3})
	f.Add([]byte{2, 5, 5, 1, 2, 1, 1, 4, 2, 0, 1})
	f.Add([]byte{4, 2, 3, 1, 2, 2, 0, 3, 2, 1, 0})
	f.Add([]byte{1, 7, 1, 0, 7, 3})
	f.Fuzz(func(t *testing.T, in []byte) {
		next := func(mod int) int {
			if len(in) == 0 || mod <= 0 {
				return 0
			}
			v := int(in[0]) % mod
			in = in[1:]
			return v
		}
		nd := 1 + next(4)
		shape := make([]int, nd)
		for i := range shape {
			shape[i] = next(6) + 1
			if next(8) == 0 {
				shape[i] = 0
			}
		}
		m := modelOf(shape)
		data := parentData(m.n())
		parent := cuarray.Must(cuarray.FromSlice(data, shape...))
		v := parent
		broadcast := false // whether v names some element more than once
		for range 3 {
			switch next(3) {
			case 0: // a permutation
				axes := make([]int, len(m.shape))
				for i := range axes {
					axes[i] = i
				}
				for i := len(axes) - 1; i > 0; i-- {
					j := next(i + 1)
					axes[i], axes[j] = axes[j], axes[i]
				}
				v, m = cuarray.Must(v.Permute(axes...)), m.permute(axes...)
			case 1: // a slice with a step
				ax := next(len(m.shape))
				d := m.shape[ax]
				start := next(d + 1)
				stop := start + next(d-start+1)
				st := 1 + next(3)
				v, m = cuarray.Must(v.SliceAxis(ax, start, stop, st)), m.slice(ax, start, stop, st)
			case 2: // a broadcast: a leading dimension, and 1s widened
				out := append([]int{1 + next(3)}, m.shape...)
				for i := 1; i < len(out); i++ {
					if out[i] == 1 {
						out[i] = 1 + next(3)
					}
				}
				if len(out) > 5 {
					continue
				}
				v, m = cuarray.Must(v.BroadcastTo(out...)), m.broadcast(out...)
			}
		}
		for i, d := range m.shape {
			broadcast = broadcast || d > 1 && m.strides[i] == 0 && m.n() > 0
		}
		want := elems(m, data)
		require.Equal(t, m.shape, v.Shape())
		require.Equal(t, want, read(t, v))
		require.Equal(t, want, read(t, cuarray.Must(cuarray.Contiguous(v))))
		sum := cuarray.Must(cuarray.Add(nil, v, v))
		for i, w := range want {
			want[i] = 2 * w
		}
		require.Equal(t, want, read(t, sum))
		if broadcast {
			require.ErrorIs(t, cuarray.Fill(v, 1), cuarray.ErrShape)
			return
		}
		require.NoError(t, cuarray.Copy(v, sum))
		wantParent := slices.Clone(data)
		for k := range m.n() {
			wantParent[m.at(k)] = want[k]
		}
		require.Equal(t, wantParent, read(t, parent))
	})
}

// TestViewsOnAStream: the temporaries of an operation on views come from
// the Ops' stream and its pool, and all go back to it once the work is
// queued: the pool holds nothing more after the operations than before.
func TestViewsOnAStream(t *testing.T) {
	p := freshPool(t)
	s := newStream(t, p)
	defer s.Close()
	f := cuarray.On[float64](s)
	a := cuarray.Must(f.FromSlice(parentData(12), 3, 4))
	at := cuarray.Must(a.Transpose())
	dst := cuarray.Must(f.Zeros(4, 3))
	before := p.Stats()
	require.NoError(t, errOf(f.Exp(cuarray.Must(dst.Transpose()), a))) // a strided destination
	require.NoError(t, errOf(f.Tanh(dst, at)))                         // a packed input
	sum, err := f.Sum(at)
	require.NoError(t, err)
	require.NoError(t, s.Synchronize())
	after := p.Stats()
	assert.Equal(t, before.Live, after.Live, "every temporary went back")
	assert.Equal(t, uint64(3), after.Allocs-before.Allocs, "the three temporaries (dst of Exp, at for Tanh and Sum) came from the stream's pool")
	want := 0.0
	for _, v := range parentData(12) {
		want += v
	}
	assert.InDelta(t, want, sum, 1e-12)
	m := modelOf([]int{3, 4}).permute(1, 0)
	got := read(t, dst)
	for k, v := range elems(m, parentData(12)) {
		assert.InDelta(t, math.Tanh(v), got[k], 1e-12)
	}
}

// TestFillRandIntoAView: random numbers written through a stepped view land
// on its elements only.
func TestFillRandIntoAView(t *testing.T) {
	a := cuarray.Must(cuarray.Full[float32](-1, 4, 6))
	v := cuarray.Must(a.SliceAxis(1, 1, 6, 2))
	require.NoError(t, cuarray.FillRand(v))
	got := read(t, a)
	for i, x := range got {
		if i%6%2 == 1 {
			assert.True(t, x >= 0 && x <= 1, "element %d = %g, want in [0, 1]", i, x)
		} else {
			assert.Equal(t, float32(-1), x, "element %d is not the view's", i)
		}
	}
}
