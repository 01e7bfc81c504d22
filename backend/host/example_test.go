package host_test

import (
	"fmt"
	"unsafe"

	"github.com/gocuda/gocuda/backend/host"
)

func Example() {
	b := host.New(host.Options{Devices: 2})
	dev, _ := b.Device(0)
	s, _ := dev.NewStream()
	defer s.Destroy()
	p, _ := dev.Alloc(16)
	defer dev.Free(p)

	dev.Memset32(p, 7, 4, s) // queued: returns before the bytes are written
	var sum uint32
	s.(*host.Stream).Enqueue(func() { sum = 1 }) // a host kernel, after the memset

	out := make([]uint32, 4)
	dev.CopyDtoH(unsafe.Pointer(&out[0]), p, 16, s) // waits for all of the above
	fmt.Println(out, sum)
	// Output: [7 7 7 7] 1
}
