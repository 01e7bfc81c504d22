package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/cudabackend"
)

// errNoCUFFT is wrapped by every error that comes from cuFFT being absent;
// the message names each path tried and why it failed.
var errNoCUFFT = errors.New("cuFFT not found")

// libraryNames are tried first, through the loader's own search
// (LD_LIBRARY_PATH, the ldconfig cache): cuFFT 12 ships with CUDA 13, 11
// with CUDA 12.
var libraryNames = []string{"libcufft.so.12", "libcufft.so.11", "libcufft.so"}

// libraryGlobs are where else cuFFT is often installed: the CUDA toolkit's
// own folder, and pip's wheels (nvidia-cufft-cu12 puts it in
// nvidia/cufft/lib, the CUDA 13 wheels in nvidia/cu13/lib).
func libraryGlobs() []string {
	var sites []string
	for _, env := range []string{"VIRTUAL_ENV", "CONDA_PREFIX"} {
		if d := os.Getenv(env); d != "" {
			sites = append(sites, filepath.Join(d, "lib/python3*/site-packages"))
		}
	}
	if home, err := os.UserHomeDir(); err == nil {
		sites = append(sites, filepath.Join(home, ".local/lib/python3*/site-packages"))
	}
	sites = append(sites, "/usr/local/lib/python3*/dist-packages", "/usr/local/lib/python3*/site-packages",
		"/usr/lib/python3/dist-packages")
	globs := []string{"/usr/local/cuda/lib64/libcufft.so.1[12]"}
	for _, s := range sites {
		globs = append(globs, s+"/nvidia/cufft/lib/libcufft.so.1[12]", s+"/nvidia/cu13/lib/libcufft.so.1[12]")
	}
	return globs
}

var lib struct {
	once    sync.Once
	path    string
	version int
	err     error
}

// loadCUFFT opens cuFFT once per process.
func loadCUFFT() error {
	lib.once.Do(func() {
		if !cgoAvailable {
			lib.err = fmt.Errorf("fft: cuFFT cannot be loaded: built without cgo (CGO_ENABLED=0) or for an OS without dlopen: %w", errNoCUFFT)
			return
		}
		paths := slices.Clone(libraryNames)
		var empty []string
		for _, g := range libraryGlobs() {
			found, _ := filepath.Glob(g)
			if len(found) == 0 {
				empty = append(empty, g)
			}
			paths = append(paths, found...)
		}
		h, path, err := open(paths)
		if err != nil {
			lib.err = fmt.Errorf("%w; nothing matched %s. Install cuFFT (the CUDA toolkit, or pip install nvidia-cufft-cu12), or run on the host backend (GOCUDA_BACKEND=host)",
				err, strings.Join(empty, ", "))
			return
		}
		if sym := install(h); sym != "" {
			lib.err = fmt.Errorf("fft: %s does not provide %s: %w", path, sym, errNoCUFFT)
			return
		}
		lib.path, lib.version = path, version()
	})
	return lib.err
}

// open returns the first of paths that dlopen loads, or an error naming
// each with the loader's reason.
func open(paths []string) (uintptr, string, error) {
	var tried []string
	for _, p := range paths {
		h, why := dlopen(p)
		if h != 0 {
			return h, p, nil
		}
		tried = append(tried, fmt.Sprintf("%s (%s)", p, why))
	}
	return 0, "", fmt.Errorf("fft: no cuFFT library could be loaded; tried %s: %w", strings.Join(tried, ", "), errNoCUFFT)
}

// A plan is cuFFT's setup for one transform size on one device: costly to
// make (it allocates a work area on the device), so it is kept for the
// life of the program and used for every call of its size.
type plan struct {
	mu  sync.Mutex
	dev *cudabackend.Device
	id  int
	// The plan's one work area is used by every transform it runs: one on
	// a stream other than the last one's must wait for that one.
	last backend.Stream
	done backend.Event
}

type planKey struct {
	n, batch int
	dev      *cudabackend.Device
}

var plans struct {
	sync.Mutex
	m map[planKey]*plan
}

func planFor(dev *cudabackend.Device, n, batch int) (*plan, error) {
	if err := loadCUFFT(); err != nil {
		return nil, err
	}
	plans.Lock()
	defer plans.Unlock()
	k := planKey{n, batch, dev}
	if p, ok := plans.m[k]; ok {
		return p, nil
	}
	id, r := cPlan(dev.Context().Handle(), n, batch)
	if err := r.err("cufftPlanMany", dev); err != nil {
		return nil, err
	}
	ev, err := dev.NewEvent(false)
	if err != nil {
		cDestroy(dev.Context().Handle(), id)
		return nil, err
	}
	if plans.m == nil {
		plans.m = map[planKey]*plan{}
	}
	p := &plan{dev: dev, id: id, done: ev}
	plans.m[k] = p
	return p, nil
}

// cudaFFT queues batch transforms of n complex64 from src to dst on bs.
func cudaFFT(bs *cudabackend.Stream, dst, src backend.Ptr, n, batch int, inverse bool) error {
	p, err := planFor(bs.Device().(*cudabackend.Device), n, batch)
	if err != nil {
		return err
	}
	dir := -1 // CUFFT_FORWARD
	if inverse {
		dir = 1 // CUFFT_INVERSE
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last != nil && p.last != bs {
		if err := bs.WaitEvent(p.done); err != nil {
			return err
		}
	}
	r := cExec(p.dev.Context().Handle(), p.id, bs.CUDA().Handle(), uintptr(src), uintptr(dst), dir)
	if err := r.err("cufftExecC2C", p.dev); err != nil {
		return err
	}
	p.last = bs
	return p.done.Record(bs)
}

// closePlans destroys every plan, once the work queued with them is done.
func closePlans() error {
	plans.Lock()
	defer plans.Unlock()
	var errs []error
	for k, p := range plans.m {
		if err := p.dev.Synchronize(); err != nil {
			errs = append(errs, err)
			continue // a plan still in use is left alone
		}
		errs = append(errs, cDestroy(p.dev.Context().Handle(), p.id).err("cufftDestroy", p.dev), p.done.Destroy())
		delete(plans.m, k)
	}
	return errors.Join(errs...)
}

// result is where a call failed (a stage of the C side) and its code.
type result struct{ stage, code int }

const (
	stageOK = iota
	stageContext
	stageSetStream
	stageCall
)

// cufftResults are cufftResult's names, by value (cufft.h).
var cufftResults = []string{"CUFFT_SUCCESS", "CUFFT_INVALID_PLAN", "CUFFT_ALLOC_FAILED", "CUFFT_INVALID_TYPE",
	"CUFFT_INVALID_VALUE", "CUFFT_INTERNAL_ERROR", "CUFFT_EXEC_FAILED", "CUFFT_SETUP_FAILED", "CUFFT_INVALID_SIZE",
	"CUFFT_UNALIGNED_DATA", "CUFFT_INCOMPLETE_PARAMETER_LIST", "CUFFT_INVALID_DEVICE", "CUFFT_PARSE_ERROR",
	"CUFFT_NO_WORKSPACE", "CUFFT_NOT_IMPLEMENTED", "CUFFT_LICENSE_ERROR", "CUFFT_NOT_SUPPORTED"}

func (r result) err(fn string, dev *cudabackend.Device) error {
	name := "unknown"
	if r.code >= 0 && r.code < len(cufftResults) {
		name = cufftResults[r.code]
	}
	switch r.stage {
	case stageOK:
		return nil
	case stageContext:
		return fmt.Errorf("fft: %s: making device %d's context current failed with CUresult %d", fn, dev.Ordinal(), r.code)
	case stageSetStream:
		fn = "cufftSetStream"
	}
	return fmt.Errorf("fft: %s on device %d: %s (%d)", fn, dev.Ordinal(), name, r.code)
}
