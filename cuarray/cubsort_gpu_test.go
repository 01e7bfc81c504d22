package cuarray_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/cuarray"
)

// A float32 row longer than one portion of CUB's onesweep (2^28 - 1 keys
// rounded down to tiles; kernels/cubsort_gpu.go): each digit pass is two
// launches, the first handing the second its digits' starts. The other
// tests' rows are one portion. Checked in one read of each result: the
// sort is a permutation of x's bits (an order-free hash and count) in the
// documented order (cubSorted's key never decreases), the argsort a
// permutation of the positions whose values never decrease in value order
// with ties in position order (stable).
//
// On the GPU machine: bash scripts/gpu-run.sh --run TestSortPastOneOnesweepPortion cuarray
func TestSortPastOneOnesweepPortion(t *testing.T) {
	if testing.Short() {
		t.Skip("sorts 1 GiB: not under -short")
	}
	dev, err := gocuda.Device(0)
	require.NoError(t, err)
	if !isCUDA(dev) {
		t.Skip("the onesweep's portions are the cuda backend's (GOCUDA_BACKEND=cuda)")
	}
	const n = 1<<28 + 12345
	// x, idx, the argsort's scratch (4 buffers of n uint32 and the int64
	// result's size again) and room for the pool.
	const need = 12 << 30
	free, _, err := dev.MemInfo()
	require.NoError(t, err)
	if free < need {
		t.Skipf("needs %d GiB of free device memory, has %.1f", need>>30, float64(free)/(1<<30))
	}
	xs := make([]float32, n)
	s := uint64(0x9e3779b97f4a7c15)
	for i := range xs {
		s = s*6364136223846793005 + 1442695040888963407
		switch r := s >> 58; {
		case r == 0:
			xs[i] = float32(math.NaN())
		case r == 1:
			xs[i] = math.Float32frombits(0xffc00000 | uint32(s>>40)&7) // -NaN, a few payloads
		case r == 2:
			xs[i] = float32(math.Copysign(0, -1))
		case r == 3:
			xs[i] = 0
		default:
			xs[i] = float32(int32(s>>33)%100000) / 7 // many ties
		}
	}
	x := cuarray.Must(cuarray.FromSlice(xs))
	defer x.UnsafeFree()

	sorted := cuarray.Must(cuarray.Sort(nil, x, false))
	got := read(t, sorted)
	sorted.UnsafeFree()
	require.Len(t, got, n)
	var hx, hg uint64
	for i := range xs {
		hx += mix64(math.Float32bits(xs[i]))
		hg += mix64(math.Float32bits(got[i]))
	}
	require.Equal(t, hx, hg, "the sort is not a permutation of x's bits")
	key := cubSortKey(false)
	for i := 1; i < n; i++ {
		if key(got[i-1]) > key(got[i]) {
			require.Failf(t, "out of order", "sorted[%d] = %v (%#x) before [%d] = %v (%#x)", i-1, got[i-1],
				math.Float32bits(got[i-1]), i, got[i], math.Float32bits(got[i]))
		}
	}
	got = nil

	idx := cuarray.Must(cuarray.Argsort(nil, x, false))
	is := read(t, idx)
	idx.UnsafeFree()
	require.Len(t, is, n)
	seen := make([]uint64, (n+63)/64)
	for i, j := range is {
		if j < 0 || j >= n || seen[j/64]&(1<<(j%64)) != 0 {
			require.Failf(t, "not a permutation", "argsort[%d] = %d: out of range or repeated", i, j)
		}
		seen[j/64] |= 1 << (j % 64)
		if i == 0 {
			continue
		}
		a, b := xs[is[i-1]], xs[j]
		if c := refCompare(a, b); c > 0 || (c == 0 && is[i-1] > j) {
			require.Failf(t, "argsort out of order", "[%d] = %d (%v) before [%d] = %d (%v)", i-1, is[i-1], a, i, j, b)
		}
	}
}

// cubSortKey is cubSorted's key of a float32: its order is the GPU's float32
// sort of long rows.
func cubSortKey(desc bool) func(float32) uint32 {
	return func(v float32) uint32 {
		b := math.Float32bits(v)
		if b&0x80000000 != 0 {
			b = ^b
		} else {
			b |= 0x80000000
		}
		k := b - 0x007fffff
		if desc {
			k = ^k
		}
		return k
	}
}

// mix64 spreads a value's bits over 64 (splitmix64's finalizer), so that a
// sum of them tells permutations of a multiset from other multisets.
func mix64(v uint32) uint64 {
	z := uint64(v) + 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
