package main

import (
	"fmt"
	"log"
	"sync"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/cuarray"
)

func main() {
	dev, err := gocuda.Device(0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(dev.Info())

	// Row-major: [[1 2 3] [4 5 6]].
	x := cuarray.Must(cuarray.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3))
	y := cuarray.Must(cuarray.Ones[float32](2, 3))
	if _, err := cuarray.Axpy(y, 2, x, y); err != nil { // y = 2x + 1
		log.Fatal(err)
	}
	row := cuarray.Must(y.Slice(1, 2)) // the second row, sharing y's memory
	if _, err := cuarray.Relu(row, row); err != nil {
		log.Fatal(err)
	}
	host := cuarray.Must(y.ToSlice()) // waits for the work above, only
	sum := cuarray.Must(cuarray.Sum(y))
	fmt.Println(y) // shape, type, device, then the values
	fmt.Println(host, "sum", sum)
	y.UnsafeFree() // the row still holds the memory
	fmt.Printf("%s %g\n", row, row)

	// One stream per goroutine; w was uploaded on the default stream and
	// each goroutine's stream waits for it on the device.
	const n = 1 << 20
	w := cuarray.Must(cuarray.Full[float32](0.5, n))
	results := make([]float32, 4)
	var wg sync.WaitGroup
	for g := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := cuarray.NewStream(0)
			if err != nil {
				log.Fatal(err)
			}
			f := cuarray.On[float32](s)
			a := cuarray.Must(f.Full(float32(g+1), n))
			if _, err := f.Mul(a, a, w); err != nil {
				log.Fatal(err)
			}
			results[g] = cuarray.Must(f.Sum(a))
		}()
	}
	wg.Wait()
	fmt.Println("sums per goroutine:", results)

	p, err := gocuda.Pool(0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("pool:", p.Stats())
}
