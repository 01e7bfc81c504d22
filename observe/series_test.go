package observe

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSeriesKeepsEverySampleInOrderUntilFull(t *testing.T) {
	s, err := NewSeries(4)
	require.NoError(t, err)
	for i := range 4 {
		s.Add(int64(i), uint64(10*i), uint64(100*i))
	}
	assert.Equal(t, []Sample{{0, 0, 0}, {1, 10, 100}, {2, 20, 200}, {3, 30, 300}}, s.Samples())
	assert.Equal(t, 1, s.Stride())
	assert.Equal(t, uint64(4), s.Added())
}

func TestSeriesDownsamplesByMergingPairsKeepingMaxima(t *testing.T) {
	s, err := NewSeries(4)
	require.NoError(t, err)
	// Peaks on odd and even positions, so a merge that kept either
	// neighbour instead of the maximum would lose one.
	lives := []uint64{5, 1, 2, 9, 3, 3, 7, 0}
	for i, l := range lives {
		s.Add(int64(i), l, 100-l)
	}
	assert.Equal(t, 2, s.Stride(), "full once: each sample now stands for two")
	assert.Equal(t, []Sample{{0, 5, 99}, {2, 9, 98}, {4, 3, 97}, {6, 7, 100}}, s.Samples())

	// One more: it waits in a bucket, shown, until its pair comes; the
	// series is full, so completing it merges again.
	s.Add(8, 4, 0)
	assert.Equal(t, []Sample{{0, 5, 99}, {2, 9, 98}, {4, 3, 97}, {6, 7, 100}, {8, 4, 0}}, s.Samples())
	s.Add(9, 6, 0)
	assert.Equal(t, 4, s.Stride())
	assert.Equal(t, []Sample{{0, 9, 99}, {4, 7, 100}, {8, 6, 0}}, s.Samples(),
		"the pending pair is half of a new bucket of four")
	s.Add(10, 1, 1)
	s.Add(11, 8, 2)
	assert.Equal(t, []Sample{{0, 9, 99}, {4, 7, 100}, {8, 8, 2}}, s.Samples())
}

func TestSeriesCapacity(t *testing.T) {
	for _, tc := range []struct {
		asked, got int
		err        string
	}{
		{0, DefaultCapacity, ""},
		{2, 2, ""},
		{7, 8, ""},
		{1, 0, "capacity 1: need at least 2 samples, or 0 for the default 4096"},
		{-5, 0, "capacity -5"},
	} {
		s, err := NewSeries(tc.asked)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, tc.got, s.Capacity(), "asked %d", tc.asked)
	}
}

// checkSeries holds the invariants of a Series fed xs (increasing) and
// lives: bounded, ordered, starting at the first x, keeping the peak.
func checkSeries(t *testing.T, capacity int, lives []uint64) {
	t.Helper()
	s, err := NewSeries(capacity)
	require.NoError(t, err)
	var peak uint64
	for i, l := range lives {
		s.Add(int64(i), l, l/2)
		peak = max(peak, l)
	}
	got := s.Samples()
	require.LessOrEqual(t, len(got), s.Capacity()+1, "fixed memory: capacity plus the bucket being filled")
	if len(lives) == 0 {
		require.Empty(t, got)
		return
	}
	assert.Equal(t, int64(0), got[0].X, "the start of the run is never dropped")
	var gotPeak uint64
	for i, smp := range got {
		gotPeak = max(gotPeak, smp.Live)
		assert.Equal(t, smp.X%int64(s.Stride()), int64(0), "sample %d starts a bucket of %d", i, s.Stride())
		if i > 0 {
			assert.Greater(t, smp.X, got[i-1].X, "sample %d in order", i)
		}
	}
	assert.Equal(t, peak, gotPeak, "downsampling keeps the peak")
	if len(lives) <= s.Capacity() {
		assert.Len(t, got, len(lives), "nothing merged before the series is full")
	} else {
		assert.GreaterOrEqual(t, len(got), s.Capacity()/2, "merging halves, never more")
	}
}

func TestSeriesInvariants(t *testing.T) {
	for _, tc := range []struct {
		capacity, n int
	}{{2, 0}, {2, 1}, {2, 3}, {2, 1000}, {4, 4}, {4, 5}, {6, 100}, {16, 1 << 12}, {DefaultCapacity, 100_000}} {
		lives := make([]uint64, tc.n)
		for i := range lives {
			lives[i] = uint64((i * 7919) % 1013)
		}
		checkSeries(t, tc.capacity, lives)
	}
}

func FuzzSeriesKeepsPeakInBoundedOrderedSamples(f *testing.F) {
	f.Add(uint8(2), []byte{1, 2, 3})
	f.Add(uint8(5), []byte{9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8})
	f.Fuzz(func(t *testing.T, capacity uint8, data []byte) {
		if capacity < minCapacity {
			return
		}
		lives := make([]uint64, len(data))
		for i, b := range data {
			lives[i] = uint64(b)
		}
		checkSeries(t, int(capacity), lives)
	})
}
