package memprof_test

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/google/pprof/profile"

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

// Record live device memory with tracing on and write it as a pprof
// profile; a program writes to a file and opens it with "go tool pprof".
// Here the profile is read back to show what it holds for this function:
// the buffer it keeps is in use; the one it freed counts only among
// allocations.
func ExampleWriteProfile() {
	memprof.Enable()
	defer memprof.Disable()
	kept := cuarray.Must(cuarray.Zeros[float32](1 << 20)) // 4 MiB, live
	defer kept.UnsafeFree()
	gone := cuarray.Must(cuarray.Zeros[float32](1 << 10)) // freed: not in use
	gone.UnsafeFree()

	var buf bytes.Buffer // a program would use os.Create("devmem.pprof")
	if err := memprof.WriteProfile(&buf); err != nil {
		panic(err)
	}

	p, err := profile.Parse(&buf)
	if err != nil {
		panic(err)
	}
	var types []string
	for _, st := range p.SampleType {
		types = append(types, st.Type+"/"+st.Unit)
	}
	fmt.Println(strings.Join(types, " "))
	for _, s := range p.Sample { // other live buffers of the process are in it too
		if allocatedIn(s, "ExampleWriteProfile") {
			fmt.Println(s.Value, "on device", s.Label["device"][0])
		}
	}
	// Output:
	// alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes
	// [1 4194304 1 4194304] on device 0
	// [1 4096 0 0] on device 0
}

// allocatedIn reports whether fn is on the sample's stack.
func allocatedIn(s *profile.Sample, fn string) bool {
	for _, loc := range s.Location {
		for _, l := range loc.Line {
			if l.Function != nil && strings.HasSuffix(l.Function.Name, "."+fn) {
				return true
			}
		}
	}
	return false
}
