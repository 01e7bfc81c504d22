package host_test

import (
	"fmt"
	"io"
	"path"
	"path/filepath"

	"github.com/gocuda/gocuda/backend/host"
)

// Two streams write the same bytes and nothing orders them: the checker
// reports the race with both operations and where each was queued. An
// event between them (Record on a, WaitEvent on b) would order them.
func Example_streamCheck() {
	b := host.New(host.Options{StreamCheck: host.StreamCheckReport, StreamCheckLog: io.Discard}).(*host.Backend)
	dev, _ := b.Device(0)
	a, _ := dev.NewStream()
	c, _ := dev.NewStream()
	p, _ := dev.Alloc(1 << 10)

	_ = dev.Memset8(p, 1, 1<<10, a)
	_ = dev.Memset8(p, 2, 1<<10, c) // races with a's memset

	_ = dev.Synchronize()
	for _, r := range b.StreamRaces() {
		fmt.Printf("%s by %s races with %s by %s; %d bytes overlap\n",
			r.Later.Op, verb(r.Later), r.Earlier.Op, verb(r.Earlier), r.OverlapBytes)
		fmt.Println("both queued in", filepath.Base(r.Earlier.Site.File), "by", path.Base(r.Later.Site.Function))
	}
	_ = a.Destroy()
	_ = c.Destroy()
	_ = dev.Free(p)
	// Output:
	// Memset8 by write races with Memset8 by write; 1024 bytes overlap
	// both queued in streamcheck_example_test.go by host_test.Example_streamCheck
}

func verb(a host.RaceAccess) string {
	if a.Write {
		return "write"
	}
	return "read"
}
