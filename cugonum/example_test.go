package cugonum_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/cugonum"
)

// A gonum matrix goes up as float32 (the explicit choice), is doubled on
// the device, and comes back into a gonum matrix.
func Example() {
	m := mat.NewDense(2, 3, []float64{1, 2, 3, 4, 5, 6})
	a, err := cugonum.FromDense[float32](nil, m)
	if err != nil {
		panic(err)
	}
	if _, err := cuarray.Scale(a, float32(2), a); err != nil {
		panic(err)
	}
	var out mat.Dense // empty: takes the array's shape
	if err := cugonum.ToDense(&out, a); err != nil {
		panic(err)
	}
	fmt.Println(a.String())
	fmt.Printf("%v\n", mat.Formatted(&out))
	// Output:
	// float32[2 3]
	// ⎡ 2   4   6⎤
	// ⎣ 8  10  12⎦
}
