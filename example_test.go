package gocuda_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dustin/go-humanize"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/cuarray"
)

// Print PoolStatus when memory runs short or grows. Its text depends on
// the machine (the device's name and size), so this example shows no
// output; on the host backend it reads like this:
//
//	Device 0: host CPU, pool split
//	  Effective memory usage: 0.59% (6.0 MiB/1.0 GiB)
//	  Memory pool usage: 4.3 MiB (6.0 MiB reserved, 1.8 MiB cached)
//	  Peaks: 4.3 MiB live, 6.0 MiB reserved
//	  Allocations: 4 allocations (50.0% from the cache), 1 free; driver: 2 allocations, 0 frees, 0 B reclaimed
//	  Memory limit: soft = 512 MiB, hard = 768 MiB
func ExamplePoolStatus() {
	a := cuarray.Must(cuarray.Zeros[float32](1024, 1024))
	defer a.UnsafeFree()
	fmt.Print(gocuda.PoolStatus())
}

// MemoryStatus gives PoolStatus's figures as values, for a program that
// watches its memory: here device 0's live bytes while an array lives and
// after it is freed.
func ExampleMemoryStatus() {
	live := func() uint64 {
		mem, err := gocuda.MemoryStatus()
		if err != nil {
			panic(err)
		}
		for _, d := range mem {
			if d.Device == 0 {
				return d.Stats.Live
			}
		}
		return 0 // no pool on device 0 yet
	}
	before := live()
	a := cuarray.Must(cuarray.Zeros[float32](1024, 1024)) // 4 MiB on device 0
	during := live()
	a.UnsafeFree()
	after := live()
	fmt.Println("live while the array lives:", humanize.IBytes(during-before))
	fmt.Println("live after UnsafeFree:", humanize.IBytes(after-before))
	// Output:
	// live while the array lives: 4.0 MiB
	// live after UnsafeFree: 0 B
}

// An array the program drops without UnsafeFree keeps its device memory
// until the collector finds it unreachable and its cleanup gives the
// memory back. Collect does both before it returns, so the figures read
// after it (MemoryStatus, PoolStatus, a leak report) show only what the
// program still references.
func ExampleCollect() {
	ctx := context.Background()
	live := func() uint64 {
		mem, err := gocuda.MemoryStatus()
		if err != nil {
			panic(err)
		}
		return mem[0].Stats.Live // device 0: its pool exists, Zeros made it
	}
	cuarray.Must(cuarray.Zeros[float32](1)).UnsafeFree()
	if err := gocuda.Collect(ctx); err != nil { // start from what is referenced
		panic(err)
	}
	before := live()
	for range 8 {
		a := cuarray.Must(cuarray.Zeros[float32](1024, 1024)) // 4 MiB each
		_ = a                                                 // dropped, not freed
	}
	if err := gocuda.Collect(ctx); err != nil {
		panic(err)
	}
	fmt.Println("live after Collect:", humanize.IBytes(live()-before))
	// Output:
	// live after Collect: 0 B
}

// An allocation that fails for good, after the pressure layer has
// collected and retried, matches backend.ErrOutOfMemory and carries its
// device's PoolStatus, so the error alone says what held the memory.
func Example_outOfMemory() {
	dev, err := gocuda.Device(0)
	if err != nil {
		panic(err)
	}
	tooMany := int(4 * dev.Info().TotalMemory) // four times the device
	_, err = cuarray.New[uint8](tooMany)
	fmt.Println(errors.Is(err, backend.ErrOutOfMemory))
	fmt.Println(strings.Contains(err.Error(), "Memory pool usage:"))
	// Output:
	// true
	// true
}
