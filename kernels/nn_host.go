package kernels

import (
	"math"

	"github.com/gocuda/gocuda/backend"
)

// Host twins of nn.go's kernels: the same arithmetic as kernels.cu (sums in
// float64, the row maximum subtracted before exp), split across goroutines
// by whole rows or columns so that each output element is computed in one
// fixed order whatever the number of CPUs.

func hostAddRowVec(dt DType, dst, x, b backend.Ptr, rows, cols int) {
	switch dt {
	case Float32:
		addRowVecOf[float32](dst, x, b, rows, cols)
	case Float64:
		addRowVecOf[float64](dst, x, b, rows, cols)
	}
}

func addRowVecOf[T float](dstp, xp, bp backend.Ptr, rows, cols int) {
	n := rows * cols
	d, x, b := hostView[T](dstp, n), hostView[T](xp, n), hostView[T](bp, cols)
	parallel(n, func(lo, hi int) {
		// Pieces start anywhere in a row: walk the column alongside i
		// rather than dividing every index by cols.
		c := lo % cols
		for i := lo; i < hi; i++ {
			d[i] = x[i] + b[c]
			if c++; c == cols {
				c = 0
			}
		}
	})
}

func hostSumCols(dt DType, dst, x backend.Ptr, rows, cols int) {
	switch dt {
	case Float32:
		sumColsOf[float32](dst, x, rows, cols)
	case Float64:
		sumColsOf[float64](dst, x, rows, cols)
	}
}

// sumColsOf splits the columns among goroutines (each column is summed by
// one, top to bottom) and walks the rows in order, so memory is read row
// by row.
func sumColsOf[T float](dstp, xp backend.Ptr, rows, cols int) {
	d, x := hostView[T](dstp, cols), hostView[T](xp, rows*cols)
	perCol := max(rows, 1)
	parallel(cols*perCol, func(lo, hi int) {
		c0, c1 := lo/perCol, hi/perCol
		if c0 == c1 {
			return
		}
		acc := make([]float64, c1-c0)
		for r := range rows {
			row := x[r*cols+c0 : r*cols+c1]
			for j, v := range row {
				acc[j] += float64(v)
			}
		}
		for j, s := range acc {
			d[c0+j] = T(s)
		}
	})
}

func hostSoftmaxXent(dt DType, loss, dx, x, labels backend.Ptr, rows, cols int, bits uint64) {
	switch dt {
	case Float32:
		softmaxXentOf[float32](loss, dx, x, labels, rows, cols, math.Float32frombits(uint32(bits)))
	case Float64:
		softmaxXentOf[float64](loss, dx, x, labels, rows, cols, math.Float64frombits(bits))
	}
}

func softmaxXentOf[T float](lossp, dxp, xp, labelsp backend.Ptr, rows, cols int, scale T) {
	n := rows * cols
	loss, x, labels := hostView[T](lossp, rows), hostView[T](xp, n), hostView[int32](labelsp, rows)
	var dx []T
	if dxp != 0 {
		dx = hostView[T](dxp, n)
	}
	nan := T(math.NaN())
	parallel(n, func(lo, hi int) {
		for r := lo / cols; r < hi/cols; r++ {
			row := x[r*cols : (r+1)*cols]
			label := int(labels[r])
			valid := label >= 0 && label < cols
			m := extremum(true, row)
			var s float64
			for _, v := range row {
				s += math.Exp(float64(v - m))
			}
			if valid {
				loss[r] = T(float64(m) + math.Log(s) - float64(row[label]))
			} else {
				loss[r] = nan
			}
			if dx == nil {
				continue
			}
			d := dx[r*cols : (r+1)*cols]
			if !valid {
				for c := range d {
					d[c] = nan
				}
				continue
			}
			inv := T(1 / s)
			for c, v := range row {
				p := T(math.Exp(float64(v-m))) * inv
				if c == label {
					p--
				}
				d[c] = scale * p
			}
		}
	})
}
