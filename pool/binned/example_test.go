package binned_test

import (
	"fmt"

	"github.com/gocuda/gocuda/backend/host"
	"github.com/gocuda/gocuda/pool"
	_ "github.com/gocuda/gocuda/pool/binned" // registers "binned"
)

func Example() {
	dev, _ := host.New(host.Options{}).Device(0)
	stream, _ := dev.NewStream()
	defer stream.Destroy()

	p, err := pool.New("binned", dev, pool.Limits{Soft: 1 << 30})
	if err != nil {
		panic(err)
	}
	defer p.Close()

	b, _ := p.Alloc(3000, stream) // rounded up to the 3 KiB class
	fmt.Println(b.Size)
	_ = p.Free(b, stream) // cached on stream's 3 KiB list

	again, _ := p.Alloc(2900, stream) // same class, same stream: the same block
	fmt.Println(again == b, p.Stats().Hits)
	_ = p.Free(again, stream)
	// Output:
	// 3072
	// true 1
}
