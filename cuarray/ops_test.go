package cuarray_test

import (
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/internal/testsupport/testhook"
	"github.com/gocuda/gocuda/kernels"
)

func TestElementwiseFloat(t *testing.T) {
	const n = 1000
	xs := make([]float64, n)
	ys := make([]float64, n)
	for i := range xs {
		xs[i] = float64(i)/100 - 3
		ys[i] = float64(i%7) + 1
	}
	x := cuarray.Must(cuarray.FromSlice(xs))
	y := cuarray.Must(cuarray.FromSlice(ys))
	dst := cuarray.Must(cuarray.New[float64](n))
	cases := []struct {
		name string
		op   func() error
		want func(x, y float64) float64
		tol  float64
	}{
		{"Add", func() error { return errOf(cuarray.Add(dst, x, y)) }, func(x, y float64) float64 { return x + y }, 0},
		{"Sub", func() error { return errOf(cuarray.Sub(dst, x, y)) }, func(x, y float64) float64 { return x - y }, 0},
		{"Mul", func() error { return errOf(cuarray.Mul(dst, x, y)) }, func(x, y float64) float64 { return x * y }, 0},
		{"Div", func() error { return errOf(cuarray.Div(dst, x, y)) }, func(x, y float64) float64 { return x / y }, 0},
		{"AddScalar", func() error { return errOf(cuarray.AddScalar(dst, x, 2.5)) }, func(x, _ float64) float64 { return x + 2.5 }, 0},
		{"SubScalar", func() error { return errOf(cuarray.SubScalar(dst, x, 2.5)) }, func(x, _ float64) float64 { return x - 2.5 }, 0},
		{"MulScalar", func() error { return errOf(cuarray.MulScalar(dst, x, 2.5)) }, func(x, _ float64) float64 { return x * 2.5 }, 0},
		{"DivScalar", func() error { return errOf(cuarray.DivScalar(dst, x, 2.5)) }, func(x, _ float64) float64 { return x / 2.5 }, 0},
		{"Exp", func() error { return errOf(cuarray.Exp(dst, x)) }, func(x, _ float64) float64 { return math.Exp(x) }, 4e-16},
		{"Log", func() error { return errOf(cuarray.Log(dst, y)) }, func(_, y float64) float64 { return math.Log(y) }, 4e-16},
		{"Tanh", func() error { return errOf(cuarray.Tanh(dst, x)) }, func(x, _ float64) float64 { return math.Tanh(x) }, 4e-16},
		{"Relu", func() error { return errOf(cuarray.Relu(dst, x)) }, func(x, _ float64) float64 { return max(x, 0) }, 0},
		{"Copy", func() error { return cuarray.Copy(dst, x) }, func(x, _ float64) float64 { return x }, 0},
		{"Fill", func() error { return cuarray.Fill(dst, -4) }, func(_, _ float64) float64 { return -4 }, 0},
		{"Axpy", func() error {
			if err := cuarray.Copy(dst, y); err != nil {
				return err
			}
			return errOf(cuarray.Axpy(dst, 3, x, dst))
			// The GPU fuses 3*x+y into one FMA (one rounding), Go rounds
			// twice; when the terms cancel the two differ by an ulp of the
			// terms (|3x| up to ~6 here), not of the result.
		}, func(x, y float64) float64 { return 3*x + y }, 4e-15},
		{"Scale", func() error {
			if err := cuarray.Copy(dst, x); err != nil {
				return err
			}
			return errOf(cuarray.Scale(dst, -2, dst))
		}, func(x, _ float64) float64 { return -2 * x }, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.NoError(t, cuarray.Fill(dst, math.NaN()))
			require.NoError(t, c.op())
			got := read(t, dst)
			for i := range got {
				want := c.want(xs[i], ys[i])
				require.InDelta(t, want, got[i], c.tol*math.Max(1, math.Abs(want)), "element %d", i)
			}
		})
	}
}

func TestElementwiseInt32(t *testing.T) {
	a := cuarray.Must(cuarray.FromSlice([]int32{7, -7, math.MaxInt32, 0}))
	b := cuarray.Must(cuarray.FromSlice([]int32{2, 2, 1, 5}))
	d := cuarray.Must(cuarray.New[int32](4))
	require.NoError(t, errOf(cuarray.Add(d, a, b)))
	assert.Equal(t, []int32{9, -5, math.MinInt32, 5}, read(t, d))
	require.NoError(t, errOf(cuarray.Div(d, a, b)))
	assert.Equal(t, []int32{3, -3, math.MaxInt32, 0}, read(t, d))
	require.NoError(t, errOf(cuarray.Mul(d, a, b)))
	assert.Equal(t, []int32{14, -14, math.MaxInt32, 0}, read(t, d))
}

func TestReductions(t *testing.T) {
	xs := []float32{3, -1, 4, 1, -5, 9, 2, 6}
	x := cuarray.Must(cuarray.FromSlice(xs, 2, 4))
	y := cuarray.Must(cuarray.Ones[float32](8))
	sum, err := cuarray.Sum(x)
	require.NoError(t, err)
	assert.Equal(t, float32(19), sum)
	mx, err := cuarray.Max(x)
	require.NoError(t, err)
	assert.Equal(t, float32(9), mx)
	mn, err := cuarray.Min(x)
	require.NoError(t, err)
	assert.Equal(t, float32(-5), mn)
	dot, err := cuarray.Dot(x, y)
	require.NoError(t, err)
	assert.Equal(t, float32(19), dot)

	// A reduction right after the writes that made its input.
	z := cuarray.Must(cuarray.Full[int64](3, 1<<16))
	require.NoError(t, errOf(cuarray.AddScalar(z, z, 1)))
	zs, err := cuarray.Sum(z)
	require.NoError(t, err)
	assert.Equal(t, int64(4<<16), zs)

	c := cuarray.Must(cuarray.FromSlice([]complex64{1 + 2i, 3 - 1i}))
	cs, err := cuarray.Sum(c)
	require.NoError(t, err)
	assert.Equal(t, complex64(4+1i), cs)

	_, err = cuarray.Max(cuarray.Must(cuarray.New[float32](0)))
	assert.ErrorIs(t, err, kernels.ErrEmpty)
}

func TestOpErrors(t *testing.T) {
	a := cuarray.Must(cuarray.Zeros[float32](6))
	b := cuarray.Must(cuarray.Zeros[float32](2, 3))
	c := cuarray.Must(cuarray.Zeros[float32](5))
	i := cuarray.Must(cuarray.Zeros[int32](4))
	v1 := cuarray.Must(a.View(0, 4))
	v2 := cuarray.Must(a.View(1, 4))
	cases := []struct {
		name   string
		err    func() error
		target error
		want   []string
	}{
		{"Add shapes", func() error { return errOf(cuarray.Add(a, b, c)) }, cuarray.ErrShape,
			[]string{"Add: a float32[2 3] and b float32[5] do not broadcast", "equal or one of them 1"}},
		{"Add equal lengths, other shapes", func() error { return errOf(cuarray.Add(a, a, b)) }, cuarray.ErrShape,
			[]string{"Add: a float32[6] and b float32[2 3] do not broadcast"}},
		{"Add dst shape", func() error { return errOf(cuarray.Add(a, b, b)) }, cuarray.ErrShape,
			[]string{"Add: dst float32[6] does not have the shape [2 3]", "Reshape"}},
		{"Axpy lengths", func() error { return errOf(cuarray.Axpy(a, 1, c, a)) }, cuarray.ErrShape, []string{"Axpy", "x float32[5]"}},
		{"Axpy dst is x", func() error { return errOf(cuarray.Axpy(a, 1, a, cuarray.Must(cuarray.Zeros[float32](6)))) }, cuarray.ErrShape,
			[]string{"Axpy: dst float32[6] shares memory with x", "dst must be y itself or apart from both"}},
		{"Axpy dst shape", func() error { return errOf(cuarray.Axpy(b, 1, a, a)) }, cuarray.ErrShape, []string{"float32[2 3]", "float32[6]", "differ in shape"}},
		{"Scale dst shape", func() error { return errOf(cuarray.Scale(b, 2, a)) }, cuarray.ErrShape, []string{"float32[2 3]", "float32[6]", "differ in shape"}},
		{"Exp dst shape", func() error { return errOf(cuarray.Exp(a, b)) }, cuarray.ErrShape,
			[]string{"Exp: dst float32[6] and x float32[2 3] differ in shape"}},
		{"Dot lengths", func() error { _, err := cuarray.Dot(a, c); return err }, cuarray.ErrShape, []string{"Dot"}},
		{"Copy shape", func() error { return cuarray.Copy(a, b) }, cuarray.ErrShape, []string{"float32[6]", "float32[2 3]", "differ in shape"}},
		{"Exp int32", func() error { return errOf(cuarray.Exp(i, i)) }, kernels.ErrUnsupportedDType, []string{"Exp", "float32, float64"}},
		{"overlap", func() error { return errOf(cuarray.Add(v2, v1, v1)) }, cuarray.ErrShape, []string{"overlap"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.err()
			require.Error(t, err)
			assert.ErrorIs(t, err, c.target)
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
	// In place, and in place with a broadcast operand, are fine.
	require.NoError(t, errOf(cuarray.Add(v1, v1, v1)))
	require.NoError(t, errOf(cuarray.Add(b, b, cuarray.Must(cuarray.Zeros[float32](3)))))
}

// TestCrossStream writes an array on stream A behind slow work and uses it
// on stream B with no synchronization written by the test.
func TestCrossStream(t *testing.T) {
	p := freshPool(t)
	sa, sb := newStream(t, p), newStream(t, p)
	fa, fb := cuarray.On[float32](sa), cuarray.On[float32](sb)
	const n = 1 << 16
	x := cuarray.Must(fa.New(n))
	require.NoError(t, testhook.Spin(p.Device(), sa.Backend(), 200*time.Millisecond))
	require.NoError(t, fa.Fill(x, 3))

	y := cuarray.Must(fb.Zeros(n))
	require.NoError(t, errOf(fb.Add(y, x, x))) // B waits for A's fill on the device
	sum, err := fb.Sum(y)
	require.NoError(t, err)
	assert.Equal(t, float32(6*n), sum)
	assert.Equal(t, filled[float32](n, 6), read(t, y))

	// And back: A overwrites x after B's slow read of it (write after read).
	require.NoError(t, testhook.Spin(p.Device(), sb.Backend(), 100*time.Millisecond))
	require.NoError(t, fb.Copy(y, x))
	require.NoError(t, fa.Fill(x, -1))
	assert.Equal(t, filled[float32](n, 3), read(t, y))
	assert.Equal(t, filled[float32](n, -1), read(t, x))
}

// TestFreeWhileQueued frees an array whose writes are still queued; the
// block's reuse on another stream must come after them.
func TestFreeWhileQueued(t *testing.T) {
	p := freshPool(t)
	sa, sb := newStream(t, p), newStream(t, p)
	fa, fb := cuarray.On[float32](sa), cuarray.On[float32](sb)
	const n = 1 << 16
	for range 3 {
		x := cuarray.Must(fa.New(n))
		require.NoError(t, testhook.Spin(p.Device(), sa.Backend(), 50*time.Millisecond))
		require.NoError(t, fa.Fill(x, 1))
		x.UnsafeFree()
		z := cuarray.Must(fb.New(n)) // likely x's block
		require.NoError(t, fb.Fill(z, 2))
		assert.Equal(t, filled[float32](n, 2), read(t, z))
		z.UnsafeFree()
	}
	assert.Equal(t, uint64(6), p.Stats().Frees)
}

func TestHostReadAfterLongKernel(t *testing.T) {
	p := freshPool(t)
	s := newStream(t, p)
	f := cuarray.On[float64](s)
	x := cuarray.Must(f.Zeros(1000))
	require.NoError(t, testhook.Spin(p.Device(), s.Backend(), 200*time.Millisecond))
	require.NoError(t, f.Fill(x, 2.5))
	require.NoError(t, errOf(f.Exp(x, x)))
	assert.Equal(t, filled(1000, float64(float32(math.Exp(2.5)))), toF32(read(t, x)))
}

func toF32(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(float32(x))
	}
	return out
}

// TestGoroutinesOwnStreams runs 8 goroutines, each on its own stream,
// sharing one read-only input made on the default stream.
func TestGoroutinesOwnStreams(t *testing.T) {
	const workers, iters, n = 8, 20, 4096
	w := cuarray.Must(cuarray.FromSlice(iota[float32](n)))
	wsum := float32(0)
	for _, v := range iota[float32](n) {
		wsum += v
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- func() error {
				s, err := cuarray.NewStream(0)
				if err != nil {
					return err
				}
				f := cuarray.On[float32](s)
				for it := range iters {
					k := float32(g*iters + it)
					x, err := f.Full(k, n)
					if err != nil {
						return err
					}
					if _, err := f.Add(x, x, w); err != nil { // x = k + w
						return err
					}
					if it%4 == 0 {
						if err := testhook.Spin(s.Device(), s.Backend(), time.Millisecond); err != nil {
							return err
						}
					}
					if _, err := f.MulScalar(x, x, 2); err != nil { // 2k + 2w
						return err
					}
					got, err := x.ToSlice()
					if err != nil {
						return err
					}
					for i, v := range got {
						if want := 2*k + 2*float32(i%100); v != want {
							return fmt.Errorf("goroutine %d iteration %d: x[%d] = %v, want %v", g, it, i, v, want)
						}
					}
					sum, err := f.Sum(w)
					if err != nil {
						return err
					}
					if sum != wsum {
						return fmt.Errorf("goroutine %d: sum(w) = %v, want %v", g, sum, wsum)
					}
					x.UnsafeFree()
				}
				return nil
			}()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
}
