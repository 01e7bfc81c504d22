package nccl

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/internal/devstream"
	"github.com/gocuda/gocuda/internal/libload"
)

// gpuComm is an NCCL communicator. Every communicator is nonblocking
// (ncclConfig_t.blocking = 0): NCCL calls return at once, with
// ncclInProgress where work is still being set up, and the package polls
// ncclCommGetAsyncError between sleeps, watching the communicator's
// context. So no NCCL call can hold a goroutine hostage to a peer.
type gpuComm struct {
	dev devstream.GPU
	ctx uintptr // the device's primary context, made current for each call
	// life is the communicator's context: NewComm's, also ended by
	// endLife when another rank in this process aborts (kin.go), so that
	// a wait for NCCL that holds mu (pollReady in run, destroy, a group's
	// end) returns rather than keep the abort from taking mu.
	life    context.Context
	endLife context.CancelCauseFunc
	stop    func() bool // stops the abort waiting for life

	mu      sync.Mutex // one NCCL call at a time on the communicator
	w       where      // w.comm is 0 once aborted or destroyed
	done    error      // why the communicator is gone (aborted or destroyed)
	grouped bool       // inside gpuGroup: operations are NCCL's to queue
	// pendingAbort is an abort asked for while grouped: NCCL must not
	// free a communicator that an open group still holds work of, so it
	// waits for the group's end.
	pendingAbort error

	// kin are the ranks of this communicator in this process (kin.go);
	// id is the key they were found by (nil for NewComms's).
	kin *kin
	id  *UniqueID
	// onAbort, when set, hears of an abort of this rank that did not come
	// from a peer in this process (JoinFromEnv tells the rendezvous).
	onAbort func(cause error)
}

var errDestroyed = errors.New("communicator destroyed")

func gpuUniqueID() (UniqueID, error) {
	if err := load(); err != nil {
		return UniqueID{}, err
	}
	keepNVLSOff()
	id, r := cUniqueID()
	return id, r.err("ncclGetUniqueId", nil)
}

func newGPUComm(ctx context.Context, dev devstream.GPU, id UniqueID, rank, nranks int) (*Comm, error) {
	if err := load(); err != nil {
		return nil, err
	}
	keepNVLSOff()
	if err := ctx.Err(); err != nil {
		return nil, abortedError(fmt.Sprintf("NewComm rank %d", rank), ctx)
	}
	cctx := dev.Context().Handle()
	w := where{rank: rank, device: dev.Ordinal()}
	h, r := cInitRank(cctx, nranks, id, rank)
	w.comm = h
	if err := r.err("ncclCommInitRankConfig", &w); err != nil && !inProgress(r) {
		if h != 0 {
			cAbort(cctx, h)
		}
		return nil, err
	}
	if err := pollReady(ctx, "NewComm: ncclCommInitRankConfig", &w); err != nil {
		cAbort(cctx, h)
		return nil, err
	}
	return startGPUComm(ctx, dev, cctx, w, nranks, kinOf(id), &id), nil
}

func newGPUComms(ctx context.Context, devs []devstream.GPU) ([]*Comm, error) {
	if err := load(); err != nil {
		return nil, err
	}
	keepNVLSOff()
	if err := ctx.Err(); err != nil {
		return nil, abortedError("NewComms", ctx)
	}
	ctxs := make([]uintptr, len(devs))
	for i, d := range devs {
		ctxs[i] = d.Context().Handle()
	}
	hs, r := cInitAll(ctxs)
	abortAll := func() {
		for i, h := range hs {
			if h != 0 {
				cAbort(ctxs[i], h)
			}
		}
	}
	if err := r.err("ncclCommInitRankConfig (NewComms)", &where{rank: -1, device: -1}); err != nil {
		abortAll()
		return nil, err
	}
	for i, h := range hs {
		w := where{rank: i, device: devs[i].Ordinal(), comm: h}
		if err := pollReady(ctx, "ncclCommInitRankConfig (NewComms)", &w); err != nil {
			abortAll()
			return nil, err
		}
	}
	comms := make([]*Comm, len(devs))
	k := &kin{}
	for i, h := range hs {
		comms[i] = startGPUComm(ctx, devs[i], ctxs[i], where{rank: i, device: devs[i].Ordinal(), comm: h}, len(devs), k, nil)
	}
	return comms, nil
}

// startGPUComm wraps a ready communicator, joins it to its kin and has
// ctx abort it.
func startGPUComm(ctx context.Context, dev devstream.GPU, cctx uintptr, w where, nranks int, k *kin, id *UniqueID) *Comm {
	life, endLife := context.WithCancelCause(ctx)
	g := &gpuComm{dev: dev, ctx: cctx, life: life, endLife: endLife, w: w, kin: k, id: id}
	k.add(g)
	// Under mu: the func may run at once, on its own goroutine, and the
	// abort reads stop.
	g.mu.Lock()
	g.stop = context.AfterFunc(life, func() {
		cause := context.Cause(life)
		if !fromPeer(cause) {
			cause = fmt.Errorf("rank %d's context is done: %w", w.rank, cause)
		}
		_ = g.abort(cause)
	})
	g.mu.Unlock()
	return &Comm{rank: w.rank, size: nranks, dev: dev, impl: g}
}

func inProgress(r cres) bool {
	return r.Stage == libload.StageCall && Result(r.Code) == ResultInProgress
}

// pollSpin is how long pollReady polls without sleeping: NCCL's
// nonblocking calls (ncclGroupEnd above all) finish taking the work in
// tens of microseconds, and a timer's wake-up costs as much again, on
// every collective of a group. Past it, a wait is for a peer: sleeps.
const pollSpin = 200 * time.Microsecond

// pollReady waits while the communicator's state is ncclInProgress, for
// at most as long as ctx lasts. It does not abort: the caller does.
func pollReady(ctx context.Context, op string, w *where) error {
	delay := 20 * time.Microsecond
	spinUntil := time.Now().Add(pollSpin)
	for {
		res, r := cAsyncError(w.comm)
		if err := r.err("ncclCommGetAsyncError", w); err != nil {
			return err
		}
		switch res {
		case ResultSuccess:
			return nil
		case ResultInProgress:
		default:
			return &Error{Op: op, Rank: w.rank, Device: w.device, Result: res, Text: cErrorString(res), Last: cLastError(w.comm)}
		}
		if time.Now().Before(spinUntil) {
			if ctx.Err() != nil {
				return abortedError(fmt.Sprintf("%s on rank %d (device %d)", op, w.rank, w.device), ctx)
			}
			runtime.Gosched()
			continue
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return abortedError(fmt.Sprintf("%s on rank %d (device %d)", op, w.rank, w.device), ctx)
		case <-t.C:
		}
		delay = min(2*delay, 5*time.Millisecond)
	}
}

func (g *gpuComm) stream(s backend.Stream) error {
	cs, ok := s.(devstream.GPUStream)
	if !ok || devstream.IsNil(cs) {
		return fmt.Errorf("stream %T is not a CUDA stream: %w", s, errInvalid)
	}
	if _, err := cs.Query(); err != nil { // a destroyed stream's handle may be recycled
		return err
	}
	return nil
}

// goneLocked is the error of a call on a communicator that is gone.
func (g *gpuComm) goneLocked(op string) error {
	return fmt.Errorf("nccl: %s on rank %d: %w", op, g.w.rank, g.done)
}

func (g *gpuComm) run(o *op) error {
	s := o.s.(devstream.GPUStream).CUDA().Handle() // checked by stream
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.done != nil {
		return g.goneLocked(o.kind.String())
	}
	r := cOp(g.ctx, g.w.comm, g.grouped, o.kind, uintptr(o.send), uintptr(o.recv), uint64(o.count),
		o.dt.nccl(), o.red.nccl(), o.root, s)
	if inProgress(r) && !g.grouped {
		if err := pollReady(g.life, o.kind.ncclName(), &g.w); err != nil {
			_ = g.abortLocked(err)
			return err
		}
		return nil
	}
	return r.err(o.kind.ncclName(), &g.w)
}

func (g *gpuComm) err() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.done != nil {
		if errors.Is(g.done, errDestroyed) {
			return nil
		}
		return g.done
	}
	res, r := cAsyncError(g.w.comm)
	if err := r.err("ncclCommGetAsyncError", &g.w); err != nil {
		return err
	}
	if res == ResultSuccess || res == ResultInProgress {
		return nil
	}
	return &Error{Op: "ncclCommGetAsyncError", Rank: g.w.rank, Device: g.w.device, Result: res, Text: cErrorString(res), Last: cLastError(g.w.comm)}
}

func (g *gpuComm) abort(cause error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.done != nil {
		return nil
	}
	if g.grouped {
		g.pendingAbort = cause
		return nil
	}
	return g.abortLocked(cause)
}

// abortLocked calls ncclCommAbort, which frees the communicator in the
// background: the handle is not used again.
func (g *gpuComm) abortLocked(cause error) error {
	if g.done != nil {
		return nil
	}
	r := cAbort(g.ctx, g.w.comm)
	g.done = fmt.Errorf("%w: %w", ErrAborted, cause)
	g.w.comm = 0
	g.stop()
	g.endLife(cause) // after stop: frees the context, runs no second abort
	g.kin.abortOthers(g, cause)
	g.kin.leave(g)
	if g.onAbort != nil && !fromPeer(cause) {
		go g.onAbort(cause) // the rendezvous's call must not hold g's lock
	}
	if inProgress(r) {
		return nil
	}
	return r.err("ncclCommAbort", &g.w)
}

func (g *gpuComm) destroy() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.done == nil:
	case errors.Is(g.done, errDestroyed):
		return fmt.Errorf("nccl: Destroy on rank %d: destroyed already: %w", g.w.rank, errInvalid)
	default:
		return nil // aborted: nothing left to free
	}
	if g.grouped {
		return fmt.Errorf("nccl: Destroy on rank %d inside Group: end the group first: %w", g.w.rank, errInvalid)
	}
	r := cFinalize(g.ctx, g.w.comm)
	if err := r.err("ncclCommFinalize", &g.w); err != nil && !inProgress(r) {
		_ = g.abortLocked(err)
		return err
	}
	if err := pollReady(g.life, "ncclCommFinalize", &g.w); err != nil {
		_ = g.abortLocked(err)
		return err
	}
	r = cDestroy(g.ctx, g.w.comm)
	g.done = errDestroyed
	g.w.comm = 0
	g.stop()
	g.endLife(errDestroyed)
	g.kin.leave(g)
	return r.err("ncclCommDestroy", &g.w)
}

// gpuGroup runs fn between ncclGroupStart and ncclGroupEnd on one OS
// thread, then waits for NCCL to take each communicator's work.
func gpuGroup(gs []*gpuComm, fn func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for i, g := range gs {
		g.mu.Lock()
		var err error
		switch {
		case g.done != nil:
			err = g.goneLocked("Group")
		case g.grouped:
			err = fmt.Errorf("nccl: Group: rank %d is in a group already; groups do not nest: %w", g.w.rank, errInvalid)
		}
		if err == nil {
			g.grouped = true
		}
		g.mu.Unlock()
		if err != nil {
			ungroup(gs[:i])
			return err
		}
	}
	if err := cGroupStart().err("ncclGroupStart", nil); err != nil {
		ungroup(gs)
		return err
	}
	fnErr := fn()
	r := cGroupEnd()
	ungroup(gs)
	var errs []error
	if fnErr != nil {
		errs = append(errs, fnErr)
	}
	if err := r.err("ncclGroupEnd", nil); err != nil && !inProgress(r) {
		errs = append(errs, err)
	}
	for _, g := range gs {
		g.mu.Lock()
		if pa := g.pendingAbort; pa != nil {
			g.pendingAbort = nil
			errs = append(errs, g.abortLocked(pa))
		} else if g.done == nil {
			if err := pollReady(g.life, "ncclGroupEnd", &g.w); err != nil {
				_ = g.abortLocked(err)
				errs = append(errs, err)
			}
		}
		g.mu.Unlock()
	}
	return errors.Join(errs...)
}

func ungroup(gs []*gpuComm) {
	for _, g := range gs {
		g.mu.Lock()
		g.grouped = false
		g.mu.Unlock()
	}
}

func (g *gpuComm) register(p backend.Ptr, bytes uint64) (uintptr, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.done != nil {
		return 0, g.goneLocked("Register")
	}
	if g.grouped {
		return 0, fmt.Errorf("nccl: Register on rank %d inside Group: register before the group: %w", g.w.rank, errInvalid)
	}
	if !cHasRegister() {
		major, minor, patch := splitVersion(version)
		file, _ := library.Load() // loaded: there is a communicator
		return 0, fmt.Errorf("nccl: Register on rank %d: ncclCommRegister came with NCCL 2.19, and %s is %d.%d.%d: %w",
			g.w.rank, file, major, minor, patch, backend.ErrNotSupported)
	}
	h, r := cRegister(g.ctx, g.w.comm, uintptr(p), bytes)
	if inProgress(r) {
		if err := pollReady(g.life, "ncclCommRegister", &g.w); err != nil {
			_ = g.abortLocked(err)
			return 0, err
		}
		return h, nil
	}
	return h, r.err("ncclCommRegister", &g.w)
}

// deregister does nothing once the communicator is gone: NCCL freed its
// registrations with it.
func (g *gpuComm) deregister(h uintptr) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.done != nil || h == 0 {
		return nil
	}
	if g.grouped {
		return fmt.Errorf("nccl: Release of a registration on rank %d inside Group: release after the group: %w", g.w.rank, errInvalid)
	}
	r := cDeregister(g.ctx, g.w.comm, h)
	if inProgress(r) {
		if err := pollReady(g.life, "ncclCommDeregister", &g.w); err != nil {
			_ = g.abortLocked(err)
			return err
		}
		return nil
	}
	return r.err("ncclCommDeregister", &g.w)
}
