// Onlycuarray is the smallest program a user writes with gocuda: it
// imports cuarray and nothing else of gocuda. The import budget
// (docs/imports.md) is measured on it: the packages it links and the size
// of its binary.
package main

import (
	"fmt"
	"log"

	"github.com/gocuda/gocuda/cuarray"
)

func main() {
	x, err := cuarray.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	if err != nil {
		log.Fatal(err)
	}
	y := cuarray.Must(cuarray.Ones[float32](2, 3))
	if _, err := cuarray.Axpy(y, 2, x, y); err != nil { // y = 2x + y
		log.Fatal(err)
	}
	host, err := y.ToSlice()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(y, host)
}
