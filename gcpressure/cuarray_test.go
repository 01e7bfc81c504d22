package gcpressure_test

import (
	"strconv"
	"testing"

	"github.com/dustin/go-humanize"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/gcpressure"
	"github.com/gocuda/gocuda/pool"
)

// The same loops as pool_test.go's, with arrays as a user writes them:
// fresh arrays every step, never UnsafeFree, the collector frees them.

func TestArraysMadeFarBeyondTheLimitNeedNoFree(t *testing.T) {
	const limit = 64 * mib
	const n = 256 << 10 // float32s: 1 MiB an array
	steps := 16 * limit / (2 * 4 * n)
	if testing.Short() {
		steps /= 4
	}
	for _, early := range []bool{true, false} {
		t.Run("early="+strconv.FormatBool(early), func(t *testing.T) {
			p := newPool(t, "split", limit, gcpressure.Options{Early: early})
			s, err := cuarray.NewStreamPool(p)
			require.NoError(t, err)
			ops := cuarray.On[float32](s)
			acc := cuarray.Must(ops.Zeros(n))
			for i := range steps {
				// Two arrays of garbage a step, as y = x + 1 makes.
				x, err := ops.Full(1, n)
				require.NoError(t, err, "step %d, %s made", i, humanize.IBytes(uint64(i*2*4*n)))
				y, err := ops.New(n)
				require.NoError(t, err, "step %d", i)
				_, err = ops.Add(y, x, acc)
				require.NoError(t, err)
				require.NoError(t, ops.Copy(acc, y))
			}
			got, err := acc.ToSlice()
			require.NoError(t, err)
			assert.Equal(t, float32(steps), got[0], "the work itself went wrong")
			assert.Equal(t, float32(steps), got[n-1])
			st := p.PressureStats()
			t.Log(st)
			assert.Zero(t, st.OOMFailures)
			if early {
				// The pacer (its target is the floor, half the limit) or
				// the pressure heuristic, whichever comes first.
				assert.Positive(t, st.PacerCollections+st.EarlyCollections+st.ImminentCollections)
			} else {
				assert.Positive(t, st.OOMRetries, "the loop never reached the limit")
			}
		})
	}
}

func TestLiveArraysBeyondTheLimitFailClearlyAndKeepTheirValues(t *testing.T) {
	const limit = 16 * mib
	const n = 384 << 10 // float32s: 1.5 MiB an array
	p := newPool(t, "split", limit, gcpressure.Options{Early: true, Status: func() string { return "STATUS LINE" }})
	s, err := cuarray.NewStreamPool(p)
	require.NoError(t, err)
	ops := cuarray.On[float32](s)
	var live []*cuarray.Array[float32]
	for i := 0; i < 2*limit/(4*n); i++ {
		a, err := ops.Full(float32(i), n)
		if err != nil {
			assert.ErrorIs(t, err, backend.ErrOutOfMemory)
			var oom *pool.OutOfMemoryError
			require.ErrorAs(t, err, &oom)
			assert.Contains(t, err.Error(), "1.5 MiB (1572864 bytes)")
			assert.Contains(t, err.Error(), "hard limit 16 MiB")
			assert.Contains(t, err.Error(), "STATUS LINE")
			break
		}
		live = append(live, a)
	}
	require.Less(t, len(live), 2*limit/(4*n), "twice the limit fitted")
	require.NotEmpty(t, live)
	for i, a := range live {
		got, err := a.ToSlice()
		require.NoError(t, err)
		assert.Equal(t, float32(i), got[0], "array %d", i)
		assert.Equal(t, float32(i), got[n-1], "array %d", i)
	}
}
