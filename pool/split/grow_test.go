package split

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/pool"
	"github.com/gocuda/gocuda/pool/pooltest"
)

const miB = 1 << 20

// Growth past the high-water mark moves cached memory (a hole no request
// fits) to where the request needs it, instead of reserving more.
func TestGrowthMovesCachedMemoryInsteadOfReservingMore(t *testing.T) {
	noMoving := defaultConfig
	noMoving.trim = false
	for _, tc := range []struct {
		name     string
		cfg      config
		reserved uint64
		moved    uint64
	}{
		// Live 64+64+128 MiB, slack 16 MiB: 272 MiB allowed; the hole's
		// two 32 MiB chunks move, 64 MiB more is mapped.
		{"moving", defaultConfig, 256 * miB, 64 * miB},
		{"not moving", noMoving, 320 * miB, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dev := pooltest.Device(t)
			src, err := pool.NewSource(dev, pool.Limits{})
			require.NoError(t, err)
			p, err := newPool(dev, src, tc.cfg)
			require.NoError(t, err)
			s := pooltest.NewStream(t, dev)
			alloc := func(size uint64) *pool.Block {
				b, err := p.Alloc(size, s)
				require.NoError(t, err)
				return b
			}
			a, hole, c := alloc(64*miB), alloc(64*miB), alloc(64*miB)
			require.NoError(t, p.Free(hole, s))
			require.Equal(t, uint64(192*miB), src.Reserved())

			d := alloc(128 * miB)
			assert.Equal(t, tc.reserved, src.Reserved())
			assert.Equal(t, tc.moved, p.moved.Load()*p.gran)
			// The moved memory holds data like any other.
			want := bytes.Repeat([]byte{0xD}, miB)
			for _, off := range []uint64{0, 127 * miB} {
				pooltest.Write(t, dev, d.Ptr+backend.Ptr(off), want, s)
				assert.True(t, bytes.Equal(want, pooltest.Read(t, dev, d.Ptr+backend.Ptr(off), miB, s)))
			}
			for _, b := range []*pool.Block{a, c, d} {
				require.NoError(t, p.Free(b, s))
			}
			require.NoError(t, p.Close())
			assert.Zero(t, src.Reserved())
			st := p.Stats()
			assert.Equal(t, st.DriverAllocs, st.DriverFrees, "every chunk created was released")
		})
	}
}
