package kernels

import (
	"github.com/gocuda/gocuda/backend"
)

// The GPU side of scans: launch plans and the sequences of kernels
// (cuda/scan_sort.cuh) each operation queues. Sorting's is in sort_gpu.go.

// scanTile is the elements a block scans at a time along a contiguous axis
// (SCAN_ITEMS a thread), and scanMinRows the fewest rows a chunk of a
// strided scan takes (8 rounds of SCAN_ROWS rows in flight a thread).
const (
	scanTile    = threads * 8
	scanMinRows = 32
	scanAccSize = 8 // a chunk's partial result: double, or a 64-bit integer
	// scanVec is scan_sort.cuh's SCAN_VEC: a strided scan's threads each
	// take a 16-byte vector of adjacent columns.
	scanVec = 16
	// scanColsPerThread is the columns a strided scan's chunks are planned
	// for: a 16-byte vector of float32 (the plan cannot depend on the
	// element type or the pointers: ScanScratch knows neither).
	scanColsPerThread = 4
)

// scanPlan is a scan's launch: chunks pieces of chunkLen along the axis
// for each row (contiguous) or column (strided), items work items in all.
// With chunks > 1 pass 1 reduces each chunk into scratch and pass 2 scans
// each chunk from the reduction of the chunks before it.
type scanPlan struct {
	cols             bool // strided: threads own columns
	chunks, chunkLen int
	items            int
	grid             uint32
	scratch          int
	colBlocks        int
}

func scanPlanFor(outer, n, inner, sms int) scanPlan {
	wave := sms * blocksPerSM
	p := scanPlan{chunks: 1, chunkLen: n}
	if inner == 1 {
		if outer < wave {
			p.chunks = min((n+scanTile-1)/scanTile, (wave+outer-1)/outer)
		}
		// Whole tiles a chunk, so that only a row's last chunk is ragged.
		tiles := ((n+p.chunks-1)/p.chunks + scanTile - 1) / scanTile
		p.chunkLen = tiles * scanTile
		p.chunks = (n + p.chunkLen - 1) / p.chunkLen
		p.items = outer * p.chunks
		if p.chunks > 1 {
			p.scratch = outer * p.chunks * scanAccSize
		}
	} else {
		// Down a strided axis: enough chunks of rows that the threads,
		// each on a vector of columns, make two waves of blocks.
		p.cols = true
		cols := outer * inner
		p.colBlocks = (cols + threads - 1) / threads
		vecBlocks := (cols + threads*scanColsPerThread - 1) / (threads * scanColsPerThread)
		if target := 2 * sms * reduceBlocksPerSM; vecBlocks < target {
			p.chunks = max(min((target+vecBlocks-1)/vecBlocks, n/scanMinRows), 1)
		}
		p.chunkLen = (n + p.chunks - 1) / p.chunks
		p.chunks = (n + p.chunkLen - 1) / p.chunkLen
		p.items = p.colBlocks * p.chunks
		if p.chunks > 1 {
			p.scratch = p.chunks * cols * scanAccSize
		}
	}
	// Grid-stride loops over the work items: a few waves at most.
	p.grid = clampGrid(p.items, 4*wave)
	return p
}

// scanColsVec reports whether a strided scan can give each thread a
// 16-byte vector of columns: elements of 4 or 8 bytes, inner a whole
// number of vectors, x and dst 16-byte aligned.
func scanColsVec(dt DType, dst, x backend.Ptr, inner int) bool {
	size := dt.Size()
	return (size == 4 || size == 8) && inner%(16/size) == 0 && dst%16 == 0 && x%16 == 0
}

func (t *target) gpuScan(p scanPlan, op ScanOp, dst, x, partials backend.Ptr, outer, n, inner int) error {
	k := kScanRows
	shape := []any{int64(outer), int64(n)}
	opArg := int32(op)
	if p.cols {
		k = kScanCols
		shape = append(shape, int64(inner))
		if scanColsVec(t.dt, dst, x, inner) {
			// A block covers 16/size times the columns: fewer items.
			per := threads * 16 / t.dt.Size()
			p.colBlocks = (outer*inner + per - 1) / per
			p.items = p.colBlocks * p.chunks
			p.grid = clampGrid(p.items, 4*t.sms*blocksPerSM)
			opArg |= scanVec
		}
	}
	tail := []any{int64(p.chunkLen), int64(p.chunks), opArg}
	if p.chunks > 1 {
		args := append(append([]any{dptr(partials), dptr(x)}, shape...), tail...)
		if err := t.launch(k, 0, p.grid, args...); err != nil {
			return err
		}
		if p.cols {
			// Each chunk's carry-in from the chunks before it.
			cols := outer * inner
			if err := t.launch(kScanColsCarry, 0, clampGrid((cols+threads-1)/threads, t.sms*blocksPerSM),
				dptr(partials), int64(cols), int64(p.chunks), int32(op)); err != nil {
				return err
			}
		}
	}
	args := append(append([]any{dptr(dst), dptr(x), dptr(partials)}, shape...), tail...)
	return t.launch(k, 1, p.grid, args...)
}
