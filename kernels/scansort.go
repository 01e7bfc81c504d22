package kernels

import (
	"fmt"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/internal/devstream"
)

// Scans and sorting (issue 30): cumulative sums, products, maxima and
// minima along one axis of a row-major array, and sort, argsort and top-k
// along the last axis. The GPU kernels are in kernels/cuda/scan_sort.cuh
// and sort.cuh; the host backend's in scansort_host.go.
//
// Layouts. A scan sees its operand as outer × n × inner (row-major): it
// runs along the middle dimension, whose elements are inner apart. The
// sorts see theirs as rows × n and sort each row of n. Both describe a
// contiguous array; a strided layout would add a stride per dimension to
// the same kernels' index arithmetic.

// ScanOp is the operation a scan accumulates.
type ScanOp uint8

// The scans: dst[i] = x[0] ∘ x[1] ∘ … ∘ x[i] along the axis.
const (
	CumSum  ScanOp = iota // running sum
	CumProd               // running product
	CumMax                // running maximum (NaN from the first NaN on)
	CumMin                // running minimum (NaN from the first NaN on)
	numScanOps
)

var scanOpNames = [numScanOps]string{"Cumsum", "Cumprod", "Cummax", "Cummin"}

// String is the operation's API name, "Cumsum".
func (op ScanOp) String() string {
	if op >= numScanOps {
		return fmt.Sprintf("ScanOp(%d)", uint8(op))
	}
	return scanOpNames[op]
}

// Scan sets dst to the running op of x along the middle dimension of the
// row-major outer × n × inner layout: for every (o, i),
//
//	dst[o, j, i] = x[o, 0, i] ∘ x[o, 1, i] ∘ … ∘ x[o, j, i]
//
// Scanning the last axis of a matrix is outer = rows, inner = 1; down its
// columns, outer = 1, n = rows, inner = cols. For the real types (complex64
// is an error wrapping ErrUnsupportedDType).
//
// Accumulation: float32 accumulates in float64 and each output is rounded
// once to float32, at least as accurate as a float32 loop in order (what
// torch does); float64 in float64, in an order that may group terms (a
// tree within a block on a GPU). Integers keep their type and wrap as a Go
// loop over T would: the result is exact modulo 2^bits (NumPy widens
// int32 and uint8 cumsums to int64; here convert first if the running sum
// must not wrap). CumMax and CumMin propagate NaN. Results are
// deterministic for a given device and shape.
//
// scratch is device memory for the partial results of long scans:
// ScanScratch says how much the GPU path needs (0 on the host); with less
// Scan is an error. dst may be x (in place) but must not otherwise overlap
// it.
func Scan[T Elem](dev backend.Device, s backend.Stream, dst, x backend.Ptr, op ScanOp, outer, n, inner int, scratch Scratch) error {
	dt := DTypeOf[T]()
	name := op.String()
	if op >= numScanOps {
		return opErrorf("Scan", dt, "operation %v is not one of Cumsum, Cumprod, Cummax, Cummin: %w", op, backend.ErrInvalidValue)
	}
	total, err := checkDims(name, dt, outer, n, inner)
	if err != nil {
		return err
	}
	t, err := prepare(name, realTypes, dt, dev, s, total, ptrArg{"dst", dst}, ptrArg{"x", x})
	if err != nil || total == 0 {
		return err
	}
	if err := t.checkScratch(scratch); err != nil {
		return err
	}
	if t.cu == nil {
		return t.enqueue(func() { hostScan(dt, op, dst, x, outer, n, inner) })
	}
	p := scanPlanFor(outer, n, inner, t.sms)
	if p.scratch > scratch.Bytes {
		return t.errorf("shape %d × %d × %d needs %d bytes of scratch (ScanScratch), given %d: %w",
			outer, n, inner, p.scratch, scratch.Bytes, backend.ErrInvalidValue)
	}
	return t.gpuScan(p, op, dst, x, scratch.Ptr, outer, n, inner)
}

// ScanScratch is the scratch, in bytes, Scan needs on dev for the layout
// outer × n × inner: 0 on the host backend and for scans whose rows or
// columns alone fill the GPU.
func ScanScratch(dev backend.Device, outer, n, inner int) int {
	sms, ok := gpuSMs(dev)
	if !ok || outer <= 0 || n <= 0 || inner <= 0 {
		return 0
	}
	return scanPlanFor(outer, n, inner, sms).scratch
}

// gpuSMs is dev's multiprocessor count when dev is a GPU (through the
// package's seam).
func gpuSMs(dev backend.Device) (int, bool) {
	on, err := devstream.Device(dev)
	if err != nil || on.GPU == nil {
		return 0, false
	}
	return max(on.GPU.Info().MultiProcessors, 1), true
}

// checkDims rejects negative dimensions and a product that overflows, and
// returns the product.
func checkDims(op string, dt DType, dims ...int) (int, error) {
	total := 1
	for _, d := range dims {
		if d < 0 {
			return 0, opErrorf(op, dt, "shape %v has a negative dimension: %w", dims, backend.ErrInvalidValue)
		}
		if d != 0 && total > maxBytes/8/d {
			return 0, opErrorf(op, dt, "shape %v is more than any device holds: %w", dims, backend.ErrInvalidValue)
		}
		total *= d
	}
	return total, nil
}

func (t *target) checkScratch(sc Scratch) error {
	if sc.Bytes < 0 || sc.Ptr%8 != 0 || (sc.Ptr == 0 && sc.Bytes > 0) {
		return t.errorf("scratch %#x, %d bytes: it must be 8-byte aligned and not negative: %w", uint64(sc.Ptr), sc.Bytes, backend.ErrInvalidValue)
	}
	return nil
}

// ---------------------------------------------------------------------------
// Sorting.

// Sort sets each row of dst to its row of x sorted, for the row-major rows
// × n layout and the real types. Ascending order puts NaNs last and
// descending order puts them first (NaN counts as the largest value, as
// NumPy's sort and torch's descending sort do); -0 and +0 compare equal.
// Every value keeps its bits, and the sort is stable — equal keys, and so
// -0 and +0 and all NaNs, keep their order in x — except for float32 rows
// longer than 4096 on a GPU (CUB's onesweep, which carries no positions):
// there every -0 comes before every +0 (after, descending) and NaNs come
// in an order fixed by their bits, not by their place in x. Argsort and
// TopK are stable everywhere.
//
// scratch is device memory the GPU path needs for rows too long to sort
// in one block (SortScratch); with less it is an error. dst may be x (in
// place) but must not otherwise overlap it.
func Sort[T Elem](dev backend.Device, s backend.Stream, dst, x backend.Ptr, rows, n int, descending bool, scratch Scratch) error {
	return sortOp[T]("Sort", dev, s, dst, 0, x, rows, n, n, descending, scratch)
}

// Argsort sets each row of dst (int64) to the indices, within the row,
// that sort its row of x with Sort's order and stability: among equal keys
// the lower index comes first. dst must not overlap x.
func Argsort[T Elem](dev backend.Device, s backend.Stream, dst, x backend.Ptr, rows, n int, descending bool, scratch Scratch) error {
	return sortOp[T]("Argsort", dev, s, 0, dst, x, rows, n, n, descending, scratch)
}

// TopK sets the k values of each row of x that sort first — the largest,
// in descending order, if largest, else the smallest, ascending — into the
// rows × k values, and their indices within the row (int64) into indices:
// the first k of Sort and Argsort with descending = largest. NaN counts as
// the largest value; ties keep index order. Either output may be 0 to skip
// it. 0 ≤ k ≤ n.
func TopK[T Elem](dev backend.Device, s backend.Stream, values, indices, x backend.Ptr, rows, n, k int, largest bool, scratch Scratch) error {
	if k < 0 || k > n {
		dt := DTypeOf[T]()
		return opErrorf("TopK", dt, "k = %d is outside [0, %d], the row length: %w", k, n, backend.ErrInvalidValue)
	}
	return sortOp[T]("TopK", dev, s, values, indices, x, rows, n, k, largest, scratch)
}

// SortScratch is the scratch, in bytes, Sort needs on dev for rows × n.
func SortScratch[T Elem](dev backend.Device, rows, n int) int {
	return sortScratch(dev, DTypeOf[T](), rows, n, false, false)
}

// ArgsortScratch is the scratch, in bytes, Argsort needs on dev for rows × n.
func ArgsortScratch[T Elem](dev backend.Device, rows, n int) int {
	return sortScratch(dev, DTypeOf[T](), rows, n, true, false)
}

// TopKScratch is the scratch, in bytes, TopK needs on dev for rows × n.
func TopKScratch[T Elem](dev backend.Device, rows, n int) int {
	return sortScratch(dev, DTypeOf[T](), rows, n, true, true)
}

func sortScratch(dev backend.Device, dt DType, rows, n int, indices, topk bool) int {
	sms, ok := gpuSMs(dev)
	if !ok || rows <= 0 || n <= 0 || !realTypes.has(dt) {
		return 0
	}
	return sortPlanScratch(dt, n, sms, indices, topk)
}

// sortPlanScratch is the scratch of gpuSort's plan for rows of n on a GPU
// of sms multiprocessors: CUB's onesweep's (cubsort_gpu.go) for the 4-byte
// types, else the radix's (0 for rows a block sorts).
func sortPlanScratch(dt DType, n, sms int, indices, topk bool) int {
	if n > sortRowsCap(dt) && useCubSort(dt, n) {
		return cubPlanFor(n, indices, topk).scratch
	}
	return radixPlanFor(dt, n, sms, indices, topk).scratch
}

// sortOp is Sort (values only), Argsort (indices only) and TopK (k of
// either or both).
func sortOp[T Elem](op string, dev backend.Device, s backend.Stream, values, indices, x backend.Ptr, rows, n, k int, desc bool, scratch Scratch) error {
	dt := DTypeOf[T]()
	total, err := checkDims(op, dt, rows, n)
	if err != nil {
		return err
	}
	t, err := prepare(op, realTypes, dt, dev, s, total, ptrArg{"x", x})
	if err != nil || total == 0 || k == 0 {
		return err
	}
	if values != 0 || op == "Sort" {
		if err := t.checkSpan(ptrArg{"dst", values}, uint64(rows*k)*uint64(dt.Size())); err != nil {
			return err
		}
	}
	if indices != 0 || op == "Argsort" {
		if err := t.checkIndexPtr("dst indices", indices, uint64(rows*k)*8); err != nil {
			return err
		}
	}
	if err := t.checkScratch(scratch); err != nil {
		return err
	}
	if t.cu == nil {
		return t.enqueue(func() { hostSort(dt, values, indices, x, rows, n, k, desc) })
	}
	return t.gpuSort(values, indices, x, rows, n, k, desc, scratch)
}

// checkIndexPtr checks an int64 output whatever T is, and declares it
// written.
func (t *target) checkIndexPtr(name string, p backend.Ptr, bytes uint64) error {
	t.declare(name, p, bytes)
	if p == 0 {
		return t.errorf("pointer %s is nil: %w", name, backend.ErrInvalidValue)
	}
	if p%8 != 0 {
		return t.errorf("pointer %s = %#x is not 8-byte aligned, as int64 indices must be: %w", name, uintptr(p), backend.ErrInvalidValue)
	}
	return nil
}
