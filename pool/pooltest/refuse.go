package pooltest

import (
	"errors"
	"testing"

	"github.com/dustin/go-humanize"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/host"
	"github.com/gocuda/gocuda/pool"
)

// granule is the mapping granularity of dev: what a refused request may
// leave behind at most (one partly used granule).
func granule(dev backend.Device) uint64 {
	if vm, ok := dev.(backend.VirtualMemory); ok && dev.Info().VirtualMemory {
		return vm.Granularity()
	}
	return 2 * miB
}

// refusal is one request a pool must refuse, and the state it is made in.
type refusal struct {
	name string
	hard uint64 // hard limit, 0 for none
	// live and cached are the blocks allocated before the request, the
	// cached ones freed again.
	live, cached []uint64
	request      func(dev backend.Device) uint64
	// hopeless: the request cannot fit however much is given back (beyond
	// the hard limit or the device), so it must be refused before any
	// driver call and before the cache is touched.
	hopeless bool
}

func refusals() []refusal {
	const hard = 64 * miB
	fixed := func(n uint64) func(backend.Device) uint64 { return func(backend.Device) uint64 { return n } }
	return []refusal{
		// The case: split kept 34 MiB reserved.
		{name: "BeyondHardLimit", hard: hard, live: []uint64{miB}, cached: []uint64{4 * miB}, request: fixed(80 * miB), hopeless: true},
		{name: "HardLimitPlusOne", hard: hard, live: []uint64{miB}, request: fixed(hard + 1), hopeless: true},
		// Split kept the whole device reserved.
		{name: "BeyondDeviceTotal", live: []uint64{miB}, cached: []uint64{4 * miB},
			request: func(d backend.Device) uint64 { return d.Info().TotalMemory + 64*miB }, hopeless: true},
		// PoolStatus showed a reserved peak of 4.0 EiB.
		{name: "FourExbibytes", live: []uint64{miB}, request: fixed(4 << 60), hopeless: true},
		// Fits under the limit alone, not beside what is live: a pool
		// mapping chunk by chunk gets part way before the limit stops it.
		{name: "BeyondWhatTheHardLimitLeaves", hard: hard, live: []uint64{30 * miB}, request: fixed(40 * miB)},
	}
}

// testRefusals: a refused allocation leaves nothing behind. Reserved bytes
// after it are what they were before (within one granule), the reserved
// peak does not count bytes that were refused, and a request that can
// never fit is refused before the driver is called or the cache touched.
func (s Suite) testRefusals(t *testing.T) {
	for _, tc := range refusals() {
		t.Run(tc.name, func(t *testing.T) {
			e := s.open(t, pool.Limits{Hard: tc.hard})
			st := NewStream(t, e.dev)
			var live []*pool.Block
			for _, n := range tc.live {
				live = append(live, e.alloc(n, st))
			}
			for _, n := range tc.cached {
				e.free(e.alloc(n, st), st)
			}
			req := tc.request(e.dev)
			before := e.p.Stats()

			b, err := e.p.Alloc(req, st)
			require.Error(t, err, "Alloc(%s) with %s live under a hard limit of %s",
				humanize.IBytes(req), humanize.IBytes(before.Live), humanize.IBytes(tc.hard))
			assert.Nil(t, b)
			require.ErrorIs(t, err, backend.ErrOutOfMemory)
			var oom *pool.OutOfMemoryError
			require.True(t, errors.As(err, &oom), "%T is not a *pool.OutOfMemoryError", err)
			assert.Equal(t, req, oom.Request, "the error names the caller's request")

			after := e.p.Stats()
			g := granule(e.dev)
			assert.LessOrEqual(t, after.Reserved, before.Reserved+g,
				"reserved %s before the refusal, %s after", humanize.IBytes(before.Reserved), humanize.IBytes(after.Reserved))
			assert.Equal(t, before.Live, after.Live)
			assert.Equal(t, before.Allocs, after.Allocs, "a refusal is not counted as an allocation")
			if tc.hard > 0 {
				assert.LessOrEqual(t, after.ReservedPeak, tc.hard, "the reserved peak passed the hard limit")
			}
			if tc.hopeless {
				assert.Equal(t, before.Reserved, after.Reserved, "a request that cannot fit changed reserved memory")
				assert.Equal(t, before.ReservedPeak, after.ReservedPeak,
					"the reserved peak counts %s that were refused", humanize.IBytes(after.ReservedPeak-before.ReservedPeak))
				assert.Equal(t, before.DriverAllocs, after.DriverAllocs, "driver allocations for a request that cannot fit")
				assert.Equal(t, before.DriverFrees, after.DriverFrees, "driver frees (reclaiming or undoing) for a request that cannot fit")
			} else {
				assert.LessOrEqual(t, after.ReservedPeak, max(before.ReservedPeak, tc.hard))
			}

			// The pool is still whole: the live blocks free, and a request
			// that fits succeeds.
			for _, b := range live {
				e.free(b, st)
			}
			e.free(e.alloc(miB, st), st)
			e.p.Reclaim(pool.All)
			e.close(s)
		})
	}
}

// BenchRefusal measures how long a pool takes to refuse a request that
// cannot fit: 80 MiB under a 64 MiB hard limit with 1 MiB live, and the
// device's total memory and 64 MiB more with no limit. Both are refused
// before any driver call, so they should cost about what a function call
// and an error do.
func BenchRefusal(b *testing.B, mk pool.Factory) {
	for _, tc := range refusals() {
		if tc.name != "BeyondHardLimit" && tc.name != "BeyondDeviceTotal" {
			continue
		}
		b.Run(tc.name, func(b *testing.B) {
			dev := Device(b)
			st := NewStream(b, dev)
			src, err := pool.NewSource(dev, pool.Limits{Hard: tc.hard})
			require.NoError(b, err)
			p, err := mk(dev, src)
			require.NoError(b, err)
			var live []*pool.Block
			for _, n := range tc.live {
				blk, err := p.Alloc(n, st)
				require.NoError(b, err)
				live = append(live, blk)
			}
			req := tc.request(dev)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := p.Alloc(req, st); !errors.Is(err, backend.ErrOutOfMemory) {
					b.Fatalf("Alloc(%d) = %v, want out of memory", req, err)
				}
			}
			b.StopTimer()
			for _, blk := range live {
				require.NoError(b, p.Free(blk, st))
			}
			require.NoError(b, p.Close())
		})
	}
}

// testRefusedRelease: when the driver refuses to take memory back (a
// failed free or unmap, or a stream that cannot be synchronized first),
// the pool's reserved bytes stay exactly what the driver holds, and a
// later Reclaim gives it all back once the driver takes it. It runs on a
// host backend of its own with fault injection, whatever backend the
// other tests use: it tests the pool's bookkeeping, not the device.
func (s Suite) testRefusedRelease(t *testing.T) {
	for _, op := range []host.FaultOp{host.FaultFree, host.FaultUnmap, host.FaultSync} {
		t.Run(op.String(), func(t *testing.T) {
			hb := host.New(host.Options{TotalMemory: 1 << 30}).(*host.Backend)
			dev, err := hb.Device(0)
			require.NoError(t, err)
			src, err := pool.NewSource(dev, pool.Limits{})
			require.NoError(t, err)
			p, err := s.New(dev, src)
			if errors.Is(err, backend.ErrNotSupported) {
				t.Skipf("the strategy needs another backend: %v", err)
			}
			require.NoError(t, err)
			st := NewStream(t, dev)
			used := func() uint64 {
				free, total, err := dev.MemInfo()
				require.NoError(t, err)
				return total - free
			}

			var blocks []*pool.Block
			for _, n := range []uint64{4 * kiB, miB, 3 * miB, 40 * miB} {
				b, err := p.Alloc(n, st)
				require.NoError(t, err)
				blocks = append(blocks, b)
			}
			require.NoError(t, hb.SetFaults(host.Faults{Rules: []host.FaultRule{{Op: op, Rate: 1}}}))
			for _, b := range blocks {
				require.NoError(t, p.Free(b, st), "Free of a live block, with every %s failing", op)
			}
			p.Reclaim(pool.All)
			assert.Equal(t, used(), src.Reserved(), "reserved bytes against what the driver holds, with every %s failing", op)
			assert.Zero(t, p.Stats().Live)

			require.NoError(t, hb.SetFaults(host.Faults{}))
			p.Reclaim(pool.All)
			if !s.Retains {
				assert.Zero(t, src.Reserved(), "reserved once the driver takes memory back again")
				assert.Zero(t, used(), "held by the driver once it takes memory back again")
			}
			require.NoError(t, p.Close())
			assert.Equal(t, used(), src.Reserved())
		})
	}
}
