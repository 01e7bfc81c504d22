package kernels_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/kernels"
)

// copyLayouts are the layouts CopyStrided is tested on: the DtoD path, each
// transposition the tiled path takes (2-D, batched either way round, odd,
// prime and tile-multiple sizes, a dst with padded rows), the general path
// (stepped slices, broadcast sources, strided destinations), more
// dimensions than one launch takes, and empty ones.
var copyLayouts = []struct {
	name          string
	shape, ds, ss []int
}{
	{"contiguous", []int{5, 7}, []int{7, 1}, []int{7, 1}},
	{"transpose 2-D", []int{33, 65}, []int{65, 1}, []int{1, 33}},
	{"transpose, tile multiple", []int{64, 96}, []int{96, 1}, []int{1, 64}},
	{"transpose, prime", []int{37, 41}, []int{41, 1}, []int{1, 37}},
	{"transpose into padded rows", []int{9, 31}, []int{34, 1}, []int{1, 9}},
	{"batched transpose", []int{3, 17, 33}, []int{17 * 33, 33, 1}, []int{17 * 33, 1, 17}},
	{"batch in the middle", []int{17, 3, 33}, []int{99, 33, 1}, []int{1, 17 * 33, 17}},
	{"permute 3-D (2 0 1)", []int{4, 2, 3}, []int{6, 3, 1}, []int{1, 12, 4}},
	{"stepped slice", []int{6, 4}, []int{4, 1}, []int{24, 3}},
	{"broadcast row", []int{5, 7}, []int{7, 1}, []int{0, 1}},
	{"broadcast column", []int{5, 7}, []int{7, 1}, []int{1, 0}},
	{"scatter into a stepped dst", []int{4, 5}, []int{15, 3}, []int{5, 1}},
	{"scatter into a transposed dst", []int{20, 30}, []int{1, 20}, []int{30, 1}},
	{"dims of 1 with any stride", []int{1, 9, 1}, []int{1000, 1, 77}, []int{5, 1, 3}},
	{"8-D, nothing merges", []int{2, 3, 2, 3, 2, 3, 2, 3}, []int{1, 2, 6, 12, 36, 72, 216, 432}, []int{648, 216, 108, 36, 18, 6, 3, 1}},
	{"one element", []int{1, 1}, []int{1, 1}, []int{3, 5}},
	{"empty", []int{4, 0, 3}, []int{0, 3, 1}, []int{3, 0, 1}},
}

func TestCopyStrided(t *testing.T) {
	e := newEnv(t)
	runTyped(t, allTypes(
		func(t *testing.T) { testCopyStrided[float32](t, e) }, func(t *testing.T) { testCopyStrided[float64](t, e) },
		func(t *testing.T) { testCopyStrided[int32](t, e) }, func(t *testing.T) { testCopyStrided[int64](t, e) },
		func(t *testing.T) { testCopyStrided[uint8](t, e) }, func(t *testing.T) { testCopyStrided[complex64](t, e) },
		func(t *testing.T) { testCopyStrided[int8](t, e) }, func(t *testing.T) { testCopyStrided[int16](t, e) }, func(t *testing.T) { testCopyStrided[uint32](t, e) }))
	// bool moves on uint8's kernels (it was refused before).
	t.Run("bool", func(t *testing.T) { testCopyStrided[bool](t, e) })
}

func testCopyStrided[T kernels.Elem](t *testing.T, e *env) {
	for _, l := range copyLayouts {
		for _, lay := range layouts {
			t.Run(fmt.Sprintf("%s/%s", l.name, lay.name), func(t *testing.T) {
				src := gen[T](e.r, extent(l.shape, l.ss), general)
				ds := upload(t, e, src, lay.inOff)
				// dst starts as known values: elements it does not cover keep them.
				old := gen[T](e.r, extent(l.shape, l.ds), general)
				dst := upload(t, e, old, lay.outOff)
				require.NoError(t, kernels.CopyStrided[T](e.dev, e.s, dst.p, ds.p, l.shape, l.ds, l.ss))
				want := append(make([]T, 0, len(old)), old...)
				id, is := stridedIndex(l.shape, l.ds), stridedIndex(l.shape, l.ss)
				for i := range id {
					want[id[i]] = src[is[i]]
				}
				assert.Equal(t, want, dst.read(t))
			})
		}
	}
}

// A large transposition and a large general copy: many tiles, blocks and,
// on the host, goroutines, each element written once.
func TestCopyStridedLarge(t *testing.T) {
	e := newEnv(t)
	n := 1500
	if testing.Short() {
		n = 400
	}
	for _, l := range []struct {
		name          string
		shape, ds, ss []int
	}{
		{"transpose", []int{n, n + 3}, []int{n + 3, 1}, []int{1, n}},
		{"stepped", []int{n, n / 2}, []int{n / 2, 1}, []int{n, 2}},
	} {
		t.Run(l.name, func(t *testing.T) {
			src := gen[float32](e.r, extent(l.shape, l.ss), general)
			ds := upload(t, e, src, false)
			dst := alloc[float32](t, e, extent(l.shape, l.ds), false)
			require.NoError(t, kernels.CopyStrided[float32](e.dev, e.s, dst.p, ds.p, l.shape, l.ds, l.ss))
			got := dst.read(t)
			is := stridedIndex(l.shape, l.ss)
			bad := 0
			for i, j := range is {
				if got[i] != src[j] {
					bad++
				}
			}
			assert.Zero(t, bad)
		})
	}
}

func TestCopyStridedErrors(t *testing.T) {
	e := newEnv(t)
	src := upload(t, e, make([]float32, 16), false)
	dst := alloc[float32](t, e, 16, false)
	cases := []struct {
		name          string
		shape, ds, ss []int
		want          string
	}{
		{"strides missing", []int{2, 3}, []int{3}, []int{3, 1}, "each needs one stride a dimension"},
		{"negative stride", []int{2, 3}, []int{3, 1}, []int{-3, 1}, "must be ≥ 0"},
		{"negative dimension", []int{2, -3}, []int{3, 1}, []int{3, 1}, "must be ≥ 0"},
		{"dst stride 0", []int{2, 3}, []int{0, 1}, []int{3, 1}, "dimension 0 has 2 elements and dst stride 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := kernels.CopyStrided[float32](e.dev, e.s, dst.p, src.p, c.shape, c.ds, c.ss)
			require.ErrorIs(t, err, backend.ErrInvalidValue)
			assert.ErrorContains(t, err, "CopyStrided float32")
			assert.ErrorContains(t, err, c.want)
		})
	}
	// A nil pointer is caught as for every kernel.
	err := kernels.CopyStrided[float32](e.dev, e.s, 0, src.p, []int{2}, []int{1}, []int{1})
	require.ErrorIs(t, err, backend.ErrInvalidValue)
	assert.ErrorContains(t, err, "pointer dst is nil")
}
