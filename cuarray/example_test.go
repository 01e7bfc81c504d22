package cuarray_test

import (
	"fmt"
	"log"

	"github.com/gocuda/gocuda/cuarray"
)

func Example() {
	x, err := cuarray.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3) // row-major
	if err != nil {
		log.Fatal(err)
	}
	y := cuarray.Must(cuarray.Ones[float32](2, 3))
	if err := cuarray.Axpy(2, x, y); err != nil { // y = 2x + y, queued
		log.Fatal(err)
	}
	host, err := y.ToSlice() // waits for the work that wrote y
	fmt.Println(y, host, err)

	col := cuarray.Must(y.Reshape(3, -1))
	fmt.Println(col.Shape())

	y.UnsafeFree()
	_, err = y.ToSlice()
	fmt.Println(err)
	// Output:
	// float32[2 3] [3 5 7 9 11 13] <nil>
	// [3 2]
	// cuarray: ToSlice: array float32[2 3]: used after UnsafeFree
}
