package cuarray_test

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/kernels"
)

// The scans and sorts against plain-Go references written here, on every
// real element type: shapes of no elements, one, odd and prime lengths,
// several GPU blocks and tiles, more rows than one; inputs random, all
// equal, sorted, reversed, with NaN, ±Inf and -0 (floats), and spread over
// the whole range of the type (more distinct keys than one radix digit).

type realT interface {
	float32 | float64 | int32 | int64 | uint8 | int8 | int16 | uint32
}

var scanShapes = []struct {
	shape []int
	axes  []int
}{
	{[]int{0}, []int{0}},
	{[]int{1}, []int{0, -1}},
	{[]int{7}, []int{0}},
	{[]int{13}, []int{0}},
	{[]int{4099}, []int{0}},
	{[]int{3, 5}, []int{0, 1, -1}},
	{[]int{2, 3, 4}, []int{0, 1, 2, -2}},
	{[]int{64, 257}, []int{0, 1}},
	{[]int{4, 0, 3}, []int{1, 2}},
}

func TestScansMatchAPlainLoopAlongEveryAxis(t *testing.T) {
	t.Run("float32", testScans[float32])
	t.Run("float64", testScans[float64])
	t.Run("int32", testScans[int32])
	t.Run("int64", testScans[int64])
	t.Run("uint8", testScans[uint8])
	t.Run("int8", testScans[int8])
	t.Run("int16", testScans[int16])
	t.Run("uint32", testScans[uint32])
}

func testScans[T realT](t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	ops := []struct {
		name string
		run  func(dst, x *cuarray.Array[T], axis int) (*cuarray.Array[T], error)
	}{
		{"Cumsum", cuarray.Cumsum[T]},
		{"Cumprod", cuarray.Cumprod[T]},
		{"Cummax", cuarray.Cummax[T]},
		{"Cummin", cuarray.Cummin[T]},
	}
	for _, sh := range scanShapes {
		n := 1
		for _, d := range sh.shape {
			n *= d
		}
		for _, kind := range []string{"random", "special"} {
			xs := make([]T, n)
			for i := range xs {
				xs[i] = genScan[T](r, kind)
			}
			x := cuarray.Must(cuarray.FromSlice(xs, sh.shape...))
			for _, op := range ops {
				for _, axis := range sh.axes {
					t.Run(fmt.Sprintf("%s/%v/axis%d/%s", op.name, sh.shape, axis, kind), func(t *testing.T) {
						want := refScan(op.name, xs, sh.shape, axis)
						got, err := op.run(nil, x, axis)
						require.NoError(t, err)
						assert.Equal(t, sh.shape, got.Shape())
						requireScanned(t, op.name, want, read(t, got))
						// Into a given dst, and in place.
						dst := cuarray.Must(cuarray.New[T](sh.shape...))
						back, err := op.run(dst, x, axis)
						require.NoError(t, err)
						require.Same(t, dst, back)
						requireScanned(t, op.name, want, read(t, dst))
						_, err = op.run(dst, dst, axis)
						require.NoError(t, err)
						requireScanned(t, op.name, refScan(op.name, want, sh.shape, axis), read(t, dst))
					})
				}
			}
		}
	}
}

func genScan[T realT](r *rand.Rand, kind string) T {
	var z T
	switch any(z).(type) {
	case float32, float64:
		if kind == "special" && r.IntN(6) == 0 {
			return T([]float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0}[r.IntN(5)])
		}
		return T(r.Float64()*2 - 0.5)
	case uint8:
		return T(r.IntN(256))
	}
	if kind == "special" {
		return T(r.Int64()) // wraps: the running sums overflow
	}
	return T(r.IntN(11) - 5)
}

// refScan is the scan as a loop: floats accumulate in float64 and round
// each result to T; integers accumulate in T, wrapping.
func refScan[T realT](op string, xs []T, shape []int, axis int) []T {
	if axis < 0 {
		axis += len(shape)
	}
	outer, n, inner := 1, shape[axis], 1
	for _, d := range shape[:axis] {
		outer *= d
	}
	for _, d := range shape[axis+1:] {
		inner *= d
	}
	out := make([]T, len(xs))
	_, f32 := any(xs).([]float32)
	_, f64 := any(xs).([]float64)
	for o := range outer {
		for i := range inner {
			var accF float64
			var accT T
			for j := range n {
				at := (o*n+j)*inner + i
				v := xs[at]
				if f32 || f64 {
					if j == 0 {
						accF = float64(v)
					} else {
						accF = refStep(op, accF, float64(v))
					}
					out[at] = T(accF)
					continue
				}
				if j == 0 {
					accT = v
				} else {
					accT = refStep(op, accT, v)
				}
				out[at] = accT
			}
		}
	}
	return out
}

func refStep[A realT](op string, acc, v A) A {
	switch op {
	case "Cumsum":
		return acc + v
	case "Cumprod":
		return acc * v
	case "Cummax":
		if acc != acc || v != v {
			return A(math.NaN())
		}
		if v > acc { // on a tie (-0 and +0) the running value stays
			return v
		}
		return acc
	}
	if acc != acc || v != v {
		return A(math.NaN())
	}
	if v < acc {
		return v
	}
	return acc
}

// requireScanned is requireSameBits, except that float sums and products
// may differ in their last bits (relative 1e-12 for float64, 1e-6 for
// float32): a GPU scans in a tree order, not left to right, and float64
// sums differed from the loop's on the H100 (2026-11-26).
func requireScanned[T realT](t *testing.T, op string, want, got []T) {
	t.Helper()
	tol := 0.0
	switch any(*new(T)).(type) {
	case float32:
		tol = 1e-6
	case float64:
		tol = 1e-12
	}
	if tol == 0 || (op != "Cumsum" && op != "Cumprod") {
		requireSameBits(t, want, got)
		return
	}
	require.Len(t, got, len(want))
	for i := range want {
		w, g := float64(want[i]), float64(got[i])
		if (w != w && g != g) || w == g {
			continue
		}
		if w != w || g != g || math.IsInf(w, 0) || math.IsInf(g, 0) || math.Abs(g-w) > tol*(1+math.Abs(w)) {
			require.Failf(t, "wrong element", "[%d] = %v, want %v (of %d)", i, g, w, len(want))
		}
	}
}

// requireSameBits compares element by element: floats by value and the
// sign of zero, NaN matching any NaN.
func requireSameBits[T realT](t *testing.T, want, got []T) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		w, g := want[i], got[i]
		if w != w && g != g {
			continue
		}
		if w != g || (w == 0 && math.Signbit(float64(w)) != math.Signbit(float64(g))) {
			require.Failf(t, "wrong element", "[%d] = %v, want %v (of %d)", i, g, w, len(want))
		}
	}
}

// ---------------------------------------------------------------------------
// Sorting.

// {2, 20011}: rows of several onesweep tiles on a GPU (the look-back
// between tiles), one after another.
var sortShapes = [][]int{{0}, {1}, {2}, {7}, {13}, {1000}, {5003}, {3, 17}, {4, 0}, {5, 300}, {2, 20011}}

var sortInputs = []string{"random", "equal", "sorted", "reversed", "special", "wide"}

func TestSortArgsortTopKMatchAStableReference(t *testing.T) {
	t.Run("float32", testSorts[float32])
	t.Run("float64", testSorts[float64])
	t.Run("int32", testSorts[int32])
	t.Run("int64", testSorts[int64])
	t.Run("uint8", testSorts[uint8])
	t.Run("int8", testSorts[int8])
	t.Run("int16", testSorts[int16])
	t.Run("uint32", testSorts[uint32])
}

func testSorts[T realT](t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, shape := range sortShapes {
		n, last := 1, shape[len(shape)-1]
		for _, d := range shape {
			n *= d
		}
		for _, kind := range sortInputs {
			xs := genSort[T](r, kind, n)
			x := cuarray.Must(cuarray.FromSlice(xs, shape...))
			for _, desc := range []bool{false, true} {
				t.Run(fmt.Sprintf("%v/%s/desc=%v", shape, kind, desc), func(t *testing.T) {
					order := refArgsort(xs, last, desc)
					want := make([]T, n)
					for i, j := range order {
						want[i] = xs[j]
					}
					wantSort := want
					if cubSortsRows[T](x.Device(), last) {
						wantSort = cubSorted(xs, last, desc)
					}
					sorted, err := cuarray.Sort(nil, x, desc)
					require.NoError(t, err)
					assert.Equal(t, shape, sorted.Shape())
					requireIdentical(t, wantSort, read(t, sorted))
					idx, err := cuarray.Argsort(nil, x, desc)
					require.NoError(t, err)
					assert.Equal(t, shape, idx.Shape())
					require.Equal(t, rowLocal(order, last), read(t, idx), "argsort (stable)")
					// In place.
					y := cuarray.Must(cuarray.FromSlice(xs, shape...))
					_, err = cuarray.Sort(y, y, desc)
					require.NoError(t, err)
					requireIdentical(t, wantSort, read(t, y))
					for _, k := range []int{0, 1, last / 2, last} {
						if k > last {
							continue
						}
						vals, is, err := cuarray.TopK(nil, nil, x, k, desc)
						require.NoError(t, err)
						wantV, wantI := firstK(want, order, last, k)
						requireIdentical(t, wantV, read(t, vals))
						require.Equal(t, rowLocal(wantI, last), read(t, is), "top %d indices", k)
					}
				})
			}
		}
	}
}

func genSort[T realT](r *rand.Rand, kind string, n int) []T {
	xs := make([]T, n)
	var z T
	_, isFloat := any(z).(float32)
	if _, ok := any(z).(float64); ok {
		isFloat = true
	}
	for i := range xs {
		switch kind {
		case "equal":
			xs[i] = 3
		case "sorted":
			xs[i] = T(i % 100)
		case "reversed":
			xs[i] = T(100 - i%100)
		case "special":
			if isFloat {
				xs[i] = T([]float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0, 1, -1}[r.IntN(7)])
			} else {
				xs[i] = T(r.IntN(3)) - 1 // -1 wraps to 255 for uint8
			}
		case "wide":
			switch any(z).(type) {
			case float32:
				xs[i] = T(math.Float32frombits(r.Uint32()))
			case float64:
				xs[i] = T(math.Float64frombits(r.Uint64()))
			default:
				xs[i] = T(r.Uint64())
			}
		default:
			xs[i] = T(r.IntN(50)) - T(r.IntN(20))
		}
	}
	if kind == "sorted" {
		slices.Sort(xs)
	}
	return xs
}

// refArgsort is each row's stable order (positions into xs) by a
// comparison written from the definition: NaN above everything, -0 equal
// to +0, descending the reverse.
func refArgsort[T realT](xs []T, last int, desc bool) []int {
	order := make([]int, len(xs))
	for i := range order {
		order[i] = i
	}
	if last == 0 {
		return order
	}
	for r := 0; r < len(xs); r += last {
		slices.SortStableFunc(order[r:r+last], func(a, b int) int {
			c := refCompare(xs[a], xs[b])
			if desc {
				return -c
			}
			return c
		})
	}
	return order
}

func refCompare[T realT](a, b T) int {
	an, bn := a != a, b != b
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	}
	return cmp.Compare(a, b) // -0 == +0
}

// cubSortsRows reports whether Sort of rows of last elements of T on dev
// takes kernels' sort by CUB's onesweep, whose float32 sort orders values
// that compare equal by their bits rather than by their place in x (the
// docs' exception to stability): float32 rows longer than a block sorts
// (4096), on a GPU.
func cubSortsRows[T realT](dev backend.Device, last int) bool {
	_, f32 := any(*new(T)).(float32)
	return f32 && last > 4096 && isCUDA(dev)
}

// cubSorted is each row of xs (float32) sorted as the GPU's float32 sort of
// long rows does: stably by a key of the bits that orders -Inf < … < -0 <
// +0 < … < +Inf < the NaNs by their bits (cuda/cubsort.cuh's), descending
// the reverse.
func cubSorted[T realT](xs []T, last int, desc bool) []T {
	k := cubSortKey(desc)
	key := func(v T) uint32 { return k(any(v).(float32)) }
	out := slices.Clone(xs)
	for r := 0; r < len(out); r += last {
		slices.SortStableFunc(out[r:r+last], func(a, b T) int { return cmp.Compare(key(a), key(b)) })
	}
	return out
}

func rowLocal(order []int, last int) []int64 {
	out := make([]int64, len(order))
	for i, j := range order {
		out[i] = int64(j % last)
	}
	return out
}

func firstK[T realT](sorted []T, order []int, last, k int) ([]T, []int) {
	var vs []T
	var is []int
	for r := 0; r < len(sorted); r += last {
		vs = append(vs, sorted[r:r+k]...)
		is = append(is, order[r:r+k]...)
	}
	return vs, is
}

// requireIdentical compares bit for bit: a sort moves elements, so even
// NaNs and the sign of zero must match.
func requireIdentical[T realT](t *testing.T, want, got []T) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		if !identical(want[i], got[i]) {
			require.Failf(t, "wrong element", "[%d] = %v, want %v (of %d)", i, got[i], want[i], len(want))
		}
	}
}

func identical[T realT](a, b T) bool {
	switch x := any(a).(type) {
	case float32:
		return math.Float32bits(x) == math.Float32bits(any(b).(float32))
	case float64:
		return math.Float64bits(x) == math.Float64bits(any(b).(float64))
	}
	return a == b
}

func TestArgsortKeepsEqualKeysInInputOrder(t *testing.T) {
	// Ties, zeros of both signs and NaNs of several payloads: their
	// positions come out ascending within each run of equal keys.
	nan2 := math.Float32frombits(0x7fc00001)
	xs := []float32{2, float32(math.NaN()), 0, -1, nan2, float32(math.Copysign(0, -1)), 2, -1, 0}
	x := cuarray.Must(cuarray.FromSlice(xs))
	idx := cuarray.Must(cuarray.Argsort(nil, x, false))
	assert.Equal(t, []int64{3, 7, 2, 5, 8, 0, 6, 1, 4}, read(t, idx))
	idx = cuarray.Must(cuarray.Argsort(nil, x, true))
	assert.Equal(t, []int64{1, 4, 0, 6, 2, 5, 8, 3, 7}, read(t, idx))
	sorted := cuarray.Must(cuarray.Sort(nil, x, false))
	got := read(t, sorted)
	assert.True(t, math.Signbit(float64(got[3])), "-0 keeps its place after +0 at 2 and before +0 at 8")
	assert.Equal(t, uint32(0x7fc00001), math.Float32bits(got[8]), "NaNs keep their order and bits")
}

func TestScanAndSortErrorsNameTheProblemAndLeaveNothingAllocated(t *testing.T) {
	p := freshPool(t)
	s := newStream(t, p)
	f := cuarray.On[float32](s)
	m := cuarray.Must(f.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3))
	scalar := cuarray.Must(cuarray.Must(f.FromSlice([]float32{1})).Reshape())
	other := cuarray.Must(f.New(3, 2))
	c := cuarray.Must(cuarray.On[complex64](s).New(4))
	idx := cuarray.Must(cuarray.On[int64](s).New(3, 2))
	freed := cuarray.Must(f.New(3))
	freed.UnsafeFree()
	cases := []struct {
		name   string
		err    func() error
		target error
		want   []string
	}{
		{"axis past the end", func() error { _, err := f.Cumsum(nil, m, 2); return err }, cuarray.ErrShape,
			[]string{"Cumsum", "axis 2", "float32[2 3]", "[-2, 2)"}},
		{"axis before the start", func() error { _, err := f.Cummax(nil, m, -3); return err }, cuarray.ErrShape,
			[]string{"Cummax", "axis -3"}},
		{"scan of no axes", func() error { _, err := f.Cumprod(nil, scalar, 0); return err }, cuarray.ErrShape,
			[]string{"Cumprod", "no axes"}},
		{"scan dst shape", func() error { _, err := f.Cumsum(other, m, 0); return err }, cuarray.ErrShape,
			[]string{"Cumsum", "dst float32[3 2]", "x float32[2 3]"}},
		{"scan of complex", func() error { _, err := cuarray.On[complex64](s).Cumsum(nil, c, 0); return err },
			kernels.ErrUnsupportedDType, []string{"Cumsum", "complex64", "float32, float64, int32, int64, uint8"}},
		{"sort of complex", func() error { _, err := cuarray.On[complex64](s).Sort(nil, c, false); return err },
			kernels.ErrUnsupportedDType, []string{"Sort", "complex64"}},
		{"sort of a freed array", func() error { _, err := f.Sort(nil, freed, false); return err }, cuarray.ErrFreed,
			[]string{"Sort", "x"}},
		{"sort of no axes", func() error { _, err := f.Sort(nil, scalar, false); return err }, cuarray.ErrShape,
			[]string{"Sort", "no axes"}},
		{"argsort dst shape", func() error { _, err := f.Argsort(idx, m, false); return err }, cuarray.ErrShape,
			[]string{"Argsort", "dst int64[3 2]", "x float32[2 3]"}},
		{"k past the row", func() error { _, _, err := f.TopK(nil, nil, m, 4, true); return err }, cuarray.ErrShape,
			[]string{"TopK", "k = 4", "[0, 3]", "float32[2 3]"}},
		{"negative k", func() error { _, _, err := f.TopK(nil, nil, m, -1, false); return err }, cuarray.ErrShape,
			[]string{"TopK", "k = -1"}},
		{"top-k values shape", func() error { _, _, err := f.TopK(other, nil, m, 2, true); return err }, cuarray.ErrShape,
			[]string{"TopK", "values float32[3 2]", "[2 2]"}},
		{"top-k values on x", func() error { _, _, err := f.TopK(m, nil, m, 3, true); return err }, cuarray.ErrShape,
			[]string{"TopK", "shares memory"}},
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
			after := p.Stats()
			assert.Equal(t, before.Live, after.Live, "no result left behind")
			assert.Equal(t, before.Allocs-before.Frees, after.Allocs-after.Frees)
		})
	}
}

func TestArgsortOfInt64RefusesIndicesOnItsInput(t *testing.T) {
	x := cuarray.Must(cuarray.FromSlice([]int64{3, 1, 2}))
	_, err := cuarray.Argsort(x, x, false)
	require.ErrorIs(t, err, cuarray.ErrShape)
	assert.Contains(t, err.Error(), "share memory")
	got := cuarray.Must(cuarray.Argsort(nil, x, false))
	assert.Equal(t, []int64{1, 2, 0}, read(t, got))
}

// FuzzSortInvariants sorts float32s made of the fuzzer's bytes and checks
// what any correct sort must give: a permutation of the input (bit for
// bit), in order, and an argsort that gathers the same elements and keeps
// equal keys in input order.
func FuzzSortInvariants(f *testing.F) {
	f.Add([]byte{0, 0, 0x80, 0x7f, 0, 0, 0, 0x80, 1, 2, 3, 4, 0, 0, 0xc0, 0x7f}, false)
	f.Add([]byte{1, 0, 0, 0, 1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}, true)
	f.Fuzz(func(t *testing.T, data []byte, desc bool) {
		if len(data) > 4*4096 {
			data = data[:4*4096]
		}
		xs := make([]float32, len(data)/4)
		for i := range xs {
			xs[i] = math.Float32frombits(uint32(data[4*i]) | uint32(data[4*i+1])<<8 | uint32(data[4*i+2])<<16 | uint32(data[4*i+3])<<24)
		}
		if len(xs) == 0 {
			return
		}
		x := cuarray.Must(cuarray.FromSlice(xs))
		sorted := read(t, cuarray.Must(cuarray.Sort(nil, x, desc)))
		idx := read(t, cuarray.Must(cuarray.Argsort(nil, x, desc)))
		seen := make([]bool, len(xs))
		for i, j := range idx {
			require.False(t, seen[j], "index %d twice", j)
			seen[j] = true
			require.True(t, identical(xs[j], sorted[i]), "argsort and sort disagree at %d", i)
			if i > 0 {
				c := refCompare(xs[idx[i-1]], xs[j])
				if desc {
					c = -c
				}
				require.LessOrEqual(t, c, 0, "out of order at %d", i)
				if c == 0 {
					require.Less(t, idx[i-1], j, "equal keys out of input order at %d", i)
				}
			}
		}
	})
}

// cubSorted, the reference for the GPU's float32 sort of long rows, is the
// order the docs state: -0 before +0, NaNs after +Inf by their bits (+NaNs
// by payload, then -NaNs), descending the reverse.
func TestCubSortedIsTheDocumentedOrder(t *testing.T) {
	f := math.Float32frombits
	xs := []float32{f(0x7fc00000), 0, f(0x80000000), 1, f(0xffc00000), f(0xff800000), f(0x7f800001)}
	asc := []uint32{0xff800000, 0x80000000, 0, 0x3f800000, 0x7f800001, 0x7fc00000, 0xffc00000}
	bits := func(v []float32) []uint32 {
		out := make([]uint32, len(v))
		for i, x := range v {
			out[i] = math.Float32bits(x)
		}
		return out
	}
	assert.Equal(t, asc, bits(cubSorted(xs, len(xs), false)))
	desc := slices.Clone(asc)
	slices.Reverse(desc)
	assert.Equal(t, desc, bits(cubSorted(xs, len(xs), true)))
	// Two rows sort apart.
	two := append(slices.Clone(xs), xs...)
	assert.Equal(t, append(slices.Clone(asc), asc...), bits(cubSorted(two, len(xs), false)))
}
