package main

import (
	"fmt"
	"log"
	"sync"
	"time"

	"github.com/gocuda/gocuda/cuarray"
)

func main() {
	const n = 1 << 20 // 1 Mi elements, 4 MiB per array
	// Shared and read-only: uploaded once, on the default stream.
	w := cuarray.Must(cuarray.Full[float32](0.5, n))

	const workers = 8
	sums := make([]float32, workers)
	errs := make([]error, workers)
	start := time.Now()
	var wg sync.WaitGroup
	for g := range workers {
		wg.Go(func() { sums[g], errs[g] = work(g, w) })
	}
	wg.Wait()
	for g := range workers {
		if errs[g] != nil {
			log.Fatalf("goroutine %d: %v", g, errs[g])
		}
		// x = g+1 everywhere, times w (0.5), summed: (g+1) * 0.5 * n.
		fmt.Printf("goroutine %d: sum %.0f (want %.0f)\n", g, sums[g], float32(g+1)*0.5*n)
	}
	fmt.Printf("%d goroutines, one stream each, in %v\n", workers, time.Since(start).Round(time.Millisecond))
}

// work is one goroutine's share: its own stream, its own arrays.
func work(g int, w *cuarray.Array[float32]) (float32, error) {
	s, err := cuarray.NewStream(0)
	if err != nil {
		return 0, err
	}
	f := cuarray.On[float32](s) // every operation below is queued on s
	x, err := f.Full(float32(g+1), w.Len())
	if err != nil {
		return 0, err
	}
	defer x.UnsafeFree() // optional: the collector would free it too
	for range 4 {
		if _, err := f.Tanh(x, x); err != nil { // busy work on this stream only
			return 0, err
		}
		if err := f.Fill(x, float32(g+1)); err != nil {
			return 0, err
		}
	}
	if _, err := f.Mul(x, x, w); err != nil { // waits for w's upload, on the GPU
		return 0, err
	}
	return f.Sum(x) // waits for s's work, not the other goroutines'
}
