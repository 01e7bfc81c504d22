package cufft_test

import (
	"fmt"
	"log"
	"math"

	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/cufft"
)

// Two rows of 8 real samples, each a cosine: the spectrum of each row has
// its peak at the cosine's frequency, and the inverse gives the rows back.
func Example() {
	const n = 8
	rows := make([]float32, 2*n)
	for j := range n {
		rows[j] = float32(math.Cos(2 * math.Pi * 1 * float64(j) / n))   // frequency 1
		rows[n+j] = float32(math.Cos(2 * math.Pi * 3 * float64(j) / n)) // frequency 3
	}
	x, err := cuarray.FromSlice(rows, 2, n)
	if err != nil {
		log.Fatal(err)
	}
	spec := cuarray.Must(cuarray.New[complex64](2, n/2+1))
	back := cuarray.Must(cuarray.New[float32](2, n))
	if err := cufft.RFFT(nil, spec, x); err != nil { // nil: the default stream
		log.Fatal(err)
	}
	if err := cufft.IRFFT(nil, back, spec); err != nil {
		log.Fatal(err)
	}
	got := cuarray.Must(spec.ToSlice()) // waits for the transform
	for r := range 2 {
		fmt.Print("row ", r, ":")
		for _, v := range got[r*(n/2+1) : (r+1)*(n/2+1)] {
			fmt.Printf(" %.1f", math.Abs(float64(real(v)))+math.Abs(float64(imag(v))))
		}
		fmt.Println()
	}
	var worst float64
	for i, v := range cuarray.Must(back.ToSlice()) {
		worst = max(worst, math.Abs(float64(v-rows[i])))
	}
	fmt.Println("inverse within 1e-6 of the input:", worst < 1e-6)
	// Output:
	// row 0: 0.0 4.0 0.0 0.0 0.0
	// row 1: 0.0 0.0 0.0 4.0 0.0
	// inverse within 1e-6 of the input: true
}
