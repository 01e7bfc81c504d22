package cuarray_test

import (
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/cuarray"
)

// Arrays past 2^31 elements on the GPU (issue 30's differential tests): a
// 46341 × 46341 uint8 matrix holds 2^31 + 4633 elements (2 GiB), odd along
// both axes, so that element 2^31 is row 46340, column 41708. Its
// elements are 1 below flat index 2^31 and 2 from there on, except a few
// spots with other values; every operation's result is checked against
// that description at windows straddling 2^31 and at the end, read back a
// few elements at a time. A kernel that indexes in 32 bits either faults
// or leaves the elements past 2^31 wrong (a 2 where a 1 belongs, or the
// sentinel it never overwrote).
//
// On the GPU machine: bash scripts/gpu-run.sh --run TestArraysPast2To31Elements cuarray

const (
	bigSide = 46341
	bigN    = bigSide * bigSide // 2^31 + 4633
	two31   = 1 << 31
	// bigMemory is what the test needs free: four 2 GiB arrays at its
	// peak, and a sort's scratch beside two, with room for the pool.
	bigMemory = 11 << 30
)

// bigPattern is x's elements: 1 below 2^31, 2 from there, spots aside.
type bigPattern map[int]uint8

func (p bigPattern) at(i int) uint8 {
	if v, ok := p[i]; ok {
		return v
	}
	return bigBase(i)
}

// bigBase is x's element i but for the spots.
func bigBase(i int) uint8 {
	if i < two31 {
		return 1
	}
	return 2
}

// xSpots: values unlike their neighbours at and around 2^31 and the end,
// and where the transposed copy's windows read (column 41707 and 41709 of
// the last row, read as the transposed array's elements near 2^31).
var xSpots = bigPattern{
	1:                          200,
	two31 - 2:                  0,
	two31:                      255,
	two31 + 3:                  7,
	bigN - 3:                   0,
	bigN - 1:                   9,
	41707*bigSide + 46340:      33,
	41709*bigSide + 46340:      0,
	46338*bigSide + 46340:      77,
	46340*bigSide + 46339 - 10: 130,
}

// ySpots: where y, a copy of x, is then changed.
var ySpots = map[int]uint8{0: 0, two31 - 1: 5, two31 + 1: 0, bigN - 2: 3, two31 + 3: 200}

func TestArraysPast2To31Elements(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 2 GiB arrays: not under -short")
	}
	dev, err := gocuda.Device(0)
	require.NoError(t, err)
	if !isCUDA(dev) {
		t.Skip("arrays past 2^31 elements are checked on the cuda backend only (GOCUDA_BACKEND=cuda); the host backend runs the same code paths on small arrays in the other tests")
	}
	free, total, err := dev.MemInfo()
	require.NoError(t, err)
	if free < bigMemory {
		t.Skipf("needs %d GiB of free device memory; %s has %.1f of %.1f GiB free", bigMemory>>30, dev.Info().Name, float64(free)/(1<<30), float64(total)/(1<<30))
	}

	y2 := func(i int) uint8 {
		if v, ok := ySpots[i]; ok {
			return v
		}
		return xSpots.at(i)
	}
	// The windows every flat result is read at.
	windows := [][2]int{{0, 4}, {two31 - 6, two31 + 6}, {bigN - 6, bigN}}

	// Fill and SetAt: x.
	x := cuarray.Must(cuarray.New[uint8](bigSide, bigSide))
	defer x.UnsafeFree()
	xf := cuarray.Must(x.Reshape(bigN))
	require.NoError(t, cuarray.Fill(x, 1))
	require.NoError(t, cuarray.Fill(cuarray.Must(xf.View(two31, bigN-two31)), 2))
	for i, v := range xSpots {
		require.NoError(t, xf.SetAt(v, i))
	}
	checkWindows(t, "Fill", xf, windows, xSpots.at)

	// Copy into a zeroed y, then y's own spots.
	y := cuarray.Must(cuarray.Zeros[uint8](bigN))
	require.NoError(t, cuarray.Copy(y, xf))
	checkWindows(t, "Copy", y, windows, xSpots.at)
	for i, v := range ySpots {
		require.NoError(t, y.SetAt(v, i))
	}

	// An elementwise operation of the table, a comparison, Where, Convert.
	m := cuarray.Must(cuarray.Maximum(nil, xf, y))
	checkWindows(t, "Maximum", m, windows, func(i int) uint8 { return max(xSpots.at(i), y2(i)) })
	m.UnsafeFree()
	cond := cuarray.Must(cuarray.Less(nil, xf, y))
	checkWindows(t, "Less", cond, windows, func(i int) bool { return xSpots.at(i) < y2(i) })
	w := cuarray.Must(cuarray.Where(nil, cond, xf, y))
	checkWindows(t, "Where", w, windows, func(i int) uint8 { return min(xSpots.at(i), y2(i)) })
	w.UnsafeFree()
	c8 := cuarray.Must(cuarray.Convert[uint8](nil, nil, cond))
	checkWindows(t, "Convert bool to uint8", c8, windows, func(i int) uint8 {
		if xSpots.at(i) < y2(i) {
			return 1
		}
		return 0
	})
	c8.UnsafeFree()
	cond.UnsafeFree()
	y.UnsafeFree()

	// Sums: of everything, along each axis, along an axis of a transposed
	// view and of a column slice (a strided view).
	total64, err := cuarray.SumInt64(xf)
	require.NoError(t, err)
	want := int64(two31) + 2*int64(bigN-two31)
	for i, v := range xSpots {
		want += int64(v) - int64(bigBase(i))
	}
	require.Equal(t, want, total64, "SumInt64 of %d elements", bigN)
	rowSum := func(r int) int64 {
		var s int64
		for c := range bigSide {
			s += int64(xSpots.at(r*bigSide + c))
		}
		return s
	}
	colSum := func(c int) int64 {
		var s int64
		for r := range bigSide {
			s += int64(xSpots.at(r*bigSide + c))
		}
		return s
	}
	lines := []int{0, 1, 41707, 41708, 46338, 46339, 46340}
	checkLines(t, "SumAxesInt64 axis 1", cuarray.Must(cuarray.SumAxesInt64(nil, x, []int{1}, false)), lines, rowSum)
	checkLines(t, "SumAxesInt64 axis 0", cuarray.Must(cuarray.SumAxesInt64(nil, x, []int{0}, false)), lines, colSum)
	xt := cuarray.Must(x.Transpose())
	checkLines(t, "SumAxesInt64 axis 1 of the transposed view", cuarray.Must(cuarray.SumAxesInt64(nil, xt, []int{1}, false)), lines, colSum)
	const from = 41000 // a column slice: a strided view of 5341 columns
	cols := cuarray.Must(x.SliceAxis(1, from, bigSide, 1))
	checkLines(t, "SumAxesInt64 axis 0 of columns 41000:", cuarray.Must(cuarray.SumAxesInt64(nil, cols, []int{0}, false)),
		[]int{0, 707, 708, bigSide - 1 - from}, func(j int) int64 { return colSum(from + j) })

	// ArgMaxAxes: the first maximum of each row and of each column.
	argmax := func(at func(k int) int) int64 {
		best, arg := -1, int64(0)
		for k := range bigSide {
			if v := int(xSpots.at(at(k))); v > best {
				best, arg = v, int64(k)
			}
		}
		return arg
	}
	checkLines(t, "ArgMaxAxes axis 1", cuarray.Must(cuarray.ArgMaxAxes(nil, x, []int{1}, false)), lines, func(r int) int64 {
		return argmax(func(k int) int { return r*bigSide + k })
	})
	checkLines(t, "ArgMaxAxes axis 0", cuarray.Must(cuarray.ArgMaxAxes(nil, x, []int{0}, false)), lines, func(c int) int64 {
		return argmax(func(k int) int { return k*bigSide + c })
	})

	// Take: of the flat array, and columns of the matrix (the last rows'
	// elements lie past 2^31).
	idx := []int64{1, two31 - 2, two31, two31 + 3, bigN - 1, 0}
	got := cuarray.Must(cuarray.Must(cuarray.Take(nil, xf, cuarray.Must(cuarray.FromSlice(idx)), 0)).ToSlice())
	for k, i := range idx {
		require.Equal(t, xSpots.at(int(i)), got[k], "Take of the flat array at %d", i)
	}
	cidx := []int64{41708, 46340, 0, 46339 - 10}
	taken := cuarray.Must(cuarray.Take(nil, x, cuarray.Must(cuarray.FromSlice(cidx)), 1))
	require.Equal(t, []int{bigSide, len(cidx)}, taken.Shape())
	tf := cuarray.Must(taken.Reshape(taken.Len()))
	tw := [][2]int{{0, 8}, {taken.Len() - 3*len(cidx), taken.Len()}}
	checkWindows(t, "Take columns", tf, tw, func(i int) uint8 {
		return xSpots.at(i/len(cidx)*bigSide + int(cidx[i%len(cidx)]))
	})
	taken.UnsafeFree()

	// Transpose into a new array: element i of it is x's (i%side, i/side).
	ct := cuarray.Must(cuarray.Contiguous(xt))
	ctf := cuarray.Must(ct.Reshape(bigN))
	checkWindows(t, "Contiguous of the transpose", ctf, windows, func(i int) uint8 {
		return xSpots.at(i%bigSide*bigSide + i/bigSide)
	})
	ct.UnsafeFree()

	// Cumsum along the whole flat array (uint8 wraps as a Go loop does).
	cs := cuarray.Must(cuarray.Cumsum(nil, xf, 0))
	spotIdx := make([]int, 0, len(xSpots))
	for i := range xSpots {
		spotIdx = append(spotIdx, i)
	}
	sort.Ints(spotIdx)
	checkWindows(t, "Cumsum", cs, windows, func(i int) uint8 {
		s := min(i+1, two31) + 2*max(i+1-two31, 0)
		for _, j := range spotIdx {
			if j <= i {
				s += int(xSpots[j]) - int(bigBase(j))
			}
		}
		return uint8(s)
	})
	cs.UnsafeFree()

	// Sort: the values in order, from their counts.
	counts := [256]int{1: two31, 2: bigN - two31}
	for i, v := range xSpots {
		counts[v]++
		counts[bigBase(i)]--
	}
	sorted := cuarray.Must(cuarray.Sort(nil, xf, false))
	// The windows, and where the 0s end, the 1s end and the 2s end.
	sw := windows
	for b, v := 0, 0; v <= 2; v++ {
		b += counts[v]
		sw = append(sw, [2]int{b - 3, b + 3})
	}
	checkWindows(t, "Sort", sorted, sw, func(i int) uint8 {
		for v, n := range counts {
			if i < n {
				return uint8(v)
			}
			i -= n
		}
		return 0
	})
	sorted.UnsafeFree()
}

// checkWindows reads a (flat, contiguous) at each window [lo, hi) and
// compares every element with want, naming the operation, the index and
// its distance from 2^31.
func checkWindows[T interface {
	cuarray.Elem
	comparable
}](t *testing.T, op string, a *cuarray.Array[T], windows [][2]int, want func(i int) T) {
	t.Helper()
	for _, w := range windows {
		lo, hi := max(w[0], 0), min(w[1], a.Len())
		v, err := a.View(lo, hi-lo)
		require.NoError(t, err, "%s: view [%d, %d)", op, lo, hi)
		got, err := v.ToSlice()
		require.NoError(t, err, "%s: read [%d, %d)", op, lo, hi)
		for k, g := range got {
			i := lo + k
			if wv := want(i); g != wv {
				t.Errorf("%s: element %d (2^31%+d) of %d is %v, want %v", op, i, i-two31, a.Len(), g, wv)
			}
		}
	}
}

// checkLines compares the int64 results of a reduction at the lines named
// with want, and frees the result.
func checkLines(t *testing.T, op string, a *cuarray.Array[int64], lines []int, want func(line int) int64) {
	t.Helper()
	defer a.UnsafeFree()
	for _, l := range lines {
		got, err := a.At(l)
		require.NoError(t, err, "%s: read %d", op, l)
		if w := want(l); got != w {
			t.Errorf("%s: line %d is %d, want %d", op, l, got, w)
		}
	}
}
