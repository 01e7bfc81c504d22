package kernels_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/host"
	"github.com/gocuda/gocuda/kernels"
)

type stridedFn = func(dev backend.Device, s backend.Stream, dst, a, b backend.Ptr, shape, aStrides, bStrides []int) error

// extent is the elements an operand of strides spans over shape.
func extent(shape, strides []int) int {
	e := 1
	for i, d := range shape {
		if d == 0 {
			return 0
		}
		e += (d - 1) * strides[i]
	}
	return e
}

// stridedLayouts are the layouts the strided kernels are tested on: each
// fast path (a row, a column, a single value, either operand the small
// one), the general mode with broadcasts and a transposed read, more
// dimensions than one launch takes, and empty ones.
var stridedLayouts = []struct {
	name          string
	shape, sa, sb []int
}{
	{"row [n m]+[m]", []int{37, 64}, []int{64, 1}, []int{0, 1}},
	{"row, odd columns", []int{37, 33}, []int{33, 1}, []int{0, 1}},
	{"row, a is the row", []int{37, 64}, []int{0, 1}, []int{64, 1}},
	{"column [n m]+[n 1]", []int{37, 64}, []int{64, 1}, []int{1, 0}},
	{"column, b is full", []int{37, 33}, []int{1, 0}, []int{33, 1}},
	{"one value", []int{1001}, []int{1}, []int{0}},
	{"one value is a", []int{3, 1, 40}, []int{0, 0, 0}, []int{40, 40, 1}},
	{"outer product [1 m]+[n 1]", []int{50, 70}, []int{0, 1}, []int{1, 0}},
	{"general 3-D", []int{6, 5, 7}, []int{35, 0, 1}, []int{0, 7, 1}},
	{"transposed a", []int{40, 30}, []int{1, 40}, []int{30, 1}},
	{"same layout", []int{3, 4, 5}, []int{20, 5, 1}, []int{20, 5, 1}},
	{"dims of 1 with any stride", []int{1, 9, 1}, []int{1000, 1, 77}, []int{5, 1, 3}},
	{"8-D, nothing merges", []int{2, 3, 2, 3, 2, 3, 2, 3}, []int{0, 1, 0, 3, 0, 9, 0, 27}, []int{81, 0, 27, 0, 9, 0, 3, 0}},
	{"empty", []int{4, 0, 3}, []int{0, 3, 1}, []int{3, 0, 1}},
}

func TestStrided(t *testing.T) {
	e := newEnv(t)
	runTyped(t, allTypes(
		func(t *testing.T) { testStrided[float32](t, e) }, func(t *testing.T) { testStrided[float64](t, e) },
		func(t *testing.T) { testStrided[int32](t, e) }, func(t *testing.T) { testStrided[int64](t, e) },
		func(t *testing.T) { testStrided[uint8](t, e) }, func(t *testing.T) { testStrided[complex64](t, e) },
		func(t *testing.T) { testStrided[int8](t, e) }, func(t *testing.T) { testStrided[int16](t, e) }, func(t *testing.T) { testStrided[uint32](t, e) }))
}

func testStrided[T number](t *testing.T, e *env) {
	ops := []struct {
		name string
		run  stridedFn
		ref  func(a, b T) (T, float64)
		rtol float64
		kind genKind
	}{
		{"Add", kernels.AddStrided[T], func(a, b T) (T, float64) { return a + b, 0 }, 0, general},
		{"Sub", kernels.SubStrided[T], func(a, b T) (T, float64) { return a - b, 0 }, 0, general},
		{"Mul", kernels.MulStrided[T], func(a, b T) (T, float64) { return a * b, mag(a) * mag(b) }, complexOnly[T](1e-6), general},
		{"Div", kernels.DivStrided[T], func(a, b T) (T, float64) { q := refDiv(a, b); return q, mag(q) }, complexOnly[T](1e-6), divisor},
	}
	for _, op := range ops {
		for _, l := range stridedLayouts {
			for _, lay := range layouts {
				t.Run(fmt.Sprintf("%s/%s/%s", op.name, l.name, lay.name), func(t *testing.T) {
					n := 1
					for _, d := range l.shape {
						n *= d
					}
					a, b := gen[T](e.r, extent(l.shape, l.sa), general), gen[T](e.r, extent(l.shape, l.sb), op.kind)
					da, db := upload(t, e, a, lay.inOff), upload(t, e, b, lay.inOff)
					dst := alloc[T](t, e, n, lay.outOff)
					require.NoError(t, op.run(e.dev, e.s, dst.p, da.p, db.p, l.shape, l.sa, l.sb))
					ia, ib := stridedIndex(l.shape, l.sa), stridedIndex(l.shape, l.sb)
					checkAll(t, dst.read(t), op.rtol, func(i int) (T, float64) { return op.ref(a[ia[i]], b[ib[i]]) })
				})
			}
		}
	}
	// In place: dst is the full operand, the other a row or a column.
	for _, l := range stridedLayouts[:4] {
		t.Run("Sub/in-place/"+l.name, func(t *testing.T) {
			n := l.shape[0] * l.shape[1]
			a, b := gen[T](e.r, extent(l.shape, l.sa), general), gen[T](e.r, extent(l.shape, l.sb), general)
			da, db := upload(t, e, a, false), upload(t, e, b, false)
			dst := da
			if extent(l.shape, l.sb) == n {
				dst = db
			}
			require.NoError(t, kernels.SubStrided[T](e.dev, e.s, dst.p, da.p, db.p, l.shape, l.sa, l.sb))
			ia, ib := stridedIndex(l.shape, l.sa), stridedIndex(l.shape, l.sb)
			checkAll(t, dst.read(t), 0, func(i int) (T, float64) { return a[ia[i]] - b[ib[i]], 0 })
		})
	}
}

// stridedIndex is, for each element of shape in row-major order, where an
// operand of strides is read: the reference the kernels are checked against.
func stridedIndex(shape, strides []int) []int {
	var out []int
	var walk func(dim, off int)
	walk = func(dim, off int) {
		if dim == len(shape) {
			out = append(out, off)
			return
		}
		for i := range shape[dim] {
			walk(dim+1, off+i*strides[dim])
		}
	}
	walk(0, 0)
	return out
}

// A large row broadcast, a large column broadcast and a large general
// layout: many blocks and, on the host, many goroutines, whose pieces of
// the rows must each be done once.
func TestStridedLarge(t *testing.T) {
	e := newEnv(t)
	rows := 1 << 12
	if testing.Short() {
		rows = 1 << 9
	}
	for _, l := range []struct {
		name          string
		shape, sa, sb []int
	}{
		{"row", []int{rows, 257}, []int{257, 1}, []int{0, 1}},
		{"column", []int{rows, 256}, []int{256, 1}, []int{1, 0}},
		{"general", []int{rows / 4, 4, 257}, []int{257, 0, 1}, []int{4 * 257, 257, 1}},
	} {
		t.Run(l.name, func(t *testing.T) {
			n := 1
			for _, d := range l.shape {
				n *= d
			}
			a, b := gen[float32](e.r, extent(l.shape, l.sa), general), gen[float32](e.r, extent(l.shape, l.sb), general)
			da, db := upload(t, e, a, false), upload(t, e, b, false)
			dst := alloc[float32](t, e, n, false)
			require.NoError(t, kernels.MulStrided[float32](e.dev, e.s, dst.p, da.p, db.p, l.shape, l.sa, l.sb))
			ia, ib := stridedIndex(l.shape, l.sa), stridedIndex(l.shape, l.sb)
			checkAll(t, dst.read(t), 0, func(i int) (float32, float64) { return a[ia[i]] * b[ib[i]], 0 })
		})
	}
}

func TestStridedRejectsBadLayouts(t *testing.T) {
	e := newEnv(t)
	p := alloc[float32](t, e, 64, false).p
	cases := []struct {
		name          string
		shape, sa, sb []int
		want          string
	}{
		{"strides of another rank", []int{2, 3}, []int{3, 1}, []int{1}, "one stride a dimension"},
		{"negative dimension", []int{2, -3}, []int{3, 1}, []int{3, 1}, "must be ≥ 0"},
		{"negative stride", []int{2, 3}, []int{3, -1}, []int{3, 1}, "must be ≥ 0"},
		{"shape overflows", []int{1 << 40, 1 << 40}, []int{0, 0}, []int{0, 0}, "overflows"},
		{"extent overflows", []int{3, 3}, []int{1 << 62, 1}, []int{3, 1}, "overflow"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := kernels.AddStrided[float32](e.dev, e.s, p, p+256, p+512, c.shape, c.sa, c.sb)
			require.ErrorIs(t, err, backend.ErrInvalidValue)
			assert.Contains(t, err.Error(), "kernels: AddStrided float32")
			assert.Contains(t, err.Error(), c.want)
		})
	}
	err := kernels.AddStrided[float32](e.dev, e.s, p, 0, p, []int{2, 3}, []int{3, 1}, []int{3, 1})
	require.ErrorIs(t, err, backend.ErrInvalidValue)
	assert.Contains(t, err.Error(), "pointer a is nil")
	err = kernels.AddStrided[float32](e.dev, e.s, 0, 0, 0, []int{0, 3}, []int{3, 1}, []int{3, 1})
	assert.NoError(t, err, "an empty shape queues nothing and takes nil pointers")
}

// The stream checker sees what a strided operation reads: a row
// broadcast's b is one row, so a write just past it on another stream is
// no race, and a write to it is.
func TestStreamCheckStridedDeclaresTheOperandsExtent(t *testing.T) {
	const rows, cols = 4, 8
	for _, c := range []struct {
		name  string
		at    int // elements into b's allocation the other stream writes
		races int
	}{{"a write to the row", cols - 1, 1}, {"a write past the row", cols, 0}} {
		t.Run(c.name, func(t *testing.T) {
			e := newCheckEnv(t, host.StreamCheckReport)
			x, b, dst := e.alloc(t, rows*cols), e.alloc(t, 2*cols), e.alloc(t, rows*cols)
			require.NoError(t, kernels.Fill[float32](e.dev, e.a, x, 1, rows*cols))
			require.NoError(t, kernels.Fill[float32](e.dev, e.a, b, 1, 2*cols))
			require.NoError(t, e.dev.Synchronize())

			gate := make(chan struct{})
			require.NoError(t, e.a.(*host.Stream).Enqueue(func() { <-gate }))
			require.NoError(t, kernels.AddStrided[float32](e.dev, e.a, dst, x, b, []int{rows, cols}, []int{cols, 1}, []int{0, 1}))
			require.NoError(t, kernels.Fill[float32](e.dev, e.c, b+backend.Ptr(4*c.at), 2, 1))
			close(gate)
			require.NoError(t, e.dev.Synchronize())
			races := e.b.StreamRaces()
			require.Len(t, races, c.races)
			if c.races > 0 {
				assert.Equal(t, "AddStrided float32", races[0].Earlier.Op)
				assert.False(t, races[0].Earlier.Write)
			}
		})
	}
}
