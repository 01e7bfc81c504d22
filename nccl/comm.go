package nccl

import (
	"context"
	"errors"
	"fmt"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/internal/devstream"
	"github.com/gocuda/gocuda/rendezvous"
)

// Comm is one rank's communicator: its place (Rank) among Size ranks, on
// one device. Operations queue work on a stream of that device and
// return; the data has moved when the stream reaches the work, as for a
// kernel. A Comm is for one goroutine at a time, as NCCL's communicators
// are for one thread at a time.
type Comm struct {
	rank, size int
	dev        backend.Device
	impl       commImpl
	// grouping is set while Group runs fn with c among its comms, and
	// held keeps the arrays of the collectives fn queued on c alive until
	// the group's end, when their work is queued (arrays.go).
	grouping bool
	held     []any
	// member is the rendezvous of a communicator JoinFromEnv formed, left
	// at Destroy or Abort; cancel ends the communicator's context.
	member *rendezvous.Member
	cancel context.CancelCauseFunc
}

// commImpl is a communicator's implementation: NCCL's (gpu.go) or the
// host backend's (host.go). Operations reach it checked.
type commImpl interface {
	// stream checks that s is a live stream of the implementation's kind.
	stream(s backend.Stream) error
	run(o *op) error
	err() error
	abort(cause error) error
	destroy() error
	// register and deregister are ncclCommRegister and
	// ncclCommDeregister; deregister of a communicator that is gone does
	// nothing.
	register(p backend.Ptr, bytes uint64) (uintptr, error)
	deregister(h uintptr) error
}

// opKind is an operation. The values are the C side's GN_ enum.
type opKind uint8

const (
	opAllReduce opKind = iota + 1
	opBroadcast
	opReduce
	opAllGather
	opReduceScatter
	opSend
	opRecv
)

var opKindNames = [...]string{"", "AllReduce", "Broadcast", "Reduce", "AllGather", "ReduceScatter", "Send", "Recv"}

func (k opKind) String() string { return opKindNames[k] }

// ncclName is the NCCL function the operation calls, for errors.
func (k opKind) ncclName() string { return "nccl" + k.String() }

// op is one operation as the caller gave it. root is the root of
// Broadcast and Reduce and the peer of Send and Recv.
type op struct {
	kind       opKind
	send, recv backend.Ptr
	count      int
	dt         DataType
	red        Op
	root       int
	s          backend.Stream
}

// reduces says whether the operation takes a reduction.
func (k opKind) reduces() bool { return k == opAllReduce || k == opReduce || k == opReduceScatter }

// buffers is the bytes of send and recv the operation touches on rank
// (0 for a buffer it does not use there) among size ranks.
func (o *op) buffers(rank, size int) (sendBytes, recvBytes uint64) {
	n := uint64(o.count) * uint64(o.dt.Size())
	switch o.kind {
	case opAllReduce:
		return n, n
	case opBroadcast:
		if rank == o.root {
			return n, n
		}
		return 0, n
	case opReduce:
		if rank == o.root {
			return n, n
		}
		return n, 0
	case opAllGather:
		return n, n * uint64(size)
	case opReduceScatter:
		return n * uint64(size), n
	case opSend:
		return n, 0
	case opRecv:
		return 0, n
	}
	return 0, 0
}

// maxBytes bounds a buffer so that sizes never overflow.
const maxBytes = 1 << 62

func (c *Comm) errorf(o *op, format string, args ...any) error {
	what := o.kind.String()
	if o.dt.Valid() {
		what += " " + o.dt.String()
	}
	return fmt.Errorf("nccl: %s on rank %d of %d: "+format, append([]any{what, c.rank, c.size}, args...)...)
}

// check validates o on c: what NCCL would refuse, and what it would take
// and then misbehave on (a stream of another device), as clear errors.
func (c *Comm) check(o *op) error {
	if c == nil || c.impl == nil {
		return fmt.Errorf("nccl: %s on a nil communicator: %w", o.kind, errInvalid)
	}
	if !o.dt.Valid() {
		return c.errorf(o, "data type %v: the types are %s: %w", o.dt, dataTypeNames(), errInvalid)
	}
	if o.kind.reduces() && !o.red.Valid() {
		return c.errorf(o, "reduction %v: the reductions are Sum, Prod, Max, Min and Avg: %w", o.red, errInvalid)
	}
	if o.count < 0 || uint64(o.count) > maxBytes/uint64(o.dt.Size())/uint64(c.size) {
		return c.errorf(o, "count %d: counts must be at least 0 and the buffers smaller than any device: %w", o.count, errInvalid)
	}
	switch o.kind {
	case opBroadcast, opReduce:
		if o.root < 0 || o.root >= c.size {
			return c.errorf(o, "root %d: roots are ranks, 0 to %d: %w", o.root, c.size-1, errInvalid)
		}
	case opSend, opRecv:
		if o.root < 0 || o.root >= c.size {
			return c.errorf(o, "peer %d: peers are ranks, 0 to %d: %w", o.root, c.size-1, errInvalid)
		}
	}
	if o.s == nil {
		return c.errorf(o, "nil stream: %w", errInvalid)
	}
	if err := c.impl.stream(o.s); err != nil {
		return c.errorf(o, "%w", err)
	}
	if d := o.s.Device(); d != c.dev {
		return c.errorf(o, "the stream is a stream of device %d, and the communicator's device is %d: a rank's work runs on its own device's streams: %w",
			d.Ordinal(), c.dev.Ordinal(), errInvalid)
	}
	sb, rb := o.buffers(c.rank, c.size)
	for _, b := range [...]struct {
		name  string
		p     backend.Ptr
		bytes uint64
	}{{"send", o.send, sb}, {"recv", o.recv, rb}} {
		if b.bytes == 0 {
			continue
		}
		if b.p == 0 {
			return c.errorf(o, "%s buffer is nil, and this rank's %s uses %d bytes of it: %w", b.name, o.kind, b.bytes, errInvalid)
		}
		if size := uint64(o.dt.Size()); uint64(b.p)%size != 0 {
			return c.errorf(o, "%s buffer %#x is not %d-byte aligned, as %s elements must be: %w", b.name, uintptr(b.p), size, o.dt, errInvalid)
		}
	}
	return nil
}

func (c *Comm) do(o op) error {
	if err := c.check(&o); err != nil {
		return err
	}
	return c.explain(c.impl.run(&o))
}

// Rank is this communicator's rank, 0 to Size-1.
func (c *Comm) Rank() int { return c.rank }

// Size is the number of ranks.
func (c *Comm) Size() int { return c.size }

// Device is the device this rank's work runs on.
func (c *Comm) Device() backend.Device { return c.dev }

// AllReduce queues recv = red over every rank's send, count elements of
// dt, on stream s. send and recv may be the same buffer (in place).
func (c *Comm) AllReduce(send, recv backend.Ptr, count int, dt DataType, red Op, s backend.Stream) error {
	return c.do(op{kind: opAllReduce, send: send, recv: recv, count: count, dt: dt, red: red, s: s})
}

// Broadcast queues copying root's send to every rank's recv, count
// elements. send is read on root only (0 elsewhere is fine); on root it
// may be recv (in place).
func (c *Comm) Broadcast(send, recv backend.Ptr, count int, dt DataType, root int, s backend.Stream) error {
	return c.do(op{kind: opBroadcast, send: send, recv: recv, count: count, dt: dt, root: root, s: s})
}

// Reduce queues root's recv = red over every rank's send. recv is written
// on root only (0 elsewhere is fine); it may be send (in place).
func (c *Comm) Reduce(send, recv backend.Ptr, count int, dt DataType, red Op, root int, s backend.Stream) error {
	return c.do(op{kind: opReduce, send: send, recv: recv, count: count, dt: dt, red: red, root: root, s: s})
}

// AllGather queues gathering every rank's send, count elements each, into
// every rank's recv, which holds count*Size elements in rank order. In
// place: send is recv + Rank*count elements.
func (c *Comm) AllGather(send, recv backend.Ptr, count int, dt DataType, s backend.Stream) error {
	return c.do(op{kind: opAllGather, send: send, recv: recv, count: count, dt: dt, s: s})
}

// ReduceScatter queues reducing every rank's send, count*Size elements,
// and leaving block r of the result (count elements) in rank r's recv. In
// place: recv is send + Rank*count elements.
func (c *Comm) ReduceScatter(send, recv backend.Ptr, count int, dt DataType, red Op, s backend.Stream) error {
	return c.do(op{kind: opReduceScatter, send: send, recv: recv, count: count, dt: dt, red: red, s: s})
}

// Send queues sending count elements of send to rank peer, which must
// Recv them. A Send and its Recv wait for each other: two ranks that
// each Send to the other before their Recv must do both inside a Group.
// The k-th Send to a peer matches the peer's k-th Recv from this rank.
func (c *Comm) Send(send backend.Ptr, count int, dt DataType, peer int, s backend.Stream) error {
	return c.do(op{kind: opSend, send: send, count: count, dt: dt, root: peer, s: s})
}

// Recv queues receiving count elements from rank peer into recv.
func (c *Comm) Recv(recv backend.Ptr, count int, dt DataType, peer int, s backend.Stream) error {
	return c.do(op{kind: opRecv, recv: recv, count: count, dt: dt, root: peer, s: s})
}

// Err is the communicator's asynchronous error: nil while all is well;
// once an operation failed after it was queued (a peer failed, NCCL hit
// an error, the communicator was aborted), the error. Read it after the
// streams' work is done to know that the data arrived.
func (c *Comm) Err() error {
	if c == nil || c.impl == nil {
		return fmt.Errorf("nccl: Err of a nil communicator: %w", errInvalid)
	}
	return c.explain(c.impl.err())
}

// Abort stops the communicator at once (ncclCommAbort): queued work that
// has not finished quits without finishing, streams waiting on it go on,
// later operations fail with ErrAborted, and the communicator's
// resources are freed. Buffers the aborted work would have written hold
// anything. On the host backend every other rank of the communicator
// fails too, so that none waits for this one. Abort after Abort or
// Destroy does nothing.
func (c *Comm) Abort() error {
	if c == nil || c.impl == nil {
		return fmt.Errorf("nccl: Abort of a nil communicator: %w", errInvalid)
	}
	cause := fmt.Errorf("rank %d called Abort", c.rank)
	return errors.Join(c.impl.abort(cause), c.leave(cause))
}

// Destroy waits until the communicator's queued work is done on every
// rank (ncclCommFinalize) and frees it. It honours the communicator's
// context: when that is done first, Destroy aborts. Destroying twice is
// an error; after Abort, Destroy does nothing.
func (c *Comm) Destroy() error {
	if c == nil || c.impl == nil {
		return fmt.Errorf("nccl: Destroy of a nil communicator: %w", errInvalid)
	}
	err := c.impl.destroy()
	if err != nil {
		return errors.Join(err, c.leave(err))
	}
	return c.leave(nil)
}

// NewUniqueID makes the id that the ranks of a new communicator share, for
// backend b's devices: ncclGetUniqueId on the CUDA backend, a fresh key on
// the host backend. One rank (or a launcher) calls it and gives the id to
// every rank, in the same process or, on GPUs, across processes and hosts
// (UniqueID.String).
func NewUniqueID(b backend.Backend) (UniqueID, error) {
	on, err := devstream.Backend(b)
	switch {
	case b == nil || errors.Is(err, backend.ErrNotSupported):
		return UniqueID{}, fmt.Errorf("nccl: NewUniqueID: backend %T is not one nccl knows (it runs on the cuda and host backends): %w", b, backend.ErrNotSupported)
	case err != nil: // a typed nil backend, or one without devices
		return UniqueID{}, fmt.Errorf("nccl: NewUniqueID: %w", err)
	case on.GPU != nil:
		return gpuUniqueID()
	}
	return hostUniqueID(), nil
}

// NewComm joins communicator id as rank of nranks, on dev: each rank
// calls it, usually one process (or, on the host backend, one goroutine)
// per device, and it returns once every rank has joined. On GPUs this is
// ncclCommInitRankConfig with a nonblocking communicator.
//
// ctx bounds the communicator's whole life, as exec.CommandContext's
// bounds a process: while ranks gather, NewComm gives up when ctx is
// done; afterwards, ctx being done aborts the communicator (see Abort),
// so that a rank waiting on a peer that never comes is released.
func NewComm(ctx context.Context, dev backend.Device, id UniqueID, rank, nranks int) (*Comm, error) {
	if ctx == nil {
		return nil, fmt.Errorf("nccl: NewComm: nil context: %w", errInvalid)
	}
	if nranks < 1 || rank < 0 || rank >= nranks {
		return nil, fmt.Errorf("nccl: NewComm: rank %d of %d ranks: there must be at least one rank, and ranks are 0 to nranks-1: %w", rank, nranks, errInvalid)
	}
	on, err := devstream.Device(dev)
	switch {
	case err != nil:
		return nil, deviceError("NewComm", dev)
	case on.GPU != nil:
		return newGPUComm(ctx, on.GPU, id, rank, nranks)
	}
	return newHostComm(ctx, on.Host, id, rank, nranks)
}

// deviceError is the error for a device devstream does not resolve,
// worded as nccl has always worded it.
func deviceError(op string, dev backend.Device) error {
	if dev == nil {
		return fmt.Errorf("nccl: %s: nil device: %w", op, errInvalid)
	}
	return fmt.Errorf("nccl: %s: device %T is of a backend nccl does not know (it runs on the cuda and host backends): %w", op, dev, backend.ErrNotSupported)
}

// NewComms makes one communicator over devs, in this process: rank i on
// devs[i] (ncclCommInitAll). Drive them from one goroutine inside Group,
// or one goroutine each. A device may appear once. ctx is as for NewComm,
// for all of them.
func NewComms(ctx context.Context, devs []backend.Device) ([]*Comm, error) {
	if ctx == nil {
		return nil, fmt.Errorf("nccl: NewComms: nil context: %w", errInvalid)
	}
	if len(devs) == 0 {
		return nil, fmt.Errorf("nccl: NewComms: no devices: %w", errInvalid)
	}
	seen := map[backend.Device]int{}
	var gpus []devstream.GPU
	var hosts []devstream.Host
	for i, dev := range devs {
		if j, ok := seen[dev]; ok {
			return nil, fmt.Errorf("nccl: NewComms: device %d is devs[%d] and devs[%d]: NCCL takes one rank per device: %w", dev.Ordinal(), j, i, errInvalid)
		}
		seen[dev] = i
		on, err := devstream.Device(dev)
		switch {
		case err != nil:
			return nil, deviceError(fmt.Sprintf("NewComms: devs[%d]", i), dev)
		case on.GPU != nil:
			gpus = append(gpus, on.GPU)
		default:
			hosts = append(hosts, on.Host)
		}
	}
	switch {
	case len(gpus) == len(devs):
		return newGPUComms(ctx, gpus)
	case len(hosts) == len(devs):
		return newHostComms(ctx, hosts)
	}
	return nil, fmt.Errorf("nccl: NewComms: %d GPUs and %d host devices: one communicator's devices are all of one backend: %w", len(gpus), len(hosts), errInvalid)
}

// Group runs fn, whose operations on comms are then started together
// (ncclGroupStart and ncclGroupEnd): Sends and Recvs inside one group
// wait for each other as a whole, so a ring of Send and Recv cannot
// deadlock, and one goroutine can drive the communicators of several
// devices. fn must call the operations itself, from the goroutine that
// called Group (NCCL's group is per thread; Group locks the goroutine to
// its thread meanwhile), and only on the communicators named in comms.
//
// The work fn queued is started even when fn returns an error, as NCCL
// cannot take it back; Group then returns fn's error too. Groups do not
// nest. On GPUs, the communicators' contexts bound the wait for NCCL to
// take the group's work.
func Group(comms []*Comm, fn func() error) error {
	if fn == nil {
		return fmt.Errorf("nccl: Group: nil func: %w", errInvalid)
	}
	if len(comms) == 0 {
		return fmt.Errorf("nccl: Group: no communicators: %w", errInvalid)
	}
	seen := map[*Comm]bool{}
	var gpus []*gpuComm
	var hosts []*hostComm
	for i, c := range comms {
		if c == nil || c.impl == nil {
			return fmt.Errorf("nccl: Group: comms[%d] is nil: %w", i, errInvalid)
		}
		if seen[c] {
			return fmt.Errorf("nccl: Group: comms[%d] (rank %d) appears twice: %w", i, c.rank, errInvalid)
		}
		seen[c] = true
		switch im := c.impl.(type) {
		case *gpuComm:
			gpus = append(gpus, im)
		case *hostComm:
			hosts = append(hosts, im)
		}
	}
	if len(gpus) != len(comms) && len(hosts) != len(comms) {
		return fmt.Errorf("nccl: Group: %d GPU and %d host communicators: a group's communicators are all of one backend: %w", len(gpus), len(hosts), errInvalid)
	}
	for _, c := range comms {
		if c.grouping {
			return fmt.Errorf("nccl: Group: rank %d is in a group already; groups do not nest: %w", c.rank, errInvalid)
		}
	}
	for _, c := range comms {
		c.grouping = true
	}
	defer func() {
		for _, c := range comms {
			c.release()
		}
	}()
	if len(gpus) == len(comms) {
		return gpuGroup(gpus, fn)
	}
	return hostGroup(hosts, fn)
}

// Group is Group([]*Comm{c}, fn): fn's operations on c start together.
func (c *Comm) Group(fn func() error) error { return Group([]*Comm{c}, fn) }

// abortedError is the error of work stopped because ctx was done.
func abortedError(what string, ctx context.Context) error {
	cause := context.Cause(ctx)
	if cause == nil {
		cause = errors.New("context done")
	}
	if fromPeer(cause) {
		return fmt.Errorf("nccl: %s: %w: %w", what, ErrAborted, cause)
	}
	return fmt.Errorf("nccl: %s: %w: its context is done: %w", what, ErrAborted, cause)
}
