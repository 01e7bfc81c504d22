package kernels

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// CUB's onesweep plan (cubsort_gpu.go), checked here where no GPU runs it:
// the layout exp/cubsort's bench printed and ran, portions of whole tiles
// that cover the row once, and which rows take the path.

// The layouts below were computed from exp/cubsort/bench.cu's layout()
// (CUB's: every part 256-byte aligned, the tile counters right after the
// digit counts) for the tiles cubsort.cuh sets; the bench ran that layout
// at 384 x 20 and 384 x 24 (sort) and 384 x 23 (argsort) on the H100.
func TestCubPlanIsTheBenchsLayout(t *testing.T) {
	for _, c := range []struct {
		name          string
		n             int
		indices, topk bool
		want          cubPlan
	}{
		{"sort 16 Mi", 1 << 24, false, false, cubPlan{threads: 384, tile: 9216, portion: 268434432, portions: 1, maxTiles: 1821,
			ctrs: 4096, zeroWords: 1028, lookback: 4352, keysAlt: 1869056, scratch: 68977920}},
		{"sort 4097", 4097, false, false, cubPlan{threads: 384, tile: 9216, portion: 268434432, portions: 1, maxTiles: 1,
			ctrs: 4096, zeroWords: 1028, lookback: 4352, keysAlt: 5376, scratch: 22016}},
		{"sort 2^32-1", 1<<32 - 1, false, false, cubPlan{threads: 384, tile: 9216, portion: 268434432, portions: 17, maxTiles: 29127,
			ctrs: 69632, zeroWords: 17476, lookback: 70144, keysAlt: 29896192, scratch: 17209765376}},
		{"argsort 16 Mi", 1 << 24, true, false, cubPlan{threads: 384, tile: 8832, portion: 268430976, portions: 1, maxTiles: 1900,
			ctrs: 4096, zeroWords: 1028, lookback: 4352, keysAlt: 1949952, keys: 69058816, pos: 136167680, posAlt: 203276544,
			scratch: 270385408}},
		{"argsort 2^32-1", 1<<32 - 1, true, false, cubPlan{threads: 384, tile: 8832, portion: 268430976, portions: 17, maxTiles: 30393,
			ctrs: 69632, zeroWords: 17476, lookback: 70144, keysAlt: 31192576, keys: 17211061760, pos: 34390930944,
			posAlt: 51570800128, scratch: 68750669312}},
		{"top-k 4097", 4097, true, true, cubPlan{threads: 384, tile: 8832, portion: 268430976, portions: 1, maxTiles: 1,
			ctrs: 4096, zeroWords: 1028, lookback: 4352, keysAlt: 5376, keys: 22016, pos: 38656, posAlt: 55296, idx: 71936,
			scratch: 104960}},
		{"top-k 16 Mi", 1 << 24, true, true, cubPlan{threads: 384, tile: 8832, portion: 268430976, portions: 1, maxTiles: 1900,
			ctrs: 4096, zeroWords: 1028, lookback: 4352, keysAlt: 1949952, keys: 69058816, pos: 136167680, posAlt: 203276544,
			idx: 270385408, scratch: 404603136}},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, cubPlanFor(c.n, c.indices, c.topk))
		})
	}
}

// cubRegion is a part of a plan's scratch.
type cubRegion struct {
	name       string
	off, bytes int
}

func TestCubPlanPortionsCoverTheRowInWholeTiles(t *testing.T) {
	for _, n := range []int{4097, 9215, 9216, 9217, 20011, 1 << 24, 268434432, 268434433, 1 << 31, 3<<30 + 5, 1<<32 - 1} {
		for _, mode := range []struct{ indices, topk bool }{{false, false}, {true, false}, {true, true}} {
			t.Run(fmt.Sprintf("n=%d/indices=%v/topk=%v", n, mode.indices, mode.topk), func(t *testing.T) {
				p := cubPlanFor(n, mode.indices, mode.topk)
				threads, items := cubSortThreads, cubSortItems
				if mode.indices {
					threads, items = cubSortVThreads, cubSortVItems
				}
				require.Equal(t, threads, p.threads)
				require.Equal(t, threads*items, p.tile)
				// A portion is whole tiles, as many as CUB's int32 look-back takes.
				assert.Zero(t, p.portion%p.tile)
				assert.LessOrEqual(t, p.portion, cubPortionLimit)
				assert.Greater(t, p.portion+p.tile, cubPortionLimit)
				// The portions cover the row once, none empty, none past
				// the look-back's tiles.
				total := 0
				for q := range p.portions {
					m := p.portionKeys(q, n)
					require.Positive(t, m, "portion %d", q)
					assert.LessOrEqual(t, (m+p.tile-1)/p.tile, p.maxTiles, "portion %d", q)
					if q < p.portions-1 {
						assert.Equal(t, p.portion, m, "only the last portion is short")
					}
					total += m
				}
				assert.Equal(t, n, total)
				assert.Equal(t, (min(n, p.portion)+p.tile-1)/p.tile, p.maxTiles)
				// One memset zeroes the digit counts and the tile counters
				// right after them.
				assert.Equal(t, p.bins+p.portions*cubPasses*radixDigits*cubWord, p.ctrs)
				assert.Equal(t, p.ctrs+p.portions*cubPasses*cubWord, p.bins+p.zeroWords*cubWord)
				regions := []cubRegion{
					{"bins and ctrs", p.bins, p.zeroWords * cubWord},
					{"lookback", p.lookback, p.maxTiles * radixDigits * cubWord},
					{"keysAlt", p.keysAlt, n * cubWord},
				}
				if mode.indices {
					regions = append(regions, cubRegion{"keys", p.keys, n * cubWord},
						cubRegion{"pos", p.pos, n * cubWord},
						cubRegion{"posAlt", p.posAlt, n * cubWord})
				} else {
					assert.Zero(t, p.keys+p.pos+p.posAlt, "a sort's keys start in its output")
				}
				if mode.topk {
					regions = append(regions, cubRegion{"idx", p.idx, n * 8})
				} else {
					assert.Zero(t, p.idx)
				}
				for i, a := range regions {
					assert.Zero(t, a.off%scratchAlign, "%s is aligned", a.name)
					assert.LessOrEqual(t, a.off+a.bytes, p.scratch, "%s fits", a.name)
					for _, b := range regions[i+1:] {
						assert.True(t, a.off+a.bytes <= b.off || b.off+b.bytes <= a.off, "%s and %s overlap", a.name, b.name)
					}
				}
			})
		}
	}
}

// Positions and digit counts are uint32 on this path: it takes rows of
// fewer than 2^32 keys of the three 4-byte types; the others keep the
// radix (1 or 2 digit passes for the narrow types, 64-bit keys for the
// wide ones).
func TestCubSortTakesFourByteKeysBelowTwoToTheThirtyTwo(t *testing.T) {
	for _, c := range []struct {
		dt   DType
		n    int
		want bool
	}{
		{Float32, 4097, true}, {Int32, 1 << 24, true}, {Uint32, 1 << 24, true},
		{Float32, 1<<32 - 1, true}, {Float32, 1 << 32, false}, {Int32, 1 << 32, false},
		{Float64, 1 << 24, false}, {Int64, 1 << 24, false}, {Uint8, 1 << 24, false},
		{Int8, 1 << 24, false}, {Int16, 1 << 24, false}, {Complex64, 1 << 24, false}, {Bool, 1 << 24, false},
	} {
		assert.Equal(t, c.want, useCubSort(c.dt, c.n), "%s n=%d", c.dt, c.n)
	}
	// The largest position, n-1, fits a uint32.
	assert.LessOrEqual(t, uint64(cubMaxKeys-1), uint64(^uint32(0)))
}

// SortScratch and co. size the plan gpuSort runs: CUB's for 4-byte keys in
// rows longer than a block sorts, the radix's otherwise.
func TestSortScratchIsThePlanGPUSortRuns(t *testing.T) {
	for _, c := range []struct {
		dt            DType
		n             int
		indices, topk bool
		want          int
	}{
		{Float32, 4096, false, false, 0},
		{Float32, 4097, false, false, cubPlanFor(4097, false, false).scratch},
		{Int32, 1 << 24, true, false, cubPlanFor(1<<24, true, false).scratch},
		{Uint32, 1 << 20, true, true, cubPlanFor(1<<20, true, true).scratch},
		{Float64, 1 << 24, false, false, radixPlanFor(Float64, 1<<24, 132, false, false).scratch},
		{Int16, 1 << 24, true, false, radixPlanFor(Int16, 1<<24, 132, true, false).scratch},
		{Float32, 1 << 32, true, false, radixPlanFor(Float32, 1<<32, 132, true, false).scratch},
	} {
		got := sortPlanScratch(c.dt, c.n, 132, c.indices, c.topk)
		assert.Equal(t, c.want, got, "%s n=%d indices=%v topk=%v", c.dt, c.n, c.indices, c.topk)
		if c.want > 0 {
			assert.Positive(t, got)
		}
	}
}

// The kernels the sequence launches are in the table under the names
// cubsort.cuh defines.
func TestCubSortKernelNames(t *testing.T) {
	names := kernelNames()
	for _, want := range []string{
		"gocuda_cub_key_f32", "gocuda_cub_key_i32", "gocuda_cub_key_u32",
		"gocuda_cub_unkey_f32", "gocuda_cub_unkey_i32", "gocuda_cub_unkey_u32",
		"gocuda_cub_exsum_u32", "gocuda_cub_onesweep_u32", "gocuda_cub_onesweepv_u32", "gocuda_cub_widen_u32",
	} {
		assert.Contains(t, names, want)
	}
	for _, notWanted := range []string{"gocuda_cub_key_f64", "gocuda_cub_onesweep_f32", "gocuda_cub_key_i16"} {
		assert.NotContains(t, names, notWanted)
	}
}
