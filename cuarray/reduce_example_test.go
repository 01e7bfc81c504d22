package cuarray_test

import (
	"fmt"

	"github.com/gocuda/gocuda/cuarray"
)

// Reductions over axes drop the reduced axes, or keep them as dimensions
// of 1; integer sums come back as int64 and integer means as float64.
func ExampleSumAxes() {
	x := cuarray.Must(cuarray.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3))
	cols := cuarray.Must(cuarray.SumAxes(nil, x, []int{0}, false))
	rows := cuarray.Must(cuarray.MeanAxes(nil, x, []int{-1}, true))
	best := cuarray.Must(cuarray.ArgMaxAxes(nil, x, []int{1}, false))
	fmt.Printf("%s %g\n%s %g\n%s %d\n", cols, cols, rows, rows, best, best)

	b := cuarray.Must(cuarray.FromSlice([]uint8{250, 3, 4}))
	total := cuarray.Must(cuarray.SumAxesInt64(nil, b, nil, false))
	fmt.Printf("%s %d\n", total, total)
	_, err := cuarray.Sum(b)
	fmt.Println(err)
	// Output:
	// float32[3] [5 7 9]
	// float32[2 1] [[2]
	//  [5]]
	// int64[2] [2 2]
	// int64[] 257
	// cuarray: Sum of uint8[3]: the sum 257 does not fit uint8; SumInt64 returns it as int64: result does not fit the element type
}
