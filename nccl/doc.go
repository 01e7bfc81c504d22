// Package nccl is NVIDIA's NCCL, the collective communication library
// every multi-GPU framework runs on, for device buffers of any backend:
// NCCL itself on the CUDA backend, and on the host backend an in-process
// implementation with the same API and semantics, whose ranks are
// goroutines, so that multi-rank programs are tested without GPUs.
//
// # Communicators
//
// A communicator joins Size ranks, one device each. The usual way is one
// process per GPU, started by a launcher (gocuda launch, torchrun, srun,
// mpirun): each process calls JoinFromEnv, which meets the others at the
// launcher's rendezvous (package rendezvous), takes the UniqueID rank 0
// made and joins on its local device. Without a launcher, one rank makes
// a UniqueID with NewUniqueID, hands it to every rank (UniqueID.String and
// ParseUniqueID carry it as text) and each calls NewComm with it, its
// rank and the number of ranks. NewComms makes all the ranks of one
// process's devices at once (ncclCommInitAll). On the host backend the
// ranks must be in one process.
//
// Operations take device pointers (backend.Ptr), a count of elements, a
// DataType (DataTypeOf maps an array's kernels.DType) and a stream of the
// rank's device, and queue the work there: AllReduce, Broadcast, Reduce,
// AllGather, ReduceScatter, Send and Recv, with NCCL's meaning of each
// argument and its in-place forms. Group starts several operations
// together: the Sends and Recvs of a ring, or one goroutine driving the
// ranks of several devices.
//
// # Arrays
//
// AllReduceArray, BroadcastArray, ReduceArray, AllGatherArray,
// ReduceScatterArray, SendArray and RecvArray take cuarray arrays and a
// cuarray.Stream, and AllReduceNew, AllGatherNew and ReduceScatterNew
// return a new array from the stream's pool. Each is a
// cuarray.WithPointers call: the collective waits for the arrays' earlier
// work on any stream, keeps them alive until its work has run, and is
// what later uses, reads and frees of the arrays wait for. Shapes, lengths
// and devices that do not fit are errors before anything is queued.
//
// # Registration
//
// Comm.Register and RegisterArray register a buffer with a communicator
// (ncclCommRegister, NCCL 2.19 and later), an option whose worth depends
// on the machine: BenchmarkAllReduce measures it. On the host backend
// registration checks its arguments and does nothing else.
//
// # Errors and contexts
//
// Errors are values. A failed NCCL call is an *Error carrying the result
// (matching the Result constants with errors.Is) and NCCL's own text
// (ncclGetErrorString, ncclGetLastError); bad arguments are caught before
// NCCL sees them and wrap backend.ErrInvalidValue; no NCCL library is
// ErrNoNCCL. Work fails after it was queued when a peer fails: Err reports
// that, and should be read after synchronizing the streams.
//
// The context given to NewComm (or NewComms) bounds the communicator's
// life. Every communicator is nonblocking (ncclConfig_t.blocking = 0), so
// no NCCL call waits on a peer: where NCCL is still at work
// (ncclInProgress) the package polls ncclCommGetAsyncError and watches
// the context. These honour it: NewComm and NewComms while the ranks
// gather; each operation, and Group's end, while NCCL takes the work;
// Destroy while ncclCommFinalize waits for the other ranks. And when the
// context is done at any time, the communicator is aborted
// (ncclCommAbort): queued work that waits on a peer quits, so that stream
// synchronizations return, and later calls fail with ErrAborted, wrapping
// the context's cause. A peer that never comes, or hangs, cannot hang the
// program longer than the context allows. On the host backend one rank's
// abort (or its context) fails every rank of the communicator, and a rank
// that destroys its communicator while others wait for it fails them.
//
// # Loading NCCL
//
// NCCL is loaded at first use with dlopen, as package cuda loads the
// driver: no NCCL or CUDA headers are needed to build, and a program that
// never communicates on a GPU never loads it. GOCUDA_NCCL_LIBRARY names
// the library file to load, and then only it is tried. Otherwise
// libnccl.so.2 is looked up by the system loader (LD_LIBRARY_PATH,
// ldconfig), then pip's nvidia-nccl package (nvidia/nccl/lib/libnccl.so.2)
// in the site-packages and dist-packages of python3.* under $VIRTUAL_ENV,
// $CONDA_PREFIX, ~/.local, /usr/local/lib and /usr/lib. When nothing
// loads, the error wraps ErrNoNCCL and names every file and pattern
// tried. NCCL 2.14 or newer is needed. Library and Version say what was
// loaded.
//
// # NVLink multicast
//
// gocuda keeps NVLink SHARP (multicast) off: before NCCL first reads its
// settings, NewUniqueID, NewComm and NewComms set NCCL_NVLS_ENABLE=0 in the
// process's environment unless it is set already, and Environ adds it to
// an environment built for a rank's child process.
//
// # Example
//
// Four ranks on the host backend, one goroutine each, sum a vector:
//
//	b := host.New(host.Options{Devices: 4})
//	id, _ := nccl.NewUniqueID(b)
//	var wg sync.WaitGroup
//	for rank := range 4 {
//		wg.Go(func() {
//			dev, _ := b.Device(rank)
//			s, _ := dev.NewStream()
//			comm, err := nccl.NewComm(ctx, dev, id, rank, 4)
//			...
//			err = comm.AllReduce(buf, buf, n, nccl.Float32, nccl.Sum, s) // in place
//			err = s.Synchronize()
//			err = comm.Err() // nil: every rank's buf holds the sum
//			err = comm.Destroy()
//		})
//	}
//	wg.Wait()
//
// The runnable version is Example (example_test.go); docs/nccl.md has
// more.
package nccl
