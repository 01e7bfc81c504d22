package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"text/tabwriter"

	"github.com/dustin/go-humanize"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/auto"
	"github.com/gocuda/gocuda/backend/cudabackend"
	"github.com/gocuda/gocuda/blas"
	"github.com/gocuda/gocuda/config"
	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/curand"
	"github.com/gocuda/gocuda/internal/nvml"
	"github.com/gocuda/gocuda/nccl"
	"github.com/gocuda/gocuda/nvrtc"
)

func runDoctor(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("doctor", "", "Shows the CUDA driver and how gocuda calls it, each GPU with its UUID, MIG mode,\nmemory, compute capability and the features gocuda uses, the backend chosen,\nand every GOCUDA_ variable as parsed.\nOn a machine without a GPU it says so and exits 0.", stdout)
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErrorf("doctor takes no arguments, got %q", fs.Args())
	}
	return doctor(stdout, os.Environ())
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func doctor(w io.Writer, environ []string) error {
	fmt.Fprintf(w, "gocuda doctor\n\nGo %s %s/%s, cgo %s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH, yes(cgoEnabled))

	fmt.Fprintln(w, "\nCUDA driver")
	fmt.Fprintf(w, "  call path: %s\n", cuda.CallPath())
	if err := cuda.Init(); err != nil {
		switch {
		case cuda.CallPath() == "none":
			// The build is the cause, not the machine: say so, and how to
			// fix it (the error's text has the fix).
			fmt.Fprintf(w, "  this build cannot reach a CUDA driver: %v\n", err)
			fmt.Fprintln(w, "  Whatever driver and GPUs this machine has, this program runs on the host backend.")
		case errors.Is(err, cuda.ErrNoDriver):
			fmt.Fprintf(w, "  none: %v\n  This machine has no usable NVIDIA driver; gocuda runs on the host backend.\n", err)
		case errors.Is(err, cuda.ErrNoDevice):
			fmt.Fprintf(w, "  loaded, but it sees no GPU: %v\n", err)
		default:
			fmt.Fprintf(w, "  failed to initialize: %v\n", err)
		}
	} else {
		v, _ := cuda.DriverVersion()
		fmt.Fprintf(w, "  CUDA %d.%d (driver API version %d)\n", v/1000, (v%1000)/10, v)
		if b, err := cudabackend.Open(); err != nil {
			fmt.Fprintf(w, "  cannot open the devices: %v\n", err)
		} else {
			describeDevices(w, b)
		}
	}

	describeLibraries(w)

	fmt.Fprintln(w, "\nBackend")
	cfg, cfgErr := config.Parse(func(k string) (string, bool) { return lookup(environ, k) })
	if cfgErr == nil {
		b, why, err := auto.Choose(cfg.Backend)
		if err != nil {
			fmt.Fprintf(w, "  GOCUDA_BACKEND=%s cannot be used: %v\n", cfg.Backend, err)
		} else {
			fmt.Fprintf(w, "  %s (%s)\n", b.Name(), why)
			if b.Name() == "host" {
				if d, err := b.Device(0); err == nil {
					fmt.Fprintf(w, "  host device: %s, %s, %d CPUs\n", d.Info().Name, humanize.IBytes(d.Info().TotalMemory), d.Info().MultiProcessors)
				}
			}
		}
	}

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
		fmt.Fprintf(w, "  %s is set but gocuda has no such knob: known knobs are %s\n", name, strings.Join(config.Names(), ", "))
	}
	if cfgErr != nil {
		fmt.Fprintf(w, "\n%v\n", cfgErr)
		return fmt.Errorf("a GOCUDA_ variable does not parse: programs using gocuda will stop at start-up")
	}
	return nil
}

// libraries are the CUDA libraries gocuda loads with dlopen, as doctor
// reports them: what each is for, the file loaded and its version, or
// what happens without it.
var libraries = []struct {
	title   string
	library func() (string, error)
	version func() string // ", NVRTC 13.0, …" after the file's name
	without string
}{
	{"NVRTC (compiles cuarray.NewKernel's source)", nvrtc.Library, func() string {
		major, minor, _ := nvrtc.Version()
		archs, _ := nvrtc.SupportedArchs()
		return fmt.Sprintf(", NVRTC %d.%d, architectures %v", major, minor, archs)
	}, "Kernels from source need it on a GPU; kernels with a HostFunc still run on the host backend."},
	{"cuBLAS (Gemm, MatMul and Gemv on the GPU)", blas.Library, cublasVersion,
		"GPU matrix products need it; the host backend multiplies with gonum."},
	{"cuRAND (Rand, Randn, FillRand and FillRandn on the GPU)", curand.Library, func() string {
		v, _ := curand.Version()
		return fmt.Sprintf(", cuRAND %d.%d.%d", v/1000, v/100%10, v%100)
	}, "GPU random numbers need it; the host backend makes them in Go."},
	{"NCCL (collectives across GPUs, package nccl)", nccl.Library, func() string {
		major, minor, patch, _ := nccl.Version()
		return fmt.Sprintf(", NCCL %d.%d.%d", major, minor, patch)
	}, "Only programs that use package nccl on GPUs need it; on the host backend its collectives run without it."},
}

// describeLibraries says which file of each library this program loads,
// or why none: where each came from (the knob, the loader's search, the
// toolkit or a wheel) is the usual question when a GPU program fails on a
// new machine.
func describeLibraries(w io.Writer) {
	for _, l := range libraries {
		fmt.Fprintf(w, "\n%s\n", l.title)
		if name, err := l.library(); err != nil {
			fmt.Fprintf(w, "  none: %v\n  %s\n", err, l.without)
		} else {
			fmt.Fprintf(w, "  %s%s\n", name, l.version())
		}
	}
}

// cublasVersion is ", cuBLAS 13.1.0" from a handle on device 0 (cuBLAS
// reports its version only through one), or "" without a GPU to ask.
func cublasVersion() string {
	b, err := cudabackend.Open()
	if err != nil || b.DeviceCount() == 0 {
		return ""
	}
	d, err := b.Device(0)
	if err != nil {
		return ""
	}
	v, err := blas.Version(d.(*cudabackend.Device))
	if err != nil {
		return fmt.Sprintf(" (its version could not be read: %v)", err)
	}
	return fmt.Sprintf(", cuBLAS %d.%d.%d", v/10000, v/100%100, v%100)
}

func describeDevices(w io.Writer, b *cudabackend.Backend) {
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
	if c.Invalid == name {
		return "(invalid: see below)"
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
	case config.EnvRendezvousTimeout:
		return "ranks wait " + c.RendezvousTimeout.String() + " for each other"
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
