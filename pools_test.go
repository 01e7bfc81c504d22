package gocuda_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/config"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/pool"
)

// Every pool a program has is in the registry: after arrays of every kind
// of memory on every device, each device's memory in use, as the backend
// counts it, is what the pools PoolStatus lists for it reserve, so no pool
// holds memory unlisted; ReclaimAll then leaves no pool caching anything,
// so it reached them all; and Metrics has a figure for each. The host
// backend counts exactly what was allocated through each device (its two
// devices, pinned and unified memory included); a GPU's driver counts
// contexts and other processes too, so the test runs on the host backend.
func TestEveryPoolIsListedReclaimedAndMeasured(t *testing.T) {
	b, err := gocuda.Backend()
	require.NoError(t, err)
	if b.Name() != "host" {
		t.Skipf("the %s backend's used memory counts more than the pools", b.Name())
	}
	require.GreaterOrEqual(t, b.DeviceCount(), 2, "the host backend offers two devices")
	kinds := []cuarray.Kind{cuarray.Device, cuarray.Unified, cuarray.Pinned}
	var live []*cuarray.Array[float32]
	for ord := range b.DeviceCount() {
		s, err := cuarray.DefaultStream(ord)
		require.NoError(t, err)
		f := cuarray.On[float32](s)
		for _, k := range kinds {
			// One array freed (its block cached), one kept live.
			freed, err := f.NewKind(k, 1<<16)
			require.NoError(t, err, "device %d, %s", ord, k)
			kept, err := f.NewKind(k, 1<<10)
			require.NoError(t, err, "device %d, %s", ord, k)
			freed.UnsafeFree()
			live = append(live, kept)
		}
	}
	require.NoError(t, gocuda.Collect(context.Background()))

	listed := func(when string) gocuda.DeviceMemories {
		t.Helper()
		mem, err := gocuda.MemoryStatus()
		require.NoError(t, err)
		require.Len(t, mem, b.DeviceCount(), "%s: a device each", when)
		for _, d := range mem {
			reserved := d.Stats.Reserved
			var memories []pool.Memory
			for _, k := range d.Kinds {
				reserved += k.Stats.Reserved
				memories = append(memories, k.Memory)
			}
			assert.Equal(t, []pool.Memory{pool.UnifiedMemory, pool.PinnedMemory}, memories, "%s: device %d's other pools", when, d.Device)
			assert.Equal(t, d.Used, reserved, "%s: device %d: what the backend has out is what the listed pools reserve", when, d.Device)
		}
		return mem
	}
	mem := listed("with blocks cached")
	for _, d := range mem {
		for _, k := range d.Kinds {
			assert.NotZero(t, k.Stats.Cached(), "device %d's %s pool caches the freed array", d.Device, k.Memory)
		}
	}
	status := gocuda.PoolStatus()
	for _, d := range mem {
		assert.Contains(t, status, fmt.Sprintf("Device %d: ", d.Device))
	}
	assert.Contains(t, status, "  Unified memory pool simple: ")
	assert.Contains(t, status, "  Pinned memory pool simple: ")

	var before uint64
	for _, d := range mem {
		before += d.Used
	}
	given := gocuda.ReclaimAll()
	var after uint64
	for i, d := range listed("after ReclaimAll") {
		after += d.Used
		// What a device pool gives back depends on its strategy (split
		// keeps what shares a segment with a live block, none caches
		// nothing); the unified and pinned pools are "simple", which
		// gives back every cached block.
		assert.LessOrEqual(t, d.Stats.Cached(), mem[i].Stats.Cached(), "device %d's pool", d.Device)
		for _, k := range d.Kinds {
			assert.Zero(t, k.Stats.Cached(), "device %d's %s pool was reclaimed", d.Device, k.Memory)
			assert.NotZero(t, k.Stats.Live, "device %d's %s array is still live", d.Device, k.Memory)
		}
	}
	assert.Equal(t, before-after, given, "ReclaimAll returns what the devices got back")

	type key struct {
		device int
		memory string
	}
	seen := map[key]bool{}
	for _, f := range gocuda.Metrics().Devices {
		seen[key{f.Device, f.Memory}] = true
	}
	for ord := range b.DeviceCount() {
		for _, m := range []string{"", "unified", "pinned"} {
			assert.True(t, seen[key{ord, m}], "Metrics has device %d's %q pool", ord, m)
		}
	}
	runtime.KeepAlive(live)
	for _, a := range live {
		a.UnsafeFree()
	}
}

// GOCUDA_MEMORY_POOL accepts exactly the strategies the pool registry has
// (every strategy package is linked into this one), and its default is
// one of them.
func TestConfigPoolsAreTheRegisteredStrategies(t *testing.T) {
	assert.ElementsMatch(t, pool.Registered(), config.Pools,
		"config.Pools (GOCUDA_MEMORY_POOL's accepted values) and pool.Registered() differ: add the strategy to both, and its blank import to gocuda.go")
	assert.Contains(t, pool.Registered(), config.DefaultPool)
}

// A unified or pinned pool is made after its device's pool, once, and is
// listed under its device.
func TestKindPoolsAreOnePerDeviceAfterTheDevicePool(t *testing.T) {
	b, err := gocuda.Backend()
	require.NoError(t, err)
	// The last device: the host backend's second, a one-GPU machine's only.
	last := b.DeviceCount() - 1
	for _, tc := range []struct {
		memory pool.Memory
		get    func(int) (pool.Pool, error)
	}{{pool.UnifiedMemory, gocuda.UnifiedPool}, {pool.PinnedMemory, gocuda.PinnedPool}} {
		t.Run(tc.memory.String(), func(t *testing.T) {
			p, err := tc.get(last)
			require.NoError(t, err)
			again, err := tc.get(last)
			require.NoError(t, err)
			assert.Same(t, p, again)
			assert.Equal(t, tc.memory, pool.MemoryOf(p))
			assert.Equal(t, last, p.Device().Ordinal())
			_, err = tc.get(1 << 10)
			assert.Error(t, err, "no such device")
		})
	}
	d, err := gocuda.Pool(last)
	require.NoError(t, err)
	assert.Equal(t, pool.DeviceMemory, pool.MemoryOf(d))
}
