package main

import (
	"fmt"
	"log"
	"sync"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/cuarray"
)

func main() {
	b, err := gocuda.Backend()
	if err != nil {
		log.Fatal(err)
	}
	if b.DeviceCount() < 2 {
		fmt.Printf("this needs two devices; the %s backend has %d\n", b.Name(), b.DeviceCount())
		return
	}
	const n = 1 << 20
	data := make([]float64, 2*n)
	for i := range data {
		data[i] = float64(i % 1000)
	}

	// Each device squares its half, on its own stream, at the same time.
	halves := make([]*cuarray.Array[float64], 2)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for d := range 2 {
		wg.Go(func() {
			s, err := cuarray.NewStream(d)
			if err != nil {
				errs[d] = err
				return
			}
			f := cuarray.On[float64](s)
			x, err := f.FromSlice(data[d*n : (d+1)*n])
			if err == nil {
				_, err = f.Mul(x, x, x)
			}
			halves[d], errs[d] = x, err
		})
	}
	wg.Wait()
	for d, err := range errs {
		if err != nil {
			log.Fatalf("device %d: %v", d, err)
		}
		dev := halves[d].Device().Info()
		fmt.Printf("half %d on %s\n", d, dev.Name)
	}

	// Gather on device 0: the second half crosses devices.
	all := cuarray.Must(cuarray.New[float64](2 * n))
	lo, hi := cuarray.Must(all.View(0, n)), cuarray.Must(all.View(n, n))
	if err := cuarray.Copy(lo, halves[0]); err != nil {
		log.Fatal(err)
	}
	if err := cuarray.Copy(hi, halves[1]); err != nil { // device 1 -> device 0
		log.Fatal(err)
	}
	sum := cuarray.Must(cuarray.Sum(all))
	var want float64
	for _, v := range data {
		want += v * v
	}
	fmt.Printf("sum of squares %.0f on device %d (want %.0f)\n", sum, all.Device().Ordinal(), want)
	if sum != want {
		log.Fatal("wrong result")
	}
}
