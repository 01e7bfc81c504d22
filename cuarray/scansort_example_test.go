package cuarray_test

import (
	"fmt"
	"math"

	"github.com/gocuda/gocuda/cuarray"
)

// Scans run along any axis; sorts along the last one, stably, with NaN
// after every number (first when descending) and -0 equal to +0.
func Example_scansAndSorting() {
	m := cuarray.Must(cuarray.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3))
	rows := cuarray.Must(cuarray.Cumsum(nil, m, -1)) // along each row
	cols := cuarray.Must(cuarray.Cumsum(nil, m, 0))  // down each column
	fmt.Println("cumsum rows:", cuarray.Must(rows.ToSlice()))
	fmt.Println("cumsum cols:", cuarray.Must(cols.ToSlice()))

	nan := float32(math.NaN())
	x := cuarray.Must(cuarray.FromSlice([]float32{3, nan, -1, 2, -1, 7}))
	sorted := cuarray.Must(cuarray.Sort(nil, x, false))
	order := cuarray.Must(cuarray.Argsort(nil, x, false))
	fmt.Println("sort:", cuarray.Must(sorted.ToSlice()))
	fmt.Println("argsort:", cuarray.Must(order.ToSlice())) // the two -1s keep their order

	vals, idx, err := cuarray.TopK(nil, nil, x, 2, true)
	if err != nil {
		panic(err)
	}
	fmt.Println("top 2:", cuarray.Must(vals.ToSlice()), cuarray.Must(idx.ToSlice()))

	_, _, err = cuarray.TopK(nil, nil, x, 9, true)
	fmt.Println(err)
	// Output:
	// cumsum rows: [1 3 6 4 9 15]
	// cumsum cols: [1 2 3 5 7 9]
	// sort: [-1 -1 2 3 7 NaN]
	// argsort: [2 4 3 0 5 1]
	// top 2: [NaN 7] [1 5]
	// cuarray: TopK: k = 9 is outside [0, 6], the length of x float32[6]'s last axis: bad shape
}
