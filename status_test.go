package gocuda

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/host"
	"github.com/gocuda/gocuda/gcpressure"
	"github.com/gocuda/gocuda/pool"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/status")

// knownState makes two host devices of 1 GiB each, with pools in a known
// state: device 0 split under limits, with a cached block; device 1 the
// baseline pool with one live block and no limits. Host memory is counted
// exactly, so the driver's figures are known too.
func knownState(t *testing.T) []registered {
	t.Helper()
	b := host.New(host.Options{Devices: 2, TotalMemory: 1 << 30})
	mk := func(ord int, name string, l pool.Limits) (pool.Pool, backend.Stream) {
		dev, err := b.Device(ord)
		require.NoError(t, err)
		p, err := pool.New(name, dev, l)
		require.NoError(t, err)
		s, err := dev.NewStream()
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Destroy() })
		return p, s
	}
	var live []func()
	alloc := func(p pool.Pool, s backend.Stream, n uint64) *pool.Block {
		blk, err := p.Alloc(n, s)
		require.NoError(t, err)
		live = append(live, func() { require.NoError(t, p.Free(blk, s)) })
		return blk
	}
	p0, s0 := mk(0, "split", pool.Limits{Soft: 512 << 20, Hard: 768 << 20})
	// Device 0's pool has the pressure layer, as the root package's
	// pools do: the status says what its pacer did (nothing yet).
	w0, err := gcpressure.Wrap(p0, gcpressure.Options{Early: true})
	require.NoError(t, err)
	p0 = w0
	alloc(p0, s0, 1<<20)
	alloc(p0, s0, 256<<10)
	big, err := p0.Alloc(3<<20, s0)
	require.NoError(t, err)
	require.NoError(t, p0.Free(big, s0))
	alloc(p0, s0, 3<<20) // from the cache
	p1, s1 := mk(1, "none", pool.Limits{})
	alloc(p1, s1, 4096)
	t.Cleanup(func() {
		for _, f := range live {
			f()
		}
		assert.NoError(t, p0.Close())
		assert.NoError(t, p1.Close())
	})
	return []registered{{0, pool.DeviceMemory, p0}, {1, pool.DeviceMemory, p1}}
}

// withKinds adds device 1's unified and pinned memory pools to ps, in a
// known state: a live block in each, and a cached one in the pinned pool.
func withKinds(t *testing.T, ps []registered) []registered {
	t.Helper()
	dev := ps[1].pool.Device()
	s, err := dev.NewStream()
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Destroy() })
	out := append([]registered(nil), ps...)
	for _, m := range []pool.Memory{pool.UnifiedMemory, pool.PinnedMemory} {
		md, err := pool.MemoryDevice(dev, m)
		require.NoError(t, err)
		p, err := pool.New("simple", md, pool.Limits{})
		require.NoError(t, err)
		blk, err := p.Alloc(64<<10, s)
		require.NoError(t, err)
		if m == pool.PinnedMemory {
			cached, err := p.Alloc(1<<20, s)
			require.NoError(t, err)
			require.NoError(t, p.Free(cached, s))
		}
		t.Cleanup(func() {
			assert.NoError(t, p.Free(blk, s))
			assert.NoError(t, p.Close())
		})
		out = append(out, registered{1, m, p})
	}
	return out
}

func TestPoolStatusTextMatchesGolden(t *testing.T) {
	mem, err := memoryOf(knownState(t))
	require.NoError(t, err)
	require.Len(t, mem, 2)
	broken := mem[1]
	broken.Used, broken.Err = 0, errors.New("device 1: reading its free memory: the driver said no")
	require.NotNil(t, mem[0].Pressure, "device 0's pool has the pressure layer")
	paced, off := mem[0], mem[0]
	ps := *mem[0].Pressure
	ps.PacerTarget, ps.PacerCollections, ps.PacerFreed, ps.PacerReclaimed = 3<<30, 12, 40<<30, 700<<20
	paced.Pressure = &ps
	offStats := *mem[0].Pressure
	offStats.GCPercent, offStats.PacerTarget = gcpressure.PacerOff, 0
	off.Pressure = &offStats
	kinds, err := memoryOf(withKinds(t, knownState(t)))
	require.NoError(t, err)

	for _, tc := range []struct {
		name    string
		mem     []DeviceMemory
		tracing bool
	}{
		{"two-devices", mem, false},
		{"tracing-on", mem[:1], true},
		{"no-pools", nil, false},
		{"meminfo-fails", []DeviceMemory{broken}, false},
		{"pacer-worked", []DeviceMemory{paced}, false},
		{"pacer-off", []DeviceMemory{off}, false},
		{"unified-and-pinned", kinds, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			require.NoError(t, writeStatus(&out, tc.mem, tc.tracing))
			golden := filepath.Join("testdata", "status", tc.name+".golden")
			if *update {
				require.NoError(t, os.WriteFile(golden, out.Bytes(), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "run go test -run TestPoolStatusTextMatchesGolden -update to write it")
			assert.Equal(t, string(want), out.String())
		})
	}
}

func TestMemoryStatusFiguresAreTheDevicesAndPools(t *testing.T) {
	mem, err := memoryOf(knownState(t))
	require.NoError(t, err)
	require.Len(t, mem, 2)
	d := mem[0]
	assert.Equal(t, 0, d.Device)
	assert.Equal(t, "split", d.Pool)
	assert.Equal(t, uint64(1<<30), d.Total)
	assert.Equal(t, d.Stats.Reserved, d.Used, "a host device's used memory is what its pools reserved")
	assert.Equal(t, uint64(1<<20+256<<10+3<<20), d.Stats.Requested)
	assert.Equal(t, uint64(512<<20), d.Stats.SoftLimit)
	assert.Equal(t, uint64(768<<20), d.Stats.HardLimit)
	assert.InDelta(t, float64(d.Used)/float64(1<<30), d.UsedShare(), 1e-12)
	assert.Equal(t, "none", mem[1].Pool)
	assert.Equal(t, uint64(4096), mem[1].Stats.Requested)
}

func TestMemoryStatusListsOnlyDevicesWithAPool(t *testing.T) {
	p, err := Pool(0)
	require.NoError(t, err)
	s, err := p.Device().NewStream()
	require.NoError(t, err)
	defer s.Destroy()
	blk, err := p.Alloc(1<<20, s)
	require.NoError(t, err)
	defer func() { assert.NoError(t, p.Free(blk, s)) }()

	mem, err := MemoryStatus()
	require.NoError(t, err)
	want := 0
	for _, r := range poolsMade() {
		if r.memory == pool.DeviceMemory {
			want++
		}
	}
	require.Len(t, mem, want, "a row a device, its other pools under it")
	var d0 *DeviceMemory
	for i := range mem {
		if mem[i].Device == 0 {
			d0 = &mem[i]
		}
	}
	require.NotNil(t, d0)
	assert.GreaterOrEqual(t, d0.Stats.Live, uint64(1<<20))
	assert.GreaterOrEqual(t, d0.Used, d0.Stats.Reserved, "the driver sees at least what the pool reserved")
	assert.Contains(t, PoolStatus(), "Device 0: ")
	assert.Contains(t, PoolStatus(), "Effective memory usage: ")
}

func TestWritePoolStatusReturnsTheWritersError(t *testing.T) {
	assert.ErrorIs(t, WritePoolStatus(failingWriter{}), errFull)
}

var errFull = errors.New("disk full")

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errFull }

// An allocation past the hard limit fails with the device's PoolStatus in
// its message.
func TestOutOfMemoryErrorCarriesPoolStatus(t *testing.T) {
	p, err := Pool(0)
	require.NoError(t, err)
	dev := p.Device()
	s, err := dev.NewStream()
	require.NoError(t, err)
	defer s.Destroy()
	_, err = p.Alloc(dev.Info().TotalMemory*4, s)
	require.ErrorIs(t, err, backend.ErrOutOfMemory)
	assert.Contains(t, err.Error(), "Memory pool usage:")
	assert.Contains(t, err.Error(), fmt.Sprintf("Device %d:", dev.Ordinal()))
}

// MemoryStatus's figures print as a table, a row a device, every column
// aligned; a device whose free memory could not be read says unknown, and
// why after the table.
func TestMemoryStatusPrintsAsAnAlignedTable(t *testing.T) {
	mem, err := memoryOf(knownState(t))
	require.NoError(t, err)
	require.Len(t, mem, 2)
	broken := mem[1]
	broken.Used, broken.Err = 0, errors.New("device 1: reading its free memory: the driver said no")
	kinds, err := memoryOf(withKinds(t, knownState(t)))
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		mem  DeviceMemories
		want string
	}{
		{"two devices", mem, `device  name      pool   used                        live     reserved  cached   limits
0       host CPU  split  6.0 MiB of 1.0 GiB (0.59%)  4.3 MiB  6.0 MiB   1.8 MiB  soft = 512 MiB, hard = 768 MiB
1       host CPU  none   4.0 KiB of 1.0 GiB (0.00%)  4.0 KiB  4.0 KiB   0 B      none
`},
		{"one that cannot be read", DeviceMemories{mem[0], broken}, `device  name      pool   used                        live     reserved  cached   limits
0       host CPU  split  6.0 MiB of 1.0 GiB (0.59%)  4.3 MiB  6.0 MiB   1.8 MiB  soft = 512 MiB, hard = 768 MiB
1       host CPU  none   unknown of 1.0 GiB          4.0 KiB  4.0 KiB   0 B      none
device 1: reading its free memory: the driver said no
`},
		{"unified and pinned pools under their device", kinds, `device  name      pool              used                        live     reserved  cached   limits
0       host CPU  split             6.0 MiB of 1.0 GiB (0.59%)  4.3 MiB  6.0 MiB   1.8 MiB  soft = 512 MiB, hard = 768 MiB
1       host CPU  none              1.1 MiB of 1.0 GiB (0.11%)  4.0 KiB  4.0 KiB   0 B      none
1       host CPU  simple (unified)  -                           64 KiB   64 KiB    0 B      none
1       host CPU  simple (pinned)   -                           64 KiB   1.1 MiB   1.0 MiB  none
`},
		{"none yet", nil, "No device memory pool in use yet: it is made on a device's first allocation.\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.mem.String())
			assert.Equal(t, tc.want, fmt.Sprint(tc.mem), "fmt prints the table")
		})
	}
}
