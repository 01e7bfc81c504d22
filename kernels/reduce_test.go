package kernels_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/kernels"
)

// exactSum is a float64 sum compensated (Neumaier) so that it is a reference
// for both backends' orders of summation, with the sum of magnitudes that
// bounds their rounding.
func exactSum(vals func(yield func(float64) bool)) (sum, abs float64) {
	var c float64
	for v := range vals {
		t := sum + v
		if math.Abs(sum) >= math.Abs(v) {
			c += (sum - t) + v
		} else {
			c += (v - t) + sum
		}
		sum = t
		abs += math.Abs(v)
	}
	return sum + c, abs
}

func floatsOf[T kernels.Elem](x []T, part func(T) float64) func(func(float64) bool) {
	return func(yield func(float64) bool) {
		for _, v := range x {
			if !yield(part(v)) {
				return
			}
		}
	}
}

func realPart[T kernels.Elem](v T) float64 {
	switch x := any(v).(type) {
	case float32:
		return float64(x)
	case float64:
		return x
	case complex64:
		return float64(real(x))
	}
	return 0
}

func imagPart[T kernels.Elem](v T) float64 {
	if x, ok := any(v).(complex64); ok {
		return float64(imag(x))
	}
	return 0
}

// sumClose: float64 accumulation in any order is within 1e-12 of the
// magnitudes' sum (for a million terms), and float32 results add one
// rounding of the result.
func sumClose(t *testing.T, got, want, abs float64, is32 bool) {
	t.Helper()
	tol := 1e-12 * abs
	if is32 {
		tol += 2e-7 * math.Abs(want)
	}
	if math.Abs(got-want) > tol {
		t.Fatalf("got %v, want %v (±%g)", got, want, tol)
	}
}

func TestSum(t *testing.T) {
	e := newEnv(t)
	runTyped(t, allTypes(
		func(t *testing.T) { testSum[float32](t, e) }, func(t *testing.T) { testSum[float64](t, e) },
		func(t *testing.T) { testSum[int32](t, e) }, func(t *testing.T) { testSum[int64](t, e) },
		func(t *testing.T) { testSum[uint8](t, e) }, func(t *testing.T) { testSum[complex64](t, e) },
		func(t *testing.T) { testSum[int8](t, e) }, func(t *testing.T) { testSum[int16](t, e) }, func(t *testing.T) { testSum[uint32](t, e) }))
}

func testSum[T number](t *testing.T, e *env) {
	dt := kernels.DTypeOf[T]()
	for _, n := range testSizes() {
		for _, off := range []bool{false, true} {
			t.Run(fmt.Sprintf("n=%d/offset=%v", n, off), func(t *testing.T) {
				x := gen[T](e.r, n, small)
				dx := upload(t, e, x, off)
				got, err := kernels.Sum[T](e.dev, e.s, dx.p, n)
				require.NoError(t, err)
				switch dt {
				case kernels.Float32, kernels.Float64, kernels.Complex64:
					is32 := dt != kernels.Float64
					re, reAbs := exactSum(floatsOf(x, realPart[T]))
					sumClose(t, realPart(got), re, reAbs, is32)
					im, imAbs := exactSum(floatsOf(x, imagPart[T]))
					sumClose(t, imagPart(got), im, imAbs, is32)
				default:
					var want int64
					var wantT T
					for _, v := range x {
						want += toInt64(v)
						wantT += v // Go's wrapping sum in T
					}
					require.Equal(t, wantT, got)
					wide, err := kernels.SumInt64[T](e.dev, e.s, dx.p, n)
					require.NoError(t, err)
					require.Equal(t, want, wide)
				}
				// Deterministic: the same call gives the same bits.
				again, err := kernels.Sum[T](e.dev, e.s, dx.p, n)
				require.NoError(t, err)
				require.Equal(t, got, again)
			})
		}
	}
	t.Run("empty", func(t *testing.T) {
		got, err := kernels.Sum[T](e.dev, e.s, 0, 0)
		require.NoError(t, err)
		require.Zero(t, got)
	})
}

func toInt64[T kernels.Elem](v T) int64 {
	switch x := any(v).(type) {
	case int32:
		return int64(x)
	case int64:
		return x
	case uint8:
		return int64(x)
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case uint32:
		return int64(x)
	}
	return 0
}

func TestSumUint8DoesNotWrapInInt64(t *testing.T) {
	e := newEnv(t)
	n := 100_003
	x := make([]uint8, n)
	for i := range x {
		x[i] = 255
	}
	dx := upload(t, e, x, false)
	wide, err := kernels.SumInt64[uint8](e.dev, e.s, dx.p, n)
	require.NoError(t, err)
	require.Equal(t, int64(255*n), wide)
	narrow, err := kernels.Sum[uint8](e.dev, e.s, dx.p, n)
	require.NoError(t, err)
	require.Equal(t, uint8(255*n%256), narrow)
}

func TestMaxMin(t *testing.T) {
	e := newEnv(t)
	runTyped(t, []typed{
		{"float32", func(t *testing.T) { testMaxMin[float32](t, e) }},
		{"float64", func(t *testing.T) { testMaxMin[float64](t, e) }},
		{"int32", func(t *testing.T) { testMaxMin[int32](t, e) }},
		{"int64", func(t *testing.T) { testMaxMin[int64](t, e) }},
		{"uint8", func(t *testing.T) { testMaxMin[uint8](t, e) }},
	})
}

type realT interface {
	float32 | float64 | int32 | int64 | uint8
}

func testMaxMin[T realT](t *testing.T, e *env) {
	for _, n := range testSizes() {
		for _, off := range []bool{false, true} {
			t.Run(fmt.Sprintf("n=%d/offset=%v", n, off), func(t *testing.T) {
				x := gen[T](e.r, n, general)
				// Put the extremes at the last element sometimes, in the tail.
				if n > 2 {
					x[n-1] = x[0] + 1
				}
				dx := upload(t, e, x, off)
				wantMax, wantMin := x[0], x[0]
				for _, v := range x {
					wantMax, wantMin = max(wantMax, v), min(wantMin, v)
				}
				got, err := kernels.Max[T](e.dev, e.s, dx.p, n)
				require.NoError(t, err)
				require.Equal(t, wantMax, got)
				got, err = kernels.Min[T](e.dev, e.s, dx.p, n)
				require.NoError(t, err)
				require.Equal(t, wantMin, got)
			})
		}
	}
	t.Run("empty", func(t *testing.T) {
		_, err := kernels.Max[T](e.dev, e.s, 0, 0)
		require.ErrorIs(t, err, kernels.ErrEmpty)
		_, err = kernels.Min[T](e.dev, e.s, 0, 0)
		require.ErrorIs(t, err, kernels.ErrEmpty)
	})
}

func TestMaxMinNaN(t *testing.T) {
	e := newEnv(t)
	for _, n := range []int{5, 1 << 20} {
		for _, at := range []int{0, n / 2, n - 1} {
			x := gen[float32](e.r, n, general)
			x[at] = float32(math.NaN())
			dx := upload(t, e, x, false)
			got, err := kernels.Max[float32](e.dev, e.s, dx.p, n)
			require.NoError(t, err)
			assert.True(t, math.IsNaN(float64(got)), "Max with a NaN at %d of %d: %v", at, n, got)
			got, err = kernels.Min[float32](e.dev, e.s, dx.p, n)
			require.NoError(t, err)
			assert.True(t, math.IsNaN(float64(got)), "Min with a NaN at %d of %d: %v", at, n, got)
		}
	}
	x := []float64{math.Inf(-1), math.Inf(-1)}
	dx := upload(t, e, x, false)
	got, err := kernels.Max[float64](e.dev, e.s, dx.p, 2)
	require.NoError(t, err)
	require.Equal(t, math.Inf(-1), got)
}

func TestDot(t *testing.T) {
	e := newEnv(t)
	runTyped(t, []typed{
		{"float32", func(t *testing.T) { testDot[float32](t, e) }},
		{"float64", func(t *testing.T) { testDot[float64](t, e) }},
	})
}

func testDot[T floatT](t *testing.T, e *env) {
	for _, n := range testSizes() {
		for _, l := range layouts[:2] {
			t.Run(fmt.Sprintf("n=%d/%s", n, l.name), func(t *testing.T) {
				x, y := gen[T](e.r, n, small), gen[T](e.r, n, small)
				dx, dy := upload(t, e, x, false), upload(t, e, y, l.inOff)
				got, err := kernels.Dot[T](e.dev, e.s, dx.p, dy.p, n)
				require.NoError(t, err)
				want, abs := exactSum(func(yield func(float64) bool) {
					for i := range x {
						if !yield(float64(x[i]) * float64(y[i])) {
							return
						}
					}
				})
				sumClose(t, float64(got), want, abs, kernels.DTypeOf[T]() == kernels.Float32)
			})
		}
	}
	got, err := kernels.Dot[T](e.dev, e.s, 0, 0, 0)
	require.NoError(t, err)
	require.Zero(t, got)
}

func TestRows(t *testing.T) {
	e := newEnv(t)
	runTyped(t, []typed{
		{"float32", func(t *testing.T) { testRows[float32](t, e) }},
		{"float64", func(t *testing.T) { testRows[float64](t, e) }},
	})
}

func testRows[T floatT](t *testing.T, e *env) {
	shapes := [][2]int{{1, 1}, {3, 10}, {64, 10}, {1000, 33}, {7, 4099}, {5000, 1}}
	for _, sh := range shapes {
		rows, cols := sh[0], sh[1]
		t.Run(fmt.Sprintf("%dx%d", rows, cols), func(t *testing.T) {
			x := gen[T](e.r, rows*cols, small)
			dx := upload(t, e, x, true)
			sums, maxes := alloc[T](t, e, rows, false), alloc[T](t, e, rows, true)
			require.NoError(t, kernels.SumRows[T](e.dev, e.s, sums.p, dx.p, rows, cols))
			require.NoError(t, kernels.MaxRows[T](e.dev, e.s, maxes.p, dx.p, rows, cols))
			gotSums, gotMaxes := sums.read(t), maxes.read(t)
			is32 := kernels.DTypeOf[T]() == kernels.Float32
			for r := range rows {
				row := x[r*cols : (r+1)*cols]
				want, abs := exactSum(floatsOf(row, realPart[T]))
				sumClose(t, float64(gotSums[r]), want, abs, is32)
				m := row[0]
				for _, v := range row {
					m = max(m, v)
				}
				require.Equal(t, m, gotMaxes[r], "row %d", r)
			}
		})
	}
	t.Run("no-columns", func(t *testing.T) {
		sums := alloc[T](t, e, 4, false)
		require.NoError(t, kernels.SumRows[T](e.dev, e.s, sums.p, 0, 4, 0))
		require.Equal(t, []T{0, 0, 0, 0}, sums.read(t))
		err := kernels.MaxRows[T](e.dev, e.s, sums.p, 0, 4, 0)
		require.True(t, errors.Is(err, kernels.ErrEmpty), "%v", err)
		require.NoError(t, kernels.MaxRows[T](e.dev, e.s, 0, 0, 0, 5))
	})
}
