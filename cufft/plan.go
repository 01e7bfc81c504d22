package cufft

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/internal/devstream"
)

// MaxPlans is how many cuFFT plans are kept, over all devices; beyond it
// the least recently used plan not in use is destroyed.
const MaxPlans = 64

// A plan is cuFFT's setup for one (device, kind, sizes, batch): made on
// first use and kept, because making one costs far more than a transform.
// Its work area is not part of it (cuFFT's auto-allocation is off): each
// transform takes one from its stream's pool for as long as its work runs.
// What cuFFT allocates for the plan itself (twiddle factors, a few KiB to
// MiB) is the driver's, outside the pools.
type plan struct {
	key    planKey
	handle int
	work   uint64 // bytes of work area an execution needs
	// mu serializes the executions: the stream and work area are settings
	// of the plan, set and used in one C call under it.
	mu sync.Mutex
	// users, used and dropped are the cache's, under plans.mu: how many
	// calls hold the plan, when it was last taken, and whether it left
	// the cache while held (the last user retires it).
	users   int
	used    uint64
	dropped bool
}

type planKey struct {
	dev   devstream.GPU
	kind  kind
	rank  int
	n     [2]int
	batch int
}

var plans struct {
	mu    sync.Mutex
	m     map[planKey]*plan
	clock uint64
}

// getPlan returns the plan for k, made if need be, held until release.
func getPlan(k planKey) (*plan, error) {
	plans.mu.Lock()
	defer plans.mu.Unlock()
	plans.clock++
	if p, ok := plans.m[k]; ok {
		p.users++
		p.used = plans.clock
		return p, nil
	}
	ctx := k.dev.Context().Handle()
	h, work, r := cPlan(ctx, k.rank, k.n, int(k.kind), k.batch)
	if err := r.err("cufftMakePlanMany64", k.dev.Ordinal()); err != nil {
		return nil, fmt.Errorf("%w (a plan for %s)", err, k)
	}
	if plans.m == nil {
		plans.m = map[planKey]*plan{}
	}
	if len(plans.m) >= MaxPlans {
		evictLocked()
	}
	p := &plan{key: k, handle: h, work: work, users: 1, used: plans.clock}
	plans.m[k] = p
	return p, nil
}

// release gives back a plan taken by getPlan.
func (p *plan) release() {
	plans.mu.Lock()
	p.users--
	last := p.dropped && p.users == 0
	plans.mu.Unlock()
	if last {
		go func() { _ = p.retire() }()
	}
}

// evictLocked destroys the least recently used plan that no call holds,
// if there is one (else the cache grows past MaxPlans until one is
// released). plans.mu is held.
func evictLocked() {
	var lru *plan
	for _, p := range plans.m {
		if p.users == 0 && (lru == nil || p.used < lru.used) {
			lru = p
		}
	}
	if lru == nil {
		return
	}
	delete(plans.m, lru.key)
	// Its transforms may still be queued: retire waits for the device,
	// on a goroutine of its own rather than under the cache's lock.
	go func() { _ = lru.retire() }()
}

// retire waits for the device's queued work, which may still use the
// plan, and destroys it.
func (p *plan) retire() error {
	d := p.key.dev
	if err := d.Synchronize(); err != nil {
		return fmt.Errorf("cufft: destroying the plan for %s: %w", p.key, err)
	}
	return cDestroy(d.Context().Handle(), p.handle).err("cufftDestroy", d.Ordinal())
}

// ClearPlans destroys every cached plan, after waiting for each device's
// queued work; a plan in use by a transform on another goroutine is
// destroyed when that transform is queued. The next transform of each
// shape makes its plan again. Plans hold no work area (that comes from the
// pools per call), only cuFFT's own small tables, so a program calls
// ClearPlans when it is done with FFTs of many shapes, not between calls.
func ClearPlans() error {
	plans.mu.Lock()
	var idle []*plan
	for k, p := range plans.m {
		delete(plans.m, k)
		if p.users > 0 {
			p.dropped = true
			continue
		}
		idle = append(idle, p)
	}
	plans.mu.Unlock()
	var errs []error
	for _, p := range idle {
		errs = append(errs, p.retire())
	}
	return errors.Join(errs...)
}

// cachedPlans is how many plans the cache holds, for the tests.
func cachedPlans() int {
	plans.mu.Lock()
	defer plans.mu.Unlock()
	return len(plans.m)
}

func (k planKey) String() string {
	name := map[kind]string{c2c: "C2C", r2c: "R2C", c2r: "C2R"}[k.kind]
	n := fmt.Sprint(k.n[0])
	if k.rank == 2 {
		n = fmt.Sprintf("%d×%d", k.n[0], k.n[1])
	}
	return fmt.Sprintf("%s of %s, batch %d, on device %d", name, n, k.batch, k.dev.Ordinal())
}

// errUnaligned is what a GPU transform's borrow returns, queueing
// nothing, when its float32 side is not 8-byte aligned.
var errUnaligned = errors.New("cufft: float32 data not aligned as complex64")

// gpuTransform queues sp on s through cuFFT, then its scaling.
func gpuTransform[In, Out cuarray.Elem](sp spec, sh shape, gpu devstream.GPU, s *cuarray.Stream, dst *cuarray.Array[Out], src *cuarray.Array[In]) error {
	if _, err := library.Load(); err != nil {
		return err
	}
	p, err := getPlan(planKey{dev: gpu, kind: sp.kind, rank: sp.rank, n: sh.n, batch: sh.batch})
	if err != nil {
		return fmt.Errorf("cufft: %s: %w", sp.op, err)
	}
	defer p.release()
	in := src
	if sp.kind == c2r {
		// cuFFT's complex-to-real transforms overwrite their input
		// (PyTorch's gh-34551): transform a copy.
		if in, err = cuarray.On[In](s).Clone(src); err != nil {
			return fmt.Errorf("cufft: %s: the copy of src cuFFT may overwrite: %w", sp.op, err)
		}
		defer in.UnsafeFree()
	}
	var work *cuarray.Array[uint8]
	if p.work > 0 {
		// The work area comes from s's pool, so that limits and
		// statistics count it; it is freed in stream order after the
		// transform, for the next one on s to reuse at once.
		if work, err = cuarray.On[uint8](s).New(int(p.work)); err != nil {
			return fmt.Errorf("cufft: %s: a work area of %d bytes for %s: %w", sp.op, p.work, p.key, err)
		}
		defer work.UnsafeFree()
	}
	err = execPlan(p, sp, gpu, s, dst, in, work)
	if errors.Is(err, errUnaligned) {
		// cuFFT needs real data aligned as complex data (PyTorch copies
		// it too): a float32 view at an odd offset goes through an
		// array of its own, which the pool aligns.
		switch sp.kind {
		case r2c:
			aligned, cerr := cuarray.On[In](s).Clone(src)
			if cerr != nil {
				return fmt.Errorf("cufft: %s: an aligned copy of src: %w", sp.op, cerr)
			}
			defer aligned.UnsafeFree()
			err = execPlan(p, sp, gpu, s, dst, aligned, work)
		case c2r:
			out, nerr := cuarray.On[Out](s).New(dst.Shape()...)
			if nerr != nil {
				return fmt.Errorf("cufft: %s: an aligned array for dst: %w", sp.op, nerr)
			}
			defer out.UnsafeFree()
			if err = execPlan(p, sp, gpu, s, out, in, work); err == nil {
				err = cuarray.On[Out](s).Copy(dst, out)
			}
		}
	}
	if err != nil {
		return fmt.Errorf("cufft: %s: %w", sp.op, err)
	}
	if !sp.inverse {
		return nil
	}
	// cuFFT does not scale; the "backward" normalisation divides the
	// inverse by n, as a kernel after it (PyTorch does the same).
	return scale(sp, s, dst, 1/float64(sh.elems()))
}

// execPlan queues p's transform of in into out on s, with work (nil when
// the plan needs none) as its work area, through cuarray.WithPointers:
// the transform waits for the arrays' earlier work on any stream, and
// later uses wait for it. It returns errUnaligned, queueing nothing, when
// the float32 side is not 8-byte aligned.
func execPlan[In, Out cuarray.Elem](p *plan, sp spec, gpu devstream.GPU, s *cuarray.Stream, out *cuarray.Array[Out], in *cuarray.Array[In], work *cuarray.Array[uint8]) error {
	args := []cuarray.Arg{cuarray.Out(out), cuarray.In(in)}
	if sp.kind == c2r {
		args[1] = cuarray.InOut(in) // cuFFT overwrites it: the copy
	}
	if work != nil {
		args = append(args, cuarray.InOut(work))
	}
	dir := -1 // CUFFT_FORWARD
	if sp.inverse {
		dir = 1 // CUFFT_INVERSE
	}
	return cuarray.WithPointers(s, func(bs backend.Stream, ptrs []backend.Ptr) error {
		on, err := devstream.Resolve(gpu, bs)
		if err != nil {
			return err
		}
		if sp.kind == c2c && overlap(ptrs[0], ptrs[1], bytesOf(out), bytesOf(in)) {
			return overlapError(sp, out, in)
		}
		if (sp.kind == r2c && ptrs[1]%8 != 0) || (sp.kind == c2r && ptrs[0]%8 != 0) {
			return errUnaligned
		}
		var w backend.Ptr
		if work != nil {
			w = ptrs[2]
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		r := cExec(gpu.Context().Handle(), p.handle, int(sp.kind), dir, on.GPUStream.CUDA().Handle(),
			uintptr(w), uintptr(ptrs[1]), uintptr(ptrs[0]))
		return r.err(execName(sp.kind), gpu.Ordinal())
	}, args...)
}

func execName(k kind) string {
	switch k {
	case r2c:
		return "cufftExecR2C"
	case c2r:
		return "cufftExecC2R"
	}
	return "cufftExecC2C"
}

// bytesOf is the bytes of a's elements.
func bytesOf[T cuarray.Elem](a *cuarray.Array[T]) uint64 {
	var z T
	return uint64(a.Len()) * uint64(unsafe.Sizeof(z))
}

// scale multiplies dst by f on s: dst is complex64 or float32.
func scale[T cuarray.Elem](sp spec, s *cuarray.Stream, dst *cuarray.Array[T], f float64) error {
	var err error
	switch d := any(dst).(type) {
	case *cuarray.Array[complex64]:
		_, err = cuarray.On[complex64](s).Scale(d, complex(float32(f), 0), d)
	case *cuarray.Array[float32]:
		_, err = cuarray.On[float32](s).Scale(d, float32(f), d)
	default:
		err = fmt.Errorf("no scaling for %s", dst) // unreachable: the API's types
	}
	if err != nil {
		return fmt.Errorf("cufft: %s: scaling by 1/n: %w", sp.op, err)
	}
	return nil
}
