package kernels

import (
	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/internal/hostpar"
)

// The host backend's strided copy: elements moved by size (uint8 to
// uint64), so that every type of 1, 2, 4 or 8 bytes takes the same loops.

func hostCopyStrided(size int, dst, src backend.Ptr, l *stridedLayout) {
	switch size {
	case 1:
		copyStridedOf[uint8](dst, src, l)
	case 2:
		copyStridedOf[uint16](dst, src, l)
	case 4:
		copyStridedOf[uint32](dst, src, l)
	case 8:
		copyStridedOf[uint64](dst, src, l)
	}
}

// hostTile is the side of the blocks a host transposition moves at a time,
// so that both the rows read and the rows written stay in cache.
const hostTile = 32

func copyStridedOf[E uint8 | uint16 | uint32 | uint64](dstp, srcp backend.Ptr, l *stridedLayout) {
	d, s := hostView[E](dstp, l.extentA), hostView[E](srcp, l.extentB)
	if tr, ok := l.transpose(); ok {
		transposeOf(d, s, tr)
		return
	}
	nd := len(l.shape)
	cols := l.shape[nd-1]
	da, sb := l.sa[nd-1], l.sb[nd-1]
	rows := l.n / cols
	// Split by whole rows, about grain elements a goroutine.
	hostpar.Split(rows, max(grain/cols, 1), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			od, os := l.rowOffsets(r)
			switch {
			case da == 1 && sb == 1:
				copy(d[od:od+cols], s[os:os+cols])
			case da == 1:
				row := d[od : od+cols]
				for j := range row {
					row[j] = s[os+j*sb]
				}
			default:
				for j := range cols {
					d[od+j*da] = s[os+j*sb]
				}
			}
		}
	})
}

// transposeOf runs a (batched) transposition in hostTile blocks, split
// across goroutines by blocks of rows.
func transposeOf[E uint8 | uint16 | uint32 | uint64](d, s []E, tr transposeLayout) {
	rowTiles := (tr.rows + hostTile - 1) / hostTile
	hostpar.Split(tr.batch*rowTiles, max(grain/(hostTile*tr.cols), 1), func(lo, hi int) {
		for t := lo; t < hi; t++ {
			b, r0 := t/rowTiles, (t%rowTiles)*hostTile
			r1 := min(r0+hostTile, tr.rows)
			db, sbase := b*tr.dBatch, b*tr.sBatch
			for c0 := 0; c0 < tr.cols; c0 += hostTile {
				c1 := min(c0+hostTile, tr.cols)
				for r := r0; r < r1; r++ {
					drow := db + r*tr.dRow
					for c := c0; c < c1; c++ {
						d[drow+c] = s[sbase+r+c*tr.sCol]
					}
				}
			}
		}
	})
}
