package split_test

import (
	"testing"

	"github.com/gocuda/gocuda/pool/pooltest"
	"github.com/gocuda/gocuda/pool/split"
)

// BenchmarkAllocFree is a cached Alloc+Free pair of each size on one
// goroutine and stream (pairs/s reported).
func BenchmarkAllocFree(b *testing.B) { pooltest.BenchAllocFree(b, split.New) }

// BenchmarkParallel is 1 MiB pairs from 1 to 16 goroutines, each on its own
// stream.
func BenchmarkParallel(b *testing.B) { pooltest.BenchParallel(b, split.New) }

// BenchmarkRefusal is how long a request that cannot fit (beyond the hard
// limit, beyond the device) takes to refuse; on the H100 a 10 GiB request
// under an 8 GiB limit took 136 ms before it was refused up front.
func BenchmarkRefusal(b *testing.B) { pooltest.BenchRefusal(b, split.New) }
