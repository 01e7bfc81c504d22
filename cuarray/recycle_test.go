package cuarray_test

import (
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/pool"
)

// A freed array stays an error, names itself and keeps its device after
// UnsafeFree's buffer has been reused by later arrays; a view made before
// the free keeps the data.
func TestFreedAfterBufferReuse(t *testing.T) {
	f := cuarray.On[float32](newStream(t, freshPool(t)))
	a, err := f.FromSlice(iota[float32](6), 2, 3)
	require.NoError(t, err)
	dev := a.Device()
	v, err := a.View(1, 4)
	require.NoError(t, err)
	a.UnsafeFree()
	assert.Equal(t, []float32{1, 2, 3, 4}, read(t, v))
	v.UnsafeFree()
	for range 64 { // reuse the freed buffer (sync.Pool may drop some)
		b, err := f.Full(7, 3)
		require.NoError(t, err)
		assert.Equal(t, []float32{7, 7, 7}, read(t, b))
		b.UnsafeFree()
	}
	for _, x := range []*cuarray.Array[float32]{a, v} {
		assert.True(t, x.Freed())
		assert.Equal(t, dev, x.Device())
		_, err := x.ToSlice()
		require.True(t, errors.Is(err, cuarray.ErrFreed), "%v", err)
		assert.Contains(t, err.Error(), x.String())
		require.True(t, errors.Is(f.Fill(x, 1), cuarray.ErrFreed))
	}
	assert.Equal(t, "float32[2 3]", a.String())
	assert.Equal(t, "float32[4]", v.String())
}

// Shapes of more than 4 dimensions (stored out of line) survive New,
// Reshape and Slice.
func TestLongShape(t *testing.T) {
	f := cuarray.On[float32](newStream(t, freshPool(t)))
	a, err := f.FromSlice(iota[float32](64), 2, 2, 2, 2, 2, 2)
	require.NoError(t, err)
	assert.Equal(t, []int{2, 2, 2, 2, 2, 2}, a.Shape())
	assert.Equal(t, 6, a.Ndim())
	assert.Equal(t, "float32[2 2 2 2 2 2]", a.String())
	s, err := a.Slice(1, 2)
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2, 2, 2, 2, 2}, s.Shape())
	assert.Equal(t, iota[float32](64)[32:], read(t, s))
	r, err := s.Reshape(4, 8)
	require.NoError(t, err)
	assert.Equal(t, []int{4, 8}, r.Shape())
	sh := a.Shape()
	sh[0] = 99 // a copy
	assert.Equal(t, []int{2, 2, 2, 2, 2, 2}, a.Shape())
}

// waitFrees collects until p has counted want frees or 10 s pass.
func waitFrees(p interface{ Stats() pool.Stats }, want uint64) pool.Stats {
	deadline := time.Now().Add(10 * time.Second)
	for p.Stats().Frees < want && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
	return p.Stats()
}

// The ways a buffer's arrays can go, one by UnsafeFree and another by
// becoming unreachable, in either order, all free the block exactly once.
func TestMixedUnsafeFreeAndCollectionFreeOnce(t *testing.T) {
	cases := []struct {
		name string
		run  func(f cuarray.Ops[float32]) // leaves every array unreachable
	}{
		{"parent freed, view dropped", func(f cuarray.Ops[float32]) {
			a := cuarray.Must(f.New(1024))
			_ = cuarray.Must(a.View(0, 512))
			a.UnsafeFree()
		}},
		{"view freed, parent dropped", func(f cuarray.Ops[float32]) {
			a := cuarray.Must(f.New(1024))
			cuarray.Must(a.Reshape(32, 32)).UnsafeFree()
		}},
		{"both freed", func(f cuarray.Ops[float32]) {
			a := cuarray.Must(f.New(1024))
			v := cuarray.Must(a.Slice(0, 1))
			v.UnsafeFree()
			a.UnsafeFree()
			a.UnsafeFree()
		}},
		{"none freed", func(f cuarray.Ops[float32]) {
			a := cuarray.Must(f.New(1024))
			_ = cuarray.Must(a.View(1, 2))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := freshPool(t)
			f := cuarray.On[float32](newStream(t, p))
			const n = 20
			for range n {
				tc.run(f)
			}
			st := waitFrees(p, n)
			assert.Equal(t, uint64(n), st.Allocs)
			assert.Equal(t, uint64(n), st.Frees, "every block freed once: %v", st)
			assert.Equal(t, uint64(0), st.Live)
			require.NoError(t, p.Close(), "nothing live, nothing freed twice")
		})
	}
}

// A freed array the program still holds does not keep memory: its buffer
// is recycled for a new array, and when that array becomes unreachable its
// block is freed by the collector even though the freed array is alive.
func TestHeldFreedArrayDoesNotPinRecycledBuffer(t *testing.T) {
	p := freshPool(t)
	f := cuarray.On[float32](newStream(t, p))
	var held []*cuarray.Array[float32]
	for range 50 {
		a := cuarray.Must(f.New(256))
		a.UnsafeFree() // its buffer goes back for reuse; a stays reachable
		held = append(held, a)
		_ = cuarray.Must(f.New(256)) // likely on a's recycled buffer; dropped
	}
	st := waitFrees(p, 100)
	assert.Equal(t, uint64(100), st.Frees, "%v", st)
	for _, a := range held {
		require.True(t, a.Freed())
	}
	runtime.KeepAlive(held)
}
