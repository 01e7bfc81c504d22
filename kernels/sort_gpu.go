package kernels

import (
	"github.com/gocuda/gocuda/backend"
)

// The GPU side of sorting: launch plans and the sequences of kernels
// (cuda/sort.cuh, cuda/rowsort.cuh) Sort, Argsort and TopK queue. Rows that
// fit a block are sorted a block a row (gocuda_rowsort_*); longer rows, one
// after another, by an LSD radix sort: CUB's onesweep for 4-byte keys
// (cubsort_gpu.go), else sort.cuh's (see its comment). TopK with
// k ≤ 32 reads each row once (gocuda_topk16_*, gocuda_topk32_*) whatever
// its length.

// Sizes and flags of the sort kernels (sort.cuh's SRT_* and ROWSORT_*
// values, rowsort.cuh's RS_*).
const (
	srtDesc          = 1  // descending keys
	srtVin64         = 4  // to the plan kernel: intermediate indices are 64-bit
	radixItems       = 16 // keys a thread takes of a tile
	radixTile        = threads * radixItems
	radixDigits      = 256
	radixSlots       = 9  // plan slots: up to 8 digit passes and the identity pass
	radixPlanWords   = 8  // u64 words of plan a slot
	radixBlocksPerSM = 4  // the scatter's shared memory (44 KB) allows 5 blocks an SM
	rowSortItems     = 16 // keys a thread of the row sort holds (rowsort.cuh's RS_ITEMS: change both together)
	scratchAlign     = 256
	topKSmall        = 16 // the largest k gocuda_topk16_* takes
	topKMax          = 32 // the largest k gocuda_topk32_* takes
)

// sortRowsCap is the longest row one block sorts (ROWSORT_CAP4 and
// ROWSORT_CAP8 in sort.cuh): 4096 keys of 4 bytes or fewer, 2048 of 8,
// with their 16-bit indices in a block's static shared memory.
func sortRowsCap(dt DType) int {
	if dt.Size() == 8 {
		return 2048
	}
	return 4096
}

// rowSortBlock is the block that sorts rows of n ≤ sortRowsCap: the fewest
// threads, a power of two from 32 (at most 4096/rowSortItems, the kernel's
// RS_MAXT), that hold n keys at rowSortItems a thread (the kernel scans its
// 256 digits over the block's threads, so a power of two).
func rowSortBlock(n int) int {
	b := 32
	for b*rowSortItems < n {
		b <<= 1
	}
	return b
}

// topKWarps is the warps a row of the small-k top-k (1, 2, 4 or 8; the
// 8 warps of a block take 8/warps rows): one while a lane's share of the
// row stays within 256 elements and the rows give the GPU 16 warps an SM,
// more for longer rows or fewer rows, as long as a lane keeps at least
// 2*topKMax elements (below that its list takes most of them and the
// merges dominate).
func topKWarps(rows, n, sms int) int {
	w := 1
	for w < 8 && (n > w*32*256 || rows*w < sms*16) && n >= 2*w*32*2*topKMax {
		w <<= 1
	}
	return w
}

// radixPlan is the layout of a radix sort of one row of n and of its
// scratch.
type radixPlan struct {
	blocks, tilesPerBlock int
	passes                int // digit passes (key bytes); slot passes is the identity pass
	valBytes              int // 4 while positions fit int32, else 8
	keys0, keys1          int // scratch offsets: key buffers
	vals0, vals1          int // value (index) buffers
	idx                   int // TopK: the row's int64 argsort
	counts                int // 256 digit counts (int64) a block; not with onesweep
	totals                int // every pass slot's 256 digit totals (int64)
	osTiles               int // onesweep (sort16_gpu.go): its tiles; 0 for three kernels a pass
	counters              int // onesweep: each pass slot's tile counter (uint32)
	status                int // onesweep: each pass slot's status words, 256 a tile (uint32)
	plan                  int // every pass slot's buffers and flags (sort.cuh's radixplan)
	scratch               int // bytes in all; 0 when a block sorts a row
}

// zeroBytes is the scratch a radix sort zeroes first, from p.totals: the
// totals, and with onesweep the tile counters and status words after them.
func (p radixPlan) zeroBytes() int { return p.plan - p.totals }

func alignUp(n int) int { return (n + scratchAlign - 1) / scratchAlign * scratchAlign }

func radixPlanFor(dt DType, n, sms int, indices, topk bool) radixPlan {
	var p radixPlan
	if n <= sortRowsCap(dt) {
		return p
	}
	tiles := (n + radixTile - 1) / radixTile
	p.blocks = min(tiles, sms*radixBlocksPerSM)
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
	if !useOnesweep(n) {
		p.counts = take(radixDigits * p.blocks * 8)
	}
	p.totals = take(radixSlots * radixDigits * 8)
	if useOnesweep(n) {
		_, tile := onesweepShape(dt, indices)
		p.osTiles = (n + tile - 1) / tile
		p.counters = take(radixSlots * onesweepCounterBytes)
		p.status = take((p.passes + 1) * p.osTiles * radixDigits * onesweepStatusBytes)
	}
	p.plan = take(radixSlots * radixPlanWords * 8) // right after what is zeroed
	p.scratch = off
	return p
}

func (t *target) gpuSort(values, indices, x backend.Ptr, rows, n, k int, desc bool, scratch Scratch) error {
	var flags int32
	if desc {
		flags = srtDesc
	}
	// A Sort or an Argsort has k = n and one output (so has a TopK of the
	// whole row, which takes their path); any other TopK with a small k
	// reads each row once. (Sort may be in place, which the top-k kernels,
	// gathering values from x as they write, are not.)
	sortLike := k == n && (values == 0 || indices == 0)
	if !sortLike && k <= topKMax && n <= 1<<31-1 {
		fam := kTopK32
		if k <= topKSmall {
			fam = kTopK16
		}
		w := topKWarps(rows, n, t.sms)
		rowsPerBlock := 8 / w
		return t.launch(fam, 0, clampGrid((rows+rowsPerBlock-1)/rowsPerBlock, t.sms*blocksPerSM),
			dptr(values), dptr(indices), dptr(x), int64(rows), int64(n), int32(k), int32(w), flags)
	}
	if n <= sortRowsCap(t.dt) {
		return t.launchID(kernelID(kRowSort, t.dt, 0), clampGrid(rows, 1<<30), uint32(rowSortBlock(n)),
			dptr(values), dptr(indices), dptr(x), int64(rows), int64(n), int64(k), flags)
	}
	directSort := indices == 0 && k == n   // Sort
	directArgsort := values == 0 && k == n // Argsort
	withIndices, topk := !directSort, !directSort && !directArgsort
	// sortRow sorts a row (keysOut) or argsorts it (idxOut): CUB's onesweep
	// for 4-byte keys (cubsort_gpu.go), else the radix below.
	var sortRow func(x, keysOut, idxOut backend.Ptr) error
	var need, idxAt int
	if useCubSort(t.dt, n) {
		p := cubPlanFor(n, withIndices, topk)
		need, idxAt = p.scratch, p.idx
		sortRow = func(x, keysOut, idxOut backend.Ptr) error {
			return t.cubSort(p, x, keysOut, idxOut, n, flags, scratch.Ptr)
		}
	} else {
		p := radixPlanFor(t.dt, n, t.sms, withIndices, topk)
		need, idxAt = p.scratch, p.idx
		sortRow = func(x, keysOut, idxOut backend.Ptr) error {
			return t.radix(p, x, keysOut, idxOut, n, flags, scratch.Ptr)
		}
	}
	if need > scratch.Bytes {
		return t.errorf("rows of %d need %d bytes of scratch (SortScratch, ArgsortScratch, TopKScratch), given %d: %w",
			n, need, scratch.Bytes, backend.ErrInvalidValue)
	}
	size := backend.Ptr(t.dt.Size())
	for r := range rows {
		xr := x + backend.Ptr(r*n)*size
		switch {
		case directSort:
			if err := sortRow(xr, values+backend.Ptr(r*n)*size, 0); err != nil {
				return err
			}
		case directArgsort:
			if err := sortRow(xr, 0, indices+backend.Ptr(r*k*8)); err != nil {
				return err
			}
		default: // TopK: the row's argsort, then its first k
			idx := scratch.Ptr + backend.Ptr(idxAt)
			if err := sortRow(xr, 0, idx); err != nil {
				return err
			}
			var vr, ir backend.Ptr
			if values != 0 {
				vr = values + backend.Ptr(r*k)*size
			}
			if indices != 0 {
				ir = indices + backend.Ptr(r*k*8)
			}
			if err := t.launch(kSortTake, 0, clampGrid((k+threads-1)/threads, t.sms*blocksPerSM),
				dptr(vr), dptr(ir), dptr(xr), dptr(idx), int64(k)); err != nil {
				return err
			}
		}
	}
	return nil
}

// radix sorts the n keys at x, least significant digit first, into
// keysOut (Sort; it may be x) or their positions into the int64 idxOut
// (Argsort). One kernel counts every pass's digits, one plans the passes
// (skipping those whose digit is the same for every key), then each pass
// slot runs, returning at once for a skipped slot, one onesweep kernel
// (sort16_gpu.go) or, for rows past onesweepMaxKeys, three kernels: each
// block's digit counts, their scan into each block's first place for each
// digit, and the stable scatter. The launches do not depend on the data,
// so the sequence is the same in a captured graph.
func (t *target) radix(p radixPlan, x, keysOut, idxOut backend.Ptr, n int, flags int32, sc backend.Ptr) error {
	totals := sc + backend.Ptr(p.totals)
	plan := sc + backend.Ptr(p.plan)
	counts := sc + backend.Ptr(p.counts)
	if err := t.cs.MemsetD32Async(dptr(totals), 0, uint64(p.zeroBytes()/4)); err != nil {
		return t.errorf("%w", err)
	}
	grid := uint32(p.blocks)
	tpb := int64(p.tilesPerBlock)
	if err := t.launch(kRadixUp, 0, grid, dptr(totals), dptr(x), int64(n), tpb, flags); err != nil {
		return err
	}
	planFlags := flags
	if p.valBytes == 8 {
		planFlags |= srtVin64
	}
	var k1, v0, v1 backend.Ptr
	if idxOut != 0 {
		k1, v0, v1 = sc+backend.Ptr(p.keys1), sc+backend.Ptr(p.vals0), sc+backend.Ptr(p.vals1)
	}
	if err := t.launchID(kernelID(kRadixPlan, Int64, 0), 1, threads, dptr(totals), dptr(plan), dptr(x),
		dptr(sc+backend.Ptr(p.keys0)), dptr(k1), dptr(keysOut), dptr(v0), dptr(v1), dptr(idxOut),
		int64(n), int32(p.passes), planFlags); err != nil {
		return err
	}
	if p.osTiles > 0 {
		return t.onesweep(p, n, idxOut != 0, sc)
	}
	for slot := range p.passes + 1 {
		if err := t.launch(kRadixHist, 0, grid, dptr(counts), dptr(plan), int64(n), int32(slot), tpb, int32(p.blocks)); err != nil {
			return err
		}
		if err := t.launchID(kernelID(kRadixOff, Int64, 0), radixDigits/(threads/32), threads, dptr(counts), dptr(totals), dptr(plan),
			int32(slot), int32(p.blocks)); err != nil {
			return err
		}
		if err := t.launch(kRadixScatter, 0, grid, dptr(counts), dptr(plan), int64(n), int32(slot), tpb, int32(p.blocks)); err != nil {
			return err
		}
	}
	return nil
}
