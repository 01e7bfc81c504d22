// Package host is the backend gocuda uses when there is no GPU: devices
// whose memory is the process's own, mapped from the OS, and whose streams
// are goroutines. Its job is to keep stream semantics honest, so that a
// missing synchronization or a wrong event fails a test on a CI machine
// instead of corrupting data on a GPU.
//
// # What is asynchronous and what blocks
//
// Every stream has a worker goroutine that runs the stream's work in the
// order it was queued, some time after the call that queued it:
//
//   - CopyDtoD, Memset8, Memset32, Event.Record, Stream.WaitEvent and
//     Stream.Enqueue queue work and return at once.
//   - CopyHtoD copies the source into a staging buffer before it returns,
//     so the caller may reuse the source at once, and queues the copy into
//     device memory (as cuMemcpyHtoDAsync does for pageable memory).
//   - CopyDtoH queues the copy and returns when the bytes are in the
//     destination.
//   - Stream.Synchronize, Event.Synchronize and Device.Synchronize block
//     until the work queued before the call has run.
//   - Alloc, Free and the virtual memory calls are synchronous. Free does
//     not wait for queued work: as on CUDA, the caller must be sure none
//     uses the memory any more.
//
// A stream that WaitEvent was called on stops before its later work until
// the event's most recent Record (as of the WaitEvent call) has run, which
// may be on another stream or another device of the same backend.
// Recording an event again starts a new generation: Query, Synchronize and
// later waits see the new one, waits already queued keep the old one.
//
// # Memory
//
// Alloc maps anonymous memory with MAP_NORESERVE, so untouched bytes cost
// no RAM: a device may be larger than the machine, and a pool may reserve
// gigabytes it never writes. Each device counts what is allocated against
// Options.TotalMemory and fails with backend.ErrOutOfMemory beyond it.
// Misuse — freeing a pointer twice, a handle that does not exist, a
// misaligned Memset32, a destroyed stream — is an error wrapping
// backend.ErrInvalidValue, never a crash. Pointers into memory that was
// never allocated, or was freed while work still used it, fault as they
// would on a GPU; the host backend does not check every address.
//
// Devices implement backend.VirtualMemory with a 2 MiB granularity.
// Physical memory is ranges of one sparse memfd per device (one file
// descriptor, however many handles), mapped shared, so that two mappings
// of a handle alias; a handle's pages are freed (punched out of the file)
// once it is released and unmapped. A reservation is a PROT_NONE shared
// mapping of that file at the offset equal to its address, and a handle
// takes the range at the address it is first mapped at when that range is
// free: mapping it there is then one mprotect, and unmapping it one more,
// while a handle mapped anywhere else costs an mmap. CreatePhysical and
// ReleasePhysical of a handle never mapped make no system call. Every
// Alloc and every mapping uses a kernel mapping (adjacent mappings made in
// place share one), so vm.max_map_count, usually 65530, bounds how many a
// program holds at once.
//
// # Other platforms
//
// Where the OS has no memfd and MAP_NORESERVE (macOS, Windows, FreeBSD;
// on Linux with the gocuda_portablemem build tag, which is how CI tests
// it), memory comes from plain anonymous mmap, or VirtualAlloc on
// Windows: zeroed, page-aligned, outside the Go heap and costing RAM only
// once touched (on Windows it counts against the commit limit). Virtual
// memory keeps its semantics but for one thing: without a file to map
// twice, a handle shows at one address at a time, so mapping it again
// while it is mapped fails with backend.ErrNotSupported. Unmap leaves a
// live handle's bytes where they were, inaccessible, so that mapping it
// there again or releasing it costs one system call, as on Linux; mapping
// it at another address copies its bytes (its zero pages excepted), where
// Linux only changes page tables. docs/platforms.md has the matrix and
// docs/benchmarks.md the costs.
//
// # Stream checker
//
// With GOCUDA_STREAM_CHECK=1, Options.StreamCheck or Backend.SetStreamCheck,
// the backend checks every queued operation for a race between streams:
// bytes touched by work on two streams, at least one writing, with no
// event wait or host wait ordering the earlier before the later. Copies and
// memsets declare their ranges, kernels theirs (through the kernels
// package), host functions theirs through Stream.EnqueueAccess. Streams
// carry vector clocks that Event.Record captures, Stream.WaitEvent merges
// and host waits (Synchronize, CopyDtoH, a Query that says done) publish
// to all later work. Races are kept per pair of sites
// (Backend.StreamRaces, StreamRaces), logged once with both stacks, and in
// StreamCheckStrict refuse the racing operation with ErrStreamRace. Off,
// it costs each queued operation one load and branch. docs/stream-check.md
// has the rules, a report and the cost.
//
// # Fault injection
//
// Backend.SetFaults makes chosen driver calls fail, so that tests reach
// the error paths of the code above: each kind of call (FaultOp: alloc,
// free, reserve, map, unmap, stream and event creation, event record and
// wait, synchronize, copies, memsets, kernel launches) at a rate drawn
// from a seeded generator, at its Nth call, or both. A failed call does
// nothing and returns a *FaultError, which matches ErrInjected and, if the
// rule says so, another sentinel (backend.ErrOutOfMemory for an
// allocation that should look like a full device). FaultCounts says how
// many calls were made and failed. Off, it costs each call one atomic
// load. docs/testing.md shows how the fuzz tests use it.
//
//	b := host.New(host.Options{}).(*host.Backend)
//	b.SetFaults(host.Faults{Seed: 1, Rules: []host.FaultRule{
//		{Op: host.FaultAlloc, Rate: 0.05, As: backend.ErrOutOfMemory},
//		{Op: host.FaultRecord, Nth: 3},
//	}})
//
// # Example
//
//	b := host.New(host.Options{Devices: 2})
//	dev, _ := b.Device(0)
//	s, _ := dev.NewStream()
//	p, _ := dev.Alloc(4 << 20)
//	dev.Memset32(p, 7, 1<<20, s) // queued
//	s.(*host.Stream).Enqueue(func() { /* a host kernel, after the memset */ })
//	out := make([]uint32, 1<<20)
//	dev.CopyDtoH(unsafe.Pointer(&out[0]), p, 4<<20, s) // waits for both
//	s.Destroy()
//	dev.Free(p)
package host
