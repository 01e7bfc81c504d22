package kernels

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
)

// The GPU launch plans, checked here where no GPU runs them: chunks cover
// each line exactly once, grids fill the GPU without exceeding the work,
// and the radix sort's scratch regions are aligned and disjoint.

func TestScanPlanCoversEveryElementOnce(t *testing.T) {
	for _, c := range []struct{ outer, n, inner, sms int }{
		{1, 1, 1, 132}, {4096, 4096, 1, 132}, {1, 1 << 24, 1, 132}, {3, 5000, 1, 1}, {7, 2049, 1, 132},
		{1, 4096, 4096, 132}, {1, 37, 300, 1}, {2, 20, 5, 132}, {64, 3, 1 << 20, 132}, {1, 100000, 2, 132},
	} {
		t.Run(fmt.Sprintf("%dx%dx%d", c.outer, c.n, c.inner), func(t *testing.T) {
			p := scanPlanFor(c.outer, c.n, c.inner, c.sms)
			require.GreaterOrEqual(t, p.chunks, 1)
			assert.GreaterOrEqual(t, p.chunks*p.chunkLen, c.n, "chunks cover the line")
			assert.Less(t, (p.chunks-1)*p.chunkLen, c.n, "no empty chunk")
			assert.Equal(t, c.inner > 1, p.cols)
			if !p.cols {
				assert.Zero(t, p.chunkLen%scanTile, "whole tiles a chunk")
				assert.Equal(t, c.outer*p.chunks, p.items)
			} else {
				assert.Equal(t, p.colBlocks*p.chunks, p.items)
			}
			if p.chunks > 1 {
				// A partial a chunk of each row, or of each column.
				assert.Equal(t, p.chunks*c.outer*c.inner*scanAccSize, p.scratch)
			} else {
				assert.Zero(t, p.scratch, "one chunk needs no partials")
			}
			assert.LessOrEqual(t, int(p.grid), max(p.items, 1))
		})
	}
	// The H100 shapes of the issue: 4096 × 4096 along rows is one pass, a
	// block a row; down the columns it splits the rows into chunks.
	rows := scanPlanFor(4096, 4096, 1, 132)
	assert.Equal(t, 1, rows.chunks)
	cols := scanPlanFor(1, 4096, 4096, 132)
	assert.Greater(t, cols.chunks, 1)
}

func TestRadixPlanScratchIsAlignedAndDisjoint(t *testing.T) {
	for _, dt := range []DType{Float32, Float64, Int32, Int64, Uint8} {
		for _, n := range []int{1, sortRowsCap(dt), sortRowsCap(dt) + 1, 1 << 24, 123457} {
			for _, mode := range []struct{ indices, topk bool }{{false, false}, {true, false}, {true, true}} {
				p := radixPlanFor(dt, n, 132, mode.indices, mode.topk)
				if n <= sortRowsCap(dt) {
					assert.Zero(t, p.scratch, "%s n=%d sorts in one block", dt, n)
					continue
				}
				tiles := (n + radixTile - 1) / radixTile
				assert.GreaterOrEqual(t, p.blocks*p.tilesPerBlock, tiles)
				assert.Less(t, (p.blocks-1)*p.tilesPerBlock, tiles, "no block without tiles")
				assert.LessOrEqual(t, p.blocks, 132*radixBlocksPerSM)
				assert.Equal(t, dt.Size(), p.passes)
				type region struct{ off, bytes int }
				regions := []region{{p.keys0, n * dt.Size()},
					{p.totals, radixSlots * radixDigits * 8}, {p.plan, radixSlots * radixPlanWords * 8}}
				if p.osTiles > 0 {
					// Onesweep: a tile counter a slot and status words for
					// every tile and digit of each pass slot, all zeroed
					// with the totals in one memset.
					_, tile := onesweepShape(dt, mode.indices)
					assert.Equal(t, (n+tile-1)/tile, p.osTiles)
					status := (p.passes + 1) * p.osTiles * radixDigits * 4
					regions = append(regions, region{p.counters, radixSlots * 4}, region{p.status, status})
					assert.LessOrEqual(t, p.status+status-p.totals, p.zeroBytes(), "the memset reaches the last status word")
					assert.LessOrEqual(t, p.zeroBytes(), p.plan-p.totals, "the memset stops before the plan")
					assert.Greater(t, p.counters, p.totals)
					assert.Greater(t, p.status, p.totals)
				} else {
					regions = append(regions, region{p.counts, radixDigits * p.blocks * 8})
					assert.Equal(t, radixSlots*radixDigits*8, p.zeroBytes(), "the memset zeroes the totals")
				}
				if mode.indices {
					regions = append(regions, region{p.keys1, n * dt.Size()}, region{p.vals0, n * p.valBytes}, region{p.vals1, n * p.valBytes})
				}
				if mode.topk {
					regions = append(regions, region{p.idx, n * 8})
				}
				for i, a := range regions {
					assert.Zero(t, a.off%scratchAlign)
					assert.LessOrEqual(t, a.off+a.bytes, p.scratch)
					for _, b := range regions[i+1:] {
						assert.True(t, a.off+a.bytes <= b.off || b.off+b.bytes <= a.off, "%s n=%d: regions %v and %v overlap", dt, n, a, b)
					}
				}
			}
		}
	}
}

// Rows up to onesweepMaxKeys take one onesweep kernel a pass; longer rows
// (whose counts need more than a status word's 30 bits) three kernels.
func TestRadixPlanTakesOnesweepBelowTwoToTheThirty(t *testing.T) {
	assert.True(t, useOnesweep(1<<24))
	assert.True(t, useOnesweep(1<<30-1))
	assert.False(t, useOnesweep(1<<30))
	for _, dt := range []DType{Float32, Float64, Uint8} {
		for _, indices := range []bool{false, true} {
			p := radixPlanFor(dt, 1<<24, 132, indices, false)
			_, tile := onesweepShape(dt, indices)
			assert.Equal(t, (1<<24+tile-1)/tile, p.osTiles, "%s: a ragged last tile counts", dt)
			assert.Zero(t, p.counts, "%s: no per-block counts", dt)
		}
	}
	if strconv.IntSize == 64 {
		p := radixPlanFor(Uint8, 1<<30, 132, false, false)
		assert.Zero(t, p.osTiles, "2^30 keys take three kernels a pass")
		assert.Equal(t, radixSlots*radixDigits*8, p.zeroBytes())
	}
}

func TestScanOpNames(t *testing.T) {
	assert.Equal(t, "Cumsum", CumSum.String())
	assert.Equal(t, "Cummin", CumMin.String())
	assert.Equal(t, "ScanOp(9)", ScanOp(9).String())
}

// A strided scan reads 16-byte vectors of columns only where every vector
// is whole and aligned; otherwise a thread a column.
func TestScanColsVecNeedsWholeAlignedVectors(t *testing.T) {
	for _, c := range []struct {
		name   string
		dt     DType
		dst, x uintptr
		inner  int
		want   bool
	}{
		{"float32, 4096 columns", Float32, 0, 256, 4096, true},
		{"float64, even columns", Float64, 512, 0, 6, true},
		{"float32, columns not whole vectors", Float32, 0, 0, 4094, false},
		{"x at an offset", Float32, 0, 4, 4096, false},
		{"dst at an offset", Float64, 8, 0, 4096, false},
		{"bytes", Uint8, 0, 0, 4096, false},
	} {
		assert.Equal(t, c.want, scanColsVec(c.dt, backend.Ptr(c.dst), backend.Ptr(c.x), c.inner), c.name)
	}
}

func TestRowSortBlockIsTheFewestThreadsThatHoldTheRow(t *testing.T) {
	maxThreads := sortRowsCap(Float32) / rowSortItems // rowsort.cuh's RS_MAXT
	for _, n := range []int{1, 31, 512, 513, 1000, 1025, 2048, 2049, 4095, 4096} {
		b := rowSortBlock(n)
		assert.Equal(t, 0, b&(b-1), "n = %d: a power of two (%d)", n, b)
		assert.GreaterOrEqual(t, b, 32, "n = %d", n)
		assert.GreaterOrEqual(t, b*rowSortItems, n, "n = %d: the block holds the row", n)
		assert.True(t, b == 32 || b/2*rowSortItems < n, "n = %d: %d threads, and half would hold the row", n, b)
		assert.LessOrEqual(t, b, maxThreads, "n = %d", n)
	}
	assert.Equal(t, maxThreads, rowSortBlock(sortRowsCap(Float32)))
	assert.Equal(t, maxThreads/2, rowSortBlock(sortRowsCap(Float64)))
}

func TestTopKWarpsGrowWithTheRowAndWhenRowsAreFew(t *testing.T) {
	for _, c := range []struct {
		name          string
		rows, n, want int
	}{
		{"many rows of 4096: a warp a row", 4096, 4096, 1},
		{"many short rows", 100000, 100, 1},
		{"few short rows: too short to split", 3, 1000, 1},
		{"few rows of 4096", 8, 4096, 2},
		{"one long row", 1, 1 << 24, 8},
		{"many long rows", 4096, 20000, 4},
	} {
		assert.Equal(t, c.want, topKWarps(c.rows, c.n, 132), c.name)
	}
}
