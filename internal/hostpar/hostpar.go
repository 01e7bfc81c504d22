// Package hostpar splits the host backend's loops across goroutines: the
// one rule the compute packages (kernels, rtc) use to run a kernel's Go
// form over n elements on the CPUs.
//
//	hostpar.Split(n, 1<<16, func(lo, hi int) {
//		for i := lo; i < hi; i++ {
//			y[i] += a * x[i]
//		}
//	})
package hostpar

import (
	"runtime"
	"sync"
)

// Split runs f over [0, n) in equal contiguous pieces, one a goroutine, on
// at most GOMAXPROCS goroutines and one per grain elements (rounded up), and
// returns when all are done. Up to one grain it calls f(0, n) on the
// caller's goroutine.
func Split(n, grain int, f func(lo, hi int)) {
	workers := min(runtime.GOMAXPROCS(0), (n+grain-1)/grain)
	if workers <= 1 {
		f(0, n)
		return
	}
	per := (n + workers - 1) / workers
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += per {
		wg.Go(func() { f(lo, min(lo+per, n)) })
	}
	wg.Wait()
}
