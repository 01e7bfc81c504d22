package nccl_test

import (
	"context"
	"fmt"
	"sync"
	"unsafe"

	"github.com/gocuda/gocuda/backend/host"
	"github.com/gocuda/gocuda/nccl"
)

// Four ranks on the host backend, a goroutine each, sum their vectors in
// place. On GPUs the same code runs with one process per GPU, the unique
// id handed over as text (id.String, nccl.ParseUniqueID).
func Example() {
	const ranks = 4
	b := host.New(host.Options{Devices: ranks})
	id, err := nccl.NewUniqueID(b)
	if err != nil {
		panic(err)
	}
	ctx := context.Background() // a deadline here would bound the communicators' life
	results := make([][]float32, ranks)
	var wg sync.WaitGroup
	for rank := range ranks {
		wg.Go(func() {
			dev, _ := b.Device(rank)
			s, _ := dev.NewStream()
			defer s.Destroy()
			comm, err := nccl.NewComm(ctx, dev, id, rank, ranks)
			if err != nil {
				panic(err)
			}
			defer comm.Destroy()

			x := []float32{float32(rank), 1}
			p, _ := dev.Alloc(8)
			defer dev.Free(p)
			_ = dev.CopyHtoD(p, unsafe.Pointer(&x[0]), 8, s)
			if err := comm.AllReduce(p, p, len(x), nccl.Float32, nccl.Sum, s); err != nil {
				panic(err)
			}
			_ = dev.CopyDtoH(unsafe.Pointer(&x[0]), p, 8, s) // waits for the sum
			if err := comm.Err(); err != nil {
				panic(err)
			}
			results[rank] = x
		})
	}
	wg.Wait()
	fmt.Println(results)
	// Output: [[6 4] [6 4] [6 4] [6 4]]
}
