// Package cuda is gocuda's binding to the CUDA driver API: devices, primary
// contexts, streams, events, device, managed and pinned memory, the
// driver's stream-ordered pools, virtual memory management, copies,
// memsets, modules and kernel launches, and peer access.
//
// The driver is loaded at run time with dlopen (libcuda.so.1), through our
// own declarations of its types: building needs cgo and a C compiler, but
// no CUDA toolkit, and a program built with it runs on machines without a
// GPU. There, and in builds that cannot reach a driver at all (cgo off, or
// an OS other than linux, darwin and freebsd), Init and every entry point
// return an error matching ErrNoDriver whose text says why; gocuda's
// higher layers then use the host backend.
//
// Every method of a Context, Stream or Event makes its context current on
// the calling OS thread inside the same C call, so goroutines need not lock
// threads. Driver failures are *Error values that match the Result
// sentinels with errors.Is (errors.Is(err, ErrOutOfMemory)).
//
// Most programs use package cuarray, which sits on top of this one; use
// this package to write to the driver directly. CallPath says how cheap
// calls reach the driver in this build.
package cuda
