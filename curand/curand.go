package curand

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/internal/devstream"
)

// Float is the element types generated.
type Float interface{ float32 | float64 }

// Generator is a sequence of pseudo-random numbers on one device: each
// call takes the next numbers of the sequence, in the order the calls are
// made (not the order the streams run them), so that a seed and a series
// of calls give the same numbers every run.
//
// On the CUDA backend it is a cuRAND Philox4x32-10 generator. On the host
// backend each call draws from its own PCG stream (math/rand/v2), keyed by
// the seed and the call's number: the numbers differ from cuRAND's, as
// CUDA.jl's CPU and GPU generators differ, but are as reproducible.
//
// A Generator is safe for concurrent use; its calls are serialized. Close
// gives its resources back; one that becomes unreachable is closed by the
// collector.
type Generator struct {
	dev  backend.Device
	seed uint64
	r    *state // what the cleanup closes: not g itself
}

// state is what a Generator holds, apart from the Generator so that a
// cleanup can close it once the Generator is unreachable.
type state struct {
	mu     sync.Mutex
	closed bool
	calls  uint64 // host: the calls made, the key of the next one's stream

	cu      devstream.GPU
	h       uintptr     // cuRAND generator
	scratch backend.Ptr // two elements of float64: the last of an odd count of normals
}

// New makes a generator on dev seeded with seed. On the CUDA backend it
// loads cuRAND on first use (an error wrapping ErrNoCURAND says what was
// tried when it cannot).
func New(dev backend.Device, seed uint64) (*Generator, error) {
	on, err := devstream.Device(dev)
	if err != nil {
		return nil, fmt.Errorf("curand: New: %w", err)
	}
	st := &state{}
	if d := on.GPU; d != nil {
		if err := load(); err != nil {
			return nil, err
		}
		h, r := cCreate(d.Context().Handle(), seed)
		if err := r.err("curandCreateGenerator", d.Ordinal()); err != nil {
			return nil, err
		}
		st.cu, st.h = d, h
	}
	g := &Generator{dev: dev, seed: seed, r: st}
	// Closing waits for the device's queued work: on a goroutine of its
	// own, so that the runtime's cleanup goroutines (which free arrays)
	// are not held up meanwhile.
	runtime.AddCleanup(g, func(st *state) { go func() { _ = st.close() }() }, st)
	return g, nil
}

// Device is the device g generates on.
func (g *Generator) Device() backend.Device { return g.dev }

// Seed is the seed g was made with.
func (g *Generator) Seed() uint64 { return g.seed }

// Close waits for the device's queued work (which may still use the
// generator's state) and gives the generator back. Later calls fail with
// an error wrapping ErrClosed; Close again does nothing.
func (g *Generator) Close() error {
	err := g.r.close()
	runtime.KeepAlive(g)
	return err
}

func (st *state) close() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return nil
	}
	st.closed = true
	if st.cu == nil {
		return nil
	}
	// cuRAND's kernels read and write the generator's state on the
	// streams it was given; destroying it under them would free memory
	// they use.
	err := st.cu.Synchronize()
	if r := cDestroy(st.cu.Context().Handle(), st.h); err == nil {
		err = r.err("curandDestroyGenerator", st.cu.Ordinal())
	}
	if st.scratch != 0 {
		if ferr := st.cu.Free(st.scratch); err == nil {
			err = ferr
		}
	}
	return err
}

// Uniform queues the filling of n elements of T at p, on stream s of g's
// device, with numbers uniform in (0, 1]: 0 excluded and 1 included, as
// cuRAND makes them (so that log(x) is finite).
func Uniform[T Float](g *Generator, s backend.Stream, p backend.Ptr, n int) error {
	return generate[T](g, s, p, n, false, 0, 1)
}

// Normal queues the filling of n elements of T at p, on stream s of g's
// device, with normally distributed numbers of the given mean and
// standard deviation. Any n is accepted (cuRAND itself makes them in
// pairs).
func Normal[T Float](g *Generator, s backend.Stream, p backend.Ptr, n int, mean, stddev T) error {
	return generate[T](g, s, p, n, true, float64(mean), float64(stddev))
}

func generate[T Float](g *Generator, s backend.Stream, p backend.Ptr, n int, normal bool, mean, stddev float64) error {
	var zero T
	f64 := any(zero) == any(float64(0))
	size := uint64(4)
	op, dt := "Uniform", "float32"
	if normal {
		op = "Normal"
	}
	if f64 {
		size, dt = 8, "float64"
	}
	errorf := func(format string, args ...any) error {
		return fmt.Errorf("curand: "+op+" "+dt+": "+format, args...)
	}
	switch {
	case g == nil:
		return errorf("nil Generator: %w", backend.ErrInvalidValue)
	case n < 0:
		return errorf("n = %d is negative: %w", n, backend.ErrInvalidValue)
	case uint64(n) > (1<<62)/size:
		return errorf("n = %d elements is more than any device holds: %w", n, backend.ErrInvalidValue)
	case n > 0 && p == 0:
		return errorf("pointer is nil: %w", backend.ErrInvalidValue)
	case uint64(p)%size != 0:
		return errorf("pointer %#x is not %d-byte aligned, as %s elements must be: %w", uintptr(p), size, dt, backend.ErrInvalidValue)
	case math.IsNaN(mean) || math.IsInf(mean, 0) || math.IsNaN(stddev) || math.IsInf(stddev, 0) || stddev < 0:
		return errorf("mean %v and standard deviation %v must be finite, the deviation at least 0: %w", mean, stddev, backend.ErrInvalidValue)
	}
	on, err := devstream.Resolve(g.dev, s)
	if err != nil {
		return errorf("%w", err)
	}
	st := g.r
	st.mu.Lock()
	defer st.mu.Unlock()
	defer runtime.KeepAlive(g)
	if st.closed {
		return errorf("the generator was closed: %w", ErrClosed)
	}
	if n == 0 {
		return nil
	}
	if on.GPU != nil {
		return st.cudaGenerate(on.GPUStream, p, n, normal, f64, size, mean, stddev)
	}
	key := st.calls
	st.calls++
	if err := hostGenerate(g.seed, key, on.HostStream, p, n, normal, f64, mean, stddev, op+" "+dt); err != nil {
		return errorf("%w", err)
	}
	return nil
}

// cudaGenerate is generate on the CUDA backend; st.mu is held.
func (st *state) cudaGenerate(s devstream.GPUStream, p backend.Ptr, n int, normal, f64 bool, size uint64, mean, stddev float64) error {
	ctx, dev := st.cu.Context().Handle(), st.cu.Ordinal()
	cs := s.CUDA()
	call := func(out backend.Ptr, n int) error {
		r := cGenerate(ctx, st.h, cs.Handle(), normal, f64, uintptr(out), n, mean, stddev)
		return r.err(cuName(normal, f64), dev)
	}
	// cuRAND makes normal numbers in pairs (CURAND_STATUS_LENGTH_NOT_MULTIPLE
	// otherwise): an odd count's last one is made as a pair in scratch
	// memory and copied into place, in stream order.
	even := n
	if normal {
		even = n &^ 1
	}
	if even > 0 {
		if err := call(p, even); err != nil {
			return err
		}
	}
	if even == n {
		return nil
	}
	if st.scratch == 0 {
		b, err := st.cu.Alloc(16)
		if err != nil {
			return fmt.Errorf("curand: scratch for an odd count of normal numbers: %w", err)
		}
		st.scratch = b
	}
	if err := call(st.scratch, 2); err != nil {
		return err
	}
	return st.cu.CopyDtoD(p+backend.Ptr(uint64(even)*size), st.scratch, size, s)
}

func cuName(normal, f64 bool) string {
	switch {
	case normal && f64:
		return "curandGenerateNormalDouble"
	case normal:
		return "curandGenerateNormal"
	case f64:
		return "curandGenerateUniformDouble"
	}
	return "curandGenerateUniform"
}
