package kernels

import "github.com/gocuda/gocuda/backend"

// The host backend's strided binary operations: row by row over the
// simplified layout's innermost dimension, each row through the
// elementwise loops when the operands are contiguous along it (or one of
// them is a single value), else gathered into a small buffer first.

func hostStrided(k kop, dt DType, dst, a, b backend.Ptr, l *stridedLayout) {
	switch dt {
	case Float32:
		stridedOf[float32](k, dst, a, b, l)
	case Float64:
		stridedOf[float64](k, dst, a, b, l)
	case Int32:
		stridedOf[int32](k, dst, a, b, l)
	case Int64:
		stridedOf[int64](k, dst, a, b, l)
	case Uint8:
		stridedOf[uint8](k, dst, a, b, l)
	case Int8:
		stridedOf[int8](k, dst, a, b, l)
	case Int16:
		stridedOf[int16](k, dst, a, b, l)
	case Uint32:
		stridedOf[uint32](k, dst, a, b, l)
	case Complex64:
		stridedOf[complex64](k, dst, a, b, l)
	case Float16, BFloat16:
		hostHalfStrided(k, dt, dst, a, b, l)
	}
}

// gatherChunk is how many elements of a row a strided operand is gathered
// in at a time.
const gatherChunk = 512

func stridedOf[T number](k kop, dstp, ap, bp backend.Ptr, l *stridedLayout) {
	nd := len(l.shape)
	cols := l.shape[nd-1]
	sa, sb := l.sa[nd-1], l.sb[nd-1]
	d, x, y := hostView[T](dstp, l.n), hostView[T](ap, l.extentA), hostView[T](bp, l.extentB)
	scalarK := k - kAdd + kAddScalar
	parallel(l.n, func(lo, hi int) {
		var ga, gb [gatherChunk]T
		// Row r is this piece's when its first element is: every row is
		// some piece's, and only one's.
		for r := lo / cols; r < hi/cols; r++ {
			oa, ob := l.rowOffsets(r)
			row := d[r*cols : (r+1)*cols]
			switch {
			case sa == 1 && sb == 1:
				binarySlices(k, row, x[oa:oa+cols], y[ob:ob+cols])
			case sa == 1 && sb == 0:
				scalarSlices(scalarK, row, x[oa:oa+cols], y[ob])
			default:
				for c0 := 0; c0 < cols; c0 += gatherChunk {
					c1 := min(c0+gatherChunk, cols)
					xs, ys := ga[:c1-c0], gb[:c1-c0]
					for j := range xs {
						xs[j] = x[oa+(c0+j)*sa]
						ys[j] = y[ob+(c0+j)*sb]
					}
					binarySlices(k, row[c0:c1], xs, ys)
				}
			}
		}
	})
}

// rowOffsets is where row r (an index over every dimension but the
// innermost) starts in a and in b.
func (l *stridedLayout) rowOffsets(r int) (oa, ob int) {
	for i := len(l.shape) - 2; i >= 0; i-- {
		v := r % l.shape[i]
		r /= l.shape[i]
		oa += v * l.sa[i]
		ob += v * l.sb[i]
	}
	return oa, ob
}
