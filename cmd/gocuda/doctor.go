package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/dustin/go-humanize"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/auto"
	"github.com/gocuda/gocuda/blas"
	"github.com/gocuda/gocuda/config"
	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cufft"
	"github.com/gocuda/gocuda/curand"
	"github.com/gocuda/gocuda/internal/nvml"
	"github.com/gocuda/gocuda/nccl"
	"github.com/gocuda/gocuda/nvrtc"
)

func runDoctor(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("doctor", "[--verbose]", "Shows the CUDA driver and how gocuda calls it, each GPU with its UUID, MIG mode,\nmemory, compute capability and the features gocuda uses, the CUDA libraries found,\nthe backend chosen, and every GOCUDA_ variable as parsed.\nOn a machine without a GPU it says so and exits 0; a GOCUDA_ variable that does\nnot parse exits 1.", stdout)
	verbose := fs.Bool("verbose", false, "list every folder searched for a CUDA library not found (else counted, the first two named)")
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErrorf("doctor takes no arguments, got %q", fs.Args())
	}
	return doctor(stdout, os.Environ(), *verbose)
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// width is where doctor wraps its sentences: a driver's error or a
// library's search runs to hundreds of characters on one line otherwise.
const width = 100

// say writes text indented by indent spaces, wrapped at width, each line
// after the first indented two more.
func say(w io.Writer, indent int, text string) {
	pad := strings.Repeat(" ", indent)
	line := pad
	for _, word := range strings.Fields(text) {
		switch {
		case strings.TrimSpace(line) == "":
			line += word
		case len(line)+1+len(word) > width:
			fmt.Fprintln(w, line)
			line = pad + "  " + word
		default:
			line += " " + word
		}
	}
	fmt.Fprintln(w, line)
}

// The states of the CUDA driver, as doctor and version tell them.
type driverState int

const (
	driverOK          driverState = iota
	driverUnreachable             // this build cannot load one (no cgo)
	driverNone                    // no driver on this machine
	driverNoGPU                   // a driver that sees no GPU
	driverFailed                  // a driver that failed to initialize
)

// driver initializes the CUDA driver and says how that went: the state,
// the driver's CUDA version (1000*major+10*minor) when it is there, and
// the error otherwise.
func driver() (driverState, int, error) {
	err := cuda.Init()
	switch {
	case err == nil:
		v, err := cuda.DriverVersion()
		if err != nil {
			return driverFailed, 0, err
		}
		return driverOK, v, nil
	case cuda.CallPath() == "none":
		return driverUnreachable, 0, err
	case errors.Is(err, cuda.ErrNoDriver):
		return driverNone, 0, err
	case errors.Is(err, cuda.ErrNoDevice):
		return driverNoGPU, 0, err
	}
	return driverFailed, 0, err
}

// cudaVersion is "CUDA 13.0 (driver API version 13000)".
func cudaVersion(v int) string {
	return fmt.Sprintf("CUDA %d.%d (driver API version %d)", v/1000, (v%1000)/10, v)
}

func doctor(w io.Writer, environ []string, verbose bool) error {
	fmt.Fprintf(w, "gocuda doctor\n\nGo %s %s/%s, cgo %s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH, yes(cgoEnabled))

	fmt.Fprintln(w, "\nCUDA driver")
	fmt.Fprintf(w, "  call path: %s\n", cuda.CallPath())
	switch state, v, err := driver(); state {
	case driverUnreachable:
		// The build is the cause, not the machine: say so, and how to
		// fix it (the error's text has the fix).
		say(w, 2, fmt.Sprintf("this build cannot reach a CUDA driver: %v", err))
		say(w, 2, "Whatever driver and GPUs this machine has, this program runs on the host backend.")
	case driverNone:
		say(w, 2, fmt.Sprintf("none: %v", err))
		say(w, 2, "This machine has no usable NVIDIA driver; gocuda runs on the host backend.")
	case driverNoGPU:
		say(w, 2, fmt.Sprintf("loaded, but it sees no GPU: %v", err))
	case driverFailed:
		say(w, 2, fmt.Sprintf("failed to initialize: %v", err))
	default:
		fmt.Fprintf(w, "  %s\n", cudaVersion(v))
		if b, err := openCUDA(); err != nil {
			say(w, 2, fmt.Sprintf("cannot open the devices: %v", err))
		} else {
			describeDevices(w, b)
		}
	}

	for _, l := range libraries {
		describeLibrary(w, l, verbose)
	}

	cfg, cfgErr := config.Parse(func(k string) (string, bool) { return lookup(environ, k) })
	describeBackend(w, cfg, cfgErr)

	fmt.Fprintln(w, "\nKnobs (GOCUDA_*)")
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	for _, name := range config.Names() {
		raw, set := lookup(environ, name)
		shown := "(unset)"
		if set {
			shown = fmt.Sprintf("%q", raw)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", name, shown, parsedValue(cfg, name))
	}
	tw.Flush()
	for _, name := range config.UnknownSet(environ) {
		if config.Nearest(name) != "" {
			say(w, 2, config.UnknownMessage(name))
		} else {
			say(w, 2, name+" is set but gocuda has no such knob, so it has no effect; the knobs are the ones above")
		}
	}
	if cfgErr == nil {
		return nil
	}
	n := fmt.Sprintf("%d GOCUDA_ variables do not parse", len(cfg.Invalid))
	if len(cfg.Invalid) == 1 {
		n = "1 GOCUDA_ variable does not parse"
	}
	fmt.Fprintf(w, "\n%s:\n", n)
	for _, line := range strings.Split(cfgErr.Error(), "\n") { // errors.Join: one a line
		say(w, 2, line)
	}
	return fmt.Errorf("%s: %s", n, strings.Join(cfg.Invalid, ", "))
}

// describeBackend says which backend a program would get: the one the
// knobs choose, or, while a knob does not parse, none, with what a
// program is told instead, and what fixing the knobs would give.
func describeBackend(w io.Writer, cfg config.Config, cfgErr error) {
	fmt.Fprintln(w, "\nBackend")
	prefix := ""
	if cfgErr != nil {
		// What gocuda.Backend and gocuda.Pool do (gocuda.go): they return
		// the parse error, every time; nothing exits or falls back.
		say(w, 2, "none: a program's first call that needs the backend or a pool (gocuda.Backend, gocuda.Pool, "+
			"making an array) returns one error listing each knob below, and so does every such call after; nothing exits")
		if slices.Contains(cfg.Invalid, config.EnvBackend) {
			return
		}
		prefix = "with the knobs fixed: "
	}
	b, why, err := auto.Choose(cfg.Backend)
	if err != nil {
		say(w, 2, fmt.Sprintf("%s%s=%s cannot be used: %v", prefix, config.EnvBackend, cfg.Backend, err))
		return
	}
	say(w, 2, fmt.Sprintf("%s%s (%s)", prefix, b.Name(), why))
	if b.Name() != "host" {
		return // the driver's section listed the GPUs
	}
	fmt.Fprintf(w, "  devices: %d\n", b.DeviceCount())
	for i := 0; i < b.DeviceCount(); i++ {
		if d, err := b.Device(i); err == nil {
			in := d.Info()
			fmt.Fprintf(w, "    %d: %s, %s, %d CPUs\n", i, in.Name, humanize.IBytes(in.TotalMemory), in.MultiProcessors)
		}
	}
	if n := b.DeviceCount(); n > 1 {
		say(w, 2, fmt.Sprintf("(the host backend offers %d so that multi-device code runs without GPUs; they share this machine's memory and CPUs)", n))
	}
}

// cudaLibrary is a CUDA library gocuda loads with dlopen, as doctor and
// version report it.
type cudaLibrary struct {
	name, use string // "cuBLAS", "Gemm, MatMul and Gemv on the GPU"
	library   func() (string, error)
	version   func() string // "cuBLAS 13.1.0", or "" where it cannot be read
	detail    func() string // doctor's more: NVRTC's architectures; nil for none
	without   string        // what a program does without it
}

// libraries are the CUDA libraries gocuda loads, in doctor's order.
var libraries = []cudaLibrary{
	{"NVRTC", "compiles rtc.NewKernel's source", nvrtc.Library, func() string {
		major, minor, _ := nvrtc.Version()
		return fmt.Sprintf("NVRTC %d.%d", major, minor)
	}, func() string {
		archs, _ := nvrtc.SupportedArchs()
		return fmt.Sprintf("architectures %v", archs)
	}, "Kernels from source need it on a GPU; kernels with a HostFunc still run on the host backend."},
	{"cuBLAS", "Gemm, MatMul and Gemv on the GPU", blas.Library, cublasVersion, nil,
		"GPU matrix products need it; the host backend multiplies with gonum."},
	{"cuRAND", "Rand, Randn, FillRand and FillRandn on the GPU", curand.Library, func() string {
		v, _ := curand.Version()
		return fmt.Sprintf("cuRAND %d.%d.%d", v/1000, v/100%10, v%100)
	}, nil, "GPU random numbers need it; the host backend makes them in Go."},
	{"cuFFT", "package cufft's transforms on the GPU", cufft.Library, func() string {
		v, _ := cufft.Version()
		return fmt.Sprintf("cuFFT %d.%d.%d", v/1000, v/100%10, v%100)
	}, nil, "GPU Fourier transforms need it; the host backend takes them with gonum."},
	{"NCCL", "collectives across GPUs, package nccl", nccl.Library, func() string {
		major, minor, patch, _ := nccl.Version()
		return fmt.Sprintf("NCCL %d.%d.%d", major, minor, patch)
	}, nil, "Only programs that use package nccl on GPUs need it; on the host backend its collectives run without it."},
}

// found is "libcublas.so.13, cuBLAS 13.1.0": the file loaded and its
// version, as doctor and version show it.
func (l cudaLibrary) found(file string) string {
	if v := l.version(); v != "" {
		return file + ", " + v
	}
	return file
}

// describeLibrary says which file of a library this program loads, or
// why none: where it came from (the knob, the loader's search, the
// toolkit or a wheel) is the usual question when a GPU program fails on
// a new machine. A failed search is told in a few lines, the places
// searched counted; verbose lists each.
func describeLibrary(w io.Writer, l cudaLibrary, verbose bool) {
	fmt.Fprintf(w, "\n%s (%s)\n", l.name, l.use)
	file, err := l.library()
	if err == nil {
		text := l.found(file)
		if l.detail != nil {
			text += ", " + l.detail()
		}
		say(w, 2, text)
		return
	}
	var knobErr *config.Error
	s, ok := parseSearch(err)
	switch {
	case errors.As(err, &knobErr):
		// Package nccl refuses to load while a knob does not parse; the
		// knobs' errors are listed at the end, once.
		say(w, 2, "none: not loaded while a GOCUDA_ variable does not parse (see the end)")
	case !ok:
		say(w, 2, "none: "+err.Error())
	}
	if !ok {
		say(w, 2, l.without)
		return
	}
	say(w, 2, "none: no "+s.name+" library could be loaded")
	for _, g := range s.triedByReason() {
		say(w, 4, "tried "+g)
	}
	switch {
	case verbose:
		say(w, 4, fmt.Sprintf("found no %s in these %d folders:", s.glob, len(s.dirs)))
		for _, d := range s.dirs {
			say(w, 6, d)
		}
	case len(s.dirs) <= 3:
		say(w, 4, fmt.Sprintf("found no %s in %s", s.glob, strings.Join(s.dirs, ", ")))
	default:
		say(w, 4, fmt.Sprintf("found no %s in %d folders: %s, %s and %d more (--verbose lists them)",
			s.glob, len(s.dirs), s.dirs[0], s.dirs[1], len(s.dirs)-2))
	}
	say(w, 2, "Install "+s.install+".")
	say(w, 2, l.without)
}

// search is a library search that found nothing, read back from the
// error internal/libload words (Search.Open).
type search struct {
	name    string      // "cuBLAS"
	tried   [][2]string // each file tried and the loader's reason
	glob    string      // "libcublas.so*", looked for in dirs
	dirs    []string
	install string // what to install, and the other ways
}

var searchFailed = regexp.MustCompile(`^\w+: no (.+?) library could be loaded; tried (.*); found no (\S+) in (.*?)\. Install (.*?): [^:]*$`)

// parseSearch reads a failed search's error; ok is false for any other
// error (a knob's file that would not load, a library too old, no cgo),
// which doctor shows as it is.
func parseSearch(err error) (search, bool) {
	if err == nil {
		return search{}, false
	}
	m := searchFailed.FindStringSubmatch(err.Error())
	if m == nil {
		return search{}, false
	}
	s := search{name: m[1], glob: m[3], dirs: splitList(m[4]), install: m[5]}
	for _, t := range splitList(m[2]) {
		// "libcublas.so.13 (libcublas.so.13: cannot open shared object
		// file: ...)": the loader names the file again.
		file, why, ok := strings.Cut(t, " (")
		if !ok {
			return search{}, false
		}
		why = strings.TrimPrefix(strings.TrimSuffix(why, ")"), file+": ")
		s.tried = append(s.tried, [2]string{file, why})
	}
	return s, true
}

// triedByReason is the files tried, those that failed for the same reason
// together: "libnvrtc.so.13, libnvrtc.so.12, libnvrtc.so: cannot open
// shared object file: No such file or directory".
func (s search) triedByReason() []string {
	var reasons []string
	files := map[string][]string{}
	for _, t := range s.tried {
		if files[t[1]] == nil {
			reasons = append(reasons, t[1])
		}
		files[t[1]] = append(files[t[1]], t[0])
	}
	out := make([]string, len(reasons))
	for i, r := range reasons {
		out[i] = strings.Join(files[r], ", ") + ": " + r
	}
	return out
}

// splitList splits "a (x, y), b{c,d}, e" at the commas outside brackets.
func splitList(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '{', '[':
			depth++
		case ')', '}', ']':
			depth--
		case ',':
			if depth == 0 && strings.HasPrefix(s[i:], ", ") {
				out = append(out, s[start:i])
				start = i + 2
			}
		}
	}
	return append(out, s[start:])
}

// cublasVersion is "cuBLAS 13.1.0" from a handle on device 0 (cuBLAS
// reports its version only through one), or "" without a GPU to ask.
func cublasVersion() string {
	b, err := openCUDA()
	if err != nil || b.DeviceCount() == 0 {
		return ""
	}
	d, err := b.Device(0)
	if err != nil {
		return ""
	}
	v, err := blas.Version(d)
	if err != nil {
		return fmt.Sprintf("cuBLAS of unknown version (%v)", err)
	}
	return fmt.Sprintf("cuBLAS %d.%d.%d", v/10000, v/100%100, v%100)
}

func describeDevices(w io.Writer, b backend.Backend) {
	fmt.Fprintf(w, "\nDevices: %d\n", b.DeviceCount())
	for i := 0; i < b.DeviceCount(); i++ {
		d, _ := b.Device(i)
		in := d.Info()
		free, total, err := d.MemInfo()
		mem := humanize.IBytes(in.TotalMemory)
		if err == nil {
			mem = fmt.Sprintf("%s total, %s free", humanize.IBytes(total), humanize.IBytes(free))
		}
		fmt.Fprintf(w, "  %d: %s\n", i, in.Name)
		tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
		mig, migErr := nvml.MIGMode(in.PCIBusID)
		var uuid cuda.UUID
		cd, uuidErr := cuda.GetDevice(i)
		if uuidErr == nil {
			uuid, uuidErr = cd.UUID()
		}
		fmt.Fprintf(tw, "     UUID\t%s\n", uuidText(uuid, uuidErr, mig))
		fmt.Fprintf(tw, "     MIG mode\t%s\n", migText(mig, migErr))
		fmt.Fprintf(tw, "     memory\t%s\n", mem)
		fmt.Fprintf(tw, "     compute capability\t%d.%d, %d multiprocessors\n", in.Major, in.Minor, in.MultiProcessors)
		fmt.Fprintf(tw, "     PCI bus\t%s\n", in.PCIBusID)
		fmt.Fprintf(tw, "     stream-ordered memory pools\t%s\n", yes(in.MemoryPools))
		vmm := yes(in.VirtualMemory)
		if vm, ok := d.(backend.VirtualMemory); ok && in.VirtualMemory {
			vmm += ", granularity " + humanize.IBytes(vm.Granularity())
		}
		fmt.Fprintf(tw, "     virtual memory management\t%s\n", vmm)
		fmt.Fprintf(tw, "     unified addressing\t%s\n", yes(in.UnifiedAddressing))
		fmt.Fprintf(tw, "     concurrent managed access\t%s\n", yes(in.ConcurrentManagedAccess))
		fmt.Fprintf(tw, "     tensor cores (matrix multiply)\t%s\n", tensorCoresText(blas.TensorCoresOf(in.Major, in.Minor)))
		tw.Flush()
	}
	if n := b.DeviceCount(); n > 1 {
		fmt.Fprintln(w, "  peer access (row can read column):")
		for i := 0; i < n; i++ {
			row := []string{}
			for j := 0; j < n; j++ {
				di, _ := cuda.GetDevice(i)
				dj, _ := cuda.GetDevice(j)
				ok, err := di.CanAccessPeer(dj)
				switch {
				case i == j:
					row = append(row, "-")
				case err != nil:
					row = append(row, "?")
				default:
					row = append(row, yes(ok))
				}
			}
			fmt.Fprintf(w, "    %d: %s\n", i, strings.Join(row, " "))
		}
	}
}

// tensorCoresText says which matrix products a GPU runs on its tensor
// cores, and what the others do instead (package blas decides): float16
// runs anyway, slower; bfloat16 is refused; float32 stays float32 whatever
// GOCUDA_TF32 says.
func tensorCoresText(tc blas.TensorCores) string {
	switch {
	case tc.TF32 && tc.BFloat16 && tc.Float16:
		return "float16, bfloat16, TF32 (when " + config.EnvTF32 + "=on)"
	case tc.Float16:
		return "float16; no bfloat16 (refused) or TF32 (full float32)"
	}
	return "none: float16 runs slower, no bfloat16 (refused) or TF32"
}

// uuidText formats a device's UUID as nvidia-smi -L does: GPU-… for a
// GPU, MIG-… for a MIG instance, which is what CUDA sees of a GPU whose
// MIG mode is on.
func uuidText(u cuda.UUID, err error, mig nvml.MIG) string {
	if err != nil {
		return "unknown: " + err.Error()
	}
	if mig.Current {
		return "MIG-" + strings.TrimPrefix(u.String(), "GPU-") + " (a MIG instance)"
	}
	return u.String()
}

// migText says a GPU's MIG mode, and the mode a reset will bring where
// someone changed it. The driver API has no attribute for it: NVML
// (nvmlDeviceGetMigMode) is where it is read.
func migText(m nvml.MIG, err error) string {
	if err != nil {
		return "unknown: " + err.Error()
	}
	if !m.Supported {
		return "not supported by this GPU"
	}
	on := map[bool]string{true: "enabled", false: "disabled"}
	if m.Pending != m.Current {
		return on[m.Current] + ", " + on[m.Pending] + " after the next GPU reset"
	}
	return on[m.Current]
}

func parsedValue(c config.Config, name string) string {
	if slices.Contains(c.Invalid, name) {
		// Its field holds the default, which a program does not get
		// either: it gets the error.
		return "not valid: see below"
	}
	switch name {
	case config.EnvBackend:
		return "backend " + c.Backend
	case config.EnvPool:
		return "pool " + c.Pool
	case config.EnvSoftLimit:
		return "soft limit " + c.SoftLimit.String()
	case config.EnvHardLimit:
		return "hard limit " + c.HardLimit.String()
	case config.EnvGCEarly:
		return "early collection " + map[bool]string{true: "on", false: "off"}[c.GCEarly]
	case config.EnvGCPercent:
		if c.GCPercent == config.GCPercentOff {
			return "pacer off"
		}
		if !c.GCEarly {
			return "pacer off (GOCUDA_GC_EARLY is off)"
		}
		return fmt.Sprintf("pacer at %d%% above the live set", c.GCPercent)
	case config.EnvStreamRace:
		return "stream check " + map[bool]string{true: "on (host backend)", false: "off"}[c.StreamCheck]
	case config.EnvIdleTrim:
		if c.IdleTrim == 0 {
			return "idle trim off"
		}
		return "idle trim after " + c.IdleTrim.String()
	case config.EnvTrace:
		if c.Trace == "" {
			return "trace off"
		}
		return "trace to " + c.Trace
	case config.EnvNVRTCLibrary:
		return libraryFrom("NVRTC", c.NVRTCLibrary)
	case config.EnvKernelCache:
		if c.KernelCache == "" {
			return "kernel cache in memory only"
		}
		return "kernel cache in " + c.KernelCache
	case config.EnvNCCL:
		if c.NCCLLibrary == "" {
			return "nccl library searched for"
		}
		return "nccl library " + c.NCCLLibrary
	case config.EnvCUBLASLibrary:
		return libraryFrom("cuBLAS", c.CUBLASLibrary)
	case config.EnvCURANDLibrary:
		return libraryFrom("cuRAND", c.CURANDLibrary)
	case config.EnvCUFFTLibrary:
		return libraryFrom("cuFFT", c.CUFFTLibrary)
	case config.EnvRendezvousTimeout:
		return "ranks wait " + c.RendezvousTimeout.String() + " for each other"
	case config.EnvScalarIndexing:
		return "scalar indexing: " + c.ScalarIndexing
	case config.EnvTF32:
		if c.TF32 {
			return "TF32 on (float32 products, compute capability 8.0+)"
		}
		return "TF32 off: float32 products in full float32"
	case config.EnvDebug:
		var on []string
		for _, f := range config.DebugFlags {
			if c.Debug[f] {
				on = append(on, f)
			}
		}
		if len(on) == 0 {
			return "debug off"
		}
		return "debug " + strings.Join(on, ",")
	}
	return ""
}

// libraryFrom says where a library knob sends the search: the file, or
// the usual places when unset.
func libraryFrom(name, file string) string {
	if file == "" {
		return name + " searched for"
	}
	return name + " from " + file
}

func lookup(environ []string, key string) (string, bool) {
	for i := len(environ) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(environ[i], "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}
