package cuarray_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/half"
	"github.com/gocuda/gocuda/kernels"
)

// Arrays of float16 and bfloat16: construction, copies, printing,
// conversion and the table's operations, against plain Go that computes
// in float32 and rounds with package half.

func TestHalfArraysConstructAndCopy(t *testing.T) {
	t.Run("float16", testHalfConstruct[half.Float16])
	t.Run("bfloat16", testHalfConstruct[half.BFloat16])
}

type halfElem interface {
	half.Float16 | half.BFloat16
	Float32() float32
}

func halfFrom[H halfElem](f float32) H {
	var h H
	if _, ok := any(h).(half.Float16); ok {
		return H(half.Float16FromFloat32(f))
	}
	return H(half.BFloat16FromFloat32(f))
}

func testHalfConstruct[H halfElem](t *testing.T) {
	one := halfFrom[H](1)
	for _, n := range []int{0, 1, 7, 1009} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			data := make([]H, n)
			for i := range data {
				data[i] = halfFrom[H](float32(i) * 0.1)
			}
			a, err := cuarray.FromSlice(data, n)
			require.NoError(t, err)
			defer a.UnsafeFree()
			assert.Equal(t, data, read(t, a))
			assert.Equal(t, kernels.DTypeOf[H](), a.DType())

			b, err := cuarray.Ones[H](n)
			require.NoError(t, err)
			defer b.UnsafeFree()
			assert.Equal(t, filled(n, one), read(t, b))
			require.NoError(t, cuarray.Copy(b, a))
			assert.Equal(t, data, read(t, b))

			z, err := cuarray.Zeros[H](n)
			require.NoError(t, err)
			defer z.UnsafeFree()
			assert.Equal(t, make([]H, n), read(t, z))
			require.NoError(t, cuarray.Fill(z, halfFrom[H](-2.5)))
			assert.Equal(t, filled(n, halfFrom[H](-2.5)), read(t, z))
		})
	}
}

// Arrays of them print their elements as package half formats them:
// the shortest decimal that reads back to the same 16-bit value.
func TestHalfArraysPrint(t *testing.T) {
	f16, err := cuarray.FromSlice([]half.Float16{half.Float16FromFloat32(0.1), half.Float16FromFloat32(65504), half.Float16FromFloat32(float32(math.Inf(-1))), half.NaNFloat16}, 2, 2)
	require.NoError(t, err)
	defer f16.UnsafeFree()
	out := fmt.Sprintf("%v", f16)
	assert.Contains(t, out, "2×2 float16 on device 0")
	assert.True(t, strings.HasSuffix(out, ":\n[[  0.1 65500]\n [ -Inf   NaN]]"), out)
	bf, err := cuarray.FromSlice([]half.BFloat16{half.BFloat16FromFloat32(0.1), half.BFloat16FromFloat32(3)}, 2)
	require.NoError(t, err)
	defer bf.UnsafeFree()
	assert.True(t, strings.HasSuffix(fmt.Sprintf("%v", bf), " bfloat16 on device 0 (host):\n[0.1   3]") || !strings.Contains(bf.String(), "host"), fmt.Sprintf("%v", bf))
	assert.Contains(t, bf.String(), "bfloat16")
	assert.Contains(t, fmt.Sprintf("%.3f", bf), "[0.100 3.000]")
}

func TestHalfArraysConvertAndOps(t *testing.T) {
	t.Run("float16", testHalfOps[half.Float16])
	t.Run("bfloat16", testHalfOps[half.BFloat16])
}

func testHalfOps[H halfElem](t *testing.T) {
	for _, n := range []int{0, 1, 7, 1009} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			src := make([]float32, n)
			for i := range src {
				src[i] = float32(i%37)*0.37 - 5
			}
			x32, err := cuarray.FromSlice(src, n)
			require.NoError(t, err)
			defer x32.UnsafeFree()
			x, err := cuarray.Convert[H](nil, nil, x32)
			require.NoError(t, err)
			defer x.UnsafeFree()
			want := make([]H, n)
			for i, f := range src {
				want[i] = halfFrom[H](f)
			}
			got := read(t, x)
			assert.Equal(t, want, got)

			back, err := cuarray.Convert[float32](nil, nil, x)
			require.NoError(t, err)
			defer back.UnsafeFree()
			for i, f := range read(t, back) {
				require.Equal(t, want[i].Float32(), f)
			}

			// Table operations: unary, binary, compare, Where, Clamp.
			e, err := cuarray.Sigmoid[H](nil, x)
			require.NoError(t, err)
			defer e.UnsafeFree()
			for i, v := range read(t, e) {
				require.Equal(t, halfFrom[H](1/(1+float32(math.Exp(-float64(want[i].Float32()))))), v, "Sigmoid at %d", i)
			}
			m, err := cuarray.Maximum[H](nil, x, e)
			require.NoError(t, err)
			defer m.UnsafeFree()
			sig := read(t, e)
			for i, v := range read(t, m) {
				require.Equal(t, halfFrom[H](max(want[i].Float32(), sig[i].Float32())), v, "Maximum at %d", i)
			}
			lt, err := cuarray.Less[H](nil, x, e)
			require.NoError(t, err)
			defer lt.UnsafeFree()
			for i, v := range read(t, lt) {
				require.Equal(t, want[i].Float32() < sig[i].Float32(), v, "Less at %d", i)
			}
			w, err := cuarray.Where[H](nil, lt, x, e)
			require.NoError(t, err)
			defer w.UnsafeFree()
			for i, v := range read(t, w) {
				if want[i].Float32() < sig[i].Float32() {
					require.Equal(t, want[i], v)
				} else {
					require.Equal(t, sig[i], v)
				}
			}
			c, err := cuarray.Clamp[H](nil, x, halfFrom[H](-1), halfFrom[H](2))
			require.NoError(t, err)
			defer c.UnsafeFree()
			for i, v := range read(t, c) {
				require.Equal(t, halfFrom[H](min(max(want[i].Float32(), -1), 2)), v)
			}
		})
	}
}

// Operations without a half implementation refuse the types with a clear
// error, never wrong data.
func TestHalfArraysUnsupportedOpsRefuse(t *testing.T) {
	a, err := cuarray.Ones[half.BFloat16](4)
	require.NoError(t, err)
	defer a.UnsafeFree()
	labels, err := cuarray.Zeros[int32](2)
	require.NoError(t, err)
	defer labels.UnsafeFree()
	loss, err := cuarray.New[half.BFloat16](2)
	require.NoError(t, err)
	defer loss.UnsafeFree()
	logits, err := a.Reshape(2, 2)
	require.NoError(t, err)
	defer logits.UnsafeFree()
	err = cuarray.SoftmaxCrossEntropy(loss, nil, logits, labels, half.BFloat16(0x3f80))
	require.ErrorIs(t, err, kernels.ErrUnsupportedDType)
	assert.Contains(t, err.Error(), "bfloat16")
	_, err = cuarray.SumInt64(a)
	require.ErrorIs(t, err, kernels.ErrUnsupportedDType)
}

// Views of half arrays (transposed, stepped, broadcast) read and copy out
// as their float32 twins do, through the 2-byte strided copy.
func TestHalfArraysViews(t *testing.T) {
	t.Run("float16", testHalfViews[half.Float16])
	t.Run("bfloat16", testHalfViews[half.BFloat16])
}

func testHalfViews[H halfElem](t *testing.T) {
	const rows, cols = 37, 53 // odd and prime: several tiles with edges
	data := make([]H, rows*cols)
	for i := range data {
		data[i] = halfFrom[H](float32(i) * 0.25)
	}
	a, err := cuarray.FromSlice(data, rows, cols)
	require.NoError(t, err)
	defer a.UnsafeFree()
	at := func(r, c int) H { return data[r*cols+c] }

	tr, err := a.Transpose()
	require.NoError(t, err)
	c, err := cuarray.Contiguous(tr)
	require.NoError(t, err)
	defer c.UnsafeFree()
	got := read(t, c)
	for j := range cols {
		for i := range rows {
			require.Equal(t, at(i, j), got[j*rows+i], "transposed (%d, %d)", j, i)
		}
	}

	st, err := a.SliceAxis(1, 1, cols, 3)
	require.NoError(t, err)
	c2, err := cuarray.Contiguous(st)
	require.NoError(t, err)
	defer c2.UnsafeFree()
	got = read(t, c2)
	w := (cols - 1 + 2) / 3
	for i := range rows {
		for k := range w {
			require.Equal(t, at(i, 1+3*k), got[i*w+k])
		}
	}

	row, err := a.Slice(2, 3)
	require.NoError(t, err)
	b, err := row.BroadcastTo(5, cols)
	require.NoError(t, err)
	c3, err := cuarray.Contiguous(b)
	require.NoError(t, err)
	defer c3.UnsafeFree()
	got = read(t, c3)
	for i := range 5 {
		require.Equal(t, data[2*cols:3*cols], got[i*cols:(i+1)*cols])
	}

	one, err := cuarray.FromSlice([]H{halfFrom[H](7)}, 1, 1)
	require.NoError(t, err)
	defer one.UnsafeFree()
	ot, err := one.Transpose()
	require.NoError(t, err)
	assert.Equal(t, []H{halfFrom[H](7)}, read(t, ot))
}
