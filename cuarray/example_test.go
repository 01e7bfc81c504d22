package cuarray_test

import (
	"fmt"
	"log"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/cuarray"
)

func Example() {
	x, err := cuarray.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3) // row-major
	if err != nil {
		log.Fatal(err)
	}
	y := cuarray.Must(cuarray.Ones[float32](2, 3))
	if _, err := cuarray.Axpy(y, 2, x, y); err != nil { // y = 2x + y, queued
		log.Fatal(err)
	}
	host, err := y.ToSlice() // waits for the work that wrote y
	fmt.Println(host, err)
	fmt.Printf("%s:\n%g\n", y, y) // the short name, then the values

	col := cuarray.Must(y.Reshape(3, -1))
	fmt.Println(col.Shape())

	y.UnsafeFree()
	_, err = y.ToSlice()
	fmt.Println(err)
	// Output:
	// [3 5 7 9 11 13] <nil>
	// float32[2 3]:
	// [[ 3  5  7]
	//  [ 9 11 13]]
	// [3 2]
	// cuarray: ToSlice: array float32[2 3]: used after UnsafeFree
}

// fmt prints an array's values: %v (and fmt.Println) with a header naming
// shape, element type and device, "2×3 float32 on device 0 (host):"; any
// element verb the values alone; %s the short name that errors use.
// Large arrays are summarized, and only what is shown is read back.
func ExampleArray_Format() {
	a := cuarray.Must(cuarray.FromSlice([]float32{1, -2.5, 3, 4, 5, 6}, 2, 3))
	fmt.Printf("%g\n", a)
	fmt.Printf("%.2f\n", a)
	fmt.Printf("%s\n", a)

	big := cuarray.Must(cuarray.FromSlice(make([]int32, 10000), 100, 100))
	fmt.Printf("%d\n", big) // 36 elements read back, not 10000
	// Output:
	// [[   1 -2.5    3]
	//  [   4    5    6]]
	// [[ 1.00 -2.50  3.00]
	//  [ 4.00  5.00  6.00]]
	// float32[2 3]
	// [[0 0 0 … 0 0 0]
	//  [0 0 0 … 0 0 0]
	//  [0 0 0 … 0 0 0]
	//  …
	//  [0 0 0 … 0 0 0]
	//  [0 0 0 … 0 0 0]
	//  [0 0 0 … 0 0 0]]
}

// ExampleWithPointers hands two arrays to code cuarray did not write: here
// a copy queued through the backend, as a foreign library would queue its
// kernels on the stream it is given.
func ExampleWithPointers() {
	s, err := cuarray.NewStream(0)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	f := cuarray.On[float32](s)
	x := cuarray.Must(f.FromSlice([]float32{1, 2, 3}))
	y := cuarray.Must(f.Zeros(3))
	err = cuarray.WithPointers(s, func(bs backend.Stream, p []backend.Ptr) error {
		return s.Device().CopyDtoD(p[1], p[0], 3*4, bs) // y = x
	}, cuarray.In(x), cuarray.Out(y))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cuarray.Must(y.ToSlice()))
	// Output: [1 2 3]
}

// Views share their parent's memory: a transpose, a permutation of axes, a
// slice with a step, a broadcast. Operations take them as they are;
// Contiguous packs one into a new row-major array.
func Example_views() {
	a := cuarray.Must(cuarray.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3))
	at := cuarray.Must(a.Transpose())
	fmt.Println(at.Shape(), at.Strides(), at.IsContiguous())
	fmt.Printf("%g\n", at)

	odd := cuarray.Must(a.SliceAxis(1, 0, 3, 2)) // columns 0 and 2
	fmt.Println(cuarray.Must(odd.ToSlice()))

	bias := cuarray.Must(cuarray.FromSlice([]float32{10, 20, 30}))
	rows := cuarray.Must(bias.BroadcastTo(2, 3)) // stride 0 along the rows
	sum := cuarray.Must(cuarray.Add(nil, a, rows))
	fmt.Printf("%g\n", sum)

	// Writing through a view writes the parent.
	if err := cuarray.Fill(odd, 0); err != nil {
		log.Fatal(err)
	}
	fmt.Println(cuarray.Must(a.ToSlice()))

	packed := cuarray.Must(cuarray.Contiguous(at))
	fmt.Println(packed.IsContiguous(), cuarray.Must(packed.ToSlice()))

	_, err := at.Reshape(6)
	fmt.Println(err != nil)
	// Output:
	// [3 2] [1 3] false
	// [[1 4]
	//  [2 5]
	//  [3 6]]
	// [1 3 4 6]
	// [[11 22 33]
	//  [14 25 36]]
	// [0 2 0 0 5 0]
	// true [0 0 2 5 0 0]
	// true
}
