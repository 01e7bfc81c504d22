package kernels

import (
	"sync/atomic"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/internal/hostpar"
)

// The host backend's construction and indexing kernels: typed loops split
// across goroutines by hostpar.Split (through parallel), each goroutine
// owning whole rows of what it writes, so that no two write one element
// and the scatters are deterministic (in index order).

func hostArange(dt DType, dst backend.Ptr, start, second, delta uint64, n int) {
	switch dt {
	case Float32:
		arangeOf[float32](dst, start, second, delta, n)
	case Float64:
		arangeOf[float64](dst, start, second, delta, n)
	case Int32:
		arangeOf[int32](dst, start, second, delta, n)
	case Int64:
		arangeOf[int64](dst, start, second, delta, n)
	case Uint8:
		arangeOf[uint8](dst, start, second, delta, n)
	case Int8:
		arangeOf[int8](dst, start, second, delta, n)
	case Int16:
		arangeOf[int16](dst, start, second, delta, n)
	case Uint32:
		arangeOf[uint32](dst, start, second, delta, n)
	case Float16, BFloat16:
		hostHalfArange(dt, dst, start, second, delta, n)
	}
}

// arangeOf rounds the product before the addition (the conversion T(...)
// keeps Go from fusing them into one multiply-add, as the kernel's _rn
// intrinsics keep nvcc from it).
func arangeOf[T realNumber](p backend.Ptr, startBits, secondBits, deltaBits uint64, n int) {
	d := hostView[T](p, n)
	start, second, delta := fromBitsHost[T](startBits), fromBitsHost[T](secondBits), fromBitsHost[T](deltaBits)
	parallel(n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			d[i] = start + T(T(i)*delta)
		}
		if lo <= 1 && 1 < hi {
			d[1] = second
		}
	})
}

func hostLinspace(dt DType, dst backend.Ptr, p *linspacePlan, n int, endpoint bool) {
	switch dt {
	case Float32:
		linspaceOf[float32](dst, p, n, endpoint)
	case Float64:
		linspaceOf[float64](dst, p, n, endpoint)
	case Int32:
		linspaceOf[int32](dst, p, n, endpoint)
	case Int64:
		linspaceOf[int64](dst, p, n, endpoint)
	case Uint8:
		linspaceOf[uint8](dst, p, n, endpoint)
	case Int8:
		linspaceOf[int8](dst, p, n, endpoint)
	case Int16:
		linspaceOf[int16](dst, p, n, endpoint)
	case Uint32:
		linspaceOf[uint32](dst, p, n, endpoint)
	case Float16, BFloat16:
		hostHalfLinspace(dt, dst, p, n, endpoint)
	}
}

func linspaceOf[T realNumber](dst backend.Ptr, p *linspacePlan, n int, endpoint bool) {
	d := hostView[T](dst, n)
	parallel(n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			d[i] = T(p.at(i, n, endpoint))
		}
	})
}

func hostEye(dt DType, dst backend.Ptr, rows, cols, k int) {
	switch dt {
	case Float32:
		eyeOf[float32](dst, rows, cols, k)
	case Float64:
		eyeOf[float64](dst, rows, cols, k)
	case Int32:
		eyeOf[int32](dst, rows, cols, k)
	case Int64:
		eyeOf[int64](dst, rows, cols, k)
	case Uint8:
		eyeOf[uint8](dst, rows, cols, k)
	case Int8:
		eyeOf[int8](dst, rows, cols, k)
	case Int16:
		eyeOf[int16](dst, rows, cols, k)
	case Uint32:
		eyeOf[uint32](dst, rows, cols, k)
	case Complex64:
		eyeOf[complex64](dst, rows, cols, k)
	case Float16, BFloat16:
		hostHalfEye(dt, dst, rows, cols, k)
	}
}

func eyeOf[T number](dst backend.Ptr, rows, cols, k int) {
	d := hostView[T](dst, rows*cols)
	splitUnits(rows, cols, func(lo, hi int) {
		clear(d[lo*cols : hi*cols])
		for r := lo; r < hi; r++ {
			if c := r + k; c >= 0 && c < cols {
				d[r*cols+c] = 1
			}
		}
	})
}

// hostConcat copies bytes: the element type only sets the sizes. Rows are
// split across goroutines.
func hostConcat(dst backend.Ptr, rows, cols int, parts []ConcatPart, size int) {
	d := hostView[byte](dst, rows*cols*size)
	srcs := make([][]byte, len(parts))
	for j, p := range parts {
		srcs[j] = hostView[byte](p.Src, rows*p.Cols*size)
	}
	parallel(rows*cols, func(lo, hi int) {
		// Row r is this piece's when its first element is.
		for r := (lo + cols - 1) / cols; r*cols < hi; r++ {
			row := d[r*cols*size : (r+1)*cols*size]
			off := 0
			for j, p := range parts {
				w := p.Cols * size
				copy(row[off:off+w], srcs[j][r*w:(r+1)*w])
				off += w
			}
		}
	})
}

func hostIndex(k kop, dt DType, dst, src, idx backend.Ptr, l IndexLayout, bad *int64) {
	switch dt {
	case Float32:
		indexOf[float32](k, dst, src, idx, l, bad)
	case Float64:
		indexOf[float64](k, dst, src, idx, l, bad)
	case Int32:
		indexOf[int32](k, dst, src, idx, l, bad)
	case Int64:
		indexOf[int64](k, dst, src, idx, l, bad)
	case Uint8:
		indexOf[uint8](k, dst, src, idx, l, bad)
	case Int8:
		indexOf[int8](k, dst, src, idx, l, bad)
	case Int16:
		indexOf[int16](k, dst, src, idx, l, bad)
	case Uint32:
		indexOf[uint32](k, dst, src, idx, l, bad)
	case Complex64:
		indexOf[complex64](k, dst, src, idx, l, bad)
	case Float16, BFloat16:
		indexOf[uint16](k, dst, src, idx, l, bad) // the patterns: Take and Scatter only
	}
}

// gatherRow sets d[i] = s[ix[i]]: Take's row of one element an index, an
// index out of range wrapped or clamped (takeIndex).
func gatherRow[T any](d, s []T, ix []int64, bad *int64) {
	ix = ix[:len(d)]
	for i, w := range ix {
		if uint64(w) >= uint64(len(s)) {
			w = int64(takeIndex(w, len(s), bad))
		}
		d[i] = s[w]
	}
}

// takeIndex is Take's row for an index that is not in [0, dim): a negative
// one wrapped once, else the nearest valid one with raw recorded in bad.
func takeIndex(raw int64, dim int, bad *int64) int {
	if w := raw + int64(dim); raw < 0 && w >= 0 {
		return int(w)
	}
	return clampIndex(raw, dim, bad)
}

// wrapIndex is the kernels' idx_at: a negative index wrapped once, or -1
// (with the raw index recorded in bad, when it is not nil) out of range.
func wrapIndex(raw int64, dim int, bad *int64) int {
	w := raw
	if w < 0 {
		w += int64(dim)
	}
	if w < 0 || w >= int64(dim) {
		if bad != nil {
			atomic.StoreInt64(bad, raw)
		}
		return -1
	}
	return int(w)
}

// clampIndex is Take's row for an out-of-range raw index: the nearest
// valid one, with raw recorded in bad.
func clampIndex(raw int64, dim int, bad *int64) int {
	wrapIndex(raw, dim, bad)
	if raw < 0 {
		return 0
	}
	return dim - 1
}

func indexOf[T number | uint16](k kop, dstp, srcp, idxp backend.Ptr, l IndexLayout, bad *int64) {
	inner, dim, nidx := l.Inner, l.Dim, l.Indices
	idx := hostView[int64](idxp, nidx)
	indexed := l.Outer * dim * inner
	gathered := l.Outer * nidx * inner
	if k == kTake {
		dst, src := hostView[T](dstp, gathered), hostView[T](srcp, indexed)
		if inner == 1 {
			// One element an index (a gather of a vector, or of columns):
			// runs of indices into one row of src, so that the loop is a
			// plain Go gather, short enough for the processor to keep many
			// of its random reads in flight.
			parallel(gathered, func(lo, hi int) {
				for lo < hi {
					o, j := lo/nidx, lo%nidx
					end := min(hi, (o+1)*nidx)
					gatherRow(dst[lo:end], src[o*dim:(o+1)*dim], idx[j:j+end-lo], bad)
					lo = end
				}
			})
			return
		}
		// Rows (o, j) of inner elements, a goroutine a range of them; o and
		// j are counted, not divided out, and the in-range test is one
		// unsigned comparison: the loop is within a small factor of a
		// plain Go gather.
		parallel(gathered, func(lo, hi int) {
			t := (lo + inner - 1) / inner
			o, j := t/nidx, t%nidx
			for ; t*inner < hi; t++ {
				w := idx[j]
				if w < 0 {
					w += int64(dim)
				}
				if uint64(w) >= uint64(dim) {
					w = int64(clampIndex(idx[j], dim, bad))
				}
				at := (o*dim + int(w)) * inner
				if inner == 1 {
					dst[t] = src[at]
				} else {
					copy(dst[t*inner:(t+1)*inner], src[at:at+inner])
				}
				if j++; j == nidx {
					j, o = 0, o+1
				}
			}
		})
		return
	}
	dst, src := hostView[T](dstp, indexed), hostView[T](srcp, gathered)
	add := k == kScatterAdd
	// Columns (o, c) of the indexed array, a goroutine a range of them, each
	// running through the indices in order: no element has two writers,
	// and repeated indices resolve in index order (the last write wins,
	// sums add in order). The grain counts the nidx elements of a column.
	cols := l.Outer * inner
	splitUnits(cols, nidx, func(lo, hi int) {
		for lo < hi {
			o, c0 := lo/inner, lo%inner
			c1 := min(inner, c0+hi-lo)
			for j := range nidx {
				w := wrapIndex(idx[j], dim, bad)
				if w < 0 {
					continue
				}
				d := dst[(o*dim+w)*inner+c0 : (o*dim+w)*inner+c1]
				s := src[(o*nidx+j)*inner+c0 : (o*nidx+j)*inner+c1]
				if add {
					for x := range d {
						d[x] += s[x]
					}
				} else {
					copy(d, s)
				}
			}
			lo += c1 - c0
		}
	})
}

// splitUnits splits n units of work, each work elements long, across
// goroutines about a grain of elements each (hostpar.Split).
func splitUnits(n, work int, f func(lo, hi int)) {
	hostpar.Split(n, max(grain/max(work, 1), 1), f)
}
