package cuarray_test

import (
	"errors"
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/cuarray"
)

var shapes = []struct {
	name  string
	shape []int
}{
	{"scalar", nil},
	{"empty", []int{0}},
	{"empty-2d", []int{3, 0}},
	{"vector", []int{7}},
	{"matrix", []int{3, 4}},
	{"3d", []int{2, 3, 5}},
	{"large", []int{1<<16 + 3}},
}

func testRoundTrip[T cuarray.Elem](t *testing.T) {
	for _, sh := range shapes {
		t.Run(sh.name, func(t *testing.T) {
			n := 1
			for _, d := range sh.shape {
				n *= d
			}
			data := iota[T](n)
			a, err := cuarray.FromSlice(data, sh.shape...)
			if sh.shape == nil {
				a, err = cuarray.FromSlice(data[:1], 1)
				require.NoError(t, err)
				a, err = a.Reshape()
			}
			require.NoError(t, err)
			assert.Equal(t, n, a.Len())
			if sh.shape != nil {
				assert.Equal(t, sh.shape, a.Shape())
			}
			got := read(t, a)
			assert.Equal(t, data, got)

			dst := make([]T, n)
			require.NoError(t, a.CopyTo(dst))
			assert.Equal(t, data, dst)
			err = a.CopyTo(make([]T, n+1))
			assert.ErrorIs(t, err, cuarray.ErrShape)

			z, err := cuarray.Zeros[T](sh.shape...)
			require.NoError(t, err)
			assert.Equal(t, make([]T, n), read(t, z))
			o, err := cuarray.Ones[T](sh.shape...)
			require.NoError(t, err)
			assert.Equal(t, filled(n, num[T](1)), read(t, o))
			f, err := cuarray.Full[T](num[T](42), sh.shape...)
			require.NoError(t, err)
			assert.Equal(t, filled(n, num[T](42)), read(t, f))
			e, err := cuarray.New[T](sh.shape...)
			require.NoError(t, err)
			assert.Equal(t, n, e.Len())
			for _, x := range []*cuarray.Array[T]{a, z, o, f, e} {
				x.UnsafeFree()
			}
		})
	}
}

func TestRoundTrip(t *testing.T) {
	t.Run("float32", testRoundTrip[float32])
	t.Run("float64", testRoundTrip[float64])
	t.Run("int32", testRoundTrip[int32])
	t.Run("int64", testRoundTrip[int64])
	t.Run("uint8", testRoundTrip[uint8])
	t.Run("int8", testRoundTrip[int8])
	t.Run("int16", testRoundTrip[int16])
	t.Run("uint32", testRoundTrip[uint32])
	t.Run("complex64", testRoundTrip[complex64])
}

func TestRoundTripValues(t *testing.T) {
	c := []complex64{complex(1, -2), complex(float32(math.Inf(1)), 0.5), 0}
	a := cuarray.Must(cuarray.FromSlice(c))
	assert.Equal(t, c, read(t, a))
	f := []float64{math.MaxFloat64, math.Copysign(0, -1), math.SmallestNonzeroFloat64}
	assert.Equal(t, f, read(t, cuarray.Must(cuarray.FromSlice(f))))
	i := []int64{math.MinInt64, -1, math.MaxInt64}
	assert.Equal(t, i, read(t, cuarray.Must(cuarray.FromSlice(i))))
}

func TestShapeErrors(t *testing.T) {
	a := cuarray.Must(cuarray.FromSlice(iota[float32](12), 3, 4))
	cases := []struct {
		name string
		err  func() error
		want []string // substrings of the message
	}{
		{"negative dimension", func() error { _, err := cuarray.New[float32](2, -3); return err }, []string{"float32", "[2 -3]", "dimension 1 is -3", "≥ 0"}},
		{"overflow", func() error { _, err := cuarray.New[float32](math.MaxInt/2, 3); return err }, []string{"overflows"}},
		{"too many bytes", func() error { _, err := cuarray.New[float64](math.MaxInt / 4); return err }, []string{"do not fit"}},
		{"FromSlice mismatch", func() error { _, err := cuarray.FromSlice(iota[int32](5), 2, 3); return err }, []string{"[2 3]", "6 elements", "5 of data"}},
		{"Reshape mismatch", func() error { _, err := a.Reshape(5, 2); return err }, []string{"float32[3 4]", "[5 2]", "must be 12"}},
		{"Reshape two inferred", func() error { _, err := a.Reshape(-1, -1); return err }, []string{"more than one", "-1"}},
		{"Reshape inferred indivisible", func() error { _, err := a.Reshape(-1, 5); return err }, []string{"cannot be split"}},
		{"Reshape negative", func() error { _, err := a.Reshape(-2, -6); return err }, []string{"dimension 0 is -2"}},
		{"View past end", func() error { _, err := a.View(10, 3); return err }, []string{"View(10, 3)", "12 elements"}},
		{"View negative", func() error { _, err := a.View(-1, 3); return err }, []string{"0 ≤ offset"}},
		{"Slice past end", func() error { _, err := a.Slice(2, 4); return err }, []string{"Slice(2, 4)", "j ≤ 3"}},
		{"Slice reversed", func() error { _, err := a.Slice(2, 1); return err }, []string{"i ≤ j"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.err()
			require.Error(t, err)
			assert.ErrorIs(t, err, cuarray.ErrShape)
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestReshapeInfers(t *testing.T) {
	a := cuarray.Must(cuarray.FromSlice(iota[float32](12), 3, 4))
	r, err := a.Reshape(2, -1, 3)
	require.NoError(t, err)
	assert.Equal(t, []int{2, 2, 3}, r.Shape())
	assert.Equal(t, iota[float32](12), read(t, r))
}

func TestViewsShareMemory(t *testing.T) {
	a := cuarray.Must(cuarray.FromSlice(iota[float32](12), 3, 4))
	r := cuarray.Must(a.Reshape(4, 3))
	v := cuarray.Must(a.View(2, 5))
	row := cuarray.Must(a.Slice(1, 2)) // elements 4..7
	assert.Equal(t, []int{1, 4}, row.Shape())
	assert.Equal(t, []float32{4, 5, 6, 7}, read(t, row))
	assert.Equal(t, []float32{2, 3, 4, 5, 6}, read(t, v))

	// Write through the view, read through the parent and the reshape.
	require.NoError(t, cuarray.Fill(v, 100))
	want := []float32{0, 1, 100, 100, 100, 100, 100, 7, 8, 9, 10, 11}
	assert.Equal(t, want, read(t, a))
	assert.Equal(t, want, read(t, r))
	// Write through the reshape (in place), read through the row.
	require.NoError(t, errOf(cuarray.MulScalar(r, r, 2)))
	assert.Equal(t, []float32{200, 200, 200, 14}, read(t, row))
	// A view of a view.
	vv := cuarray.Must(row.View(3, 1))
	require.NoError(t, cuarray.Fill(vv, -1))
	assert.Equal(t, float32(-1), read(t, a)[7])
}

func TestViewOutlivesParentFree(t *testing.T) {
	p := freshPool(t)
	s := newStream(t, p)
	f := cuarray.On[int64](s)
	a := cuarray.Must(f.FromSlice(iota[int64](300), 3, 100))
	v := cuarray.Must(a.Slice(1, 2))
	a.UnsafeFree()
	a.UnsafeFree() // idempotent
	for range 3 {
		runtime.GC()
	}
	assert.Equal(t, uint64(0), p.Stats().Frees, "the view still holds the buffer")
	// Reuse the pool hard to make a wrong free show.
	for range 10 {
		x := cuarray.Must(f.Full(-7, 3, 100))
		x.UnsafeFree()
	}
	assert.Equal(t, iota[int64](300)[100:200], read(t, v))
	v.UnsafeFree()
	assert.Equal(t, uint64(11), p.Stats().Frees)
}

func TestUseAfterFree(t *testing.T) {
	a := cuarray.Must(cuarray.FromSlice(iota[float32](6), 2, 3))
	b := cuarray.Must(cuarray.Zeros[float32](2, 3))
	a.UnsafeFree()
	assert.True(t, a.Freed())
	cases := map[string]func() error{
		"ToSlice": func() error { _, err := a.ToSlice(); return err },
		"CopyTo":  func() error { return a.CopyTo(make([]float32, 6)) },
		"Reshape": func() error { _, err := a.Reshape(6); return err },
		"View":    func() error { _, err := a.View(0, 1); return err },
		"Slice":   func() error { _, err := a.Slice(0, 1); return err },
		"Fill":    func() error { return cuarray.Fill(a, 1) },
		"Add src": func() error { return errOf(cuarray.Add(b, b, a)) },
		"Add dst": func() error { return errOf(cuarray.Add(a, b, b)) },
		"Copy":    func() error { return cuarray.Copy(b, a) },
		"Sum":     func() error { _, err := cuarray.Sum(a); return err },
		"Dot":     func() error { _, err := cuarray.Dot(b, a); return err },
	}
	for name, use := range cases {
		t.Run(name, func(t *testing.T) {
			err := use()
			require.Error(t, err)
			assert.ErrorIs(t, err, cuarray.ErrFreed)
			assert.Contains(t, err.Error(), "float32[2 3]")
		})
	}
	// b is untouched.
	assert.Equal(t, make([]float32, 6), read(t, b))
}

func TestNilArray(t *testing.T) {
	var a *cuarray.Array[float32]
	err := cuarray.Fill(a, 1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nil array")
	a.UnsafeFree() // no panic
}

// TestCleanupFreesUnreachable drops arrays and counts the pool's frees
// after collections.
func TestCleanupFreesUnreachable(t *testing.T) {
	p := freshPool(t)
	s := newStream(t, p)
	f := cuarray.On[float32](s)
	const n = 100
	for i := range n {
		a := cuarray.Must(f.New(1024))
		if i%2 == 0 { // some with views, which must all go before the buffer
			_ = cuarray.Must(a.Reshape(32, 32))
		}
	}
	assert.Equal(t, uint64(n), p.Stats().Allocs)
	deadline := time.Now().Add(10 * time.Second)
	for p.Stats().Frees < n && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	st := p.Stats()
	assert.Equal(t, uint64(n), st.Frees, "cleanups should free every unreachable array: %v", st)
	assert.Equal(t, uint64(0), st.Live)
}

func TestErrorsMatch(t *testing.T) {
	_, err := cuarray.New[uint8](-1)
	assert.True(t, errors.Is(err, cuarray.ErrShape))
	assert.Equal(t, "uint8[2 3]", cuarray.Must(cuarray.New[uint8](2, 3)).String())
}
