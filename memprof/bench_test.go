package memprof_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/memprof"
	"github.com/gocuda/gocuda/pool"
)

// BenchmarkCachedPair times a cached allocate+free pair of the default
// pool bare, wrapped with tracing off, with tracing on, and inside an
// Allocated call, in one run so that the ratios compare like with like.
// docs/observability.md holds the figures.
func BenchmarkCachedPair(b *testing.B) {
	dev, err := gocuda.Device(0)
	require.NoError(b, err)
	s, err := dev.NewStream()
	require.NoError(b, err)
	defer s.Destroy()
	const size = 64 << 10
	pair := func(b *testing.B, p pool.Pool) {
		warm, err := p.Alloc(size, s)
		require.NoError(b, err)
		require.NoError(b, p.Free(warm, s))
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			blk, err := p.Alloc(size, s)
			if err != nil {
				b.Fatal(err)
			}
			if err := p.Free(blk, s); err != nil {
				b.Fatal(err)
			}
		}
	}
	fresh := func(b *testing.B) pool.Pool {
		p, err := pool.New("split", dev, pool.Limits{})
		require.NoError(b, err)
		b.Cleanup(func() { _ = p.Close() })
		return p
	}
	wrapped := func(b *testing.B) pool.Pool {
		w := memprof.Wrap(fresh(b))
		b.Cleanup(func() { _ = w.Close() })
		return w
	}
	memprof.Disable()
	b.Run("bare", func(b *testing.B) { pair(b, fresh(b)) })
	b.Run("wrapped-tracing-off", func(b *testing.B) { pair(b, wrapped(b)) })
	b.Run("wrapped-tracing-on", func(b *testing.B) {
		memprof.Enable()
		defer memprof.Disable()
		pair(b, wrapped(b))
	})
	b.Run("wrapped-in-Allocated", func(b *testing.B) {
		p := wrapped(b)
		memprof.Allocated(func() { pair(b, p) })
	})
}
