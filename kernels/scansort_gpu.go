package kernels

import (
	"github.com/gocuda/gocuda/backend"
)

// The GPU side of scans and sorting: launch plans and the sequences of
// kernels (cuda/scan_sort.cuh) each operation queues.

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

// Flags of the radix kernels (scan_sort.cuh's RADIX_* values).
const (
	radixDesc    = 1  // descending keys
	radixIota    = 2  // the values in are the positions (pass 0 of an argsort)
	radixVin64   = 4  // values in are 64-bit (else 32-bit)
	radixVout64  = 8  // values out are 64-bit (the int64 indices)
	radixValues  = 16 // carry values with the keys
	radixNoKeys  = 32 // write no keys (an argsort's last pass)
	radixItems   = 16 // keys a thread takes of a tile
	radixTile    = threads * radixItems
	radixDigits  = 256
	scratchAlign = 256
)

// sortRowsCap is the longest row one block sorts in shared memory: its
// bits and an index for every element (SORTROWS_CAP4 and SORTROWS_CAP8 in
// scan_sort.cuh).
func sortRowsCap(dt DType) int {
	if dt.Size() == 8 {
		return 2048
	}
	return 4096
}

// radixPlan is the layout of a radix sort of one row of n and of its
// scratch.
type radixPlan struct {
	blocks, tilesPerBlock int
	passes                int
	valBytes              int // 4 while positions fit int32, else 8
	keys0, keys1          int // scratch offsets: key buffers
	vals0, vals1          int // value (index) buffers
	idx                   int // TopK: the row's int64 argsort
	counts                int // 256 digit counts (int64) a block
	scratch               int // bytes in all; 0 when a block sorts a row
}

func alignUp(n int) int { return (n + scratchAlign - 1) / scratchAlign * scratchAlign }

func radixPlanFor(dt DType, n, sms int, indices, topk bool) radixPlan {
	var p radixPlan
	if n <= sortRowsCap(dt) {
		return p
	}
	tiles := (n + radixTile - 1) / radixTile
	p.blocks = min(tiles, sms*blocksPerSM)
	p.tilesPerBlock = (tiles + p.blocks - 1) / p.blocks
	p.blocks = (tiles + p.tilesPerBlock - 1) / p.tilesPerBlock
	p.passes = dt.Size() // 8-bit digits
	p.valBytes = 4
	if n > 1<<31-1 {
		p.valBytes = 8
	}
	off := 0
	take := func(bytes int) int {
		at := off
		off += alignUp(bytes)
		return at
	}
	p.keys0 = take(n * dt.Size())
	if indices {
		p.keys1 = take(n * dt.Size())
		p.vals0 = take(n * p.valBytes)
		p.vals1 = take(n * p.valBytes)
	}
	if topk {
		p.idx = take(n * 8)
	}
	p.counts = take(radixDigits * p.blocks * 8)
	p.scratch = off
	return p
}

func (t *target) gpuSort(values, indices, x backend.Ptr, rows, n, k int, desc bool, scratch Scratch) error {
	var flags int32
	if desc {
		flags = radixDesc
	}
	if n <= sortRowsCap(t.dt) {
		return t.launch(kSortRows, 0, clampGrid(rows, 1<<30), dptr(values), dptr(indices), dptr(x),
			int64(rows), int64(n), int64(k), flags)
	}
	directSort := indices == 0 && k == n   // Sort
	directArgsort := values == 0 && k == n // Argsort
	p := radixPlanFor(t.dt, n, t.sms, !directSort, !directSort && !directArgsort)
	if p.scratch > scratch.Bytes {
		return t.errorf("rows of %d need %d bytes of scratch (SortScratch, ArgsortScratch, TopKScratch), given %d: %w",
			n, p.scratch, scratch.Bytes, backend.ErrInvalidValue)
	}
	size := backend.Ptr(t.dt.Size())
	for r := range rows {
		xr := x + backend.Ptr(r*n)*size
		switch {
		case directSort:
			if err := t.radix(p, xr, values+backend.Ptr(r*n)*size, 0, n, flags, scratch.Ptr); err != nil {
				return err
			}
		case directArgsort:
			if err := t.radix(p, xr, 0, indices+backend.Ptr(r*k*8), n, flags, scratch.Ptr); err != nil {
				return err
			}
		default: // TopK: the row's argsort, then its first k
			idx := scratch.Ptr + backend.Ptr(p.idx)
			if err := t.radix(p, xr, 0, idx, n, flags, scratch.Ptr); err != nil {
				return err
			}
			var vr, ir backend.Ptr
			if values != 0 {
				vr = values + backend.Ptr(r*k)*size
			}
			if indices != 0 {
				ir = indices + backend.Ptr(r*k*8)
			}
			if err := t.launch(kTopKTake, 0, clampGrid((k+threads-1)/threads, t.sms*blocksPerSM),
				dptr(vr), dptr(ir), dptr(xr), dptr(idx), int64(k)); err != nil {
				return err
			}
		}
	}
	return nil
}

// radix sorts the n keys at x, least significant digit first, into
// keysOut (Sort) or their positions into the int64 idxOut (Argsort). Each
// pass is three kernels: every block's digit histogram of its tiles, the
// exclusive scan that turns the counts into each block's first position
// for each digit, and the stable scatter.
func (t *target) radix(p radixPlan, x, keysOut, idxOut backend.Ptr, n int, flags int32, sc backend.Ptr) error {
	passes := p.passes
	sortOnly := idxOut == 0
	if sortOnly && passes%2 == 1 && keysOut == x {
		// uint8 in place: a second, identity pass (its digit is past the
		// key's bits, so 0) so that no pass scatters onto its input.
		passes++
	}
	tmp := sc + backend.Ptr(p.keys0)
	keys := [2]backend.Ptr{tmp, sc + backend.Ptr(p.keys1)}
	if sortOnly {
		keys = [2]backend.Ptr{tmp, keysOut}
		if passes%2 == 1 {
			keys = [2]backend.Ptr{keysOut, tmp}
		}
	}
	vals := [2]backend.Ptr{sc + backend.Ptr(p.vals0), sc + backend.Ptr(p.vals1)}
	counts := sc + backend.Ptr(p.counts)
	grid := uint32(p.blocks)
	for pass := range passes {
		f := flags
		kin, vin := x, backend.Ptr(0)
		if pass > 0 {
			kin = keys[(pass-1)%2]
		}
		kout, vout := keys[pass%2], backend.Ptr(0)
		if !sortOnly {
			f |= radixValues
			if pass == 0 {
				f |= radixIota
			} else {
				vin = vals[(pass-1)%2]
				if p.valBytes == 8 {
					f |= radixVin64
				}
			}
			if pass == passes-1 {
				vout, kout = idxOut, 0
				f |= radixVout64 | radixNoKeys
			} else {
				vout = vals[pass%2]
				if p.valBytes == 8 {
					f |= radixVout64
				}
			}
		}
		shift := int32(8 * pass)
		if err := t.launch(kRadix, 0, grid, dptr(counts), dptr(kin), int64(n), shift, int64(p.tilesPerBlock), f); err != nil {
			return err
		}
		if err := t.launchID(kernelID(kRadixOffsets, Int64, 0), 1, threads, dptr(counts), int32(p.blocks)); err != nil {
			return err
		}
		if err := t.launch(kRadix, 1, grid, dptr(kout), dptr(vout), dptr(kin), dptr(vin), dptr(counts),
			int64(n), shift, int64(p.tilesPerBlock), f); err != nil {
			return err
		}
	}
	return nil
}
