package kernels_test

import (
	"fmt"
	"log"
	"unsafe"

	"github.com/gocuda/gocuda/backend/auto"
	"github.com/gocuda/gocuda/kernels"
)

func Example() {
	b, err := auto.Default() // the GPU if there is one, else the host
	if err != nil {
		log.Fatal(err)
	}
	dev, _ := b.Device(0)
	s, _ := dev.NewStream()
	defer s.Destroy()

	const n = 1000
	x, _ := dev.Alloc(n * 4)
	y, _ := dev.Alloc(n * 4)
	defer dev.Free(x)
	defer dev.Free(y)

	// Queued on s in order; nothing waits yet.
	_ = kernels.Fill(dev, s, x, float32(2), n)
	_ = kernels.Fill(dev, s, y, float32(1), n)
	_ = kernels.Axpy(dev, s, float32(3), x, y, n) // y = 3x + y = 7
	_ = kernels.Exp[float32](dev, s, y, y, n)     // in place

	// A reduction returns its value, so it waits for the work before it.
	sum, err := kernels.Sum[float32](dev, s, x, n)
	if err != nil {
		log.Fatal(err)
	}
	out := make([]float32, n)
	_ = dev.CopyDtoH(unsafe.Pointer(&out[0]), y, n*4, s)
	fmt.Println(sum, out[0] > 1096 && out[0] < 1097)

	_, err = kernels.Sum[float32](dev, s, x, -1)
	fmt.Println(err)
	// Output:
	// 2000 true
	// kernels: Sum float32: length n = -1 is negative: invalid value
}
