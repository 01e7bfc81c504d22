package cuarray_test

import (
	"errors"
	"fmt"
	"log"

	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/kernels"
)

// Ranges, identities, joins, and gathers and scatters with index arrays.
// Each takes a dst first: nil makes the result.
func Example_constructionAndIndexing() {
	r := cuarray.Must(cuarray.Arange[float32](nil, 0, 6, 1)) // NumPy's arange
	m := cuarray.Must(r.Reshape(2, 3))
	fmt.Println(cuarray.Must(cuarray.Linspace[float64](nil, 0, 1, 5, true)).ToSlice())
	fmt.Println(cuarray.Must(cuarray.Eye[int32](nil, 2, 3, 1)).ToSlice())

	// Concat along an existing axis, Stack along a new one.
	both := cuarray.Must(cuarray.Concat(nil, []*cuarray.Array[float32]{m, m}, 1))
	fmt.Println(both.Shape(), cuarray.Must(cuarray.Stack(nil, []*cuarray.Array[float32]{m, m}, 0)).Shape())

	// Take columns 2, 0 and the last (-1) of every row.
	idx := cuarray.Must(cuarray.FromSlice([]int64{2, 0, -1}))
	cols := cuarray.Must(cuarray.Take(nil, m, idx, 1))
	fmt.Printf("%g\n", cols)

	// A histogram: ScatterAdd adds every value however often its index
	// repeats (exact for integers, whatever the order on a GPU).
	bins := cuarray.Must(cuarray.Zeros[int32](4))
	hits := cuarray.Must(cuarray.FromSlice([]int64{1, 3, 1, 1, 0}))
	if _, err := cuarray.ScatterAdd(bins, cuarray.Must(cuarray.Ones[int32](5)), hits, 0); err != nil {
		log.Fatal(err)
	}
	fmt.Println(bins.ToSlice())

	// An index out of range is an error; nothing outside the array is read.
	bad := cuarray.Must(cuarray.FromSlice([]int64{0, 3}))
	_, err := cuarray.Take(nil, m, bad, 1)
	fmt.Println(errors.Is(err, kernels.ErrIndex))
	fmt.Println(err)
	// Output:
	// [0 0.25 0.5 0.75 1] <nil>
	// [0 1 0 0 0 1] <nil>
	// [2 6] [2 2 3]
	// [[2 0 2]
	//  [5 3 5]]
	// [1 3 0 1] <nil>
	// true
	// cuarray: Take: indices int64[2] along axis 1 of x float32[2 3]: kernels: Take float32: index 3 is out of range for an axis of length 3 (valid: -3 to 2): index out of range
}
