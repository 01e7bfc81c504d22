package main

import (
	"fmt"
	"log"
	"unsafe"

	"github.com/gocuda/gocuda"
)

func main() {
	b, err := gocuda.Backend()
	if err != nil {
		log.Fatal(err)
	}
	dev, err := gocuda.Device(0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("backend %s: %s\n", b.Name(), dev.Info())

	p, err := gocuda.Pool(0)
	if err != nil {
		log.Fatal(err)
	}
	producer, err := dev.NewStream()
	if err != nil {
		log.Fatal(err)
	}
	consumer, err := dev.NewStream()
	if err != nil {
		log.Fatal(err)
	}
	ready, err := dev.NewEvent(false)
	if err != nil {
		log.Fatal(err)
	}

	const n = 1 << 20 // float32s
	in := make([]float32, n)
	for i := range in {
		in[i] = float32(i)
	}
	src, err := p.Alloc(4*n, producer)
	if err != nil {
		log.Fatal(err)
	}
	dst, err := p.Alloc(4*n, consumer)
	if err != nil {
		log.Fatal(err)
	}
	// The producer uploads; the consumer waits for it on the device, not on
	// the host, then copies.
	check(dev.CopyHtoD(src.Ptr, unsafe.Pointer(&in[0]), 4*n, producer))
	check(ready.Record(producer))
	check(consumer.WaitEvent(ready))
	check(dev.CopyDtoD(dst.Ptr, src.Ptr, 4*n, consumer))
	out := make([]float32, n)
	check(dev.CopyDtoH(unsafe.Pointer(&out[0]), dst.Ptr, 4*n, consumer))
	for i := range out {
		if out[i] != in[i] {
			log.Fatalf("element %d is %v, want %v", i, out[i], in[i])
		}
	}
	fmt.Printf("copied %d floats from stream %d to stream %d through the %q pool: all correct\n",
		n, producer.ID(), consumer.ID(), p.Name())

	// Freed blocks stay cached on the stream they were used on: allocating
	// the same size again there is served without the driver.
	check(p.Free(dst, consumer))
	again, err := p.Alloc(4*n, consumer)
	if err != nil {
		log.Fatal(err)
	}
	check(p.Free(again, consumer))
	check(p.Free(src, consumer)) // last used by the consumer's copy
	fmt.Println(p.Stats())
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
