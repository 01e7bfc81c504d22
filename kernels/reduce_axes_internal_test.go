package kernels

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
)

// The GPU launch plan, which only a GPU runs: the mode (and kernel) each
// layout takes, the split of the reduced axis when the outputs are too few
// to give an H100's 132 SMs two rounds of resident blocks, and the scratch
// bound on it.
func TestReducePlanPicksModes(t *testing.T) {
	const sms, lots = 132, 1 << 40
	cases := []struct {
		name           string
		dt             DType
		x              uintptr
		shape, strides []int
		axes           []int
		scratch        int
		mode, chunks   int
	}{
		{"rows of a square matrix: a block a row", Float32, 0, []int{4096, 4096}, []int{4096, 1}, []int{1}, lots, rmodeRowBlock, 1},
		{"many short rows: a warp a row", Float32, 0, []int{1 << 16, 64}, []int{64, 1}, []int{1}, lots, rmodeRowWarp, 1},
		{"the whole array: one row in chunks", Float32, 0, []int{4096, 4096}, []int{4096, 1}, []int{0, 1}, lots, rmodeRowBlock, reduceWaves * sms * reduceBlocksPerSM},
		{"the whole array without scratch", Float32, 0, []int{4096, 4096}, []int{4096, 1}, []int{0, 1}, 0, rmodeRowBlock, 1},
		{"square columns: tiles of 4 lanes cover the SMs, the rows whole", Float32, 0, []int{4096, 4096}, []int{4096, 1}, []int{0}, lots, rmodeColVec + 3, 1},
		{"columns without scratch: tiles of 4 lanes, the rows whole", Float32, 0, []int{4096, 4096}, []int{4096, 1}, []int{0}, 0, rmodeColVec + 3, 1},
		{"tall columns: wide tiles, the rows split", Float32, 0, []int{65536, 1024}, []int{1024, 1}, []int{0}, lots, rmodeColVec + colSplitLanesLog, ceilDiv(colSplitBlocksPerSM*sms, 1024/(128>>colSplitLanesLog))},
		{"float64 columns: tiles of 4 lanes cover the SMs, the rows whole", Float64, 0, []int{4096, 2048}, []int{2048, 1}, []int{0}, lots, rmodeColVec + 3, 1},
		{"tall float64 columns: wide tiles, the rows split", Float64, 0, []int{65536, 512}, []int{512, 1}, []int{0}, lots, rmodeColVec + colSplitLanesLog, ceilDiv(colSplitBlocksPerSM*sms, 512/(64>>colSplitLanesLog))},
		{"columns, rows too few to split: tiles of 4 lanes", Float32, 0, []int{256, 4096}, []int{4096, 1}, []int{0}, lots, rmodeColVec + 3, 1},
		{"many columns: tiles of 32 lanes", Float32, 0, []int{64, 1 << 16}, []int{1 << 16, 1}, []int{0}, lots, rmodeColVec, 1},
		{"columns: tiles of 8 lanes fill the SMs twice", Float32, 0, []int{64, 32 * 2 * sms}, []int{32 * 2 * sms, 1}, []int{0}, lots, rmodeColVec + 2, 1},
		{"few columns: narrow tiles, the rows split", Float32, 0, []int{4096, 512}, []int{512, 1}, []int{0}, lots, rmodeColVec + 3, 4096 / reduceMinRowsPerChunk},
		{"columns of an unaligned view", Float32, 4, []int{4096, 4096}, []int{4096, 1}, []int{0}, lots, rmodeCol, 9},
		{"columns of bytes", Uint8, 0, []int{4096, 4096}, []int{4096, 1}, []int{0}, lots, rmodeCol, 9},
		{"a middle axis", Float64, 0, []int{8, 512, 64}, []int{512 * 64, 64, 1}, []int{1}, lots, rmodeColVec + 3, 512 / reduceMinRowsPerChunk},
		{"two axes around a kept one", Float32, 0, []int{8, 5, 64}, []int{320, 64, 1}, []int{0, 2}, lots, rmodeGeneral, 1},
		{"rows of a transpose", Float32, 0, []int{300, 200}, []int{1, 300}, []int{1}, lots, rmodeColVec + 3, 1},
		{"a few long rows: split into chunks", Float32, 0, []int{4, 1 << 20}, []int{1 << 20, 1}, []int{1}, lots, rmodeRowBlock, (1 << 20) / reduceMinPerChunk},
		{"rows of 512 floats: a warp a row", Float32, 0, []int{100, 512}, []int{512, 1}, []int{1}, lots, rmodeRowWarp, 1},
	}
	for _, c := range cases {
		p, err := planReduce(c.shape, c.strides, c.axes)
		require.NoError(t, err, c.name)
		l := p.launch(ReduceSum, c.dt, backend.Ptr(c.x), sms, c.scratch)
		assert.Equal(t, c.mode, l.mode, c.name)
		assert.Equal(t, c.chunks, l.chunks, c.name)
		assert.GreaterOrEqual(t, max(c.scratch, 0), (l.chunks-1)*p.nout*reduceAccBytes(ReduceSum, c.dt), "%s: the split fits the scratch", c.name)
		if l.chunks > 1 && l.mode >= rmodeCol {
			assert.Zero(t, int(l.grid)%l.chunks, "%s: the grid is whole runs of tiles", c.name)
		}
		want := map[int]kop{rmodeGeneral: kRSum, rmodeRowWarp: kRSumRow, rmodeRowBlock: kRSumRow, rmodeCol: kRSumCol,
			rmodeColVec: kRSumCol, rmodeColVec + 1: kRSumCol, rmodeColVec + 2: kRSumCol, rmodeColVec + 3: kRSumCol}[l.mode]
		assert.Equal(t, want, l.kernel(ReduceSum), "%s: the mode's kernel", c.name)
	}
}

// TestReducePlanLongRowsByWarp: the comparing reductions take a warp a
// long row once the rows fill two blocks an SM; sums keep a block a row,
// and too few rows keep a block each (or chunks).
func TestReducePlanLongRowsByWarp(t *testing.T) {
	const sms = 132
	cases := []struct {
		name string
		op   ReduceOp
		rows int
		mode int
	}{
		{"argmax of 4096 rows", ReduceArgMax, 4096, rmodeRowWarp},
		{"argmin at the threshold", ReduceArgMin, reduceWarpRowsMin * sms, rmodeRowWarp},
		{"max below the threshold", ReduceMax, reduceWarpRowsMin*sms - 1, rmodeRowBlock},
		{"min of 4096 rows", ReduceMin, 4096, rmodeRowWarp},
		{"sum of 4096 rows", ReduceSum, 4096, rmodeRowBlock},
		{"any of 4096 rows", ReduceAny, 4096, rmodeRowBlock},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := planReduce([]int{c.rows, 4096}, []int{4096, 1}, []int{1})
			require.NoError(t, err)
			l := p.launch(c.op, Float32, 0, sms, 1<<40)
			assert.Equal(t, c.mode, l.mode)
			assert.Equal(t, 1, l.chunks)
			assert.Equal(t, reduceOpInfo[c.op].row, l.kernel(c.op))
		})
	}
}

// TestColClusterPlan: the cluster mode's strips (the widest that give 7/4
// blocks an SM of an H100's 132), and the layouts, reductions, types and
// GPUs it leaves to the other modes.
func TestColClusterPlan(t *testing.T) {
	const sms = 132
	cases := []struct {
		name           string
		op             ReduceOp
		dt             DType
		x              uintptr
		shape, strides []int
		axes           []int
		clusters       bool
		ok             bool
		lg             int
		grid           uint32
	}{
		{"4096² float32: strips of 32 lanes", ReduceSum, Float32, 0, []int{4096, 4096}, []int{4096, 1}, []int{0}, true, true, 0, 32 * colClusterBlocks},
		{"65536 × 1024 float32: strips of 8 lanes", ReduceMean, Float32, 0, []int{65536, 1024}, []int{1024, 1}, []int{0}, true, true, 2, 32 * colClusterBlocks},
		{"2048² float32: strips of 16 lanes", ReduceMax, Float32, 0, []int{2048, 2048}, []int{2048, 1}, []int{0}, true, true, 1, 32 * colClusterBlocks},
		{"4096² float64: strips of 32 lanes", ReduceMin, Float64, 0, []int{4096, 4096}, []int{4096, 1}, []int{0}, true, true, 0, 64 * colClusterBlocks},
		{"a column slice", ReduceSum, Float32, 0, []int{4096, 2048}, []int{8192, 1}, []int{0}, true, true, 1, 32 * colClusterBlocks},
		{"no clusters on the GPU", ReduceSum, Float32, 0, []int{4096, 4096}, []int{4096, 1}, []int{0}, false, false, 0, 0},
		{"argmax has no cluster kernel", ReduceArgMax, Float32, 0, []int{4096, 4096}, []int{4096, 1}, []int{0}, true, false, 0, 0},
		{"nor int32", ReduceSum, Int32, 0, []int{4096, 4096}, []int{4096, 1}, []int{0}, true, false, 0, 0},
		{"rows too few", ReduceSum, Float32, 0, []int{colClusterMinRows - 1, 4096}, []int{4096, 1}, []int{0}, true, false, 0, 0},
		{"columns too few for the narrowest strips", ReduceSum, Float32, 0, []int{65536, 512}, []int{512, 1}, []int{0}, true, false, 0, 0},
		{"an unaligned view", ReduceSum, Float32, 4, []int{4096, 4096}, []int{4096, 1}, []int{0}, true, false, 0, 0},
		{"outer kept groups", ReduceSum, Float32, 0, []int{4, 4096, 1024}, []int{4096 * 1024, 1024, 1}, []int{1}, true, false, 0, 0},
		{"rows, not columns", ReduceSum, Float32, 0, []int{4096, 4096}, []int{4096, 1}, []int{1}, true, false, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := planReduce(c.shape, c.strides, c.axes)
			require.NoError(t, err)
			k, grid, ok := p.colCluster(c.op, c.dt, backend.Ptr(c.x), sms, c.clusters)
			require.Equal(t, c.ok, ok)
			if !ok {
				return
			}
			assert.Equal(t, colClusterOps[c.op]+kop(c.lg), k, "the kernel of strips of 32 >> %d lanes", c.lg)
			assert.Equal(t, c.grid, grid)
			assert.Zero(t, grid%colClusterBlocks, "whole clusters")
		})
	}
}

// TestReduceScratchNoneForTheClusterMode: a reduction that the cluster
// mode takes needs no scratch; the same layout on a GPU without clusters
// splits its rows and does.
func TestReduceScratchNoneForTheClusterMode(t *testing.T) {
	p, err := planReduce([]int{65536, 1024}, []int{1024, 1}, []int{0})
	require.NoError(t, err)
	hopper := backend.Info{MultiProcessors: 132, Major: 9}
	ampere := backend.Info{MultiProcessors: 108, Major: 8}
	assert.Zero(t, p.scratchBytes(ReduceSum, Float32, hopper), "Sum on 9.0: clusters")
	assert.Positive(t, p.scratchBytes(ReduceSum, Float32, ampere), "Sum on 8.0: a split")
	assert.Positive(t, p.scratchBytes(ReduceArgMax, Float32, hopper), "ArgMax has no cluster kernel: a split")
}
