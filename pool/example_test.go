package pool_test

import (
	"errors"
	"fmt"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/host"
	"github.com/gocuda/gocuda/pool"
	_ "github.com/gocuda/gocuda/pool/simple" // registers "simple"
)

// hostDevice is device 0 of a host backend of 1 GiB, which needs no GPU
// and counts memory exactly. A program takes its device from
// gocuda.Device(0) (or its pool from gocuda.Pool(0)), which follow
// GOCUDA_BACKEND.
func hostDevice() backend.Device {
	dev, err := host.New(host.Options{TotalMemory: 1 << 30}).Device(0)
	if err != nil {
		panic(err)
	}
	return dev
}

// A pool hands out blocks for work on a stream; a freed block is cached on
// that stream and the next request it fits takes it without the driver.
func Example() {
	dev := hostDevice()
	s, err := dev.NewStream()
	if err != nil {
		panic(err)
	}
	defer s.Destroy()
	p, err := pool.New("simple", dev, pool.Limits{})
	if err != nil {
		panic(err)
	}
	defer p.Close()

	b, err := p.Alloc(1<<20, s)
	if err != nil {
		panic(err)
	}
	// ... queue work on s that uses b.Ptr ...
	if err := p.Free(b, s); err != nil {
		panic(err)
	}
	again, err := p.Alloc(1<<20, s) // from the cache: no driver call
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Stats())
	if err := p.Free(again, s); err != nil {
		panic(err)
	}
	fmt.Println(p.Stats())
	// Output:
	// live 1.0 MiB (requested 1.0 MiB), reserved 1.0 MiB (peak 1.0 MiB), cached 0 B, 2 allocs, 1 frees, hit rate 50.0%, 1 driver allocs, 0 driver frees
	// live 0 B (requested 0 B), reserved 1.0 MiB (peak 1.0 MiB), cached 1.0 MiB, 2 allocs, 2 frees, hit rate 50.0%, 1 driver allocs, 0 driver frees
}

// Limits bound what a pool takes from the device. Nothing is reserved
// past the hard limit: a request that would go past it fails with an
// *OutOfMemoryError, which matches backend.ErrOutOfMemory. Above the soft
// limit, memory the pool caches goes back to the driver.
func ExampleLimits() {
	dev := hostDevice()
	s, err := dev.NewStream()
	if err != nil {
		panic(err)
	}
	defer s.Destroy()
	p, err := pool.New("simple", dev, pool.Limits{Soft: 4 << 20, Hard: 8 << 20})
	if err != nil {
		panic(err)
	}
	defer p.Close()

	a, err := p.Alloc(4<<20, s)
	if err != nil {
		panic(err)
	}
	b, err := p.Alloc(4<<20, s)
	if err != nil {
		panic(err)
	}
	_, err = p.Alloc(2<<20, s) // 10 MiB would pass the hard limit
	var oom *pool.OutOfMemoryError
	fmt.Println(errors.Is(err, backend.ErrOutOfMemory), errors.As(err, &oom))
	fmt.Println(err)

	_ = p.Free(a, s) // 8 MiB reserved, over the soft limit: a goes back
	_ = p.Free(b, s) // 4 MiB reserved, within it: b stays cached
	st := p.Stats()
	fmt.Printf("live %d MiB, reserved %d MiB, cached %d MiB, given back %d MiB\n",
		st.Live>>20, st.Reserved>>20, st.Cached()>>20, st.Reclaimed>>20)
	// Output:
	// true true
	// out of device memory on device 0: cannot allocate 2.0 MiB (2097152 bytes) with 8.0 MiB reserved under a hard limit of 8.0 MiB (0 B left)
	// live 0 MiB, reserved 4 MiB, cached 4 MiB, given back 4 MiB
}
