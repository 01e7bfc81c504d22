package rtc

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/internal/devstream"
	"github.com/gocuda/gocuda/internal/kernelcache"
	"github.com/gocuda/gocuda/nvrtc"
)

// Compile compiles and loads the kernel for device ordinal of the
// process's backend now, rather than at its first launch there, so that
// a compile error (with NVRTC's log) or a missing NVRTC shows at start-up.
// On the host backend there is nothing to compile: it reports whether the
// kernel can run there, that is, whether it has a HostFunc.
func (k *Kernel) Compile(device int) error {
	dev, err := gocuda.Device(device)
	if err != nil {
		return fmt.Errorf("rtc: %s: %w", k.op, err)
	}
	on, err := deviceOn(k.op, dev)
	if err != nil {
		return err
	}
	if on.GPU != nil {
		_, err := k.function(on.GPU)
		return err
	}
	if !k.HasHost() {
		return k.noHostError()
	}
	return nil
}

func (k *Kernel) noHostError() error {
	return fmt.Errorf("rtc: %s has no host form: the host backend cannot run GPU code, so give NewKernel a HostFunc "+
		"(a Go func taking the same arguments, arrays as slices), or run on a GPU (GOCUDA_BACKEND=cuda): %w", k.op, backend.ErrNotSupported)
}

// function is the kernel's function in d's context, compiling and
// loading it there on first use. Failures are not kept: a later launch
// tries again (the compile cache keeps NVRTC's verdict on the source).
func (k *Kernel) function(d devstream.GPU) (*cuda.Function, error) {
	ctx := d.Context()
	if l := k.last.Load(); l != nil && l.ctx == ctx {
		return l.fn, nil
	}
	if v, ok := k.fns.Load(ctx); ok {
		l := v.(*loaded)
		k.last.Store(l)
		return l.fn, nil
	}
	k.loading.Lock()
	defer k.loading.Unlock()
	if v, ok := k.fns.Load(ctx); ok {
		return v.(*loaded).fn, nil
	}
	l, err := k.load(d)
	if err != nil {
		return nil, fmt.Errorf("rtc: %s on device %d: %w", k.op, d.Ordinal(), err)
	}
	k.fns.Store(ctx, l)
	k.last.Store(l)
	return l.fn, nil
}

func (k *Kernel) load(d devstream.GPU) (*loaded, error) {
	img, key, from, err := k.code(d)
	if err != nil {
		return nil, err
	}
	mod, err := moduleFor(d.Context(), key, img)
	if err != nil {
		return nil, err
	}
	fn, err := mod.Function(k.name)
	if err != nil {
		return nil, fmt.Errorf("the code has no kernel %s (is it declared extern \"C\"?): %w", k.name, err)
	}
	return &loaded{ctx: d.Context(), fn: fn, from: from}, nil
}

// code is what the driver loads on d: the image, or the source compiled
// for d's architecture (through the compile cache), with its cache key
// and where it came from.
func (k *Kernel) code(d devstream.GPU) (img []byte, key, from string, err error) {
	if k.image != nil {
		k.imageKeyOnce.Do(func() { k.imageKey = kernelcache.Key("image", string(k.image)) })
		return k.image, k.imageKey, "image", nil
	}
	info := d.Info()
	opts, err := withArch(k.opts, info.Major, info.Minor)
	if err != nil {
		return nil, "", "", err
	}
	major, minor, err := nvrtc.Version()
	if err != nil {
		return nil, "", "", err
	}
	key = kernelcache.Key("nvrtc", strconv.Itoa(major)+"."+strconv.Itoa(minor), k.name, strings.Join(opts, "\x00"), k.source)
	got, err := compiled().Get(key, func() ([]byte, error) {
		res, err := nvrtc.Compile(k.source, k.name+".cu", opts...)
		if err == nil && res.Log != "" {
			slog.Debug("gocuda: NVRTC warnings", "kernel", k.name, "log", res.Log)
		}
		return res.Image, err
	})
	if err != nil {
		return nil, "", "", err
	}
	if got.WriteErr != nil {
		warnCacheWrite.Do(func() {
			slog.Warn("gocuda: compiled kernels are not kept on disk; they will be compiled again by the next process",
				"var", "GOCUDA_KERNEL_CACHE", "err", got.WriteErr)
		})
	}
	return got.Val, key, got.From.String(), nil
}

var warnCacheWrite sync.Once

// compiledCache is the process's cache of compiled kernels, in the folder
// GOCUDA_KERNEL_CACHE names (by default under the user's cache folder),
// made on first use.
var compiledCache atomic.Pointer[kernelcache.Cache]

func compiled() *kernelcache.Cache {
	if c := compiledCache.Load(); c != nil {
		return c
	}
	c := &kernelcache.Cache{}
	// A knob that does not parse fails every backend call already; the
	// compiled kernels are then kept in memory only.
	if cfg, err := gocuda.Config(); err == nil {
		c.Dir = cfg.KernelCache
	}
	compiledCache.CompareAndSwap(nil, c)
	return compiledCache.Load()
}

// withArch adds -arch for a device of compute capability major.minor
// unless the options name one: a cubin for it when NVRTC knows it (no
// compilation at load), else PTX for the newest architecture NVRTC knows
// below it, which the driver compiles for the device at load.
func withArch(opts []string, major, minor int) ([]string, error) {
	for _, o := range opts {
		if strings.HasPrefix(o, "-arch") || strings.HasPrefix(o, "--gpu-architecture") {
			return opts, nil
		}
	}
	archs, err := nvrtc.SupportedArchs()
	if err != nil {
		return nil, err
	}
	opt, err := archFor(archs, major*10+minor)
	if err != nil {
		return nil, err
	}
	return append(opts[:len(opts):len(opts)], opt), nil
}

// archFor picks the -arch option for a device of compute capability cc
// (times ten) among the architectures NVRTC supports.
func archFor(archs []int, cc int) (string, error) {
	best := 0
	for _, a := range archs {
		if a == cc {
			return "-arch=sm_" + strconv.Itoa(cc), nil
		}
		if a < cc && a > best {
			best = a
		}
	}
	if best == 0 {
		return "", fmt.Errorf("this NVRTC compiles for architectures %v, none of them at or below the device's compute capability %d.%d", archs, cc/10, cc%10)
	}
	return "-arch=compute_" + strconv.Itoa(best), nil
}

// modules holds the code loaded into each context, by its cache key, so
// that kernels of the same code (two Kernels of one source) share one
// module. Modules stay loaded for the life of the process, as the
// built-in kernels' do.
var modules struct {
	sync.Mutex
	m map[moduleKey]*cuda.Module
}

type moduleKey struct {
	ctx *cuda.Context
	key string
}

func moduleFor(ctx *cuda.Context, key string, img []byte) (*cuda.Module, error) {
	modules.Lock()
	defer modules.Unlock()
	mk := moduleKey{ctx, key}
	if m, ok := modules.m[mk]; ok {
		return m, nil
	}
	m, err := ctx.LoadModule(img)
	if err != nil {
		return nil, fmt.Errorf("loading the kernel's code: %w", err)
	}
	if modules.m == nil {
		modules.m = map[moduleKey]*cuda.Module{}
	}
	modules.m[mk] = m
	return m, nil
}
