package main

import (
	"fmt"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/cuarray"
)

func main() {
	// Arrays live in device memory (host memory without a GPU) and are freed
	// by Go's collector. Must panics on an error: fine for a short program.
	x := cuarray.Must(cuarray.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3))
	half := cuarray.Must(cuarray.Full[float32](0.5, 2, 3))
	fmt.Println(x)

	// A nil dst makes a new array for the result. The work is queued on the
	// device; the host waits only when it reads a result.
	y := cuarray.Must(cuarray.Add(nil, cuarray.Must(cuarray.MulScalar(nil, x, 2)), half))
	z := cuarray.Must(cuarray.Relu(nil, cuarray.Must(cuarray.SubScalar(nil, y, 6))))
	fmt.Println("y = 2x + 0.5 is", y)
	fmt.Printf("relu(y - 6) is\n%g\n", z) // %g: the values alone

	host := cuarray.Must(z.ToSlice()) // a Go []float32
	sum := cuarray.Must(cuarray.Sum(y))
	fmt.Println("as a slice:", host, "sum(y):", sum)

	// What the device's memory pool holds now.
	fmt.Print(gocuda.PoolStatus())
}
