package cuda_test

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/gocuda/gocuda/cuda"
)

// A round trip through device memory on a stream. On a machine without a
// driver, or in a build without cgo, Init returns an error matching
// ErrNoDriver that says why; the program decides what to do instead.
func Example() {
	if err := cuda.Init(); err != nil {
		if errors.Is(err, cuda.ErrNoDriver) {
			fmt.Println("no CUDA driver, so no GPU work here:", err)
			return
		}
		fmt.Println("the CUDA driver cannot be used:", err)
		return
	}
	dev, err := cuda.GetDevice(0)
	if err != nil {
		fmt.Println(err) // with the driver but no GPU: matches cuda.ErrNoDevice
		return
	}
	ctx, err := dev.PrimaryContext()
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := ctx.NewStream(cuda.StreamNonBlocking)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Destroy()

	src := []float32{1, 2, 3, 4}
	n := uint64(len(src)) * 4
	p, err := ctx.MemAlloc(n)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ctx.MemFree(p)
	dst := make([]float32, len(src))
	// From pageable Go memory both copies are staged by the driver: the
	// host-to-device copy has read src when it returns.
	if err := s.MemcpyHtoDAsync(p, unsafe.Pointer(&src[0]), n); err != nil {
		fmt.Println(err)
		return
	}
	if err := s.MemcpyDtoHAsync(unsafe.Pointer(&dst[0]), p, n); err != nil {
		fmt.Println(err)
		return
	}
	if err := s.Synchronize(); err != nil {
		fmt.Println(err)
		return
	}
	name, _ := dev.Name()
	fmt.Printf("%s: %v\n", name, dst)
}
