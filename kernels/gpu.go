package kernels

import (
	"bytes"
	"compress/gzip"
	"embed"
	"fmt"
	"io"
	"math"
	"math/bits"
	"regexp"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/internal/devstream"
)

// The kernels are embedded gzip-compressed: as machine code for two GPU
// generations and as PTX they are several MiB (a fifth of that
// compressed), which every program linking cuarray would carry. Each is
// unpacked once, at first use, and only the one the GPU loads is needed.

// ptxGz is kernels/cuda/kernels.cu compiled to PTX by scripts/gen-ptx.sh.
// The driver compiles it for the GPU when the module is loaded, once per
// context.
//
//go:embed ptx/kernels.ptx.gz
var ptxGz []byte

// fatbinFS holds the same kernels as machine code for sm_80 and sm_90 in a
// fatbin (scripts/gen-ptx.sh), loaded first so that on those GPUs loading
// the module compiles nothing; other GPUs get the PTX. It is in pieces of
// 8 MiB, kernels.fatbin.NN.gz, each its own gzip stream, so that they
// unpack at once on goroutines of their own (empty pieces read as no
// fatbin).
//
//go:embed ptx/kernels.fatbin.*.gz
var fatbinFS embed.FS

// fatbinParts are the fatbin's pieces in order.
var fatbinParts = sync.OnceValue(func() [][]byte {
	entries, err := fatbinFS.ReadDir("ptx")
	if err != nil {
		return nil
	}
	var parts [][]byte
	for _, e := range entries { // ReadDir sorts by name: the pieces' order
		b, err := fatbinFS.ReadFile("ptx/" + e.Name())
		if err != nil {
			return nil
		}
		parts = append(parts, b)
	}
	return parts
})

// ptxImage and cubinImage are the embedded images, unpacked at first use,
// once a process: the fatbin always (50 MB, its pieces at once), the PTX
// (32 MB) only where the fatbin does not load.
var (
	ptxImage   = sync.OnceValue(func() []byte { return gunzip(ptxGz) })
	cubinImage = sync.OnceValue(func() []byte { return gunzipParts(fatbinParts()) })
)

// gunzipParts unpacks gzip pieces, each on a goroutine of its own, into one
// buffer: their concatenation. As one stream the 50 MB of the fatbin took
// 0.38 s on the H100's host and 0.4-0.9 s on a 2-core one. A piece that
// does not unpack to the size its trailer gives makes the whole read as
// empty, as gunzip does.
func gunzipParts(parts [][]byte) []byte {
	offs := make([]int, len(parts)+1)
	for i, p := range parts {
		n := gzipSize(p)
		if n < 0 {
			return nil
		}
		offs[i+1] = offs[i] + n
	}
	if offs[len(parts)] == 0 {
		return nil
	}
	out := make([]byte, offs[len(parts)])
	var wg sync.WaitGroup
	var failed atomic.Bool
	for i, p := range parts {
		wg.Go(func() {
			if !gunzipInto(out[offs[i]:offs[i+1]], p) {
				failed.Store(true)
			}
		})
	}
	wg.Wait()
	if failed.Load() {
		return nil
	}
	return out
}

// gzipSize is the unpacked size a gzip stream's trailer gives (its last
// four bytes, the size mod 2^32): 0 for nothing, -1 for what is too short
// to be a gzip stream or claims more than deflate can give (1032 bytes a
// byte), which a damaged trailer could, so that no one allocates for it.
func gzipSize(b []byte) int {
	n := len(b)
	switch {
	case n == 0:
		return 0
	case n < 18: // a gzip header and trailer
		return -1
	}
	size := int(uint32(b[n-4]) | uint32(b[n-3])<<8 | uint32(b[n-2])<<16 | uint32(b[n-1])<<24)
	if size > 1032*n {
		return -1
	}
	return size
}

// gunzipInto unpacks b into dst, which must be exactly its unpacked size.
func gunzipInto(dst, b []byte) bool {
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return false
	}
	if _, err := io.ReadFull(r, dst); err != nil {
		return false
	}
	// Nothing past dst: the stream ends there, its checksum verified.
	var one [1]byte
	n, err := r.Read(one[:])
	return n == 0 && err == io.EOF
}

// gunzip unpacks an embedded image of one gzip stream, as gunzipParts
// unpacks a piece: into one buffer of the size its trailer gives, its
// length and checksum checked. A file that does not unpack (which the
// tests rule out for the committed ones) reads as empty, which the loader
// reports as missing kernels.
func gunzip(b []byte) []byte { return gunzipParts([][]byte{b}) }

// placeholderMarker marks the PTX file committed before any nvcc has run.
const placeholderMarker = "gocuda-ptx-placeholder"

// kop is a family of kernels: one kernel (or two, for reductions) for each
// dtype it takes.
type kop uint8

const (
	kFill kop = iota
	kAdd
	kSub
	kMul
	kDiv
	kAddScalar
	kSubScalar
	kMulScalar
	kDivScalar
	kAxpy
	kReluGrad
	kSum
	kMax
	kMin
	kDot
	kSumRows
	kMaxRows

	// The layers of a network (nn.go).
	kAddRowVec
	kSumCols
	kSoftmaxXent

	// Binary operations on strided operands (strided.go), in kAdd's order.
	kAddStrided
	kSubStrided
	kMulStrided
	kDivStrided

	// Strided copies (views: copy_strided.go).
	kCopyStrided
	kTranspose
	// Reductions over axes (reduce_axes.go): pass 1 reduces, pass 2
	// combines the chunks of a split reduced axis.
	kRSum
	kRProd
	kRMean
	kRMax
	kRMin
	kRArgMax
	kRArgMin
	kRAny
	kRAll
	// Scans and sorting (scansort.go, cuda/scan_sort.cuh).
	kScanRows // pass 1: chunk partials; pass 2: scan along a contiguous axis
	kScanCols // the same down a strided axis
	// Construction and indexing (index.go).
	kArange
	kLinspace
	kEye
	kConcat
	kTake
	kScatter
	kScatterAdd
	// Reduce tuning (reduce_axes.go, cuda/reduce_axes.cuh): the row and
	// column modes of each reduction over axes, a lean kernel each, so
	// that each keeps the blocks resident that its grid assumes.
	kRSumRow
	kRSumCol
	kRProdRow
	kRProdCol
	kRMeanRow
	kRMeanCol
	kRMaxRow
	kRMaxCol
	kRMinRow
	kRMinCol
	kRArgMaxRow
	kRArgMaxCol
	kRArgMinRow
	kRArgMinCol
	kRAnyRow
	kRAnyCol
	kRAllRow
	kRAllCol
	// A strided scan's carry-in of each chunk (scansort_gpu.go), between
	// kScanCols' passes.
	kScanColsCarry
	// sort (scansort.go, scansort_gpu.go, cuda/sort.cuh).
	kRowSort      // a block sorts a row (radix sort in shared memory)
	kRadixUp      // every pass's digit totals in one read
	kRadixPlan    // which passes run and their buffers (one block)
	kRadixHist    // a pass's digit counts of each block
	kRadixOff     // a pass's counts scanned into each block's first place for each digit
	kRadixScatter // a pass's stable scatter
	kSortTake     // TopK of a long row: values and indices of its argsort's first k
	// sort's small-k top-k (sort_gpu.go, cuda/sort.cuh).
	kTopK16 // k ≤ 16: lists in registers merged by warp minima
	kTopK32 // k ≤ 32
	// sort16: the long-row radix sort's onesweep digit pass (sort16_gpu.go,
	// cuda/sort16.cuh).
	kOnesweep  // rank a tile, look back for each digit's place, scatter: a sort's keys
	kOnesweepV // the same with values: an argsort's or a top-k's passes
	// cubsort: the long-row sort of 4-byte keys by CUB's onesweep agents
	// (cubsort_gpu.go, cuda/cubsort.cuh).
	kCubKey       // keys (and positions) of x and every pass's digit counts
	kCubUnkey     // a sort's keys back into values
	kCubExsum     // each pass's digit counts into its digits' starts
	kCubOnesweep  // CUB's onesweep digit pass, keys alone
	kCubOnesweepV // the same with uint32 positions
	kCubWiden     // uint32 positions into the int64 output
	// Reductions down the columns of a matrix by thread-block clusters
	// (reduce_axes.go's colCluster, cuda/reduce_axes.cuh's col_cluster).
	// Three kernels each, of strips of 32, 16 and 8 lanes (lg 0, 1, 2),
	// consecutive: colClusterOps[op] + kop(lg).
	kRSumColC
	kRSumColC1
	kRSumColC2
	kRMeanColC
	kRMeanColC1
	kRMeanColC2
	kRMaxColC
	kRMaxColC1
	kRMaxColC2
	kRMinColC
	kRMinColC1
	kRMinColC2
	numKops
)

// kops describes each family: its kernels' name, the dtypes it has kernels
// for, and whether it is a two-pass reduction (gocuda_sum_f32_pass1 and
// _pass2) rather than one kernel (gocuda_add_f32).
// moved are the types with kernels of their own for the families that only
// move bits (int8, int16 and uint32 take others': moveAs).
var moved = allTypes&^narrowInts | halfTypes

var kops = [numKops]struct {
	name    string
	types   dtypeSet
	twoPass bool
}{
	// The float16 and bfloat16 kernels of these families are in
	// half_ops.cuh (half.cuh has fill's).
	kFill:      {"fill", moved, false},
	kAdd:       {"add", allTypes | halfTypes, false},
	kSub:       {"sub", allTypes | halfTypes, false},
	kMul:       {"mul", allTypes | halfTypes, false},
	kDiv:       {"div", allTypes | halfTypes, false},
	kAddScalar: {"adds", allTypes | halfTypes, false},
	kSubScalar: {"subs", allTypes | halfTypes, false},
	kMulScalar: {"muls", allTypes | halfTypes, false},
	kDivScalar: {"divs", allTypes | halfTypes, false},
	kAxpy:      {"axpy", inexactTypes | halfTypes, false},
	kReluGrad:  {"relugrad", floatTypes | halfTypes, false},
	kSum:       {"sum", allTypes, true},
	kMax:       {"max", realTypes, true},
	kMin:       {"min", realTypes, true},
	kDot:       {"dot", floatTypes, true},
	kSumRows:   {"sumrows", floatTypes, false},
	kMaxRows:   {"maxrows", floatTypes, false},

	// The layers of a network (nn.go).
	kAddRowVec:   {"addrowvec", floatTypes, false},
	kSumCols:     {"sumcols", floatTypes, true},
	kSoftmaxXent: {"softmaxxent", floatTypes, false},

	// Binary operations on strided operands (strided.go).
	kAddStrided: {"add_strided", allTypes | halfTypes, false},
	kSubStrided: {"sub_strided", allTypes | halfTypes, false},
	kMulStrided: {"mul_strided", allTypes | halfTypes, false},
	kDivStrided: {"div_strided", allTypes | halfTypes, false},

	// Strided copies (views: copy_strided.go).
	kCopyStrided: {"copy_strided", moved, false},
	kTranspose:   {"transpose", moved, false},
	// Reductions over axes (reduce_axes.go).
	kRSum:    {"rsum", allTypes, true},
	kRProd:   {"rprod", allTypes, true},
	kRMean:   {"rmean", allTypes, true},
	kRMax:    {"rmax", realTypes, true},
	kRMin:    {"rmin", realTypes, true},
	kRArgMax: {"rargmax", realTypes, true},
	kRArgMin: {"rargmin", realTypes, true},
	kRAny:    {"rany", allTypes, true},
	kRAll:    {"rall", allTypes, true},
	// Scans and sorting (scansort.go, cuda/scan_sort.cuh).
	kScanRows: {"scanrows", realTypes, true},
	kScanCols: {"scancols", realTypes, true},
	// Construction and indexing (index.go).
	kArange:     {"arange", realTypes | halfTypes, false},
	kLinspace:   {"linspace", realTypes | halfTypes, false},
	kEye:        {"eye", moved | setOf(Int16), false},
	kConcat:     {"concat", moved, false},
	kTake:       {"take", moved, false},
	kScatter:    {"scatter", moved, false},
	kScatterAdd: {"scatteradd", allTypes &^ setOf(Int8, Uint32), false},
	// Reduce tuning (reduce_axes.go).
	kRSumRow:    {"rsumrow", allTypes, false},
	kRSumCol:    {"rsumcol", allTypes, false},
	kRProdRow:   {"rprodrow", allTypes, false},
	kRProdCol:   {"rprodcol", allTypes, false},
	kRMeanRow:   {"rmeanrow", allTypes, false},
	kRMeanCol:   {"rmeancol", allTypes, false},
	kRMaxRow:    {"rmaxrow", realTypes, false},
	kRMaxCol:    {"rmaxcol", realTypes, false},
	kRMinRow:    {"rminrow", realTypes, false},
	kRMinCol:    {"rmincol", realTypes, false},
	kRArgMaxRow: {"rargmaxrow", realTypes, false},
	kRArgMaxCol: {"rargmaxcol", realTypes, false},
	kRArgMinRow: {"rargminrow", realTypes, false},
	kRArgMinCol: {"rargmincol", realTypes, false},
	kRAnyRow:    {"ranyrow", allTypes, false},
	kRAnyCol:    {"ranycol", allTypes, false},
	kRAllRow:    {"rallrow", allTypes, false},
	kRAllCol:    {"rallcol", allTypes, false},
	// A strided scan's carry-in (scansort_gpu.go).
	kScanColsCarry: {"scancolscarry", realTypes, false},
	// sort (scansort.go, scansort_gpu.go, cuda/sort.cuh).
	kRowSort:      {"rowsort", realTypes, false},
	kRadixUp:      {"radixup", realTypes, false},
	kRadixPlan:    {"radixplan", setOf(Int64), false},
	kRadixHist:    {"radixhist", realTypes, false},
	kRadixOff:     {"radixoff", setOf(Int64), false},
	kRadixScatter: {"radixscatter", realTypes, false},
	kSortTake:     {"sorttake", realTypes, false},
	// sort's small-k top-k (sort_gpu.go, cuda/sort.cuh).
	kTopK16: {"topk16", realTypes, false},
	kTopK32: {"topk32", realTypes, false},
	// sort16: the onesweep digit pass (sort16_gpu.go, cuda/sort16.cuh).
	kOnesweep:  {"onesweep", realTypes, false},
	kOnesweepV: {"onesweepv", realTypes, false},
	// cubsort: CUB's onesweep agents (cubsort_gpu.go, cuda/cubsort.cuh).
	kCubKey:       {"cub_key", cubSortTypes, false},
	kCubUnkey:     {"cub_unkey", cubSortTypes, false},
	kCubExsum:     {"cub_exsum", setOf(Uint32), false},
	kCubOnesweep:  {"cub_onesweep", setOf(Uint32), false},
	kCubOnesweepV: {"cub_onesweepv", setOf(Uint32), false},
	kCubWiden:     {"cub_widen", setOf(Uint32), false},
	// Column reductions by clusters (reduce_axes.go's colCluster).
	kRSumColC:   {"rsumcolc0", floatTypes, false},
	kRSumColC1:  {"rsumcolc1", floatTypes, false},
	kRSumColC2:  {"rsumcolc2", floatTypes, false},
	kRMeanColC:  {"rmeancolc0", floatTypes, false},
	kRMeanColC1: {"rmeancolc1", floatTypes, false},
	kRMeanColC2: {"rmeancolc2", floatTypes, false},
	kRMaxColC:   {"rmaxcolc0", floatTypes, false},
	kRMaxColC1:  {"rmaxcolc1", floatTypes, false},
	kRMaxColC2:  {"rmaxcolc2", floatTypes, false},
	kRMinColC:   {"rmincolc0", floatTypes, false},
	kRMinColC1:  {"rmincolc1", floatTypes, false},
	kRMinColC2:  {"rmincolc2", floatTypes, false},
}

const spinKernel = "gocuda_spin"

// Kernel IDs index a module's function cache: (family, dtype, pass), the
// spin kernel, then the kernels generated from the table of elementwise
// operations (optable.go, genKernelNames).
const (
	spinID     = int(numKops) * numDTypes * 2
	genBase    = spinID + 1
	numKernels = genBase + numGenKernels
)

func kernelID(k kop, dt DType, pass int) int { return (int(k)*numDTypes+int(dt))*2 + pass }

// kernelName is the exported name of a kernel in kernels.cu: gocuda_add_f32,
// gocuda_sum_f32_pass1 (pass 0) and gocuda_sum_f32_pass2 (pass 1).
func kernelName(k kop, dt DType, pass int) string {
	name := "gocuda_" + kops[k].name + "_" + dt.suffix()
	if kops[k].twoPass {
		name += fmt.Sprintf("_pass%d", pass+1)
	}
	return name
}

// nameByID is kernelName for every kernel ID, so that launches build no
// strings.
var nameByID = func() (names [numKernels]string) {
	for k := kop(0); k < numKops; k++ {
		for dt := Float32; dt < numDTypes; dt++ {
			for p := range 2 {
				names[kernelID(k, dt, p)] = kernelName(k, dt, p)
			}
		}
	}
	names[spinID] = spinKernel
	for i, name := range genKernelNames {
		names[genKernelID(i)] = name
	}
	return names
}()

// kernelNames lists every kernel the Go side may look up.
func kernelNames() []string {
	var names []string
	for k := kop(0); k < numKops; k++ {
		passes := 1
		if kops[k].twoPass {
			passes = 2
		}
		for dt := Float32; dt < numDTypes; dt++ {
			if !kops[k].types.has(dt) {
				continue
			}
			for p := 0; p < passes; p++ {
				names = append(names, kernelName(k, dt, p))
			}
		}
	}
	names = append(names, spinKernel)
	return append(names, genKernelNames[:]...)
}

var entryRE = regexp.MustCompile(`(?m)^\s*(?:\.visible\s+|\.weak\s+)?\.entry\s+([A-Za-z_$%][\w$]*)`)

// PTXEntries lists the kernels (.entry directives) a PTX image defines, in
// order: what a module loaded from it offers to look up by name.
func PTXEntries(ptx []byte) []string {
	var names []string
	for _, m := range entryRE.FindAllSubmatch(ptx, -1) {
		names = append(names, string(m[1]))
	}
	return names
}

// isPlaceholder reports whether the PTX is the placeholder committed before
// nvcc has run, or holds no kernel at all. It looks for the marker and for
// any ".entry" with bytes.Contains, not PTXEntries: on the 32 MB of the
// embedded PTX the regular expression took 0.4 s on the build host and
// 1.3 s of CPU on the H100's, before every process's first kernel.
func isPlaceholder(ptx []byte) bool {
	head := ptx[:min(len(ptx), 1024)] // the placeholder's marker is on its first line
	return bytes.Contains(head, []byte(placeholderMarker)) || !bytes.Contains(ptx, []byte(".entry"))
}

// Launch shape. Blocks of 256 threads, and at most blocksPerSM blocks per
// multiprocessor: 2048 threads, the most an SM of compute capability 8.0 to
// 9.0 keeps resident, so one wave covers the GPU and grid-stride loops do
// the rest.
const (
	threads     = 256
	blocksPerSM = 8
	// reduceMinPerThread: reductions give each thread at least this many
	// elements, so that small arrays use few blocks (one block: no second
	// pass).
	reduceMinPerThread = 16
	// maxPartials bounds pass 1's grid, and so the scratch buffer.
	maxPartials = 4096
	// scratchBytes: the result (16 bytes, at offset 0) and the partials (at
	// partialsOffset), up to 16 bytes each (complex128).
	partialsOffset = 256
	scratchBytes   = partialsOffset + maxPartials*16
)

func clampGrid(blocks, limit int) uint32 {
	return uint32(max(min(blocks, limit), 1))
}

// ewUnroll is the 16-byte vectors an elementwise kernel's thread loads at
// once (EW_UNROLL in cuda/optable.cuh).
const ewUnroll = 4

// elementwiseGrid sizes an elementwise launch: ewUnroll vectors a thread,
// so that each thread's loads are in flight together, with no cap at one
// wave of the GPU (the kernels' grid-stride loops would allow one): on an
// H100 exp of 4096² float32 ran at 0.94 of copy's bandwidth with the grid
// capped at 8 blocks an SM and at 0.98 uncapped, the conversion to
// bfloat16 and the comparison gained alike (2026-11-26, 10:11 UTC): a wave
// that the kernels' registers do not let fit leaves a tail. Small arrays
// still spread over up to two blocks an SM, a vector a thread.
func elementwiseGrid(n int, dt DType, sms int) uint32 {
	return chunkGrid(n, 16/dt.Size(), ewUnroll, sms)
}

// chunkGrid: per chunks of perChunk elements a thread, at least
// min(chunks / threads, 2 SMs) blocks. perChunk is a power of two (16
// bytes of elements, or a conversion's convK): the chunks are counted by
// a shift, not by the 64-bit division (tens of cycles) that every small
// operation's launch would otherwise pay.
func chunkGrid(n, perChunk, per, sms int) uint32 {
	sh := bits.TrailingZeros(uint(perChunk))
	chunks := (n + 1<<sh - 1) >> sh
	blocks := (chunks + threads*per - 1) / (threads * per)
	spread := min((chunks+threads-1)/threads, 2*sms)
	return clampGrid(max(blocks, spread), math.MaxInt32)
}

// convMaxIn and convChunks size the launches of the narrowing conversions
// (econv in cuda/optable.cuh: CONV_MAXIN, the most bytes of input in a
// chunk; convChunks, the chunks a thread covers, CONV_UNROLL of them a
// group double-buffered). exp/conv's bench sweeps both.
const convMaxIn = 32

// convChunks is the chunks a thread of a narrowing conversion covers: one
// for 2-byte outputs, two otherwise. exp/conv's sweep on the H100
// (2026-11-26 12:39 UTC, econv<32, 2>, 4096² elements): float32 → bfloat16
// 2815 GB/s at one chunk a thread, 2753 at two, 2748 at four (torch 2734);
// float64 → float32 2900 at one, 2927 at two; float32 → uint8 2499 at
// one, 2720 at two.
func convChunks(to DType) int {
	if to.Size() == 2 {
		return 1
	}
	return 2
}

// convK is the elements in a chunk of a narrowing conversion from → to:
// one 16-byte store, at most convMaxIn bytes of input (optable.cuh's
// ConvK).
func convK(from, to DType) int {
	return min(16/to.Size(), convMaxIn/from.Size())
}

// convertGrid sizes a conversion's launch as its kernel moves it: a
// narrowing conversion (to narrower than from) in chunks of convK
// elements, convChunks a thread; any other as elementwiseGrid of the wider
// type (the kernel is emap1). The kernels are grid-stride loops, correct
// for any grid (an unaligned view takes smaller chunks); the grid only
// sets the speed.
func convertGrid(n int, from, to DType, sms int) uint32 {
	if to.Size() >= from.Size() {
		return elementwiseGrid(n, to, sms)
	}
	return chunkGrid(n, convK(from, to), convChunks(to), sms)
}

// reduceGrid sizes a whole-array reduction's pass 1: at most the blocks
// its kernels keep resident (reduceBlocksPerSM an SM), so that the
// grid-strided shares are one even round with no tail wave.
func reduceGrid(n, sms int) uint32 {
	per := threads * reduceMinPerThread
	return clampGrid((n+per-1)/per, min(sms*reduceBlocksPerSM, maxPartials))
}

// rowsGrid: one warp a row.
func rowsGrid(rows, sms int) uint32 {
	perBlock := threads / 32
	return clampGrid((rows+perBlock-1)/perBlock, sms*blocksPerSM)
}

// module is the embedded PTX loaded into one context, with its kernels
// looked up by name once each.
type module struct {
	ctx  *cuda.Context
	once sync.Once
	mod  *cuda.Module
	err  error
	fns  [numKernels]atomic.Pointer[cuda.Function]
}

// modules maps *cuda.Context to its *module.
var modules sync.Map

// lastModule is the module of the context a launch last found loaded: with
// one GPU (the common case) every launch finds its module with an atomic
// load and a compare instead of modules' lookup, which hashes an
// interface. Modules are never removed, so a stale one is still right for
// its context.
var lastModule atomic.Pointer[module]

func moduleFor(ctx *cuda.Context) (*module, error) {
	if m := lastModule.Load(); m != nil && m.ctx == ctx {
		return m, nil // stored only once loaded without error
	}
	v, ok := modules.Load(ctx)
	if !ok {
		v, _ = modules.LoadOrStore(ctx, &module{ctx: ctx})
	}
	m := v.(*module)
	m.once.Do(func() { m.mod, m.err = loadModule(ctx, cubinImage(), ptxImage) })
	if m.err == nil {
		lastModule.Store(m)
		// The stream resolved last, if it is of ctx and was resolved
		// before the module loaded, gets it now: quick needs it.
		if g := lastGPU.Load(); g != nil && g.mod == nil && g.cu.Context() == ctx {
			c := *g
			c.mod = m
			lastGPU.CompareAndSwap(g, &c)
		}
	}
	return m, m.err
}

// loadModule loads the fatbin when it has code for ctx's GPU, else the
// PTX, which the driver compiles for it (seconds, unless its cache has the
// result from an earlier process). ptx is called only then: unpacking the
// embedded PTX costs half a second that a GPU the fatbin serves never
// needs.
func loadModule(ctx *cuda.Context, fatbin []byte, ptx func() []byte) (*cuda.Module, error) {
	if len(fatbin) > 0 {
		// Any failure (no code for this GPU, a driver that cannot read
		// it) leaves the PTX, which runs on every GPU the driver knows.
		if mod, err := ctx.LoadModule(fatbin); err == nil {
			return mod, nil
		}
	}
	image := ptx()
	if isPlaceholder(image) {
		return nil, ErrNoPTX
	}
	mod, err := ctx.LoadModule(image)
	if err != nil {
		return nil, fmt.Errorf("kernels: the driver cannot load the embedded PTX (kernels/ptx/kernels.ptx.gz); "+
			"if it is too new for this driver, regenerate it with scripts/gen-ptx.sh using a CUDA toolkit no newer than the driver: %w", err)
	}
	return mod, nil
}

func (m *module) function(id int) (*cuda.Function, error) {
	if f := m.fns[id].Load(); f != nil {
		return f, nil
	}
	name := nameByID[id]
	f, err := m.mod.Function(name)
	if err != nil {
		return nil, fmt.Errorf("kernels: kernel %s is missing from the embedded kernels (are kernels/ptx/kernels.ptx.gz and kernels.fatbin.*.gz older than kernels/cuda/kernels.cu?); "+
			"run scripts/gen-ptx.sh on a machine with nvcc: %w", name, err)
	}
	m.fns[id].Store(f)
	return f, nil
}

// launch queues kernel (k, t.dt, pass) on t's stream.
func (t *target) launch(k kop, pass int, grid uint32, args ...any) error {
	return t.launchID(kernelID(k, t.dt, pass), grid, threads, args...)
}

func (t *target) launchID(id int, grid, block uint32, args ...any) error {
	f, err := t.function(id)
	if err != nil {
		return err
	}
	if err := t.cs.Launch(f, cuda.Dim3{X: grid, Y: 1, Z: 1}, cuda.Dim3{X: block, Y: 1, Z: 1}, 0, args...); err != nil {
		return t.errorf("%w", err)
	}
	return nil
}

// launchW is launch for kernels whose arguments are each one 64-bit word
// (pointers as uint64, int64 lengths, scalars' bits, 32-bit values through
// cuda.Word32): the path of the small elementwise operations, which
// cuda.Stream.LaunchWords queues without boxing the arguments in
// interfaces or allocating.
func (t *target) launchW(k kop, pass int, grid uint32, words ...uint64) error {
	return t.launchIDW(kernelID(k, t.dt, pass), grid, threads, words...)
}

func (t *target) launchIDW(id int, grid, block uint32, words ...uint64) error {
	f, err := t.function(id)
	if err != nil {
		return err
	}
	if err := t.cs.LaunchWords(f, cuda.Dim3{X: grid, Y: 1, Z: 1}, cuda.Dim3{X: block, Y: 1, Z: 1}, 0, words...); err != nil {
		return t.errorf("%w", err)
	}
	return nil
}

// function is kernel id of t's context, its module loaded on first use.
func (t *target) function(id int) (*cuda.Function, error) {
	m, err := moduleFor(t.cu.Context())
	if err != nil {
		return nil, err
	}
	return m.function(id)
}

func dptr(p backend.Ptr) cuda.DevicePtr { return cuda.DevicePtr(p) }

// wp is a pointer argument as a launchW word.
func wp(p backend.Ptr) uint64 { return uint64(p) }

// scratch is a device's free list of reduction scratch buffers. A
// reduction takes one, and gives it back once its result has been copied
// to the host (the stream has then finished every kernel that used it), so
// there are as many buffers as reductions ever ran at once. They are never
// freed: scratchBytes each.
type scratch struct {
	mu   sync.Mutex
	free []backend.Ptr
}

var scratches sync.Map // devstream.GPU -> *scratch

func scratchFor(d devstream.GPU) *scratch {
	v, ok := scratches.Load(d)
	if !ok {
		v, _ = scratches.LoadOrStore(d, new(scratch))
	}
	return v.(*scratch)
}

func (sc *scratch) get(d devstream.GPU) (backend.Ptr, error) {
	sc.mu.Lock()
	if n := len(sc.free); n > 0 {
		p := sc.free[n-1]
		sc.free = sc.free[:n-1]
		sc.mu.Unlock()
		return p, nil
	}
	sc.mu.Unlock()
	return d.Alloc(scratchBytes)
}

func (sc *scratch) put(p backend.Ptr) {
	sc.mu.Lock()
	sc.free = append(sc.free, p)
	sc.mu.Unlock()
}

// accBytes is the size of a reduction's result as the kernels write it:
// float64 for float sums and dots, int64 for integer sums, complex128 for
// complex sums, the element itself for Max and Min.
func accBytes(k kop, dt DType) int {
	switch {
	case k == kMax || k == kMin:
		return dt.Size()
	case dt == Complex64:
		return 16
	}
	return 8
}

// gpuReduce runs a two-pass reduction of x (and y, for Dot) and returns the
// result's bytes. It blocks until the stream reaches it.
func (t *target) gpuReduce(k kop, x, y backend.Ptr, n int) ([2]uint64, error) {
	var raw [2]uint64
	sc := scratchFor(t.cu)
	buf, err := sc.get(t.cu)
	if err != nil {
		return raw, t.errorf("scratch memory for the partial results: %w", err)
	}
	grid := reduceGrid(n, t.sms)
	out := buf
	if grid > 1 {
		out = buf + partialsOffset
	}
	args := []any{dptr(x)}
	if k == kDot {
		args = append(args, dptr(y))
	}
	args = append(args, int64(n), dptr(out))
	if err := t.launch(k, 0, grid, args...); err != nil {
		return raw, err // buf is dropped: nothing says the stream is done with it
	}
	if grid > 1 {
		if err := t.launch(k, 1, 1, dptr(out), int32(grid), dptr(buf)); err != nil {
			return raw, err
		}
	}
	if err := t.cu.CopyDtoH(unsafe.Pointer(&raw[0]), buf, uint64(accBytes(k, t.dt)), t.s); err != nil {
		return raw, t.errorf("reading the result: %w", err)
	}
	sc.put(buf)
	return raw, nil
}
