package cuarray_test

import (
	"fmt"
	"log"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/cuarray"
)

func TestBroadcastShapes(t *testing.T) {
	cases := []struct {
		name   string
		shapes [][]int
		want   []int
		err    string // "" when they broadcast
	}{
		{"equal", [][]int{{2, 3}, {2, 3}}, []int{2, 3}, ""},
		{"row", [][]int{{4, 3}, {3}}, []int{4, 3}, ""},
		{"column", [][]int{{4, 3}, {4, 1}}, []int{4, 3}, ""},
		{"outer", [][]int{{1, 5}, {4, 1}}, []int{4, 5}, ""},
		{"scalar-shaped", [][]int{{1}, {2, 3, 4}}, []int{2, 3, 4}, ""},
		{"zero-dimensional", [][]int{{}, {7}}, []int{7}, ""},
		{"three shapes", [][]int{{5, 1, 1}, {1, 6, 1}, {7}}, []int{5, 6, 7}, ""},
		{"empty with 1", [][]int{{0, 3}, {1, 3}}, []int{0, 3}, ""},
		{"empty with empty", [][]int{{0}, {4, 0}}, []int{4, 0}, ""},
		{"none", nil, []int{}, ""},
		{"transposed", [][]int{{2, 3}, {3, 2}}, nil, "shapes [2 3] and [3 2] do not broadcast: dimension 1 of the result would be 3 in one and 2 in the other"},
		{"leading mismatch", [][]int{{4, 3}, {4}}, nil, "shapes [4 3] and [4] do not broadcast"},
		{"empty with 3", [][]int{{0}, {3}}, nil, "would be 0 in one and 3"},
		{"third shape", [][]int{{5, 1}, {1, 6}, {2, 1}}, nil, "shapes [5 1] and [2 1] do not broadcast: dimension 0"},
		{"negative", [][]int{{2, 3}, {-1}}, nil, "shape [-1]: dimension 0 is -1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := cuarray.BroadcastShapes(c.shapes...)
			if c.err != "" {
				require.ErrorIs(t, err, cuarray.ErrShape)
				assert.Contains(t, err.Error(), c.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
}

func TestBroadcastStrides(t *testing.T) {
	cases := []struct {
		name       string
		shape, out []int
		want       []int
		err        string
	}{
		{"same", []int{2, 3}, []int{2, 3}, []int{3, 1}, ""},
		{"row", []int{3}, []int{4, 3}, []int{0, 1}, ""},
		{"column", []int{4, 1}, []int{4, 5}, []int{1, 0}, ""},
		{"middle", []int{2, 1, 4}, []int{2, 3, 4}, []int{4, 0, 1}, ""},
		{"leading", []int{5, 6}, []int{2, 3, 5, 6}, []int{0, 0, 6, 1}, ""},
		{"ones everywhere", []int{1, 1}, []int{1, 1}, []int{0, 0}, ""},
		{"does not broadcast", []int{3}, []int{3, 2}, nil, "dimension 1 of the result is 2, and 3 is neither"},
		{"more dimensions", []int{1, 2, 3}, []int{2, 3}, nil, "more dimensions"},
		{"negative", []int{-2}, []int{3}, nil, "dimension 0 is -2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := cuarray.BroadcastStrides(c.shape, c.out)
			if c.err != "" {
				require.ErrorIs(t, err, cuarray.ErrShape)
				assert.Contains(t, err.Error(), c.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
}

// FuzzBroadcastShapes checks BroadcastShapes against the rule written the
// other way round (for each dimension of the result, the set of non-1
// dimensions must have at most one value) and BroadcastStrides against
// indexing each operand by its own coordinates.
func FuzzBroadcastShapes(f *testing.F) {
	f.Add([]byte{2, 2, 3, 1, 3})
	f.Add([]byte{2, 2, 3, 2, 3, 2})
	f.Add([]byte{3, 1, 5, 2, 1, 4, 0})
	f.Add([]byte{1, 0, 1, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		// data: for each shape, its rank then its dimensions (0 to 4).
		var shapes [][]int
		for len(data) > 0 && len(shapes) < 4 {
			rank := int(data[0]) % 6
			data = data[1:]
			s := make([]int, 0, rank)
			for range rank {
				if len(data) == 0 {
					break
				}
				s = append(s, int(data[0])%5)
				data = data[1:]
			}
			shapes = append(shapes, s)
		}
		got, err := cuarray.BroadcastShapes(shapes...)

		nd := 0
		for _, s := range shapes {
			nd = max(nd, len(s))
		}
		want, ok := make([]int, nd), true
		for i := range want {
			want[i] = 1
			for _, s := range shapes {
				j := i - (nd - len(s))
				if j < 0 || s[j] == 1 {
					continue
				}
				if want[i] != 1 && want[i] != s[j] {
					ok = false
				}
				want[i] = s[j]
			}
		}
		if !ok {
			require.ErrorIs(t, err, cuarray.ErrShape, "shapes %v", shapes)
			return
		}
		require.NoError(t, err, "shapes %v", shapes)
		require.Equal(t, want, got, "shapes %v", shapes)

		// Every coordinate of the result reads, through each shape's
		// strides, the element at that shape's own coordinates (index 0
		// along its dimensions of 1).
		for _, s := range shapes {
			st, err := cuarray.BroadcastStrides(s, got)
			require.NoError(t, err)
			forEachIndex(got, func(idx []int) {
				off, own := 0, 0
				for i, v := range idx {
					off += v * st[i]
				}
				for j, d := range s {
					v := idx[j+len(got)-len(s)]
					if d == 1 {
						v = 0
					}
					own = own*d + v
				}
				require.Equal(t, own, off, "shape %v in %v at %v", s, got, idx)
			})
		}
	})
}

func forEachIndex(shape []int, fn func([]int)) {
	idx := make([]int, len(shape))
	for _, d := range shape {
		if d == 0 {
			return
		}
	}
	for {
		fn(idx)
		i := len(shape) - 1
		for ; i >= 0; i-- {
			if idx[i]++; idx[i] < shape[i] {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			return
		}
	}
}

// refBroadcast computes op over the shapes' broadcast in Go, from the
// operands' row-major values.
func refBroadcast[T cuarray.Elem](op func(x, y T) T, as []int, av []T, bs []int, bv []T) ([]int, []T) {
	out, err := cuarray.BroadcastShapes(as, bs)
	if err != nil {
		panic(err)
	}
	sa, _ := cuarray.BroadcastStrides(as, out)
	sb, _ := cuarray.BroadcastStrides(bs, out)
	var vals []T
	forEachIndex(out, func(idx []int) {
		oa, ob := 0, 0
		for i, v := range idx {
			oa += v * sa[i]
			ob += v * sb[i]
		}
		vals = append(vals, op(av[oa], bv[ob]))
	})
	return out, vals
}

func product(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// broadcastCases are the pairs of shapes the broadcasting operations are
// tested on.
var broadcastCases = []struct {
	name   string
	as, bs []int
}{
	{"[n m]+[m]", []int{37, 40}, []int{40}},
	{"[m]+[n m]", []int{40}, []int{37, 40}},
	{"[n m]+[n 1]", []int{37, 33}, []int{37, 1}},
	{"[n 1]+[n m]", []int{37, 1}, []int{37, 33}},
	{"[1 m]+[n 1]", []int{1, 24}, []int{19, 1}},
	{"[n m]+[1]", []int{5, 7}, []int{1}},
	{"[1]+[n m]", []int{1}, []int{5, 7}},
	{"zero-dimensional", []int{}, []int{3, 4}},
	{"middle", []int{3, 1, 5}, []int{3, 4, 5}},
	{"5-D", []int{2, 1, 3, 1, 4}, []int{1, 3, 1, 2, 4}},
	{"7-D", []int{2, 1, 2, 1, 2, 1, 3}, []int{1, 2, 1, 2, 1, 2, 3}},
	{"empty", []int{0, 3}, []int{1, 3}},
	{"empty against empty", []int{4, 0}, []int{0}},
}

func TestBroadcastOps(t *testing.T) {
	t.Run("float32", func(t *testing.T) { testBroadcastOps[float32](t) })
	t.Run("float64", func(t *testing.T) { testBroadcastOps[float64](t) })
	t.Run("int32", func(t *testing.T) { testBroadcastOps[int32](t) })
	t.Run("int64", func(t *testing.T) { testBroadcastOps[int64](t) })
	t.Run("uint8", func(t *testing.T) { testBroadcastOps[uint8](t) })
	t.Run("int8", func(t *testing.T) { testBroadcastOps[int8](t) })
	t.Run("int16", func(t *testing.T) { testBroadcastOps[int16](t) })
	t.Run("uint32", func(t *testing.T) { testBroadcastOps[uint32](t) })
	t.Run("complex64", func(t *testing.T) { testBroadcastOps[complex64](t) })
}

// values are 1 + i%97 (never 0, so Div divides exactly as Go does, and
// small enough that uint8 arithmetic wraps only where Go's would too).
func values[T cuarray.Elem](n, seed int) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = num[T](1 + (i*7+seed)%97)
	}
	return out
}

func testBroadcastOps[T number](t *testing.T) {
	ops := []struct {
		name string
		op   func(dst, a, b *cuarray.Array[T]) (*cuarray.Array[T], error)
		ref  func(x, y T) T
	}{
		{"Add", cuarray.Add[T], func(x, y T) T { return x + y }},
		{"Sub", cuarray.Sub[T], func(x, y T) T { return x - y }},
		{"Mul", cuarray.Mul[T], func(x, y T) T { return x * y }},
		{"Div", cuarray.Div[T], func(x, y T) T { return x / y }},
	}
	for _, op := range ops {
		for _, c := range broadcastCases {
			t.Run(op.name+"/"+c.name, func(t *testing.T) {
				av, bv := values[T](product(c.as), 1), values[T](product(c.bs), 5)
				a := cuarray.Must(cuarray.FromSlice(av, c.as...))
				b := cuarray.Must(cuarray.FromSlice(bv, c.bs...))
				shape, want := refBroadcast(op.ref, c.as, av, c.bs, bv)

				got, err := op.op(nil, a, b) // a nil dst: the result is made
				require.NoError(t, err)
				assert.Equal(t, shape, got.Shape())
				assert.Equal(t, want, readOrNil(t, got))

				dst := cuarray.Must(cuarray.New[T](shape...))
				into, err := op.op(dst, a, b)
				require.NoError(t, err)
				assert.Same(t, dst, into, "the result is dst")
				assert.Equal(t, want, readOrNil(t, dst))
				assert.Equal(t, orNil(av), readOrNil(t, a), "a untouched")
				assert.Equal(t, orNil(bv), readOrNil(t, b), "b untouched")
			})
		}
	}
}

func readOrNil[T cuarray.Elem](t *testing.T, a *cuarray.Array[T]) []T {
	t.Helper()
	return orNil(read(t, a))
}

func orNil[T any](v []T) []T {
	if len(v) == 0 {
		return nil
	}
	return v
}

// Views at odd offsets (not 16-byte aligned: the element-at-a-time paths)
// and a destination that is an operand, on a stream of its own.
func TestBroadcastViewsAndInPlace(t *testing.T) {
	p := freshPool(t)
	s := newStream(t, p)
	defer s.Close()
	f := cuarray.On[float32](s)
	const rows, cols = 9, 12
	backing := values[float32](1+rows*cols+cols+rows, 3)
	all := cuarray.Must(f.FromSlice(backing))
	x := cuarray.Must(cuarray.Must(all.View(1, rows*cols)).Reshape(rows, cols))
	row := cuarray.Must(all.View(1+rows*cols, cols))
	col := cuarray.Must(cuarray.Must(all.View(1+rows*cols+cols, rows)).Reshape(rows, 1))
	xv, rv, cv := backing[1:1+rows*cols], backing[1+rows*cols:1+rows*cols+cols], backing[1+rows*cols+cols:]

	_, want := refBroadcast(func(a, b float32) float32 { return a * b }, []int{rows, cols}, xv, []int{cols}, rv)
	got := cuarray.Must(f.Mul(nil, x, row))
	assert.Equal(t, want, read(t, got), "odd-offset operands")

	dst := cuarray.Must(cuarray.Must(f.New(rows*cols+1)).View(1, rows*cols))
	dst = cuarray.Must(dst.Reshape(rows, cols))
	require.NoError(t, errOf(f.Sub(dst, col, x)))
	_, want = refBroadcast(func(a, b float32) float32 { return a - b }, []int{rows, 1}, cv, []int{rows, cols}, xv)
	assert.Equal(t, want, read(t, dst), "odd-offset destination, the column first")

	// In place: x = x + row, then x = col / x.
	_, want = refBroadcast(func(a, b float32) float32 { return a + b }, []int{rows, cols}, xv, []int{cols}, rv)
	require.NoError(t, errOf(f.Add(x, x, row)))
	assert.Equal(t, want, read(t, x))
	sum := slices.Clone(want)
	_, want = refBroadcast(func(a, b float32) float32 { return a / b }, []int{rows, 1}, cv, []int{rows, cols}, sum)
	require.NoError(t, errOf(f.Div(x, col, x)))
	assert.Equal(t, want, read(t, x))
	assert.Equal(t, rv, read(t, row), "the row is untouched")

	// A destination that is the broadcast operand itself, or overlaps it,
	// would be read while written: refused.
	_, err := f.Add(x, x, cuarray.Must(cuarray.Must(x.View(0, cols)).Reshape(cols)))
	require.ErrorIs(t, err, cuarray.ErrShape)
	assert.Contains(t, err.Error(), "overlap")
}

func TestBroadcastErrors(t *testing.T) {
	m23 := cuarray.Must(cuarray.Zeros[float32](2, 3))
	m32 := cuarray.Must(cuarray.Zeros[float32](3, 2))
	v3 := cuarray.Must(cuarray.Zeros[float32](3))
	v6 := cuarray.Must(cuarray.Zeros[float32](6))
	m13 := cuarray.Must(cuarray.Zeros[float32](1, 3))
	freed := cuarray.Must(cuarray.Zeros[float32](3))
	freed.UnsafeFree()
	cases := []struct {
		name   string
		err    func() error
		target error
		want   []string
	}{
		{"[2 3]+[3 2]", func() error { return errOf(cuarray.Add(m23, m23, m32)) }, cuarray.ErrShape,
			[]string{"cuarray: Add: a float32[2 3] and b float32[3 2] do not broadcast", "equal or one of them 1", "Reshape one"}},
		{"[2 3]+[6]", func() error { return errOf(cuarray.Sub(m23, m23, v6)) }, cuarray.ErrShape,
			[]string{"Sub: a float32[2 3] and b float32[6] do not broadcast"}},
		{"New form, [3 2]*[2 3]", func() error { _, err := cuarray.Mul(nil, m32, m23); return err }, cuarray.ErrShape,
			[]string{"Mul: a float32[3 2] and b float32[2 3] do not broadcast"}},
		{"dst of the operands' length", func() error { return errOf(cuarray.Div(v6, m23, v3)) }, cuarray.ErrShape,
			[]string{"Div: dst float32[6] does not have the shape [2 3] of the result of a float32[2 3] and b float32[3]", "exactly that shape"}},
		{"dst of the smaller operand's shape", func() error { return errOf(cuarray.Add(v3, m23, v3)) }, cuarray.ErrShape,
			[]string{"dst float32[3] does not have the shape [2 3]"}},
		{"dst with a leading 1", func() error { return errOf(cuarray.Add(m13, v3, v3)) }, cuarray.ErrShape,
			[]string{"dst float32[1 3] does not have the shape [3]"}},
		{"nil operand", func() error { return errOf(cuarray.Add(m23, m23, nil)) }, nil, []string{"Add: b is a nil array"}},
		{"freed operand", func() error { return errOf(cuarray.Add(m23, m23, freed)) }, cuarray.ErrFreed, []string{"Add: b float32[3]"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.err()
			require.Error(t, err)
			if c.target != nil {
				assert.ErrorIs(t, err, c.target)
			}
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// Broadcasting a row, a column and a single value into a batch, and the
// error for shapes that only share a length.
func Example_broadcasting() {
	x := cuarray.Must(cuarray.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3))
	b := cuarray.Must(cuarray.FromSlice([]float32{10, 20, 30}))  // [3]: one row
	c := cuarray.Must(cuarray.FromSlice([]float32{1, 10}, 2, 1)) // [2 1]: one column
	fmt.Printf("%g\n", cuarray.Must(cuarray.Add(nil, x, b)))     // b added to every row
	if _, err := cuarray.Mul(x, x, c); err != nil {              // in place: row i times c[i]
		log.Fatal(err)
	}
	fmt.Printf("%g\n", x)
	fmt.Printf("%g\n", cuarray.Must(cuarray.Sub(nil, c, cuarray.Must(b.Reshape(1, 3))))) // [2 1] - [1 3]: an outer difference

	t := cuarray.Must(cuarray.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 3, 2))
	_, err := cuarray.Add(nil, x, t) // 6 elements each, but [2 3] and [3 2] do not broadcast
	fmt.Println(err)
	fmt.Printf("%g\n", cuarray.Must(cuarray.Add(nil, x, cuarray.Must(t.Reshape(2, 3))))) // what was meant
	// Output:
	// [[11 22 33]
	//  [14 25 36]]
	// [[ 1  2  3]
	//  [40 50 60]]
	// [[ -9 -19 -29]
	//  [  0 -10 -20]]
	// cuarray: Add: a float32[2 3] and b float32[3 2] do not broadcast: dimension 1 of the result would be 3 in one and 2 in the other; aligned at their last dimensions, each pair of dimensions must be equal or one of them 1 (Reshape one to combine them element by element): bad shape
	// [[ 2  4  6]
	//  [44 55 66]]
}
