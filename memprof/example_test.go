package memprof_test

import (
	"fmt"
	"os"

	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/memprof"
)

// Allocated says what a piece of code allocated on the device, as
// CUDA.jl's @allocated does. It needs no tracing.
func ExampleAllocated() {
	got := memprof.Allocated(func() {
		a := cuarray.Must(cuarray.Zeros[float32](256, 256))
		b := cuarray.Must(cuarray.Zeros[float32](256))
		a.UnsafeFree()
		b.UnsafeFree()
	})
	fmt.Printf("%d allocations, %d bytes\n", got.Allocs, got.Bytes)
	// Output: 2 allocations, 263168 bytes
}

// With tracing on, the report names the line that allocated each live
// buffer; a program would print it when memory grows unexpectedly.
func ExampleWriteReport() {
	memprof.Enable()
	defer memprof.Disable()
	kept := cuarray.Must(cuarray.New[float32](1 << 20))
	defer kept.UnsafeFree()
	if err := memprof.WriteReport(os.Stdout, memprof.ReportOptions{MaxSites: 3}); err != nil {
		fmt.Println(err)
	}
}
