package kernels

import (
	"cmp"
	"math"
	"slices"

	"github.com/gocuda/gocuda/backend"
)

// The host backend's scans and sorts: typed loops, rows (or columns) split
// across goroutines.

func hostScan(dt DType, op ScanOp, dst, x backend.Ptr, outer, n, inner int) {
	switch dt {
	case Float32:
		scanOf[float32, float64](op, dst, x, outer, n, inner)
	case Float64:
		scanOf[float64, float64](op, dst, x, outer, n, inner)
	case Int32:
		scanOf[int32, int32](op, dst, x, outer, n, inner)
	case Int64:
		scanOf[int64, int64](op, dst, x, outer, n, inner)
	case Uint8:
		scanOf[uint8, uint8](op, dst, x, outer, n, inner)
	case Int8:
		scanOf[int8, int8](op, dst, x, outer, n, inner)
	case Int16:
		scanOf[int16, int16](op, dst, x, outer, n, inner)
	case Uint32:
		scanOf[uint32, uint32](op, dst, x, outer, n, inner)
	}
}

// scanOf scans with accumulator A: float64 for the floats, T itself (so
// wrapping as Go does) for the integers. Each goroutine takes whole lines
// (a row, or a run of columns of one outer index) and walks them in memory
// order.
func scanOf[T, A realNumber](op ScanOp, dstp, xp backend.Ptr, outer, n, inner int) {
	total := outer * n * inner
	d, x := hostView[T](dstp, total), hostView[T](xp, total)
	cols := outer * inner
	parallel(cols*n, func(lo, hi int) {
		c0, c1 := lo/n, hi/n
		if inner == 1 {
			for r := c0; r < c1; r++ {
				scanLine[T, A](op, d[r*n:(r+1)*n], x[r*n:(r+1)*n])
			}
			return
		}
		acc := make([]A, min(inner, c1-c0))
		for c := c0; c < c1; {
			o, i0 := c/inner, c%inner
			i1 := min(inner, i0+c1-c)
			base := o * n * inner
			scanColumns[T, A](op, d[base:base+n*inner], x[base:base+n*inner], acc[:i1-i0], inner, i0)
			c += i1 - i0
		}
	})
}

// scanLine scans one contiguous line.
func scanLine[T, A realNumber](op ScanOp, d, x []T) {
	x = x[:len(d)]
	if len(d) == 0 {
		return
	}
	acc := A(x[0])
	d[0] = T(acc)
	switch op {
	case CumSum:
		for i := 1; i < len(d); i++ {
			acc += A(x[i])
			d[i] = T(acc)
		}
	case CumProd:
		for i := 1; i < len(d); i++ {
			acc *= A(x[i])
			d[i] = T(acc)
		}
	default:
		for i := 1; i < len(d); i++ {
			acc = extend(op, acc, A(x[i]))
			d[i] = T(acc)
		}
	}
}

// scanColumns scans columns i0 … i0+len(acc)-1 of the n × inner block d
// (from x), row by row.
func scanColumns[T, A realNumber](op ScanOp, d, x []T, acc []A, inner, i0 int) {
	for i := range acc {
		acc[i] = A(x[i0+i])
		d[i0+i] = T(acc[i])
	}
	for r := inner; r < len(d); r += inner {
		row, out := x[r+i0:r+i0+len(acc)], d[r+i0:r+i0+len(acc)]
		for i, v := range row {
			acc[i] = extend(op, acc[i], A(v))
			out[i] = T(acc[i])
		}
	}
}

// extend is one step of a scan: NaN, once reached, stays for CumMax and
// CumMin, as NumPy's maximum.accumulate keeps it.
func extend[A realNumber](op ScanOp, acc, v A) A {
	switch op {
	case CumSum:
		return acc + v
	case CumProd:
		return acc * v
	case CumMax:
		if v > acc || v != v {
			return v
		}
	case CumMin:
		if v < acc || v != v {
			return v
		}
	}
	return acc
}

// ---------------------------------------------------------------------------
// Sorting.

func hostSort(dt DType, values, indices, x backend.Ptr, rows, n, k int, desc bool) {
	switch dt {
	case Float32:
		sortOf[float32](values, indices, x, rows, n, k, desc)
	case Float64:
		sortOf[float64](values, indices, x, rows, n, k, desc)
	case Int32:
		sortOf[int32](values, indices, x, rows, n, k, desc)
	case Int64:
		sortOf[int64](values, indices, x, rows, n, k, desc)
	case Uint8:
		sortOf[uint8](values, indices, x, rows, n, k, desc)
	case Int8:
		sortOf[int8](values, indices, x, rows, n, k, desc)
	case Int16:
		sortOf[int16](values, indices, x, rows, n, k, desc)
	case Uint32:
		sortOf[uint32](values, indices, x, rows, n, k, desc)
	}
}

func sortOf[T realNumber](values, indices, xp backend.Ptr, rows, n, k int, desc bool) {
	x := hostView[T](xp, rows*n)
	var vals []T
	var idxs []int64
	if values != 0 {
		vals = hostView[T](values, rows*k)
	}
	if indices != 0 {
		idxs = hostView[int64](indices, rows*k)
	}
	parallel(rows*n, func(lo, hi int) {
		var scratch []uint64
		for r := lo / n; r < hi/n; r++ {
			row := x[r*n : (r+1)*n]
			if idxs == nil && k == n {
				sortValues(vals[r*n:(r+1)*n], row, desc)
				continue
			}
			var order []int64
			order, scratch = argsortRow(row, desc, scratch)
			if idxs != nil {
				copy(idxs[r*k:(r+1)*k], order[:k])
			}
			if vals != nil {
				out := vals[r*k : (r+1)*k]
				for j, i := range order[:k] {
					out[j] = row[i]
				}
			}
		}
	})
}

// sortValues sets d to x sorted with the kernels' order: NaN largest, -0
// equal to +0, stable. slices.Sort (pattern-defeating quicksort) does the
// work; since equal values are identical but for the sign of a zero and a
// NaN's bits, stability is restored afterwards by writing the zeros and
// NaNs back in x's order. d may be x.
func sortValues[T realNumber](d, x []T, desc bool) {
	var nans, zeros []T
	if isFloat[T]() {
		for _, v := range x {
			if v != v {
				nans = append(nans, v)
			} else if v == 0 {
				zeros = append(zeros, v)
			}
		}
	}
	copy(d, x)
	slices.Sort(d) // cmp.Less: NaNs first
	nn := len(nans)
	if desc {
		slices.Reverse(d[nn:])
		copy(d, nans)
	} else {
		copy(d, d[nn:])
		copy(d[len(d)-nn:], nans)
	}
	if len(zeros) > 0 {
		at, _ := slices.BinarySearchFunc(d, T(0), func(v, z T) int {
			if v != v { // the NaNs, first when descending, last otherwise
				if desc {
					return -1
				}
				return 1
			}
			if desc {
				return cmp.Compare(z, v)
			}
			return cmp.Compare(v, z)
		})
		copy(d[at:], zeros)
	}
}

// argsortRow returns the stable order of x under the kernels' keys.
// Positions up to 2^32 pack with 32-bit keys into one uint64 (the key
// above, the position below), which slices.Sort orders exactly as a stable
// sort of the keys would; 64-bit keys sort (key, position) pairs. buf is
// reused between rows.
func argsortRow[T realNumber](x []T, desc bool, buf []uint64) ([]int64, []uint64) {
	n := len(x)
	order := make([]int64, n)
	var z T
	_, wide := any(z).(float64)
	if _, ok := any(z).(int64); ok {
		wide = true
	}
	if wide || n > math.MaxUint32 {
		type pair struct {
			k uint64
			i int64
		}
		ps := make([]pair, n)
		for i, v := range x {
			ps[i] = pair{sortKey(v, desc), int64(i)}
		}
		slices.SortFunc(ps, func(a, b pair) int {
			if c := cmp.Compare(a.k, b.k); c != 0 {
				return c
			}
			return cmp.Compare(a.i, b.i)
		})
		for i, p := range ps {
			order[i] = p.i
		}
		return order, buf
	}
	buf = slices.Grow(buf[:0], n)[:n]
	for i, v := range x {
		buf[i] = sortKey(v, desc)<<32 | uint64(i)
	}
	slices.Sort(buf)
	for i, p := range buf {
		order[i] = int64(uint32(p))
	}
	return order, buf
}

// sortKey is the unsigned key whose order is the kernels' order of v (in
// the low 32 bits for the types of 4 bytes and less): floats with the sign bit
// flipped (and all bits, for negatives), every NaN the largest key, -0 the
// key of +0; signed integers with the sign bit flipped; descending order
// inverts the key's bits.
func sortKey[T realNumber](v T, desc bool) uint64 {
	var k, mask uint64
	switch x := any(v).(type) {
	case float32:
		mask = math.MaxUint32
		b := math.Float32bits(x)
		switch {
		case x != x:
			b = math.MaxUint32
		case x == 0:
			b = 1 << 31
		case b>>31 == 1:
			b = ^b
		default:
			b |= 1 << 31
		}
		k = uint64(b)
	case float64:
		mask = math.MaxUint64
		b := math.Float64bits(x)
		switch {
		case x != x:
			b = math.MaxUint64
		case x == 0:
			b = 1 << 63
		case b>>63 == 1:
			b = ^b
		default:
			b |= 1 << 63
		}
		k = b
	case int32:
		mask = math.MaxUint32
		k = uint64(uint32(x) ^ 1<<31)
	case int64:
		mask = math.MaxUint64
		k = uint64(x) ^ 1<<63
	case uint8:
		mask = math.MaxUint8
		k = uint64(x)
	case int8:
		mask = math.MaxUint8
		k = uint64(uint8(x) ^ 1<<7)
	case int16:
		mask = math.MaxUint16
		k = uint64(uint16(x) ^ 1<<15)
	case uint32:
		mask = math.MaxUint32
		k = uint64(x)
	}
	if desc {
		k ^= mask
	}
	return k
}
