package main

import (
	"fmt"
	"log"
	"runtime"

	"github.com/gocuda/gocuda/cuarray"
)

func main() {
	const n = 1 << 20
	a := cuarray.Must(cuarray.NewUnified[float32](n))
	defer a.UnsafeFree()

	h := cuarray.Must(a.Host()) // the array's own memory, as a Go slice
	for i := range h {
		h[i] = float32(i % 100)
	}

	// Queued on the GPU; Host below waits for them.
	if _, err := cuarray.MulScalar(a, a, 3); err != nil {
		log.Fatal(err)
	}
	if _, err := cuarray.AddScalar(a, a, 1); err != nil {
		log.Fatal(err)
	}

	h = cuarray.Must(a.Host())
	fmt.Println("first elements, 3x+1:", h[:5])
	fmt.Println("sum on the GPU:", cuarray.Must(cuarray.Sum(a)))
	var sum float64
	for _, v := range h { // and on the CPU, from the same memory
		sum += float64(v)
	}
	fmt.Println("sum on the CPU:", sum)
	runtime.KeepAlive(a) // h is a's memory: keep a alive while h is used
}
