package cuarray_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/kernels"
)

// takeRef is NumPy's take by coordinates: element (i..., j..., k...) of
// the result is x[i..., wrap(idx[j...]), k...].
func takeRef[T cuarray.Elem](x []T, shape []int, idx []int64, idxShape []int, axis int) ([]T, []int) {
	out := slices.Concat(shape[:axis], idxShape, shape[axis+1:])
	n := 1
	for _, d := range out {
		n *= d
	}
	res := make([]T, n)
	for i := range res {
		c := unravel(i, out)
		j := ravel(c[axis:axis+len(idxShape)], idxShape)
		w := int(idx[j])
		if w < 0 {
			w += shape[axis]
		}
		xc := slices.Concat(c[:axis], []int{w}, c[axis+len(idxShape):])
		res[i] = x[ravel(xc, shape)]
	}
	return res, out
}

func makeArray[T cuarray.Elem](t testing.TB, data []T, shape []int) *cuarray.Array[T] {
	t.Helper()
	if len(shape) == 0 {
		return cuarray.Must(cuarray.Full(data[0]))
	}
	a, err := cuarray.FromSlice(data[:sizeOfShape(shape)], shape...)
	require.NoError(t, err)
	return a
}

func sizeOfShape(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// randIndices are n indices into an axis of dim, a third of them negative.
func randIndices(r *rand.Rand, n, dim int) []int64 {
	idx := make([]int64, n)
	for j := range idx {
		idx[j] = int64(r.IntN(dim))
		if r.IntN(3) == 0 {
			idx[j] -= int64(dim)
		}
	}
	return idx
}

func TestTakeAlongEveryAxis(t *testing.T) {
	forTypes(t, true, testTake[float32], testTake[float64], testTake[int32], testTake[int64], testTake[uint8], testTake[complex64], testTake[int8], testTake[int16], testTake[uint32])
}

func testTake[T cuarray.Elem](t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, shape := range [][]int{{1}, {7}, {3, 5}, {2, 3, 4}, {4, 1, 3}, {257, 3}} {
		for axis := range shape {
			for _, idxShape := range [][]int{{}, {1}, {6}, {2, 3}, {0}} {
				t.Run(fmt.Sprintf("%v/axis%d/idx%v", shape, axis, idxShape), func(t *testing.T) {
					x := make([]T, sizeOfShape(shape))
					for i := range x {
						x[i] = num[T](i)
					}
					idx := randIndices(r, sizeOfShape(idxShape), shape[axis])
					want, wantShape := takeRef(x, shape, idx, idxShape, axis)
					xa, ia := makeArray(t, x, shape), makeArray(t, append(idx, 0), idxShape)
					got, err := cuarray.Take(nil, xa, ia, axis)
					require.NoError(t, err)
					require.Equal(t, wantShape, got.Shape())
					require.Equal(t, want, read(t, got))
				})
			}
		}
	}
	// Many indices: several blocks on a GPU, several goroutines on the host.
	n := 1<<17 + 3
	x := make([]T, 100)
	for i := range x {
		x[i] = num[T](i)
	}
	idx := randIndices(r, n, 100)
	want, _ := takeRef(x, []int{100}, idx, []int{n}, 0)
	got := cuarray.Must(cuarray.Take(nil, makeArray(t, x, []int{100}), makeArray(t, idx, []int{n}), -1))
	require.Equal(t, want, read(t, got))
}

// scatterRef writes (or adds) src into a copy of dst along axis, in index
// order, as the host backend does.
func scatterRef[T number](dst []T, shape []int, src []T, idx []int64, idxShape []int, axis int, add bool) []T {
	out := slices.Clone(dst)
	srcShape := slices.Concat(shape[:axis], idxShape, shape[axis+1:])
	for i, v := range src {
		c := unravel(i, srcShape)
		w := int(idx[ravel(c[axis:axis+len(idxShape)], idxShape)])
		if w < 0 {
			w += shape[axis]
		}
		at := ravel(slices.Concat(c[:axis], []int{w}, c[axis+len(idxShape):]), shape)
		if add {
			out[at] += v
		} else {
			out[at] = v
		}
	}
	return out
}

func TestScatterAndScatterAddAlongEveryAxis(t *testing.T) {
	forTypes(t, true, testScatter[float32], testScatter[float64], testScatter[int32], testScatter[int64], testScatter[uint8], testScatter[complex64], testScatter[int8], testScatter[int16], testScatter[uint32])
}

func testScatter[T number](t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, shape := range [][]int{{1}, {7}, {3, 5}, {2, 3, 4}, {4, 1, 3}} {
		for axis := range shape {
			for _, idxShape := range [][]int{{}, {3}, {2, 4}, {0}} {
				for _, add := range []bool{false, true} {
					t.Run(fmt.Sprintf("%v/axis%d/idx%v/add=%v", shape, axis, idxShape, add), func(t *testing.T) {
						dim := shape[axis]
						ni := sizeOfShape(idxShape)
						var idx []int64
						if add {
							idx = randIndices(r, ni, dim) // repeats: every value added
						} else {
							// Scatter: distinct targets, as which repeat wins
							// is not fixed on a GPU.
							perm := r.Perm(max(dim, ni))
							for _, p := range perm[:ni] {
								idx = append(idx, int64(p%dim))
							}
							slices.Sort(idx)
							idx = slices.Compact(idx)
							if len(idx) < ni {
								return // the axis is too short for distinct targets
							}
						}
						srcShape := slices.Concat(shape[:axis], idxShape, shape[axis+1:])
						src := make([]T, sizeOfShape(srcShape))
						for i := range src {
							src[i] = num[T](1 + i%9)
						}
						dst0 := make([]T, sizeOfShape(shape))
						for i := range dst0 {
							dst0[i] = num[T](i % 5)
						}
						want := scatterRef(dst0, shape, src, idx, idxShape, axis, add)
						d := makeArray(t, dst0, shape)
						op := cuarray.Scatter[T]
						if add {
							op = cuarray.ScatterAdd[T]
						}
						got, err := op(d, makeArray(t, src, srcShape), makeArray(t, append(idx, 0), idxShape), axis)
						require.NoError(t, err)
						require.Same(t, d, got)
						require.Equal(t, want, read(t, d))
					})
				}
			}
		}
	}
}

func TestScatterAddSumsRepeatsExactlyForIntegers(t *testing.T) {
	// A histogram: 200001 ones into 7 bins, some bins neighbours in one
	// 32-bit word of uint8s (the GPU's compare-and-swap path).
	const n = 200001
	idx := make([]int64, n)
	want8 := make([]uint8, 7)
	want32 := make([]int32, 7)
	for j := range idx {
		idx[j] = int64(j % 7)
		want8[j%7]++
		want32[j%7]++
	}
	ia := cuarray.Must(cuarray.FromSlice(idx))
	h8 := cuarray.Must(cuarray.Zeros[uint8](7))
	_, err := cuarray.ScatterAdd(h8, cuarray.Must(cuarray.Ones[uint8](n)), ia, 0)
	require.NoError(t, err)
	assert.Equal(t, want8, read(t, h8), "uint8 counts wrap as Go's")
	h32 := cuarray.Must(cuarray.Zeros[int32](7))
	_, err = cuarray.ScatterAdd(h32, cuarray.Must(cuarray.Ones[int32](n)), ia, 0)
	require.NoError(t, err)
	assert.Equal(t, want32, read(t, h32))
}

// Out-of-range indices are errors naming the index, the axis and the
// shapes; they never read or write outside the arrays, and a result made
// for the call is freed.
func TestOutOfRangeIndicesAreErrors(t *testing.T) {
	p := freshPool(t)
	s := newStream(t, p)
	f := cuarray.On[float32](s)
	x := cuarray.Must(f.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3))
	for _, bad := range []int64{3, -4, 1 << 40} {
		idx := cuarray.Must(cuarray.On[int64](s).FromSlice([]int64{0, bad, -1}))
		before := p.Stats()
		_, err := f.Take(nil, x, idx, 1)
		require.ErrorIs(t, err, kernels.ErrIndex)
		for _, w := range []string{"Take", "indices int64[3] along axis 1 of x float32[2 3]", fmt.Sprintf("index %d is out of range for an axis of length 3", bad)} {
			assert.Contains(t, err.Error(), w)
		}
		assert.Equal(t, before.Live, p.Stats().Live, "the result is freed")

		// Scatter writes the valid elements, skips the bad one, and fails.
		d := cuarray.Must(f.Zeros(2, 3))
		src := cuarray.Must(f.FromSlice([]float32{10, 20, 30, 40, 50, 60}, 2, 3))
		_, err = f.ScatterAdd(d, src, idx, 1)
		require.ErrorIs(t, err, kernels.ErrIndex)
		assert.Contains(t, err.Error(), "along axis 1 of dst float32[2 3]")
		assert.Equal(t, []float32{10, 0, 30, 40, 0, 60}, read(t, d))
	}
	// An axis of length 0 has no valid index.
	e := cuarray.Must(f.Zeros(2, 0))
	_, err := f.Take(nil, e, cuarray.Must(cuarray.On[int64](s).FromSlice([]int64{0})), 1)
	require.ErrorIs(t, err, kernels.ErrIndex)
	assert.Contains(t, err.Error(), "axis of length 0")
}

func TestIndexErrors(t *testing.T) {
	p := freshPool(t)
	s := newStream(t, p)
	f := cuarray.On[float32](s)
	x := cuarray.Must(f.Zeros(2, 3))
	idx := cuarray.Must(cuarray.On[int64](s).Zeros(4))
	freed := cuarray.Must(cuarray.On[int64](s).Zeros(4))
	freed.UnsafeFree()
	wrongDst := cuarray.Must(f.Zeros(2, 3))
	src := cuarray.Must(f.Zeros(2, 4))
	big := cuarray.Must(f.Zeros(16))
	bigView := cuarray.Must(big.Reshape(2, 8))
	part := cuarray.Must(big.View(0, 8))
	partIn := cuarray.Must(part.Reshape(2, 4))
	closed := newStream(t, p)
	require.NoError(t, closed.Close())
	cases := []struct {
		name   string
		err    func() error
		target error
		want   []string
	}{
		{"Take nil x", func() error { _, err := f.Take(nil, nil, idx, 0); return err }, backend.ErrInvalidValue, []string{"Take", "x is a nil array"}},
		{"Take freed indices", func() error { _, err := f.Take(nil, x, freed, 0); return err }, cuarray.ErrFreed, []string{"indices"}},
		{"Take nil indices", func() error { _, err := f.Take(nil, x, nil, 0); return err }, backend.ErrInvalidValue, []string{"indices is a nil array"}},
		{"Take axis", func() error { _, err := f.Take(nil, x, idx, 2); return err }, cuarray.ErrShape, []string{"Take", "axis 2 is out of range for x float32[2 3]", "[-2, 2)"}},
		{"Take dst shape", func() error { _, err := f.Take(wrongDst, x, idx, 1); return err }, cuarray.ErrShape, []string{"dst float32[2 3]", "[2 4]"}},
		{"Take closed stream", func() error { _, err := cuarray.On[float32](closed).Take(nil, x, idx, 1); return err }, cuarray.ErrClosed, []string{"Take"}},
		{"Scatter nil dst", func() error { _, err := f.Scatter(nil, src, idx, 1); return err }, backend.ErrInvalidValue, []string{"Scatter", "dst is nil"}},
		{"Scatter src shape", func() error { _, err := f.Scatter(x, x, idx, 1); return err }, cuarray.ErrShape,
			[]string{"Scatter along axis 1", "src float32[2 3]", "indices int64[4]", "[2 4]"}},
		{"ScatterAdd overlap", func() error { _, err := f.ScatterAdd(bigView, partIn, idx, 1); return err }, cuarray.ErrShape,
			[]string{"ScatterAdd", "src float32[2 4] shares memory with dst float32[2 8]"}},
		{"ScatterAdd nil src", func() error { _, err := f.ScatterAdd(x, nil, idx, 1); return err }, backend.ErrInvalidValue, []string{"src is a nil array"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := p.Stats()
			err := c.err()
			require.Error(t, err)
			assert.ErrorIs(t, err, c.target)
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.Equal(t, before.Live, p.Stats().Live, "no result left behind")
		})
	}
}

// FuzzConcatTake joins small arrays of fuzzed shapes along a fuzzed axis
// and takes fuzzed indices from the result, against the coordinate
// references: any shape either works and matches, or is an error.
func FuzzConcatTake(f *testing.F) {
	f.Add(uint8(2), uint8(3), uint8(4), uint8(3), int8(1), []byte{0, 1, 2, 255})
	f.Add(uint8(1), uint8(0), uint8(5), uint8(1), int8(0), []byte{7})
	f.Add(uint8(3), uint8(2), uint8(2), uint8(5), int8(-1), []byte{})
	f.Fuzz(func(t *testing.T, ndim, d0, d1, k uint8, axis int8, raw []byte) {
		nd := 1 + int(ndim%3)
		shape := []int{int(d0 % 6), int(d1 % 6), 2}[:nd]
		parts := 1 + int(k%5)
		ax := int(axis)
		var arrs []*cuarray.Array[int32]
		var data [][]int32
		var shapes [][]int
		for j := range parts {
			sh := slices.Clone(shape)
			if a := ax; a >= -nd && a < nd {
				if a < 0 {
					a += nd
				}
				sh[a] = (sh[a] + j) % 6
			}
			x := make([]int32, sizeOfShape(sh))
			for i := range x {
				x[i] = int32(j*1000 + i)
			}
			arrs = append(arrs, makeArray(t, append(x, 0), sh))
			data, shapes = append(data, x), append(shapes, sh)
		}
		got, err := cuarray.Concat(nil, arrs, ax)
		if ax < -nd || ax >= nd {
			require.ErrorIs(t, err, cuarray.ErrShape)
			return
		}
		require.NoError(t, err)
		a := ax
		if a < 0 {
			a += nd
		}
		want, wantShape := concatRef(data, shapes, a)
		require.Equal(t, wantShape, got.Shape())
		require.Equal(t, want, read(t, got))

		idx := make([]int64, len(raw))
		for i, b := range raw {
			idx[i] = int64(int8(b))
		}
		taken, err := cuarray.Take(nil, got, makeArray(t, append(idx, 0), []int{len(idx)}), ax)
		dim := wantShape[a]
		inRange := true
		for _, v := range idx {
			inRange = inRange && v >= int64(-dim) && v < int64(dim)
		}
		rest := sizeOfShape(slices.Delete(slices.Clone(wantShape), a, a+1))
		if !inRange && rest > 0 {
			require.ErrorIs(t, err, kernels.ErrIndex)
			return
		}
		if !inRange {
			require.NoError(t, err, "nothing is gathered: no index is read")
			return
		}
		require.NoError(t, err)
		wantT, wantTShape := takeRef(want, wantShape, idx, []int{len(idx)}, a)
		require.Equal(t, wantTShape, taken.Shape())
		require.Equal(t, wantT, read(t, taken))
	})
}
