package nccl

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/host"
	"github.com/gocuda/gocuda/internal/devstream"
)

// The host backend's communicators: ranks are goroutines of this process
// (or one goroutine driving several, through Group), and a unique id is a
// key in a table of communicators being formed. Each operation is queued
// on the rank's host stream like a kernel; when the stream reaches it, it
// waits there for the other ranks' matching operation, and the last to
// arrive moves the data for all of them while the others wait, so that
// no rank's stream moves past an operation before its buffers are
// written. Collectives match by their order on each communicator (the
// k-th collective of every rank); the k-th Send from a to b matches b's
// k-th Recv from a. Ranks that disagree about a collective (another
// count, type, reduction or root) fail the communicator with an error
// naming both, where NCCL's behaviour would be undefined.
//
// A rank that aborts (Abort, or its context) fails every rank: pending
// operations return without moving data, later ones are refused, and Err
// says why. A rank that destroys its communicator while others wait for
// it fails them too.

// hostIDPrefix marks ids made by hostUniqueID, so that an NCCL id given
// to host devices (or the other way round) is a clear error.
const hostIDPrefix = "gocuda host communicator\x00"

var hostReg struct {
	mu      sync.Mutex
	forming map[UniqueID]*clique
	used    map[UniqueID]struct{} // formed or failed: an id serves once
	next    atomic.Uint64
}

func hostUniqueID() UniqueID {
	var id UniqueID
	copy(id[:], hostIDPrefix)
	binary.LittleEndian.PutUint64(id[32:], hostReg.next.Add(1))
	binary.LittleEndian.PutUint64(id[40:], rand.Uint64()) // not guessable by another program's ids
	return id
}

func isHostID(id UniqueID) bool { return string(id[:len(hostIDPrefix)]) == hostIDPrefix }

// clique is what the ranks of one host communicator share.
type clique struct {
	n int

	mu     sync.Mutex
	ranks  []*hostComm // by rank, nil until joined
	joined int
	formed chan struct{} // closed when every rank has joined
	failed chan struct{} // closed when err is set
	err    error
	left   []bool // ranks that destroyed their communicator
	rounds map[uint64]*meeting
	p2p    map[p2pKey]*meeting
}

// meeting is one collective (ops by rank) or one Send and its Recv
// (ops[0] the send, ops[1] the recv). running is set, under the clique's
// mu, by the arrival that completes it, which then moves the data and
// closes done.
type meeting struct {
	ops     []*hostOp
	arrived int
	running bool
	done    chan struct{}
}

type p2pKey struct {
	from, to int
	seq      uint64
}

// hostOp is an operation as queued: the call's arguments, the rank and
// its sequence number among the rank's collectives (or its Sends to, or
// Recvs from, the peer).
type hostOp struct {
	op
	rank int
	seq  uint64
}

func (o *hostOp) String() string {
	s := fmt.Sprintf("%s of %d %s", o.kind, o.count, o.dt)
	if o.kind.reduces() {
		s += " (" + o.red.String() + ")"
	}
	if o.kind == opBroadcast || o.kind == opReduce {
		s += fmt.Sprintf(" to root %d", o.root)
	}
	return s
}

func (cl *clique) failLocked(err error) {
	if cl.err == nil {
		cl.err = err
		close(cl.failed)
	}
}

func (cl *clique) fail(err error) {
	cl.mu.Lock()
	cl.failLocked(err)
	cl.mu.Unlock()
}

func (cl *clique) failure() error {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return cl.err
}

// await waits for rv to complete, or for the communicator to fail; a
// meeting already running is waited for all the same, since it is
// writing this rank's buffers.
func (cl *clique) await(rv *meeting) {
	select {
	case <-rv.done:
	case <-cl.failed:
		cl.mu.Lock()
		running := rv.running
		cl.mu.Unlock()
		if running {
			<-rv.done
		}
	}
}

// hostComm is one rank of a host communicator.
type hostComm struct {
	cl   *clique
	rank int
	dev  devstream.Host
	life context.Context
	stop func() bool

	mu               sync.Mutex
	collSeq          uint64
	sendSeq, recvSeq []uint64 // by peer
	grouped          bool
	groupOps         []*hostOp
	groupStream      devstream.HostStream
	inflight         int           // operations queued and not finished
	drained          chan struct{} // closed when inflight reaches 0, for Destroy
	done             error         // aborted (the cause) or errDestroyed
	regs             uint64        // registrations made, for their handles
}

// join adds rank on dev to the communicator id names, creating it for the
// first rank.
func join(dev devstream.Host, id UniqueID, rank, nranks int) (*hostComm, error) {
	if !isHostID(id) {
		return nil, fmt.Errorf("nccl: NewComm rank %d: the unique id was not made by NewUniqueID for the host backend (is it an NCCL id from a GPU backend?): %w", rank, errInvalid)
	}
	hostReg.mu.Lock()
	defer hostReg.mu.Unlock()
	if _, ok := hostReg.used[id]; ok {
		return nil, fmt.Errorf("nccl: NewComm rank %d: the communicator of this unique id has formed (or failed) already; each communicator needs a new id: %w", rank, errInvalid)
	}
	cl := hostReg.forming[id]
	if cl == nil {
		cl = &clique{
			n: nranks, ranks: make([]*hostComm, nranks), left: make([]bool, nranks),
			formed: make(chan struct{}), failed: make(chan struct{}),
			rounds: map[uint64]*meeting{}, p2p: map[p2pKey]*meeting{},
		}
		if hostReg.forming == nil {
			hostReg.forming, hostReg.used = map[UniqueID]*clique{}, map[UniqueID]struct{}{}
		}
		hostReg.forming[id] = cl
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.n != nranks {
		return nil, fmt.Errorf("nccl: NewComm rank %d: %d ranks, and the ranks that joined before said %d: %w", rank, nranks, cl.n, errInvalid)
	}
	if cl.ranks[rank] != nil {
		return nil, fmt.Errorf("nccl: NewComm: rank %d joined twice: %w", rank, errInvalid)
	}
	for r, o := range cl.ranks {
		if o != nil && o.dev == dev {
			return nil, fmt.Errorf("nccl: NewComm rank %d: device %d is rank %d's already: NCCL takes one rank per device: %w", rank, dev.Ordinal(), r, errInvalid)
		}
	}
	h := &hostComm{cl: cl, rank: rank, dev: dev, sendSeq: make([]uint64, nranks), recvSeq: make([]uint64, nranks)}
	cl.ranks[rank] = h
	cl.joined++
	if cl.joined == nranks {
		close(cl.formed)
		delete(hostReg.forming, id)
		hostReg.used[id] = struct{}{}
	}
	return h, nil
}

// forget takes a failed communicator out of the table of those forming.
func forget(id UniqueID, cl *clique) {
	hostReg.mu.Lock()
	defer hostReg.mu.Unlock()
	if hostReg.forming[id] == cl {
		delete(hostReg.forming, id)
		hostReg.used[id] = struct{}{}
	}
}

func newHostComm(ctx context.Context, dev devstream.Host, id UniqueID, rank, nranks int) (*Comm, error) {
	if err := ctx.Err(); err != nil {
		return nil, abortedError(fmt.Sprintf("NewComm rank %d", rank), ctx)
	}
	h, err := join(dev, id, rank, nranks)
	if err != nil {
		return nil, err
	}
	cl := h.cl
	select {
	case <-cl.formed:
	case <-cl.failed:
		return nil, fmt.Errorf("nccl: NewComm rank %d: %w", rank, cl.failure())
	case <-ctx.Done():
		err := abortedError(fmt.Sprintf("NewComm rank %d, waiting for the other ranks", rank), ctx)
		cl.fail(err)
		forget(id, cl)
		return nil, err
	}
	return h.start(ctx, nranks), nil
}

func newHostComms(ctx context.Context, devs []devstream.Host) ([]*Comm, error) {
	if err := ctx.Err(); err != nil {
		return nil, abortedError("NewComms", ctx)
	}
	id := hostUniqueID()
	comms := make([]*Comm, len(devs))
	for i, d := range devs {
		h, err := join(d, id, i, len(devs))
		if err != nil { // cannot happen: NewComms checked the devices
			return nil, err
		}
		comms[i] = h.start(ctx, len(devs))
	}
	return comms, nil
}

func (h *hostComm) start(ctx context.Context, nranks int) *Comm {
	// Under mu: the func may run at once, on its own goroutine, and
	// abort reads stop.
	h.mu.Lock()
	h.life = ctx
	h.stop = context.AfterFunc(ctx, func() {
		_ = h.abort(fmt.Errorf("rank %d's context is done: %w", h.rank, context.Cause(ctx)))
	})
	h.mu.Unlock()
	return &Comm{rank: h.rank, size: nranks, dev: h.dev, impl: h}
}

func (h *hostComm) stream(s backend.Stream) error {
	if hs, ok := s.(devstream.HostStream); !ok || devstream.IsNil(hs) {
		return fmt.Errorf("stream %T is not a host stream: %w", s, errInvalid)
	}
	return nil
}

// refusedLocked is the error of an operation on a communicator that is
// gone or failed, or nil.
func (h *hostComm) refusedLocked(what string) error {
	if h.done != nil {
		return fmt.Errorf("nccl: %s on rank %d: %w", what, h.rank, h.done)
	}
	if err := h.cl.failure(); err != nil {
		return fmt.Errorf("nccl: %s on rank %d: %w", what, h.rank, err)
	}
	return nil
}

// seqOf is the counter that numbers o among the rank's operations.
func (h *hostComm) seqOf(o *op) *uint64 {
	switch o.kind {
	case opSend:
		return &h.sendSeq[o.root]
	case opRecv:
		return &h.recvSeq[o.root]
	}
	return &h.collSeq
}

func (h *hostComm) run(o *op) error {
	hs := o.s.(devstream.HostStream) // checked by stream
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.refusedLocked(o.kind.String()); err != nil {
		return err
	}
	seq := h.seqOf(o)
	ho := &hostOp{op: *o, rank: h.rank, seq: *seq}
	if h.grouped {
		if h.groupStream != nil && h.groupStream != hs {
			return fmt.Errorf("nccl: %s on rank %d inside Group: the host backend takes one stream per communicator in a group, and this group's operations on rank %d use stream %d: %w",
				o.kind, h.rank, h.rank, h.groupStream.ID(), backend.ErrNotSupported)
		}
		h.groupStream = hs
		h.groupOps = append(h.groupOps, ho)
		*seq++
		return nil
	}
	if err := h.enqueueLocked(hs, []*hostOp{ho}); err != nil {
		return fmt.Errorf("nccl: %s on rank %d: %w", o.kind, h.rank, err)
	}
	*seq++
	return nil
}

// enqueueLocked queues ops on s as one piece of work, declaring their
// buffers to the stream checker.
func (h *hostComm) enqueueLocked(s devstream.HostStream, ops []*hostOp) error {
	var acc []host.Access
	if s.Checking() {
		for _, o := range ops {
			sb, rb := o.buffers(h.rank, h.cl.n)
			if sb > 0 {
				acc = append(acc, host.Access{Ptr: o.send, Bytes: sb})
			}
			if rb > 0 {
				acc = append(acc, host.Access{Ptr: o.recv, Bytes: rb, Write: true})
			}
		}
	}
	name := "nccl " + ops[0].kind.String() + " " + ops[0].dt.String()
	if len(ops) > 1 {
		name = fmt.Sprintf("nccl group of %d operations", len(ops))
	}
	if backend.Capturing(s) {
		// A replay would run the rendezvous again with ranks that did not
		// replay theirs; on a GPU NCCL records into the graph itself.
		return fmt.Errorf("%s on the host backend cannot be captured into a graph: %w", name, backend.ErrCapturing)
	}
	h.inflight++
	err := s.EnqueueAccess(name, acc, false, func() {
		h.execute(ops)
		h.finished()
	})
	if err != nil {
		h.inflight--
		return err
	}
	return nil
}

func (h *hostComm) finished() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.inflight--
	if h.inflight == 0 && h.drained != nil {
		close(h.drained)
		h.drained = nil
	}
}

// execute runs on the rank's stream: it posts every Send and Recv first,
// so that those of one group wait for each other as a whole, then runs
// the collectives in order, then waits for the Sends and Recvs.
func (h *hostComm) execute(ops []*hostOp) {
	cl := h.cl
	var posted []*meeting
	for _, o := range ops {
		if o.kind == opSend || o.kind == opRecv {
			if rv := cl.post(o); rv != nil {
				posted = append(posted, rv)
			}
		}
	}
	for _, o := range ops {
		if o.kind != opSend && o.kind != opRecv {
			if !cl.collective(o) {
				break
			}
		}
	}
	for _, rv := range posted {
		cl.await(rv)
	}
}

// collective joins o's round and returns when it is done, or at once
// when the communicator has failed; false: it failed.
func (cl *clique) collective(o *hostOp) bool {
	cl.mu.Lock()
	if cl.err != nil {
		cl.mu.Unlock()
		return false
	}
	if q := slices.Index(cl.left, true); q >= 0 {
		cl.failLocked(fmt.Errorf("nccl: %s #%d on rank %d: rank %d has destroyed its communicator and will not come: %w",
			o.kind, o.seq, o.rank, q, ErrAborted))
		cl.mu.Unlock()
		return false
	}
	rv := cl.rounds[o.seq]
	if rv == nil {
		rv = &meeting{ops: make([]*hostOp, cl.n), done: make(chan struct{})}
		cl.rounds[o.seq] = rv
	}
	rv.ops[o.rank] = o
	rv.arrived++
	if rv.arrived < cl.n {
		cl.mu.Unlock()
		cl.await(rv)
		return cl.failure() == nil
	}
	rv.running = true
	delete(cl.rounds, o.seq)
	cl.mu.Unlock()
	err := runCollective(rv.ops)
	if err != nil {
		cl.fail(err)
	}
	close(rv.done)
	return err == nil
}

// post posts a Send or Recv; the second of a pair to arrive copies the
// data. It returns the meeting to wait for, nil when the communicator
// has failed.
func (cl *clique) post(o *hostOp) *meeting {
	key, side := p2pKey{from: o.rank, to: o.root, seq: o.seq}, 0
	if o.kind == opRecv {
		key, side = p2pKey{from: o.root, to: o.rank, seq: o.seq}, 1
	}
	cl.mu.Lock()
	if cl.err != nil {
		cl.mu.Unlock()
		return nil
	}
	if cl.left[o.root] {
		cl.failLocked(fmt.Errorf("nccl: %s #%d between ranks %d and %d: rank %d has destroyed its communicator and will not come: %w",
			o.kind, o.seq, key.from, key.to, o.root, ErrAborted))
		cl.mu.Unlock()
		return nil
	}
	rv := cl.p2p[key]
	if rv == nil {
		rv = &meeting{ops: make([]*hostOp, 2), done: make(chan struct{})}
		cl.p2p[key] = rv
	}
	rv.ops[side] = o
	rv.arrived++
	if rv.arrived < 2 {
		cl.mu.Unlock()
		return rv
	}
	rv.running = true
	delete(cl.p2p, key)
	cl.mu.Unlock()
	s, r := rv.ops[0], rv.ops[1]
	if s.count != r.count || s.dt != r.dt {
		cl.fail(fmt.Errorf("nccl: Send #%d from rank %d to rank %d is %d %s, and its Recv expects %d %s: %w",
			s.seq, s.rank, r.rank, s.count, s.dt, r.count, r.dt, errInvalid))
	} else {
		n := uint64(s.count) * uint64(s.dt.Size())
		copy(bytesAt(r.recv, n), bytesAt(s.send, n))
	}
	close(rv.done)
	return rv
}

// runCollective checks that the ranks agree and moves the data. It runs
// while every rank's stream waits in the round, so every buffer is
// stable; results go through scratch memory, so in-place calls (and any
// other aliasing) read every input before anything is written.
func runCollective(ops []*hostOp) error {
	o0 := ops[0]
	for _, o := range ops[1:] {
		same := o.kind == o0.kind && o.count == o0.count && o.dt == o0.dt &&
			(!o.kind.reduces() || o.red == o0.red) &&
			(o.kind != opBroadcast && o.kind != opReduce || o.root == o0.root)
		if !same {
			return fmt.Errorf("nccl: collective #%d: the ranks disagree: rank 0 called %v, rank %d %v: %w", o0.seq, o0, o.rank, o, errInvalid)
		}
	}
	n := len(ops)
	nb := uint64(o0.count) * uint64(o0.dt.Size())
	if nb == 0 {
		return nil
	}
	sends := func(off uint64) [][]byte {
		out := make([][]byte, n)
		for r, o := range ops {
			out[r] = bytesAt(o.send+backend.Ptr(off), nb)
		}
		return out
	}
	switch o0.kind {
	case opAllReduce, opReduce:
		tmp := scratch(nb)
		reduce(o0.dt, o0.red, tmp, sends(0))
		for r, o := range ops {
			if o.kind == opAllReduce || r == o0.root {
				copy(bytesAt(o.recv, nb), tmp)
			}
		}
	case opBroadcast:
		tmp := slices.Clone(bytesAt(ops[o0.root].send, nb))
		for _, o := range ops {
			copy(bytesAt(o.recv, nb), tmp)
		}
	case opAllGather:
		tmp := make([]byte, nb*uint64(n))
		for r, o := range ops {
			copy(tmp[uint64(r)*nb:], bytesAt(o.send, nb))
		}
		for _, o := range ops {
			copy(bytesAt(o.recv, nb*uint64(n)), tmp)
		}
	case opReduceScatter:
		tmp := scratch(nb * uint64(n))
		for r := range ops {
			reduce(o0.dt, o0.red, tmp[uint64(r)*nb:uint64(r+1)*nb], sends(uint64(r)*nb))
		}
		for r, o := range ops {
			copy(bytesAt(o.recv, nb), tmp[uint64(r)*nb:uint64(r+1)*nb])
		}
	}
	return nil
}

func (h *hostComm) err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if errors.Is(h.done, errDestroyed) {
		return nil
	}
	if err := h.cl.failure(); err != nil {
		return err
	}
	return h.done
}

// abort fails the whole communicator, so that no rank waits for this one.
func (h *hostComm) abort(cause error) error {
	h.mu.Lock()
	if h.done != nil {
		h.mu.Unlock()
		return nil
	}
	err := fmt.Errorf("nccl: communicator of %d ranks: %w: %w", h.cl.n, ErrAborted, cause)
	h.done = err
	stop := h.stop
	h.mu.Unlock()
	stop()
	h.cl.fail(err)
	return nil
}

func (h *hostComm) destroy() error {
	h.mu.Lock()
	switch {
	case h.done == nil:
	case errors.Is(h.done, errDestroyed):
		h.mu.Unlock()
		return fmt.Errorf("nccl: Destroy on rank %d: destroyed already: %w", h.rank, errInvalid)
	default:
		h.mu.Unlock()
		return nil // aborted
	}
	if h.grouped {
		h.mu.Unlock()
		return fmt.Errorf("nccl: Destroy on rank %d inside Group: end the group first: %w", h.rank, errInvalid)
	}
	life := h.life
	var drained chan struct{}
	if h.inflight > 0 {
		if h.drained == nil {
			h.drained = make(chan struct{})
		}
		drained = h.drained
	}
	h.mu.Unlock()
	if drained != nil {
		select {
		case <-drained:
		case <-life.Done():
			err := abortedError(fmt.Sprintf("Destroy on rank %d, waiting for its operations", h.rank), life)
			_ = h.abort(err)
			<-drained // prompt: the communicator has failed
			return err
		}
	}
	h.mu.Lock()
	if h.done != nil { // aborted meanwhile
		h.mu.Unlock()
		return nil
	}
	h.done = errDestroyed
	stop := h.stop
	h.mu.Unlock()
	stop()
	h.cl.leave(h.rank)
	return nil
}

// leave marks rank gone, and fails the communicator if a meeting waits
// for it: it will never come.
func (cl *clique) leave(rank int) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	cl.left[rank] = true
	var waiting []string
	for seq, rv := range cl.rounds {
		if rv.ops[rank] == nil {
			waiting = append(waiting, fmt.Sprintf("collective #%d", seq))
		}
	}
	for k, rv := range cl.p2p {
		if k.from == rank && rv.ops[0] == nil || k.to == rank && rv.ops[1] == nil {
			waiting = append(waiting, fmt.Sprintf("Send #%d from rank %d to rank %d", k.seq, k.from, k.to))
		}
	}
	if len(waiting) > 0 {
		sort.Strings(waiting)
		cl.failLocked(fmt.Errorf("nccl: rank %d destroyed its communicator while other ranks wait for it in %s: %w",
			rank, strings.Join(waiting, ", "), ErrAborted))
	}
}

// hostGroup collects fn's operations on each communicator and queues them
// as one piece of work per communicator.
func hostGroup(hs []*hostComm, fn func() error) error {
	for i, h := range hs {
		h.mu.Lock()
		err := h.refusedLocked("Group")
		if err == nil && h.grouped {
			err = fmt.Errorf("nccl: Group: rank %d is in a group already; groups do not nest: %w", h.rank, errInvalid)
		}
		if err == nil {
			h.grouped = true
		}
		h.mu.Unlock()
		if err != nil {
			for _, g := range hs[:i] {
				g.mu.Lock()
				g.grouped, g.groupOps, g.groupStream = false, nil, nil
				g.mu.Unlock()
			}
			return err
		}
	}
	var errs []error
	if err := fn(); err != nil {
		errs = append(errs, err)
	}
	for _, h := range hs {
		h.mu.Lock()
		ops, s := h.groupOps, h.groupStream
		h.grouped, h.groupOps, h.groupStream = false, nil, nil
		if len(ops) > 0 {
			if err := h.enqueueLocked(s, ops); err != nil {
				// The operations were numbered: the other ranks would
				// wait for them forever.
				err = fmt.Errorf("nccl: Group: rank %d's operations could not be queued: %w", h.rank, err)
				h.cl.fail(fmt.Errorf("%w (%w)", err, ErrAborted))
				errs = append(errs, err)
			}
		}
		h.mu.Unlock()
	}
	return errors.Join(errs...)
}

// register registers nothing: host collectives copy in memory whatever
// the buffer. It refuses what NCCL would: a communicator that is gone or
// inside a group. The handle only tells registrations apart.
func (h *hostComm) register(p backend.Ptr, bytes uint64) (uintptr, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.refusedLocked("Register"); err != nil {
		return 0, err
	}
	if h.grouped {
		return 0, fmt.Errorf("nccl: Register on rank %d inside Group: register before the group: %w", h.rank, errInvalid)
	}
	h.regs++
	return uintptr(h.regs), nil
}

func (h *hostComm) deregister(uintptr) error { return nil }
