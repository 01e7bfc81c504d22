package gocuda_test

import (
	"fmt"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/pool"
)

// MemoryStatus's figures print as a table, a row a device. A program
// prints its own:
//
//	mem, err := gocuda.MemoryStatus()
//	if err != nil {
//		log.Print(err) // a device whose free memory could not be read
//	}
//	fmt.Print(mem)
//
// Those depend on the machine and on what the process allocated, so this
// example prints figures written out, as two H100s would give them.
func ExampleDeviceMemories() {
	mem := gocuda.DeviceMemories{
		{Device: 0, Name: "NVIDIA H100 80GB HBM3", Total: 80 << 30, Used: 12 << 30, Pool: "split",
			Stats: pool.Stats{Live: 9 << 30, Reserved: 11 << 30, SoftLimit: 60 << 30, HardLimit: 72 << 30}},
		{Device: 1, Name: "NVIDIA H100 80GB HBM3", Total: 80 << 30, Used: 600 << 20, Pool: "split",
			Stats: pool.Stats{Live: 64 << 20, Reserved: 96 << 20}},
	}
	fmt.Print(mem)
	// Output:
	// device  name                   pool   used                       live     reserved  cached   limits
	// 0       NVIDIA H100 80GB HBM3  split  12 GiB of 80 GiB (15.00%)  9.0 GiB  11 GiB    2.0 GiB  soft = 60 GiB, hard = 72 GiB
	// 1       NVIDIA H100 80GB HBM3  split  600 MiB of 80 GiB (0.73%)  64 MiB   96 MiB    32 MiB   none
}
