// Package rendezvous is how the processes of a multi-process GPU job find
// each other: one process a rank, started by gocuda launch, torchrun,
// Slurm's srun or Open MPI's mpirun. It reads what the launcher set
// (FromEnv), meets the other ranks at one address (Join), passes a value
// from rank 0 to every rank (Share: an NCCL id) and tells every rank when
// one fails or dies (Failed, Err). Package nccl's JoinFromEnv is built on
// it; most programs call that.
//
//	l, ok, err := rendezvous.FromEnv(os.LookupEnv)
//	if err != nil {
//		log.Fatal(err) // e.g. srun started this process as rank 1 of 4, but nothing says where rank 0 listens: ...
//	}
//	if !ok {
//		// No launcher: one process.
//	}
//	m, err := rendezvous.Join(ctx, l, rendezvous.Options{})
//	if err != nil {
//		log.Fatal(err) // e.g. rendezvous at host0:29500 (hosted by rank 0): ranks 1 and 3 of 4 did not arrive within 2m0s
//	}
//	defer m.Close()
//	id, err := m.Share(ctx, "nccl-id", makeID) // rank 0 makes it, every rank gets it
//	go func() { <-m.Failed(); abort(m.Err()) } // a rank failed, or the rendezvous went away
//
// # Where the ranks meet
//
// Launch.Hosting says who serves the rendezvous at Launch.Addr: rank 0
// (Join starts a Server there: under srun and mpirun, at MASTER_ADDR and
// MASTER_PORT or GOCUDA_RENDEZVOUS, which the job script exports), gocuda
// launch (GOCUDA_RENDEZVOUS), or torchrun's agent, whose TCPStore holds
// MASTER_PORT when TORCHELASTIC_USE_AGENT_STORE=True. The client speaks
// a subset of torch.distributed's TCPStore protocol (VALIDATE, SET,
// COMPARE_SET, GET, ADD, CHECK, WAIT, CANCEL_WAIT), so one client serves
// torch's agent and our Server. Our Server adds HELLO, which every
// connection must send first: the job's identity, the rank, the world
// size and the host and pid, so that it refuses a leftover of another
// job, a wrong world size and a rank started twice, and knows whose
// connection closed. Keys live under gocuda/<job>/. The Server listens
// only on the address it is given.
//
// # Failures
//
// Each Member keeps a second connection that waits for the job's
// "failed" key. Fail sets it ("rank 2 (host h, pid 7): cause"; the first
// failure wins); our Server sets it itself when a rank's connection
// closes before the rank left (Close), which is what a process that
// exits or is killed looks like. Failed then closes on every rank, and
// Err says which rank and why; if the rendezvous itself goes away (the
// hosting rank died), Err says so. Under torchrun's agent only Fail is
// heard this way: a process that dies is torchrun's to handle (it stops
// the other workers).
//
// # Bounds
//
// Every wait is bounded. Options.Timeout (GOCUDA_RENDEZVOUS_TIMEOUT, 2
// minutes by default) bounds Join, counted from this rank's call: dialing
// (retried while rank 0 is not listening yet), the handshake and waiting
// for every rank; and each Share and Barrier. Once a wait times out,
// cancelling it on the server and naming the missing ranks take at most
// 5 s each. Fail takes at most 10 s (or the timeout, if shorter) plus up
// to 5 s for a call in flight to end; Close takes as long to leave, and
// the rank hosting the rendezvous then waits at most 30 s (or the
// timeout) for the others to leave before it stops serving. The Server
// gives a new connection 10 s to say VALIDATE and HELLO and a reader 10 s
// to take each reply; after HELLO a rank may stay idle as long as the job
// runs. A dead process is seen at once (its sockets close); a machine
// that vanishes without closing them is seen only when TCP keepalive
// gives up, which takes minutes.
//
// Importing the package has no side effects: nothing is read, started or
// listened on until a function is called.
package rendezvous
