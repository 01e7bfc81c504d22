package rtc_test

import (
	"fmt"
	"testing"

	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/nvrtc"
	"github.com/gocuda/gocuda/rtc"
)

// addOneSrc adds 1 to each element in place: the user-kernel twin of
// AddScalar(x, x, 1).
const addOneSrc = `
extern "C" __global__ void addone(float *x, long long n) {
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
	     i += (long long)gridDim.x * blockDim.x)
		x[i] += 1.0f;
}
`

func newAddOne(b *testing.B) *rtc.Kernel {
	k, err := rtc.NewKernel("addone", addOneSrc, rtc.HostFunc(func(x []float32, n int64) {
		for i := range x {
			x[i]++
		}
	}))
	if err != nil {
		b.Fatal(err)
	}
	return k
}

// needCompiler skips benchmarks of NVRTC unless there is a GPU with it.
func needCompiler(b *testing.B) {
	if !onGPU(b) {
		b.Skip("compiles for a GPU")
	}
	if _, err := nvrtc.Library(); err != nil {
		b.Skipf("no NVRTC: %v", err)
	}
}

// BenchmarkKernelFirstCompile is a kernel's first use in a process with
// nothing cached: NVRTC compiles the source for the device and the driver
// loads the result. Each iteration's source differs by a comment, so
// nothing is found in the cache.
func BenchmarkKernelFirstCompile(b *testing.B) {
	needCompiler(b)
	rtc.SetKernelCacheDir(b, "")
	i := 0
	for b.Loop() {
		i++
		k, err := rtc.NewKernel("addone", fmt.Sprintf("// %d\n%s", i, addOneSrc))
		if err != nil {
			b.Fatal(err)
		}
		if err := k.Compile(0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkKernelCachedLookup is finding a compiled kernel again:
// "function" is a Kernel already loaded on the device (every launch after
// the first pays this); "memory" a new Kernel of a source compiled
// earlier in the process; "disk" a new Kernel whose compiled code is read
// from the cache folder (a new process, but for the module, which stays
// loaded here).
func BenchmarkKernelCachedLookup(b *testing.B) {
	needCompiler(b)
	c := rtc.SetKernelCacheDir(b, b.TempDir())
	compile := func(b *testing.B, k *rtc.Kernel) {
		if err := k.Compile(0); err != nil {
			b.Fatal(err)
		}
	}
	compile(b, newAddOne(b))
	b.Run("function", func(b *testing.B) {
		k := newAddOne(b)
		compile(b, k)
		b.ReportAllocs()
		for b.Loop() {
			compile(b, k)
		}
	})
	b.Run("memory", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			compile(b, newAddOne(b))
		}
	})
	b.Run("disk", func(b *testing.B) {
		for b.Loop() {
			c.Forget()
			compile(b, newAddOne(b))
		}
	})
}

// BenchmarkKernelLaunch is a user kernel's launch on a small array
// (1024 float32, adding 1 in place), against the built-in AddScalar doing
// the same: what Launch's argument handling costs over a built-in
// operation. The stream is synchronized once at the end.
func BenchmarkKernelLaunch(b *testing.B) {
	const n = 1024
	s, err := cuarray.NewStream(0)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	f := cuarray.On[float32](s)
	x := cuarray.Must(f.Zeros(n))
	b.Run("user", func(b *testing.B) {
		if onGPU(b) {
			needCompiler(b)
		}
		k := newAddOne(b)
		cfg := rtc.Linear(n)
		if err := k.Launch(s, cfg, cuarray.InOut(x), int64(n)); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if err := k.Launch(s, cfg, cuarray.InOut(x), int64(n)); err != nil {
				b.Fatal(err)
			}
		}
		if err := s.Synchronize(); err != nil {
			b.Fatal(err)
		}
	})
	b.Run("builtin", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := f.AddScalar(x, x, 1); err != nil {
				b.Fatal(err)
			}
		}
		if err := s.Synchronize(); err != nil {
			b.Fatal(err)
		}
	})
}
