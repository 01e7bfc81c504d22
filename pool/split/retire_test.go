package split

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/pool"
	"github.com/gocuda/gocuda/pool/pooltest"
)

// Frees of blocks in the retiring stream's segments may run while
// RetireStream moves those segments to the heir: each free must land in
// the segment's owner of the moment, and the structure must stay whole.
func TestRetireStreamRacingFreesKeepTheStructureConsistent(t *testing.T) {
	dev := pooltest.Device(t)
	for _, tc := range []struct {
		name string
		dev  backend.Device
	}{{"virtual", dev}, {"ordinary", plainDevice{dev}}} {
		t.Run(tc.name, func(t *testing.T) {
			for round := range 20 {
				src, err := pool.NewSource(tc.dev, pool.Limits{})
				require.NoError(t, err)
				p, err := newPool(tc.dev, src, defaultConfig)
				require.NoError(t, err)
				gone, err := dev.NewStream()
				require.NoError(t, err)
				heir := pooltest.NewStream(t, dev)
				var blocks []*pool.Block
				for i := range 64 {
					b, err := p.Alloc(uint64(4<<10)<<(i%10), gone)
					require.NoError(t, err)
					blocks = append(blocks, b)
				}
				for _, b := range blocks[:16] {
					require.NoError(t, p.Free(b, gone))
				}
				require.NoError(t, gone.Synchronize())
				var wg sync.WaitGroup
				errs := make(chan error, 2)
				wg.Add(2)
				go func() {
					defer wg.Done()
					for _, b := range blocks[16:] {
						if err := p.Free(b, heir); err != nil {
							errs <- err
							return
						}
					}
				}()
				go func() {
					defer wg.Done()
					if _, err := p.RetireStream(gone, heir); err != nil {
						errs <- err
					}
				}()
				wg.Wait()
				close(errs)
				for err := range errs {
					require.NoError(t, err, "round %d", round)
				}
				p.retrying.Wait() // a retry of giveBackInherited may be mid-release
				require.NoError(t, checkInvariants(p), "round %d", round)
				require.NoError(t, gone.Destroy())
				st := p.Stats()
				require.Zero(t, st.Live, "round %d", round)
				require.NoError(t, p.Close(), "round %d", round)
				require.Zero(t, src.Reserved(), "round %d", round)
			}
		})
	}
}

// Reclaim (from Close, the pacer or trimming) takes a stream's free runs
// out under its lock, unmaps them without it, and puts them back; a
// retirement may move those segments to the heir meanwhile (CI saw Close
// race a cuarray stream's retirement). The runs must go back under the
// segment's owner of the moment, and the move must count only live blocks
// as live. The device runs the retirement, and the heir's frees of the
// live blocks after it, on another goroutine from Reclaim's first unmap,
// while Reclaim still holds runs out.
func TestRetireStreamDuringReclaimKeepsTheStructureConsistent(t *testing.T) {
	dev := pooltest.Device(t)
	vm, ok := dev.(backend.VirtualMemory)
	require.True(t, ok, "the host backend has virtual memory")
	for round := range 10 {
		d := &slowUnmapDevice{Device: dev, vm: vm}
		src, err := pool.NewSource(d, pool.Limits{})
		require.NoError(t, err)
		p, err := newPool(d, src, defaultConfig)
		require.NoError(t, err)
		gone, err := dev.NewStream()
		require.NoError(t, err)
		heir := pooltest.NewStream(t, dev)
		var blocks, live []*pool.Block
		for i := range 64 {
			b, err := p.Alloc(uint64(64<<10)<<(i%10), gone)
			require.NoError(t, err)
			blocks = append(blocks, b)
		}
		for i, b := range blocks {
			if i%2 == 0 {
				require.NoError(t, p.Free(b, gone)) // cached: for Reclaim
				continue
			}
			live = append(live, b)
		}
		require.NoError(t, gone.Synchronize())
		var wg sync.WaitGroup
		errs := make(chan error, 2)
		wg.Add(1)
		d.onFirstUnmap = func() {
			go func() {
				defer wg.Done()
				if _, err := p.RetireStream(gone, heir); err != nil {
					errs <- err
					return
				}
				// As cleanups would: each free merges with the free
				// neighbours Reclaim puts back.
				for _, b := range live {
					if err := p.Free(b, heir); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		require.Positive(t, p.Reclaim(pool.All), "round %d: nothing to unmap", round)
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err, "round %d", round)
		}
		p.retrying.Wait()
		require.NoError(t, checkInvariants(p), "round %d", round)
		require.Zero(t, p.Stats().Live, "round %d", round)
		require.NoError(t, gone.Destroy())
		require.NoError(t, p.Close(), "round %d", round)
		require.Zero(t, src.Reserved(), "round %d", round)
	}
}

// slowUnmapDevice is a device with virtual memory whose Unmap takes a
// millisecond, as a driver's may, and calls onFirstUnmap once, at the
// first.
type slowUnmapDevice struct {
	backend.Device
	vm           backend.VirtualMemory
	once         sync.Once
	onFirstUnmap func()
}

func (d *slowUnmapDevice) Granularity() uint64                   { return d.vm.Granularity() }
func (d *slowUnmapDevice) Reserve(n uint64) (backend.Ptr, error) { return d.vm.Reserve(n) }
func (d *slowUnmapDevice) ReleaseAddress(p backend.Ptr, n uint64) error {
	return d.vm.ReleaseAddress(p, n)
}
func (d *slowUnmapDevice) CreatePhysical(n uint64) (backend.Physical, error) {
	return d.vm.CreatePhysical(n)
}
func (d *slowUnmapDevice) Map(va backend.Ptr, n uint64, m backend.Physical) error {
	return d.vm.Map(va, n, m)
}
func (d *slowUnmapDevice) Unmap(va backend.Ptr, n uint64) error {
	d.once.Do(func() {
		if d.onFirstUnmap != nil {
			d.onFirstUnmap()
		}
	})
	time.Sleep(time.Millisecond)
	return d.vm.Unmap(va, n)
}
func (d *slowUnmapDevice) ReleasePhysical(m backend.Physical) error { return d.vm.ReleasePhysical(m) }

// Segments a retired stream hands to its heir go back to the driver once
// nothing in them is live, rather than staying in the heir's cache: a
// server whose requests each have a stream would otherwise pile one
// segment per request up on the heir.
func TestInheritedSegmentsGoBackWhenTheyEmpty(t *testing.T) {
	dev := pooltest.Device(t)
	for _, tc := range []struct {
		name string
		dev  backend.Device
	}{{"virtual", dev}, {"ordinary", plainDevice{dev}}} {
		t.Run(tc.name, func(t *testing.T) {
			src, err := pool.NewSource(tc.dev, pool.Limits{})
			require.NoError(t, err)
			p, err := newPool(tc.dev, src, defaultConfig)
			require.NoError(t, err)
			heir := pooltest.NewStream(t, dev)
			own, err := p.Alloc(4<<10, heir) // the heir's own cache stays
			require.NoError(t, err)
			require.NoError(t, p.Free(own, heir))
			ownReserved := src.Reserved()
			for round := range 50 {
				gone, err := dev.NewStream()
				require.NoError(t, err)
				small, err := p.Alloc(16<<10, gone)
				require.NoError(t, err)
				large, err := p.Alloc(3<<20, gone)
				require.NoError(t, err)
				require.NoError(t, gone.Synchronize())
				_, err = p.RetireStream(gone, heir)
				require.NoError(t, err)
				require.NoError(t, gone.Destroy())
				require.NoError(t, p.Free(small, heir))
				require.NoError(t, p.Free(large, heir))
				p.retrying.Wait()
				require.NoError(t, checkInvariants(p), "round %d", round)
				require.Equal(t, ownReserved, src.Reserved(), "round %d: the inherited segments should be given back: %v", round, p.Stats())
			}
			require.NoError(t, p.Close())
		})
	}
}
