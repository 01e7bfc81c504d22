package kernels_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/kernels"
)

// ReduceAxes on strided layouts, as the views of a buffer that cuarray's
// strided arrays will pass: a transpose, a permutation of three axes, a
// stepped slice, a broadcast (stride 0) and a view at an offset, each over
// every subset of its axes, against a loop over the same strides. Sums of
// small integers held in float64 are exact in any order, so the check is
// exact on every backend.

type stridedCase struct {
	name           string
	shape, strides []int
	offset         int // elements into the buffer
}

func stridedCases() []stridedCase {
	return []stridedCase{
		{"contiguous", []int{5, 7}, []int{7, 1}, 0},
		{"transposed", []int{7, 5}, []int{1, 7}, 0},
		{"permuted", []int{4, 3, 5}, []int{1, 20, 4}, 0},
		{"stepped", []int{3, 4}, []int{18, 3}, 1},
		{"broadcast", []int{6, 5}, []int{0, 1}, 2},
		{"big rows", []int{3, 70001}, []int{70001, 1}, 0},
		{"big columns", []int{70001, 3}, []int{3, 1}, 0},
		{"big transposed", []int{3, 70001}, []int{1, 3}, 0},
	}
}

// refStrided reduces with a plain loop: for each output (row-major over
// the kept axes), the reduced elements in row-major order.
func refStrided(op kernels.ReduceOp, buf []float64, c stridedCase, axes []int) []float64 {
	red := make([]bool, len(c.shape))
	for _, a := range axes {
		red[a] = true
	}
	nout := 1
	for i, d := range c.shape {
		if !red[i] {
			nout *= d
		}
	}
	acc := make([]float64, nout)
	idx := make([]int, nout)
	seen := make([]bool, nout)
	n := 1
	for _, d := range c.shape {
		n *= d
	}
	coord := make([]int, len(c.shape))
	for i := range n {
		rem := i
		for k := len(c.shape) - 1; k >= 0; k-- {
			coord[k] = rem % c.shape[k]
			rem /= c.shape[k]
		}
		o, r, off := 0, 0, c.offset
		for k, v := range coord {
			off += v * c.strides[k]
			if red[k] {
				r = r*c.shape[k] + v
			} else {
				o = o*c.shape[k] + v
			}
		}
		v := buf[off]
		switch op {
		case kernels.ReduceSum:
			acc[o] += v
		case kernels.ReduceArgMax:
			if !seen[o] || v > acc[o] {
				acc[o], idx[o] = v, r
			}
		}
		seen[o] = true
	}
	if op == kernels.ReduceArgMax {
		for o := range acc {
			acc[o] = float64(idx[o])
		}
	}
	return acc
}

func TestReduceAxesReadsStridedViews(t *testing.T) {
	e := newEnv(t)
	for _, c := range stridedCases() {
		extent := c.offset + 1
		for i, d := range c.shape {
			extent += (d - 1) * c.strides[i]
		}
		vals := make([]float64, extent)
		for i := range vals {
			vals[i] = float64(e.r.IntN(9) - 4)
		}
		x := upload(t, e, vals, false)
		for mask := 1; mask < 1<<len(c.shape); mask++ {
			var axes []int
			for k := range c.shape {
				if mask&(1<<k) != 0 {
					axes = append(axes, k)
				}
			}
			for _, op := range []kernels.ReduceOp{kernels.ReduceSum, kernels.ReduceArgMax} {
				want := refStrided(op, vals, c, axes)
				name := fmt.Sprintf("%s %s axes %v", op, c.name, axes)
				xp := x.p + backend.Ptr(c.offset*8)
				var got []float64
				if op == kernels.ReduceSum {
					dst := alloc[float64](t, e, len(want), false)
					require.NoError(t, kernels.ReduceAxes[float64](e.dev, e.s, op, dst.p, xp, c.shape, c.strides, axes, kernels.Scratch{}), name)
					got = dst.read(t)
				} else {
					dst := alloc[int64](t, e, len(want), false)
					require.NoError(t, kernels.ReduceAxes[float64](e.dev, e.s, op, dst.p, xp, c.shape, c.strides, axes, kernels.Scratch{}), name)
					for _, v := range dst.read(t) {
						got = append(got, float64(v))
					}
				}
				require.Equal(t, want, got, name)
			}
		}
	}
}

func TestReduceAxesRejectsBadLayouts(t *testing.T) {
	e := newEnv(t)
	x := alloc[float32](t, e, 16, false)
	d := alloc[float32](t, e, 16, false)
	i := alloc[int64](t, e, 16, false)
	none := kernels.Scratch{}
	cases := []struct {
		name string
		err  error
		is   error
		msg  string
	}{
		{"axis out of range", kernels.ReduceAxes[float32](e.dev, e.s, kernels.ReduceSum, d.p, x.p, []int{4, 4}, []int{4, 1}, []int{2}, none),
			backend.ErrInvalidValue, "kernels: ReduceAxes Sum float32: shape [4 4], axes [2]: axis 2 is out of range; axes must be in [0, 2)"},
		{"axes not increasing", kernels.ReduceAxes[float32](e.dev, e.s, kernels.ReduceMax, d.p, x.p, []int{4, 4}, []int{4, 1}, []int{1, 0}, none),
			backend.ErrInvalidValue, "axes must be distinct and increasing"},
		{"strides of another length", kernels.ReduceAxes[float32](e.dev, e.s, kernels.ReduceSum, d.p, x.p, []int{4, 4}, []int{1}, []int{0}, none),
			backend.ErrInvalidValue, "each dimension needs a stride"},
		{"negative stride", kernels.ReduceAxes[float32](e.dev, e.s, kernels.ReduceSum, d.p, x.p, []int{4, 4}, []int{-4, 1}, []int{0}, none),
			backend.ErrInvalidValue, "dimensions and strides must be ≥ 0"},
		{"empty max", kernels.ReduceAxes[float32](e.dev, e.s, kernels.ReduceMax, d.p, x.p, []int{4, 0}, []int{0, 1}, []int{1}, none),
			kernels.ErrEmpty, "Max of no elements has no value"},
		{"complex argmax", kernels.ReduceAxes[complex64](e.dev, e.s, kernels.ReduceArgMax, i.p, x.p, []int{4}, []int{1}, []int{0}, none),
			kernels.ErrUnsupportedDType, "ArgMax does not take complex64"},
		{"misaligned dst", kernels.ReduceAxes[float32](e.dev, e.s, kernels.ReduceArgMax, i.p+4, x.p, []int{4, 4}, []int{4, 1}, []int{1}, none),
			backend.ErrInvalidValue, "pointer dst"},
		{"misaligned scratch", kernels.ReduceAxes[float32](e.dev, e.s, kernels.ReduceSum, d.p, x.p, []int{4, 4}, []int{4, 1}, []int{1}, kernels.Scratch{Ptr: x.p + 4, Bytes: 8}),
			backend.ErrInvalidValue, "16-byte aligned"},
		{"not a reduction", kernels.ReduceAxes[float32](e.dev, e.s, kernels.ReduceOp(0), d.p, x.p, []int{4}, []int{1}, []int{0}, none),
			backend.ErrInvalidValue, "is not a reduction"},
	}
	for _, c := range cases {
		require.ErrorIs(t, c.err, c.is, c.name)
		assert.ErrorContains(t, c.err, c.msg, c.name)
	}
	// Nothing to write: no pointer is needed.
	require.NoError(t, kernels.ReduceAxes[float32](e.dev, e.s, kernels.ReduceMax, 0, 0, []int{0, 3}, []int{3, 1}, []int{1}, none))
}

func TestReduceOutputTypes(t *testing.T) {
	for _, c := range []struct {
		op     kernels.ReduceOp
		in     kernels.DType
		out    kernels.DType
		refuse bool
	}{
		{kernels.ReduceSum, kernels.Uint8, kernels.Int64, false},
		{kernels.ReduceSum, kernels.Float32, kernels.Float32, false},
		{kernels.ReduceProd, kernels.Int32, kernels.Int64, false},
		{kernels.ReduceMean, kernels.Int64, kernels.Float64, false},
		{kernels.ReduceMean, kernels.Complex64, kernels.Complex64, false},
		{kernels.ReduceMax, kernels.Uint8, kernels.Uint8, false},
		{kernels.ReduceArgMin, kernels.Float64, kernels.Int64, false},
		{kernels.ReduceAll, kernels.Complex64, kernels.Bool, false},
		{kernels.ReduceAny, kernels.Bool, kernels.Bool, false},
		{kernels.ReduceMin, kernels.Complex64, 0, true},
	} {
		got, err := kernels.ReduceOutput(c.op, c.in)
		if c.refuse {
			require.ErrorIs(t, err, kernels.ErrUnsupportedDType)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, c.out, got, "%s of %s", c.op, c.in)
	}
	assert.Equal(t, "ArgMax", kernels.ReduceArgMax.String())
	assert.Equal(t, "ReduceOp(99)", kernels.ReduceOp(99).String())
}
