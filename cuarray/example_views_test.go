package cuarray_test

import (
	"fmt"

	"github.com/gocuda/gocuda/cuarray"
)

// Views share their array's memory: Transpose, SliceAxis and BroadcastTo
// make no copy. Reductions run over any set of axes, keeping them (as
// size 1) or dropping them; every operation takes a view as it is.
func Example_viewsAndReductions() {
	m := cuarray.Must(cuarray.FromSlice([]float32{
		3, 1, 4, 1,
		5, 9, 2, 6,
		5, 3, 5, 8,
	}, 3, 4))
	fmt.Printf("m\n%g\n", m)

	t := cuarray.Must(m.Transpose()) // 4×3, no copy
	fmt.Println("transpose:", t.Shape(), "strides", t.Strides())
	odd := cuarray.Must(m.SliceAxis(1, 1, 4, 2)) // columns 1 and 3
	fmt.Printf("columns 1 and 3\n%g\n", odd)
	row := cuarray.Must(cuarray.FromSlice([]float32{10, 20, 30, 40}))
	tiled := cuarray.Must(row.BroadcastTo(3, 4)) // stride 0 down the rows
	fmt.Println("broadcast strides:", tiled.Strides())

	sums := cuarray.Must(cuarray.SumAxes(nil, m, []int{0}, false))  // down each column
	means := cuarray.Must(cuarray.MeanAxes(nil, m, []int{1}, true)) // along each row, kept
	argmax := cuarray.Must(cuarray.ArgMaxAxes(nil, t, []int{1}, false))
	fmt.Println("column sums:", cuarray.Must(sums.ToSlice()))
	fmt.Println("row means:", means.Shape(), cuarray.Must(means.ToSlice()))
	fmt.Println("argmax of each row of mᵀ:", cuarray.Must(argmax.ToSlice()))

	total := cuarray.Must(cuarray.Add(nil, m, tiled)) // m + row, in every row
	running := cuarray.Must(cuarray.Cumsum(nil, odd, 0))
	sorted := cuarray.Must(cuarray.Sort(nil, m, true)) // each row, descending
	fmt.Printf("m + row\n%g\n", total)
	fmt.Printf("cumsum of columns 1 and 3 down the rows\n%g\n", running)
	fmt.Printf("rows sorted, descending\n%g\n", sorted)
	// Output:
	// m
	// [[3 1 4 1]
	//  [5 9 2 6]
	//  [5 3 5 8]]
	// transpose: [4 3] strides [1 4]
	// columns 1 and 3
	// [[1 1]
	//  [9 6]
	//  [3 8]]
	// broadcast strides: [0 1]
	// column sums: [13 13 11 15]
	// row means: [3 1] [2.25 5.5 5.25]
	// argmax of each row of mᵀ: [1 1 2 2]
	// m + row
	// [[13 21 34 41]
	//  [15 29 32 46]
	//  [15 23 35 48]]
	// cumsum of columns 1 and 3 down the rows
	// [[ 1  1]
	//  [10  7]
	//  [13 15]]
	// rows sorted, descending
	// [[4 3 1 1]
	//  [9 6 5 2]
	//  [8 5 5 3]]
}
