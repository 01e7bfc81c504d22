// Package memprof shows where device memory goes: which lines of a program
// allocated the buffers that are still live (leak tracing), how much a
// piece of code allocates (Allocated), and the same live memory as a pprof
// profile that "go tool pprof" reads (package memprof/memprofhttp serves it
// over HTTP).
//
// It works by wrapping a pool.Pool (Wrap); the root package wraps every
// device's pool, so every cuarray allocation is seen. Tracing is off until
// Enable is called or GOCUDA_DEBUG=leaks is set (read when the first pool
// is wrapped, never at import); while it is off, a wrapped
// pool's Alloc and Free cost one atomic load more than the bare pool's.
// While it is on, each allocation remembers its stack (runtime.Callers into
// a fixed array, interned per site) until it is freed.
//
//	memprof.Enable()
//	train(model)                                   // allocates through cuarray
//	memprof.WriteReport(os.Stderr, memprof.ReportOptions{})
//
// prints, for each allocation site with live buffers, largest first:
//
//	64 MiB in 2 buffers (64 MiB requested) on device 0, allocated at
//	    (3 gocuda frames above)
//	    main.train
//	        /home/you/app/train.go:42
//	    main.main
//	        /home/you/app/main.go:17
//
// WriteProfile writes the same figures as a gzipped pprof profile with the
// sample types of Go's heap profile (alloc_objects, alloc_space,
// inuse_objects, inuse_space); docs/observability.md shows a session.
package memprof
