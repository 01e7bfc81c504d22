package kernels

import (
	"fmt"
	"math"
	"slices"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/internal/devstream"
)

// ReduceOp is a reduction over a set of axes (ReduceAxes).
type ReduceOp uint8

// The reductions ReduceAxes runs.
const (
	ReduceSum    ReduceOp = iota + 1 // Σ; integers give int64, floats their own type
	ReduceProd                       // Π; as ReduceSum
	ReduceMean                       // Σ / count; integers give float64
	ReduceMax                        // the largest; NaN if any is NaN
	ReduceMin                        // the smallest; NaN if any is NaN
	ReduceArgMax                     // int64 index of the first largest (of the first NaN)
	ReduceArgMin                     // int64 index of the first smallest (of the first NaN)
	ReduceAny                        // uint8 1 if any element is nonzero, else 0
	ReduceAll                        // uint8 1 if every element is nonzero, else 0
	numReduceOps
)

// reduceOpInfo: each reduction's name, its kernels (k: the general mode
// as pass 1 and the combination of chunks as pass 2; row and col: the row
// and column modes) and the element types it takes.
var reduceOpInfo = [numReduceOps]struct {
	name        string
	k, row, col kop
	types       dtypeSet
}{
	ReduceSum:    {"Sum", kRSum, kRSumRow, kRSumCol, allTypes},
	ReduceProd:   {"Prod", kRProd, kRProdRow, kRProdCol, allTypes},
	ReduceMean:   {"Mean", kRMean, kRMeanRow, kRMeanCol, allTypes},
	ReduceMax:    {"Max", kRMax, kRMaxRow, kRMaxCol, realTypes},
	ReduceMin:    {"Min", kRMin, kRMinRow, kRMinCol, realTypes},
	ReduceArgMax: {"ArgMax", kRArgMax, kRArgMaxRow, kRArgMaxCol, realTypes},
	ReduceArgMin: {"ArgMin", kRArgMin, kRArgMinRow, kRArgMinCol, realTypes},
	ReduceAny:    {"Any", kRAny, kRAnyRow, kRAnyCol, everyType},
	ReduceAll:    {"All", kRAll, kRAllRow, kRAllCol, everyType},
}

// Valid reports whether op is one of the declared reductions.
func (op ReduceOp) Valid() bool { return op >= ReduceSum && op < numReduceOps }

// String is the reduction's name, "Sum" for ReduceSum.
func (op ReduceOp) String() string {
	if !op.Valid() {
		return fmt.Sprintf("ReduceOp(%d)", uint8(op))
	}
	return reduceOpInfo[op].name
}

// ReduceOutput is the element type op writes for inputs of element type
// dt, or an error wrapping ErrUnsupportedDType when op does not take dt:
//
//	Sum, Prod   the integers → int64; float32, float64, complex64 → the same
//	Mean        the integers → float64; float32, float64, complex64 → the same
//	Max, Min    the real types → the same
//	ArgMax/Min  the real types → int64
//	Any, All    every type, bool included → bool
//
// Integer sums and products are exact in int64 until they pass its range,
// where they wrap. float32 sums, products and means accumulate in float64,
// complex64 ones in complex128, and round once at the end.
func ReduceOutput(op ReduceOp, dt DType) (DType, error) {
	if !op.Valid() {
		return 0, fmt.Errorf("kernels: ReduceAxes: %s is not a reduction: %w", op, backend.ErrInvalidValue)
	}
	info := reduceOpInfo[op]
	if !info.types.has(dt) {
		return 0, fmt.Errorf("kernels: %s does not take %s; it takes %s: %w", info.name, dt, info.types, ErrUnsupportedDType)
	}
	switch op {
	case ReduceSum, ReduceProd:
		if integerTypes.has(dt) {
			return Int64, nil
		}
	case ReduceMean:
		if integerTypes.has(dt) {
			return Float64, nil
		}
	case ReduceArgMax, ReduceArgMin:
		return Int64, nil
	case ReduceAny, ReduceAll:
		return Bool, nil
	}
	return dt, nil
}

// ReduceAxes reduces x over axes into dst. x has shape and strides (in
// elements, ≥ 0, one a dimension: a strided view works as is); axes are
// distinct indices into shape in increasing order. dst is contiguous and
// row-major over the axes not reduced, in their order, with element type
// ReduceOutput(op, T): dst[i] for each combination i of the kept indices
// is the reduction of the elements that share them. No axes reduces
// nothing (each output is its one input, converted); every axis gives one
// value.
//
// ArgMax and ArgMin give the index within the reduced elements, counted
// row-major over the reduced axes (with one axis, the index along it);
// ties give the first index. NaN propagates as in NumPy: Max, Min, ArgMax
// and ArgMin give NaN (its first index); sums, products and means are NaN
// when an element is. An empty reduction gives 0 for Sum, 1 for Prod, NaN
// for Mean, 0 for Any and 1 for All; for Max, Min, ArgMax and ArgMin it is
// an error wrapping ErrEmpty (when there is an output to write). Any and
// All count an element as true when it is nonzero (NaN is nonzero).
//
// The result is deterministic: each output is reduced in an order fixed by
// the shape, strides and device. On a GPU the reduction of a matrix along
// its contiguous rows reads 16-byte vectors, one down a strided axis gives
// each thread its own columns; when the outputs are too few to fill the
// GPU the reduced axis is split across blocks, whose partial results a
// second kernel combines in a fixed order, in scratch (ReduceScratch says
// how much helps; with less, ReduceAxes runs unsplit, slower, never
// wrong). The caller must not reuse scratch before s has run ReduceAxes.
// It is queued on s and returns at once.
func ReduceAxes[T Elem](dev backend.Device, s backend.Stream, op ReduceOp, dst, x backend.Ptr, shape, strides, axes []int, scratch Scratch) error {
	dt := DTypeOf[T]()
	name := "ReduceAxes " + op.String()
	out, err := ReduceOutput(op, dt)
	if err != nil {
		return err
	}
	if dt == Bool {
		// A bool is a byte of 0 or 1, and Any and All ask only whether it
		// is nonzero: uint8's kernels and loops answer that.
		dt = Uint8
	}
	p, err := planReduce(shape, strides, axes)
	if err != nil {
		return opErrorf(name, dt, "%w", err)
	}
	t, err := prepare(name, reduceOpInfo[op].types, dt, dev, s, 0)
	if err != nil || p.nout == 0 {
		return err
	}
	if p.nred == 0 && (op == ReduceMax || op == ReduceMin || op == ReduceArgMax || op == ReduceArgMin) {
		return t.errorf("shape %v over axes %v: the reduced axes are empty, and %s of no elements has no value: %w", shape, axes, op, ErrEmpty)
	}
	if err := t.checkSpanAs(ptrArg{"dst", dst}, uint64(p.nout)*uint64(out.Size()), out); err != nil {
		return err
	}
	if p.nred > 0 {
		if err := t.checkSpan(ptrArg{"x", x}, uint64(p.extent)*uint64(dt.Size())); err != nil {
			return err
		}
	}
	if scratch.Ptr%16 != 0 || scratch.Bytes < 0 {
		return t.errorf("scratch %#x, %d bytes: it must be 16-byte aligned and not negative: %w", uint64(scratch.Ptr), scratch.Bytes, backend.ErrInvalidValue)
	}
	if t.cu == nil {
		return t.enqueue(func() { hostReduceAxes(op, dt, dst, x, &p) })
	}
	if scratch.Ptr == 0 {
		scratch.Bytes = 0
	}
	return t.gpuReduceAxes(op, dst, x, &p, scratch)
}

// ReduceScratch is the scratch, in bytes, with which ReduceAxes of op over
// axes of an array of T of shape and strides runs fastest on dev: 0 when
// it needs none (the host backend, outputs enough to fill the GPU), or
// when the arguments are wrong (ReduceAxes reports that).
func ReduceScratch[T Elem](dev backend.Device, op ReduceOp, shape, strides, axes []int) int {
	if _, err := ReduceOutput(op, DTypeOf[T]()); err != nil {
		return 0
	}
	p, err := planReduce(shape, strides, axes)
	if err != nil || p.nout == 0 || p.nred == 0 {
		return 0
	}
	on, err := devstream.Device(dev)
	if err != nil || on.GPU == nil {
		return 0
	}
	return p.scratchBytes(op, DTypeOf[T](), on.GPU.Info())
}

// scratchBytes is ReduceScratch of p on a GPU described by info: none for
// the cluster mode (one pass through the cluster's shared memory) or an
// unsplit launch, else the split's partials.
func (p *reducePlan) scratchBytes(op ReduceOp, dt DType, info backend.Info) int {
	sms := max(info.MultiProcessors, 1)
	if _, _, ok := p.colCluster(op, dt, 0, sms, clusters(info)); ok {
		return 0
	}
	l := p.launch(op, dt, 0, sms, math.MaxInt)
	if l.chunks <= 1 {
		return 0
	}
	return l.chunks * p.nout * reduceAccBytes(op, dt)
}

// reducePlan is a reduction's layout after simplification: the kept and
// the reduced dimensions, each outermost first, with dimensions of 1
// dropped and neighbours (in their own list) merged where x's strides
// allow, so that a contiguous array reduced over trailing or leading axes
// is one kept and one reduced dimension.
type reducePlan struct {
	nout, nred     int
	oshape, ostr   []int // kept
	rshape, rstr   []int // reduced
	extent         int   // elements x spans: 1 + Σ (d-1)·stride
	shape, strides []int // as given, for messages
}

func planReduce(shape, strides, axes []int) (reducePlan, error) {
	p := reducePlan{shape: shape, strides: strides}
	if len(strides) != len(shape) {
		return p, fmt.Errorf("shape %v has %d dimensions, strides %v %d; each dimension needs a stride: %w", shape, len(shape), strides, len(strides), backend.ErrInvalidValue)
	}
	reduced := make([]bool, len(shape))
	for i, a := range axes {
		if a < 0 || a >= len(shape) {
			return p, fmt.Errorf("shape %v, axes %v: axis %d is out of range; axes must be in [0, %d): %w", shape, axes, a, len(shape), backend.ErrInvalidValue)
		}
		if i > 0 && a <= axes[i-1] {
			return p, fmt.Errorf("shape %v, axes %v: axes must be distinct and increasing: %w", shape, axes, backend.ErrInvalidValue)
		}
		reduced[a] = true
	}
	p.nout, p.nred, p.extent = 1, 1, 1
	for i, d := range shape {
		if d < 0 || strides[i] < 0 {
			return p, fmt.Errorf("shape %v, strides %v: dimension %d is negative; dimensions and strides must be ≥ 0: %w", shape, strides, i, backend.ErrInvalidValue)
		}
		if n := p.nout * p.nred; d != 0 && n > math.MaxInt/d {
			return p, fmt.Errorf("shape %v: the product of the dimensions overflows int: %w", shape, backend.ErrInvalidValue)
		}
		if reduced[i] {
			p.nred *= d
		} else {
			p.nout *= d
		}
	}
	if p.nout == 0 || p.nred == 0 {
		return p, nil
	}
	for i := len(shape) - 1; i >= 0; i-- {
		d, st := shape[i], strides[i]
		if d == 1 {
			continue
		}
		if st != 0 && d-1 > (math.MaxInt-p.extent)/st {
			return p, fmt.Errorf("shape %v, strides %v: x's extent overflows int: %w", shape, strides, backend.ErrInvalidValue)
		}
		p.extent += (d - 1) * st
		sh, str := &p.oshape, &p.ostr
		if reduced[i] {
			sh, str = &p.rshape, &p.rstr
		}
		if k := len(*sh) - 1; k >= 0 && st == (*str)[k]*(*sh)[k] {
			(*sh)[k] *= d
			continue
		}
		*sh = append(*sh, d)
		*str = append(*str, st)
	}
	slices.Reverse(p.oshape)
	slices.Reverse(p.ostr)
	slices.Reverse(p.rshape)
	slices.Reverse(p.rstr)
	return p, nil
}

// Modes of the GPU kernels' first pass (reduce_axes.cuh's RMODE_*).
const (
	rmodeGeneral  = 0 // a thread an output, any layout
	rmodeRowWarp  = 1 // reduced: one contiguous dimension; a warp an output (and chunk)
	rmodeRowBlock = 2 // the same, a block an output (and chunk)
	rmodeCol      = 3 // kept: innermost contiguous; a thread a column, 32-column tiles
	rmodeColVec   = 4 // rmodeCol with a 16-byte vector of columns a thread (colVec), 32 lanes a row;
	// rmodeColVec+1 .. rmodeColVec+3: 16, 8 or 4 lanes a row (narrower tiles, more of them)
	rmodeColVecLast = rmodeColVec + 3
)

// reduceDims is the most kept, and the most reduced, dimensions a GPU
// launch takes after simplification (a contiguous array of up to 8
// dimensions always fits).
const reduceDims = 4

// reduceLaunch is pass 1's shape.
type reduceLaunch struct {
	mode   int
	grid   uint32
	chunks int
}

// Pass 1's split of a reduced axis: a chunk of a row is at least
// reduceMinPerChunk elements (a round of RUNROLL 16-byte loads of each of
// 256 threads, for float32), a chunk of a column at least
// reduceMinRowsPerChunk rows (4 rounds of RUNROLL rows a warp). Rows of at
// most reduceWarpRowBytes take a warp each (a block each would leave most
// of its threads idle).
const (
	reduceMinPerChunk     = 4096
	reduceMinRowsPerChunk = 128
	reduceWarpRowBytes    = 2048
	// reduceWarpRowsMin: rows an SM (two blocks of 8 warps) from which
	// rowWarpLong's reductions take a warp a row whatever the rows' length.
	reduceWarpRowsMin = 2 * threads / 32
	// reduceBlocksPerSM is the blocks of 256 threads the row, column and
	// whole-array pass-1 kernels are sure to keep resident on a
	// multiprocessor (__launch_bounds__(THREADS, 4): at most 64 registers
	// a thread); their grids are sized in its multiples so that no wave
	// runs part full, and 4 blocks' loads in flight (64 KiB) are enough.
	reduceBlocksPerSM = 4
	// reduceWaves is how many rounds of resident blocks a split reduction
	// aims at: two, so that a block's barriers and start overlap another's
	// loads.
	reduceWaves = 2
)

// launch picks pass 1's mode, grid and split for sms multiprocessors and
// scratchBytes of scratch.
func (p *reducePlan) launch(op ReduceOp, dt DType, x backend.Ptr, sms, scratchBytes int) reduceLaunch {
	resident := sms * reduceBlocksPerSM
	target := reduceWaves * resident
	acc := reduceAccBytes(op, dt)
	maxChunks := scratchBytes / acc / p.nout
	switch {
	case len(p.rshape) == 1 && p.rstr[0] == 1 && len(p.oshape) <= reduceDims:
		// Along the contiguous axis: a warp an output for short rows, else
		// a block an output, and the rows split into chunks when the
		// outputs are too few to give every resident block two.
		if p.nred*dt.Size() <= reduceWarpRowBytes || (rowWarpLong(op) && p.nout >= reduceWarpRowsMin*sms) {
			warpsPerBlock := threads / 32
			return reduceLaunch{rmodeRowWarp, clampGrid((p.nout+warpsPerBlock-1)/warpsPerBlock, 16*target), 1}
		}
		chunks := 1
		if p.nout < target {
			chunks = max(1, min((target+p.nout-1)/p.nout, p.nred/reduceMinPerChunk, maxChunks))
		}
		return reduceLaunch{rmodeRowBlock, clampGrid(p.nout*chunks, 16*target), chunks}
	case len(p.oshape) >= 1 && p.ostr[len(p.ostr)-1] == 1 && len(p.oshape) <= reduceDims && len(p.rshape) <= reduceDims:
		inner := p.oshape[len(p.oshape)-1]
		groups := p.nout / inner
		mode, width := rmodeCol, 32
		// split: below this many tiles the reduced axis is split into chunks.
		split := target
		if p.colVec(dt, x) {
			if l, ok := p.colSplit(dt, groups, inner, sms, maxChunks); ok {
				return l
			}
			// Vectors of columns, unsplit by colSplit: tiles as wide as
			// 32 lanes of 16 bytes while that gives two tiles an SM, else
			// narrower (down to 4 lanes, 64 bytes of a row: the columns
			// of a matrix with too few rows, or scratch, for the split),
			// so that the tiles alone fill the GPU and the rows stay whole
			// (one pass, no partials) unless even the narrowest tiles are
			// fewer than the SMs.
			mode, width = rmodeColVec, 32*16/dt.Size()
			for mode < rmodeColVecLast && groups*ceilDiv(inner, width) < 2*sms {
				mode, width = mode+1, width/2
			}
			split = sms
		}
		tiles := groups * ceilDiv(inner, width)
		chunks := 1
		if tiles < split {
			chunks = max(1, min((target+tiles-1)/tiles, p.nred/reduceMinRowsPerChunk, maxChunks))
		}
		if chunks == 1 {
			return reduceLaunch{mode, clampGrid(tiles, 16*target), 1}
		}
		// The kernel reads the chunk from blockIdx.x / (grid / chunks):
		// the grid is exactly the tiles of every chunk.
		return reduceLaunch{mode, uint32(tiles * chunks), chunks}
	}
	return reduceLaunch{rmodeGeneral, clampGrid((p.nout+threads-1)/threads, sms*blocksPerSM), 1}
}

// The split of columns read as vectors (colSplit), set from exp/colsum's
// bench on an H100 (4096×4096 float32 down the columns).
const (
	// colSplitLanesLog picks the split's tiles: 32 >> colSplitLanesLog
	// lanes of 16 bytes a row (rmodeColVec + colSplitLanesLog), a warp
	// reading 512 >> colSplitLanesLog contiguous bytes of a row.
	colSplitLanesLog = 1 // 16 lanes: 65536×1024 float32 93.6 µs, 32 lanes 93.9
	// colSplitBlocksPerSM is the blocks an SM the split aims at (the
	// bench's waves times reduceBlocksPerSM): tiles × chunks ≈ it × sms.
	colSplitBlocksPerSM = 4 // 65536×1024: 32 chunks, 512 blocks
	// colSplitMinRows is the fewest rows a chunk (each chunk writes one
	// partial a column: with 128 rows its partials are 1/32 of the float32
	// rows it read, in float64).
	colSplitMinRows = reduceMinRowsPerChunk
)

// colSplit is the launch of a reduction down columns read as vectors whose
// widest tiles are too few to fill the GPU (fewer than two an SM): rather
// than narrower tiles over whole columns, whose 64-byte reads of a row
// leave memory streaming at 0.81 of copy's rate for 4096×4096 float32,
// tiles of 32 >> colSplitLanesLog lanes, each warp reading
// 512 >> colSplitLanesLog contiguous bytes of a row, with the rows split
// into chunks so that tiles × chunks fill the GPU colSplitBlocksPerSM an
// SM; pass 2 adds each column's chunks in chunk order. Every reduction
// takes it (exp/colsum's bench times Max and ArgMax too). ok is false (the
// caller narrows the tiles instead) when the tiles are many enough without
// a split, or the rows or the scratch too few for a split that fills the
// GPU twice over its SMs.
func (p *reducePlan) colSplit(dt DType, groups, inner, sms, maxChunks int) (reduceLaunch, bool) {
	if groups*ceilDiv(inner, 32*16/dt.Size()) >= 2*sms {
		return reduceLaunch{}, false // the widest tiles fill the GPU in one pass
	}
	if groups*ceilDiv(inner, 4*16/dt.Size()) >= sms {
		// The narrowest tiles cover the SMs in one pass: on the H100 that
		// beat every split of 4096×4096 float32 (28.1 µs against 29.4 at
		// best, exp/colsum 2026-11-26 12:39 UTC), while 65536×1024 gained
		// from the split (93.6 µs against 105.3).
		return reduceLaunch{}, false
	}
	mode := rmodeColVec + colSplitLanesLog
	tiles := groups * ceilDiv(inner, (32>>colSplitLanesLog)*16/dt.Size())
	chunks := min(ceilDiv(colSplitBlocksPerSM*sms, tiles), p.nred/colSplitMinRows, maxChunks)
	if chunks < 2 || tiles*chunks < 2*sms {
		return reduceLaunch{}, false
	}
	// The kernel reads the chunk from blockIdx.x / (grid / chunks): the
	// grid is exactly the tiles of every chunk.
	return reduceLaunch{mode, uint32(tiles * chunks), chunks}, true
}

// The cluster mode of the column reductions (reduce_axes.cuh's
// col_cluster): the rows of a strip of columns split among the blocks of
// one cluster, combined through the cluster's shared memory.
const (
	colClusterBlocks = 8 // COLC_CL: the blocks of a cluster, the rows' runs
	// colClusterMinRows is the fewest rows it takes: 128 a block, as
	// colSplit's chunks.
	colClusterMinRows = colClusterBlocks * reduceMinRowsPerChunk
)

// colClusterOps are the reductions with cluster kernels (the first of each
// one's three): the sums and extremes of floats, the ones columns are most
// often reduced by.
var colClusterOps = [numReduceOps]kop{ReduceSum: kRSumColC, ReduceMean: kRMeanColC, ReduceMax: kRMaxColC, ReduceMin: kRMinColC}

// colCluster is the cluster launch (kernel and grid) of a reduction down
// the columns of a matrix (one kept dimension, contiguous, and one reduced, both read as
// 16-byte vectors: colVec) on a GPU with clusters (compute capability
// 9.0): strips of 32 >> lg lanes of 16 bytes a row, each strip's rows in
// colClusterBlocks runs, one block a run; the kernel is op's for strips
// of that width (colClusterOps[op] + lg). lg is the smallest (the widest
// strips, 512 contiguous bytes of a row a warp at 0) that still gives at
// least 7/4 blocks an SM: on the H100 4096×4096 float32 ran best at 256
// blocks of 32 lanes (0.916 of a copy's bandwidth), 65536×1024 at 256
// blocks of 8 lanes (0.976), where wider strips left SMs idle
// (exp/colsum3, 2026-11-26 18:20-18:40 UTC). ok is false where the kernels or
// the GPU lack the mode, the layout is another, the rows are fewer than
// colClusterMinRows or even the narrowest strips too few; the other modes
// take those.
func (p *reducePlan) colCluster(op ReduceOp, dt DType, x backend.Ptr, sms int, clusters bool) (k kop, grid uint32, ok bool) {
	k = colClusterOps[op]
	if !clusters || k == 0 || !kops[k].types.has(dt) || len(p.oshape) != 1 || p.ostr[0] != 1 ||
		len(p.rshape) != 1 || p.nred < colClusterMinRows || !p.colVec(dt, x) {
		return 0, 0, false
	}
	for lg := range 3 {
		strips := ceilDiv(p.oshape[0], (32>>lg)*16/dt.Size())
		if blocks := strips * colClusterBlocks; 4*blocks >= 7*sms && blocks <= math.MaxUint32 {
			return k + kop(lg), uint32(blocks), true
		}
	}
	return 0, 0, false
}

// clusters reports whether a GPU runs thread-block clusters (compute
// capability 9.0 and up), which colCluster needs.
func clusters(info backend.Info) bool { return info.Major >= 9 }

// kernel is the family that runs pass 1 in mode m.
func (l reduceLaunch) kernel(op ReduceOp) kop {
	switch {
	case l.mode == rmodeRowWarp || l.mode == rmodeRowBlock:
		return reduceOpInfo[op].row
	case l.mode >= rmodeCol && l.mode <= rmodeColVecLast:
		return reduceOpInfo[op].col
	}
	return reduceOpInfo[op].k
}

// rowWarpLong reports whether op reduces long contiguous rows a warp a row
// (rather than a block a row) when there are enough rows to fill the GPU
// (reduceWarpRowsMin an SM): a warp streams its row with no barrier, and
// its folds of other rows' loads overlap. It is the faster shape for the
// comparing reductions, whose folds cost more than an add (ArgMax of
// 4096×4096 float32 rows: 38.9 µs a block a row on an H100); sums keep a
// block a row, which ran at 0.91 of copy's bandwidth there.
func rowWarpLong(op ReduceOp) bool {
	switch op {
	case ReduceMax, ReduceMin, ReduceArgMax, ReduceArgMin:
		return true
	}
	return false
}

// pass2Grid sizes pass 2: a block an output below 32 outputs, else a block
// a tile of 32 (reduce_axes.cuh's raxes2).
func pass2Grid(nout, sms int) uint32 {
	if nout < 32 {
		return clampGrid(nout, nout)
	}
	return clampGrid((nout+31)/32, sms*blocksPerSM)
}

// colVec reports whether the column mode can read 16-byte vectors of
// columns: elements of 4 or 8 bytes, one reduced dimension, and every
// vector a lane reads 16-byte aligned (x, each row's start and the
// innermost kept dimension whole vectors).
func (p *reducePlan) colVec(dt DType, x backend.Ptr) bool {
	size := dt.Size()
	if size < 4 || len(p.rshape) > 1 || len(p.oshape) == 0 || x%16 != 0 {
		return false // len(p.oshape) == 0: one output (SumCols of one column), no columns to read as vectors
	}
	k := 16 / size
	last := len(p.oshape) - 1
	if p.oshape[last]%k != 0 {
		return false
	}
	for _, st := range p.ostr[:last] {
		if st%k != 0 {
			return false
		}
	}
	return len(p.rstr) == 0 || p.rstr[0]%k == 0
}

// reduceAccBytes is the size of one partial result of op on dt in scratch:
// the accumulator (float64, int64 or complex128 for sums, products and
// means; the element for Max and Min; 16 bytes of value and index for
// ArgMax and ArgMin; one byte for Any and All), rounded up to 8.
func reduceAccBytes(op ReduceOp, dt DType) int {
	switch op {
	case ReduceMax, ReduceMin:
		return 8
	case ReduceArgMax, ReduceArgMin:
		return 16
	case ReduceAny, ReduceAll:
		return 8
	}
	if dt == Complex64 {
		return 16
	}
	return 8
}

// reduceArgs is pass 1's arguments: dst, partials, x, nout, nred, mode,
// chunks, then the kept shape and strides and the reduced shape and
// strides, each right-aligned in reduceDims values (dimensions of 1 and
// stride 0 in front).
func (p *reducePlan) args(dst, partials, x backend.Ptr, l reduceLaunch) []any {
	args := make([]any, 0, 7+4*reduceDims)
	args = append(args, dptr(dst), dptr(partials), dptr(x), int64(p.nout), int64(p.nred), int32(l.mode), int64(l.chunks))
	pad := func(vals []int, fillv int64) {
		for i := range reduceDims {
			v := fillv
			if j := i - (reduceDims - len(vals)); j >= 0 {
				v = int64(vals[j])
			}
			args = append(args, v)
		}
	}
	pad(p.oshape, 1)
	pad(p.ostr, 0)
	pad(p.rshape, 1)
	pad(p.rstr, 0)
	return args
}

func (t *target) gpuReduceAxes(op ReduceOp, dst, x backend.Ptr, p *reducePlan, scratch Scratch) error {
	if len(p.oshape) > reduceDims || len(p.rshape) > reduceDims {
		return t.errorf("shape %v, strides %v: %d kept and %d reduced dimensions after merging; a GPU reduction takes at most %d of each (copy the array contiguous first): %w",
			p.shape, p.strides, len(p.oshape), len(p.rshape), reduceDims, backend.ErrNotSupported)
	}
	if k, grid, ok := p.colCluster(op, t.dt, x, t.sms, clusters(t.cu.Info())); ok {
		return t.launch(k, 0, grid, dptr(dst), dptr(x), int64(p.oshape[0]), int64(p.nred), int64(p.rstr[0]))
	}
	l := p.launch(op, t.dt, x, t.sms, scratch.Bytes)
	if err := t.launch(l.kernel(op), 0, l.grid, p.args(dst, scratch.Ptr, x, l)...); err != nil {
		return err
	}
	if l.chunks == 1 {
		return nil
	}
	return t.launch(reduceOpInfo[op].k, 1, pass2Grid(p.nout, t.sms),
		dptr(dst), dptr(scratch.Ptr), int64(p.nout), int64(p.nred), int64(l.chunks))
}

// checkSpanAs is checkSpan for an argument whose elements are of type dt
// rather than the operation's.
func (t *target) checkSpanAs(a ptrArg, bytes uint64, dt DType) error {
	saved := t.dt
	t.dt = dt
	err := t.checkSpan(a, bytes)
	t.dt = saved
	if err != nil {
		// Name the operation's own type in the message, as every error does.
		return err
	}
	return nil
}
