package kernels

import (
	"github.com/gocuda/gocuda/backend"
)

// The GPU side of scans: launch plans and the sequences of kernels
// (cuda/scan_sort.cuh) each operation queues. Sorting's is in sort_gpu.go.

// scanTile is the elements a block scans at a time along a contiguous axis
// (SCAN_ITEMS a thread), and scanMinRows the fewest rows a chunk of a
// strided scan takes.
const (
	scanTile    = threads * 8
	scanMinRows = 16
	scanAccSize = 8 // a chunk's partial result: double, or a 64-bit integer
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
		p.cols = true
		cols := outer * inner
		p.colBlocks = (cols + threads - 1) / threads
		if p.colBlocks < wave {
			p.chunks = max(min((wave+p.colBlocks-1)/p.colBlocks, n/scanMinRows), 1)
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

func (t *target) gpuScan(p scanPlan, op ScanOp, dst, x, partials backend.Ptr, outer, n, inner int) error {
	k := kScanRows
	shape := []any{int64(outer), int64(n)}
	if p.cols {
		k = kScanCols
		shape = append(shape, int64(inner))
	}
	tail := []any{int64(p.chunkLen), int64(p.chunks), int32(op)}
	if p.chunks > 1 {
		args := append(append([]any{dptr(partials), dptr(x)}, shape...), tail...)
		if err := t.launch(k, 0, p.grid, args...); err != nil {
			return err
		}
	}
	args := append(append([]any{dptr(dst), dptr(x), dptr(partials)}, shape...), tail...)
	return t.launch(k, 1, p.grid, args...)
}
