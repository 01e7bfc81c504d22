package cuarray_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/cuarray"
)

// TestSoakShortLivedGoroutines is issue 12's soak: the server pattern,
// 100 000 short-lived goroutines (10 000 with -short) in waves of 2 000,
// 64 at a time, each filling and summing a 16 KiB array on a stream it
// borrows (most), makes and closes, makes and drops, or on the default
// stream, every sum checked. After each wave, once collected:
//
//   - goroutines: at most the count before plus MaxIdleStreams (the
//     host backend runs a goroutine per stream, and the borrowing set keeps
//     that many idle streams);
//   - backend streams made by cuarray: at most the count before plus
//     MaxIdleStreams (driver streams on a GPU);
//   - live bytes: 0; reserved: on split at most (MaxIdleStreams+1) * 4 MiB
//     (what an idle stream's busiest borrower had live at once, arrays
//     awaiting collection included: two of split's smallest segments), on
//     cuda (the driver's pool, which reserves 32 MiB at a time) at most
//     64 MiB, on the other pools at most one wave's blocks (2 000 * 16 KiB).
func TestSoakShortLivedGoroutines(t *testing.T) {
	skipUnderSanitizer(t)
	total := 100_000
	if testing.Short() {
		total = 10_000
	}
	const wave, concurrent = 2000, 64
	p := freshPool(t)
	_, err := cuarray.DefaultStream(0)
	require.NoError(t, err)
	// A stream for each way a request may get one, by request index.
	get := func(i int) (*cuarray.Stream, bool, error) {
		switch i % 8 {
		case 0:
			s, err := cuarray.NewStreamPool(p)
			return s, true, err
		case 1:
			s, err := cuarray.NewStreamPool(p)
			return s, false, err // dropped: its cleanup ends it
		case 2:
			s, err := cuarray.BorrowStreamPool(p)
			return s, false, err // dropped: goes back when collected
		default:
			s, err := cuarray.BorrowStreamPool(p)
			return s, true, err
		}
	}
	settle(t, func() bool { return true })
	baseG, baseS := runtime.NumGoroutine(), cuarray.StreamsMade()
	boundG, boundS := baseG+cuarray.MaxIdleStreams, baseS+cuarray.MaxIdleStreams
	cacheBound := uint64(cuarray.MaxIdleStreams+1) * 4 << 20
	switch p.Name() {
	case "split":
	case "cuda": // the driver's pool reserves 32 MiB at a time
		cacheBound = 2 * 32 << 20
	default:
		cacheBound = wave * 16 << 10
	}
	start := time.Now()
	var maxG int
	var maxS int64
	var maxReserved uint64
	for w := 0; w < total/wave; w++ {
		serve(t, wave, concurrent, func(i int) (*cuarray.Stream, bool, error) { return get(w*wave + i) })
		// Reserved too: a retired stream's segments go back from a
		// goroutine of the pool's (split's giveBackInherited), which a
		// loaded machine may run after the streams are counted (CI at
		// 10:26 saw 156 MiB a moment after the wave).
		settle(t, func() bool {
			st := p.Stats()
			return runtime.NumGoroutine() <= boundG && cuarray.StreamsMade() <= boundS && st.Live == 0 && st.Reserved <= cacheBound
		})
		st := p.Stats()
		g, s := runtime.NumGoroutine(), cuarray.StreamsMade()
		maxG, maxS, maxReserved = max(maxG, g), max(maxS, s), max(maxReserved, st.Reserved)
		require.LessOrEqual(t, g, boundG, "wave %d: goroutines (%d before)", w, baseG)
		require.LessOrEqual(t, s, boundS, "wave %d: streams (%d before)", w, baseS)
		require.Zero(t, st.Live, "wave %d: %v", w, st)
		require.LessOrEqual(t, st.Reserved, cacheBound, "wave %d: %v", w, st)
	}
	assert.Equal(t, uint64(total), p.Stats().Allocs)
	t.Logf("%d requests in %v: at most %d goroutines (base %d), %d streams (base %d), %d bytes reserved after a wave; %v",
		total, time.Since(start).Round(time.Millisecond), maxG, baseG, maxS, baseS, maxReserved, p.Stats())
}
