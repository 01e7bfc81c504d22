package cuarray

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/config"
	"github.com/gocuda/gocuda/memprof"
)

// ErrScalarIndexing is wrapped by At's and SetAt's error when
// GOCUDA_SCALAR_INDEXING=error forbids reading or writing one element.
var ErrScalarIndexing = errors.New("scalar indexing is off (GOCUDA_SCALAR_INDEXING=error)")

// At returns the element of a at idx, one index per dimension (none for a
// zero-dimensional array), waiting for the work queued on a as ToSlice
// does: a copy to the host and a synchronisation per call, microseconds
// on a GPU. A loop of At is the slow way to read an array: ToSlice reads
// all of it in one copy. GOCUDA_SCALAR_INDEXING says what At does: allow;
// warn (the default: one warning per call site on the default logger,
// naming it); error (it fails, wrapping ErrScalarIndexing), which catches
// scalar loops in tests, as CUDA.jl's allowscalar(false) does.
func (a *Array[T]) At(idx ...int) (T, error) {
	var v T
	e, err := a.element("At", idx)
	if err != nil {
		return v, err
	}
	var out [1]T
	if err := e.copyTo("At", out[:]); err != nil {
		return v, err
	}
	return out[0], nil
}

// SetAt sets the element of a at idx to v: a copy from the host, queued
// on the device's default stream after the work queued on a on any
// stream, as every operation on a is ordered. It returns once v has been
// copied out of the call, not when the element is written. Like At it is
// one copy per element, and GOCUDA_SCALAR_INDEXING applies to it.
func (a *Array[T]) SetAt(v T, idx ...int) error {
	e, err := a.element("SetAt", idx)
	if err != nil {
		return err
	}
	if err := a.writable(fmt.Sprintf("SetAt%v", idx), "array"); err != nil {
		e.UnsafeFree()
		return err
	}
	return WithPointersAs("SetAt", nil, func(bs backend.Stream, p []backend.Ptr) error {
		// CopyHtoD returns once v may be reused.
		return bs.Device().CopyHtoD(p[0], unsafe.Pointer(&v), uint64(unsafe.Sizeof(v)), bs)
	}, Out(e))
}

// element checks idx against a's shape and the scalar-indexing knob, and
// returns a one-element view of the element.
func (a *Array[T]) element(op string, idx []int) (*Array[T], error) {
	if err := a.check(op, "array"); err != nil {
		return nil, err
	}
	shape := a.shape()
	if len(idx) != len(shape) {
		return nil, fmt.Errorf("cuarray: %s%v of %s: %d indices for %d dimensions; give one index per dimension: %w",
			op, idx, a, len(idx), len(shape), ErrShape)
	}
	st := a.strides()
	off := 0
	for d, i := range idx {
		if i < 0 || i >= shape[d] {
			return nil, fmt.Errorf("cuarray: %s%v of %s: index %d of dimension %d is out of range [0, %d): %w",
				op, idx, a, i, d, shape[d], ErrShape)
		}
		off += i * st[d]
	}
	if err := scalarAllowed(op); err != nil {
		return nil, fmt.Errorf("cuarray: %s%v of %s: %w; read many elements with ToSlice or CopyTo, or set %s=allow",
			op, idx, a, err, config.EnvScalarIndexing)
	}
	return a.share(off, 1, []int{1})
}

// scalarMode is GOCUDA_SCALAR_INDEXING as parsed (a test may change it);
// warned holds the call sites already warned about.
var (
	scalarMode = sync.OnceValue(func() string {
		c, err := gocuda.Config()
		if err != nil || c.ScalarIndexing == "" {
			return "warn" // a bad knob is reported where the pool is made
		}
		return c.ScalarIndexing
	})
	scalarOverride atomic.Pointer[string] // set by tests only
	warned         sync.Map               // call site (file:line) → struct{}
)

// scalarAllowed applies the knob to one At or SetAt.
func scalarAllowed(op string) error {
	mode := scalarMode()
	if o := scalarOverride.Load(); o != nil {
		mode = *o
	}
	switch mode {
	case "allow":
		return nil
	case "error":
		return ErrScalarIndexing
	}
	f, _ := memprof.CallerSite(0) // the user's frame: where At or SetAt was called
	site := fmt.Sprintf("%s:%d", f.File, f.Line)
	if _, seen := warned.LoadOrStore(site, struct{}{}); !seen {
		slog.Warn("cuarray: "+op+" reads or writes one element with a copy and a synchronisation: a loop of them is slow; "+
			"ToSlice and CopyTo move a whole array in one copy ("+config.EnvScalarIndexing+"=allow silences this, =error makes it fail)",
			"site", site)
	}
	return nil
}
