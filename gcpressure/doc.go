// Package gcpressure is device-memory pressure for Go's collector: Go sees
// a 40-byte array header, not the gigabytes of device memory behind it, so
// without help garbage arrays pile up on the GPU until allocation fails.
//
// Wrap puts a layer around a pool.Pool (the root package wraps every
// device's pool with it) that does four things:
//
//   - accounting: the pool's live and reserved bytes, its soft and hard
//     limits, and the device's free memory, combined into one effective
//     limit (EffectiveLimit);
//   - the pacer (GOCUDA_GC_PERCENT, Options.GCPercent), as GOGC for Go's
//     heap: device bytes in use peak near twice what the last collection
//     left live (PacerTarget); a collection starts in the background
//     before that (PacerTrigger), allocations wait for it from there while
//     the device has work queued (Pace), and after it the pool gives back
//     what the next cycles will not need (ReclaimAfterPacing);
//   - the eager heuristic (GOCUDA_GC_EARLY, Options.Early): when live
//     bytes near the limit, run the collector before the pool must grow
//     or fail, in the background from half the limit and on the
//     allocating goroutine from 90 %, at a rate that keeps collection
//     time within a budget share of run time (Decide);
//   - the out-of-memory ladder: on a failed allocation, give the cache
//     back, collect and wait for every cleanup the collection queued,
//     synchronize the device, give the cache back again, retrying after
//     each step; only then fail with an error that matches
//     backend.ErrOutOfMemory and names the request, the limit and the
//     pool's status.
//
// Far from the limit, an allocation pays one atomic load and a compare
// for all of this. docs/gc.md explains the heuristic and how it differs
// from CUDA.jl's.
//
//	p, _ := pool.New("split", dev, pool.Limits{Hard: 4 << 30})
//	w, _ := gcpressure.Wrap(p, gcpressure.Options{Early: true})
//	s, _ := cuarray.NewStreamPool(w) // arrays on s come from w
//	...
//	fmt.Println(w.PressureStats()) // collections, their share of run time, retries
//
// For(gocuda.Pool(0)) finds the layer of the root package's pools.
package gcpressure
