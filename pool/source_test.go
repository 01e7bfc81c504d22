package pool_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/pool"
	"github.com/gocuda/gocuda/pool/pooltest"
)

const miB = 1 << 20

// A driver call that Take makes and the driver refuses leaves Reserved,
// its peak and the room under the hard limit as they were; one that
// succeeds counts in all three.
func TestTakeCountsOnlyWhatTheDriverGave(t *testing.T) {
	refused := fmt.Errorf("the driver says no: %w", backend.ErrOutOfMemory)
	for _, tc := range []struct {
		name     string
		hard     uint64
		size     uint64
		driver   error
		wantErr  error
		reserved uint64 // after, from 8 MiB before
	}{
		{"DriverGives", 64 * miB, 16 * miB, nil, nil, 24 * miB},
		{"DriverRefuses", 64 * miB, 16 * miB, refused, backend.ErrOutOfMemory, 8 * miB},
		{"DriverRefusesWithoutLimit", 0, 16 * miB, refused, backend.ErrOutOfMemory, 8 * miB},
		{"DriverFailsOtherwise", 0, 16 * miB, backend.ErrInvalidValue, backend.ErrInvalidValue, 8 * miB},
		{"BeyondHardLimit", 64 * miB, 57 * miB, nil, backend.ErrOutOfMemory, 8 * miB},
		{"BeyondDeviceTotal", 0, 1 << 62, nil, backend.ErrOutOfMemory, 8 * miB},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, err := pool.NewSource(pooltest.Device(t), pool.Limits{Hard: tc.hard})
			require.NoError(t, err)
			require.NoError(t, src.Take(8*miB, func() error { return nil }))
			called := false
			err = src.Take(tc.size, func() error { called = true; return tc.driver })
			if tc.wantErr == nil {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, tc.wantErr)
			}
			var st pool.Stats
			src.Fill(&st)
			assert.Equal(t, tc.reserved, st.Reserved, "Reserved")
			assert.Equal(t, tc.reserved, st.ReservedPeak, "ReservedPeak counts only what the driver gave")
			if errors.Is(tc.wantErr, backend.ErrOutOfMemory) && tc.driver == nil {
				assert.False(t, called, "the driver was asked for what cannot fit")
			}
			if tc.hard > 0 {
				// The room under the limit is what Reserved says: a
				// refused charge was given back.
				room := tc.hard - tc.reserved
				require.NoError(t, src.Take(room, func() error { return nil }), "the whole room left under the limit")
				require.ErrorIs(t, src.Take(1, func() error { return nil }), backend.ErrOutOfMemory, "a byte past the limit")
			}
		})
	}
}

// Concurrent Takes never pass the hard limit together, counting the bytes
// of driver calls still under way.
func TestConcurrentTakesStayUnderTheHardLimit(t *testing.T) {
	const hard, size, goroutines = 64 * miB, 3 * miB, 16
	src, err := pool.NewSource(pooltest.Device(t), pool.Limits{Hard: hard})
	require.NoError(t, err)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var ok uint64
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 8 {
				if src.Take(size, func() error { return nil }) == nil {
					mu.Lock()
					ok++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, uint64(hard/size), ok, "as many takes as fit, no more")
	assert.Equal(t, ok*size, src.Reserved())
}
