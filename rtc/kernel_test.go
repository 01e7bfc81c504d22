package rtc_test

import (
	"errors"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/host"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/internal/testsupport/testhook"
	"github.com/gocuda/gocuda/nvrtc"
	"github.com/gocuda/gocuda/rtc"
)

// saxpySrc is y = a*x + y as a grid-stride kernel, with its Go form.
const saxpySrc = `
extern "C" __global__ void saxpy(float a, const float *x, float *y, long long n) {
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
	     i += (long long)gridDim.x * blockDim.x)
		y[i] = a * x[i] + y[i];
}
`

func hostSaxpy(a float32, x, y []float32, n int64) {
	for i := range n {
		y[i] = a*x[i] + y[i]
	}
}

func newSaxpy(t testing.TB) *rtc.Kernel {
	t.Helper()
	k, err := rtc.NewKernel("saxpy", saxpySrc, rtc.HostFunc(hostSaxpy))
	require.NoError(t, err)
	return k
}

// onGPU reports whether the tests run on the CUDA backend.
func onGPU(t testing.TB) bool {
	t.Helper()
	b, err := gocuda.Backend()
	require.NoError(t, err)
	return b.Name() == "cuda"
}

// needKernels skips on a GPU without NVRTC, saying why: user kernels from
// source cannot be compiled there. On the host backend HostFunc runs.
func needKernels(t testing.TB) {
	t.Helper()
	if !onGPU(t) {
		return
	}
	if _, err := nvrtc.Library(); err != nil {
		require.ErrorIs(t, err, nvrtc.ErrNoNVRTC)
		t.Skipf("the GPU has no NVRTC to compile user kernels: %v", err)
	}
}

// needHost skips unless the tests run on the host backend.
func needHost(t testing.TB) *host.Backend {
	t.Helper()
	b, err := gocuda.Backend()
	require.NoError(t, err)
	hb, ok := b.(*host.Backend)
	if !ok {
		t.Skipf("this is about the host backend; this is %s", b.Name())
	}
	return hb
}

func TestKernelSaxpyOnEitherBackend(t *testing.T) {
	needKernels(t)
	rtc.SetKernelCacheDir(t, t.TempDir())
	s := newStream(t, freshPool(t))
	f := cuarray.On[float32](s)
	for _, n := range []int{0, 1, 1000, 1 << 20} {
		x := cuarray.Must(f.FromSlice(iota[float32](n)))
		y := cuarray.Must(f.Full(1, n))
		require.NoError(t, newSaxpy(t).Launch(s, rtc.Linear(n), float32(2), cuarray.In(x), cuarray.InOut(y), int64(n)), "n=%d", n)
		want := make([]float32, n)
		for i, v := range iota[float32](n) {
			want[i] = 2*v + 1
		}
		assert.Equal(t, want, read(t, y), "n=%d", n)
	}

	// A launch shaped by hand, and the default stream (nil).
	x := cuarray.Must(f.FromSlice(iota[float32](300)))
	y := cuarray.Must(f.Zeros(300))
	cfg := rtc.LaunchConfig{Grid: rtc.Dim3{X: 3}, Block: rtc.Dim3{X: 128}}
	require.NoError(t, newSaxpy(t).Launch(nil, cfg, float32(1), cuarray.In(x), cuarray.Out(y), int64(300)))
	assert.Equal(t, iota[float32](300), read(t, y))
}

// TestKernelScalarTypes: every accepted scalar type reaches the kernel
// with its value, between arrays, on both backends.
func TestKernelScalarTypes(t *testing.T) {
	needKernels(t)
	const src = `
extern "C" __global__ void scalars(int a, unsigned b, double *out, long long c, unsigned long long d,
		float e, double f, unsigned long long p) {
	if (blockIdx.x == 0 && threadIdx.x == 0) {
		out[0] = a; out[1] = b; out[2] = c; out[3] = d; out[4] = e; out[5] = f; out[6] = p;
	}
}
`
	k, err := rtc.NewKernel("scalars", src, rtc.HostFunc(func(a int32, b uint32, out []float64, c int64, d uint64, e float32, f float64, p uintptr) {
		copy(out, []float64{float64(a), float64(b), float64(c), float64(d), float64(e), f, float64(p)})
	}))
	require.NoError(t, err)
	s := newStream(t, freshPool(t))
	out := cuarray.Must(cuarray.On[float64](s).Zeros(7))
	require.NoError(t, k.Launch(s, rtc.Linear(1), int32(-3), uint32(4000000000), cuarray.Out(out), int64(-1)<<40, uint64(1)<<50, float32(0.5), 2.25, uintptr(12345)))
	assert.Equal(t, []float64{-3, 4000000000, -(1 << 40), 1 << 50, 0.5, 2.25, 12345}, read(t, out))
}

// TestKernelOrdersArraysAcrossStreams: a kernel on one stream waits for
// the arrays' earlier work on another, behind slow (spinning) work, and
// later operations elsewhere wait for the kernel, with no synchronization
// written by the test.
func TestKernelOrdersArraysAcrossStreams(t *testing.T) {
	needKernels(t)
	p := freshPool(t)
	sa, sb := newStream(t, p), newStream(t, p)
	fa, fb := cuarray.On[float32](sa), cuarray.On[float32](sb)
	dev := p.Device()
	const n = 1 << 16
	k := newSaxpy(t)

	// Before: x is written on A behind slow work; the kernel on B reads it.
	x := cuarray.Must(fa.New(n))
	require.NoError(t, testhook.Spin(dev, sa.Backend(), 200*time.Millisecond))
	require.NoError(t, fa.Fill(x, 3))
	y := cuarray.Must(fb.Zeros(n))
	require.NoError(t, k.Launch(sb, rtc.Linear(n), float32(1), cuarray.In(x), cuarray.InOut(y), int64(n)))
	assert.Equal(t, filled[float32](n, 3), read(t, y), "the kernel ran before x was written")

	// After: the kernel on B runs behind slow work; an operation on A
	// reading y, and the host's read, wait for it.
	require.NoError(t, testhook.Spin(dev, sb.Backend(), 200*time.Millisecond))
	require.NoError(t, k.Launch(sb, rtc.Linear(n), float32(2), cuarray.In(x), cuarray.InOut(y), int64(n)))
	z := cuarray.Must(fa.New(n))
	_, err := fa.AddScalar(z, y, 1)
	require.NoError(t, err)
	assert.Equal(t, filled[float32](n, 10), read(t, z), "A read y before the kernel on B wrote it")
}

// TestKernelKeepsUnreachableArraysAlive: an array dropped right after the
// launch is not freed under the kernel.
func TestKernelKeepsUnreachableArraysAlive(t *testing.T) {
	needKernels(t)
	p := freshPool(t)
	s := newStream(t, p)
	f := cuarray.On[float32](s)
	const n = 1 << 16
	y := cuarray.Must(f.Zeros(n))
	require.NoError(t, testhook.Spin(p.Device(), s.Backend(), 100*time.Millisecond))
	func() {
		x := cuarray.Must(f.Full(7, n)) // unreachable after this call
		require.NoError(t, newSaxpy(t).Launch(s, rtc.Linear(n), float32(1), cuarray.In(x), cuarray.InOut(y), int64(n)))
	}()
	for range 3 {
		runtime.GC()
	}
	junk := cuarray.Must(f.Full(-1, n)) // would take x's memory if it were freed early
	assert.Equal(t, filled[float32](n, 7), read(t, y))
	junk.UnsafeFree()
}

func TestNewKernelErrors(t *testing.T) {
	ptx := []byte(".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry other(\n)\n{\nret;\n}\n")
	tests := []struct {
		name string
		make func() (*rtc.Kernel, error)
		text string
	}{
		{"name not an identifier", func() (*rtc.Kernel, error) { return rtc.NewKernel("sax py", saxpySrc) }, "not a C identifier"},
		{"empty source", func() (*rtc.Kernel, error) { return rtc.NewKernel("saxpy", " \n") }, "empty source"},
		{"host form not a func", func() (*rtc.Kernel, error) {
			return rtc.NewKernel("saxpy", saxpySrc, rtc.HostFunc(42))
		}, "HostFunc takes a func, not int"},
		{"host form returns", func() (*rtc.Kernel, error) {
			return rtc.NewKernel("saxpy", saxpySrc, rtc.HostFunc(func([]float32) error { return nil }))
		}, "must return nothing"},
		{"host form variadic", func() (*rtc.Kernel, error) {
			return rtc.NewKernel("saxpy", saxpySrc, rtc.HostFunc(func(...float32) {}))
		}, "variadic"},
		{"empty option", func() (*rtc.Kernel, error) {
			return rtc.NewKernel("saxpy", saxpySrc, rtc.CompileOptions("-use_fast_math", ""))
		}, "empty option"},
		{"options for an image", func() (*rtc.Kernel, error) {
			return rtc.NewKernelImage("other", ptx, rtc.CompileOptions("-use_fast_math"))
		}, "not compiled"},
		{"image of nothing known", func() (*rtc.Kernel, error) {
			return rtc.NewKernelImage("saxpy", []byte(saxpySrc))
		}, "neither PTX text, a cubin (ELF) nor a fatbin"},
		{"PTX without the kernel", func() (*rtc.Kernel, error) { return rtc.NewKernelImage("saxpy", ptx) }, `defines no kernel saxpy; it defines ["other"]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k, err := tc.make()
			require.ErrorIs(t, err, backend.ErrInvalidValue)
			assert.ErrorContains(t, err, tc.text)
			assert.Nil(t, k)
		})
	}
	k, err := rtc.NewKernelImage("other", ptx, rtc.HostFunc(func() {}))
	require.NoError(t, err)
	assert.Equal(t, "kernel other (PTX, host form)", k.String())
	assert.Equal(t, "other", k.Name())
	assert.Equal(t, "kernel saxpy (source)", cuarray.Must(rtc.NewKernel("saxpy", saxpySrc)).String())
}

// TestKernelLaunchArgumentErrors: each misuse is an error naming the
// argument and what is accepted, returned before anything is queued.
func TestKernelLaunchArgumentErrors(t *testing.T) {
	s := newStream(t, freshPool(t))
	f := cuarray.On[float32](s)
	x := cuarray.Must(f.Zeros(4))
	freed := cuarray.Must(f.Zeros(4))
	freed.UnsafeFree()
	var nilArr *cuarray.Array[float32]
	k := newSaxpy(t)
	lin := rtc.Linear(4)
	tests := []struct {
		name string
		s    *cuarray.Stream
		cfg  rtc.LaunchConfig
		args []any
		is   error
		text string
	}{
		{"bare array", s, lin, []any{float32(1), x, cuarray.InOut(x), int64(4)}, backend.ErrInvalidValue,
			"argument 1 is a bare *cuarray.Array[float32]; wrap it in cuarray.In, Out or InOut"},
		{"Go int", s, lin, []any{float32(1), cuarray.In(x), cuarray.InOut(x), 4}, backend.ErrInvalidValue,
			"argument 3 is a Go int, whose size C does not share; pass int32 for a C int or int64 for a long long"},
		{"bool", s, lin, []any{true}, backend.ErrInvalidValue, "argument 0 has type bool; accepted are arrays wrapped in cuarray.In, Out or InOut, and scalars of type int32"},
		{"slice", s, lin, []any{[]float32{1}}, backend.ErrInvalidValue, "argument 0 has type []float32"},
		{"zero Arg", s, lin, []any{cuarray.Arg{}}, backend.ErrInvalidValue, "argument 0 is Arg{}; make array arguments with In, Out or InOut"},
		{"nil array", s, lin, []any{cuarray.In(nilArr)}, backend.ErrInvalidValue, "argument 0: cuarray: a nil array"},
		{"freed array", s, lin, []any{float32(1), cuarray.In(freed)}, cuarray.ErrFreed, "argument 1"},
		{"no stream, no array", nil, lin, []any{float32(1)}, backend.ErrInvalidValue, "no stream and no array"},
		{"too many", s, lin, make([]any, 65), backend.ErrInvalidValue, "65 arguments; at most 64"},
		{"empty block", s, rtc.LaunchConfig{Grid: rtc.Dim3{X: 1}}, []any{cuarray.In(x)}, backend.ErrInvalidValue, "Block.X must be at least 1"},
		{"block too large", s, rtc.LaunchConfig{Grid: rtc.Dim3{X: 1}, Block: rtc.Dim3{X: 64, Y: 32}}, []any{cuarray.In(x)}, backend.ErrInvalidValue, "2048 threads; CUDA allows at most 1024"},
		{"negative n", s, rtc.Linear(-1), []any{cuarray.In(x)}, backend.ErrInvalidValue, "Linear(-1)"},
	}
	if !onGPU(t) {
		// The host form's parameters are checked at the launch.
		tests = append(tests, []struct {
			name string
			s    *cuarray.Stream
			cfg  rtc.LaunchConfig
			args []any
			is   error
			text string
		}{
			{"host form count", s, lin, []any{float32(1), cuarray.In(x), cuarray.InOut(x)}, backend.ErrInvalidValue,
				"launched with 3 arguments, but its HostFunc func(float32, []float32, []float32, int64) takes 4"},
			{"host form scalar type", s, lin, []any{float64(1), cuarray.In(x), cuarray.InOut(x), int64(4)}, backend.ErrInvalidValue,
				"argument 0 is passed to the HostFunc as float64, but its parameter 0 is float32"},
			{"host form array type", s, lin, []any{float32(1), cuarray.In(cuarray.Must(cuarray.On[float64](s).Zeros(4))), cuarray.InOut(x), int64(4)}, backend.ErrInvalidValue,
				"argument 1 is passed to the HostFunc as []float64, but its parameter 1 is []float32"},
		}...)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := k.Launch(tc.s, tc.cfg, tc.args...)
			require.ErrorIs(t, err, tc.is)
			assert.ErrorContains(t, err, tc.text)
			assert.ErrorContains(t, err, "kernel saxpy")
		})
	}
}

// TestKernelWithoutHostFormFailsOnTheHost: the host backend cannot run
// GPU code; the error says what to add.
func TestKernelWithoutHostFormFailsOnTheHost(t *testing.T) {
	needHost(t)
	k, err := rtc.NewKernel("saxpy", saxpySrc)
	require.NoError(t, err)
	assert.False(t, k.HasHost())
	s := newStream(t, freshPool(t))
	x := cuarray.Must(cuarray.On[float32](s).Zeros(4))
	err = k.Launch(s, rtc.Linear(4), float32(1), cuarray.In(x), cuarray.InOut(x), int64(4))
	require.ErrorIs(t, err, backend.ErrNotSupported)
	assert.ErrorContains(t, err, "kernel saxpy has no host form")
	assert.ErrorContains(t, err, "HostFunc")
	require.ErrorIs(t, k.Compile(0), backend.ErrNotSupported)
	require.NoError(t, newSaxpy(t).Compile(0), "with a host form the host backend can run it")
}

// TestStreamCheckJudgesKernelDeclarations: on the host backend the
// stream checker judges a kernel's arguments by their declarations. With
// automatic ordering off, a kernel on B that declares it only reads x
// while A reads x is clean; the same kernel declaring InOut(x) (it writes
// x) is reported: a kernel that writes what it declared In would hide
// exactly that race, which is why the declaration must be right.
func TestStreamCheckJudgesKernelDeclarations(t *testing.T) {
	hb := needHost(t)
	if hb.StreamCheck() == host.StreamCheckOff {
		hb.SetStreamCheckLog(io.Discard) // the race below is deliberate
		require.NoError(t, hb.SetStreamCheck(host.StreamCheckReport))
		t.Cleanup(func() {
			_ = hb.SetStreamCheck(host.StreamCheckOff)
			hb.SetStreamCheckLog(nil)
		})
	}
	p := freshPool(t)
	sa, sb := newStream(t, p), newStream(t, p)
	fa := cuarray.On[float32](sa)
	const n = 1024
	x := cuarray.Must(fa.Full(1, n))
	y := cuarray.Must(cuarray.On[float32](sb).Zeros(n))
	require.NoError(t, sa.Synchronize())
	require.NoError(t, x.SetAutoOrdering(false))
	touch, err := rtc.NewKernel("touch", `extern "C" __global__ void touch(float *x, float *y) {}`,
		rtc.HostFunc(func(x, y []float32) { y[0] = x[0] }))
	require.NoError(t, err)

	before := len(hb.StreamRaces())
	z := cuarray.Must(fa.New(n))
	require.NoError(t, testhook.Spin(p.Device(), sa.Backend(), 50*time.Millisecond))
	_, err = fa.AddScalar(z, x, 1) // A reads x
	require.NoError(t, err)
	require.NoError(t, touch.Launch(sb, rtc.Linear(n), cuarray.In(x), cuarray.Out(y)))
	require.NoError(t, sb.Synchronize())
	require.NoError(t, sa.Synchronize())
	assert.Len(t, hb.StreamRaces(), before, "two reads on two streams reported as a race")

	require.NoError(t, testhook.Spin(p.Device(), sa.Backend(), 50*time.Millisecond))
	_, err = fa.AddScalar(z, x, 1) // A reads x
	require.NoError(t, err)
	require.NoError(t, touch.Launch(sb, rtc.Linear(n), cuarray.InOut(x), cuarray.Out(y)))
	require.NoError(t, sb.Synchronize())
	require.NoError(t, sa.Synchronize())
	races := hb.StreamRaces()[before:]
	found := false
	for _, r := range races {
		found = found || r.Later.Op == "kernel touch" && r.Later.Write && !r.Earlier.Write
	}
	assert.True(t, found, "no race names the kernel writing what A reads: %v", races)
}

// TestKernelCompileErrorCarriesNVRTCLog: on a GPU, source NVRTC rejects
// fails at Compile and at Launch with the compiler's messages.
func TestKernelCompileErrorCarriesNVRTCLog(t *testing.T) {
	if !onGPU(t) {
		t.Skip("compiles for a GPU; the host backend runs HostFunc and compiles nothing")
	}
	needKernels(t)
	rtc.SetKernelCacheDir(t, t.TempDir())
	k, err := rtc.NewKernel("broken", "extern \"C\" __global__ void broken(float *x) {\n\tx[0] = undeclared_thing;\n}\n")
	require.NoError(t, err, "NewKernel compiles nothing")
	err = k.Compile(0)
	var ce *nvrtc.CompileError
	require.ErrorAs(t, err, &ce)
	assert.ErrorIs(t, err, nvrtc.StatusCompilation)
	assert.Contains(t, ce.Log, "undeclared_thing")
	assert.Contains(t, err.Error(), "broken.cu(2)", "the log's line reference is in the message")
	s := newStream(t, freshPool(t))
	x := cuarray.Must(cuarray.On[float32](s).Zeros(4))
	err = k.Launch(s, rtc.Linear(4), cuarray.InOut(x))
	require.ErrorAs(t, err, &ce)

	// A kernel name the source does not define (or mangles).
	k, err = rtc.NewKernel("missing", saxpySrc)
	require.NoError(t, err)
	assert.ErrorContains(t, k.Compile(0), `has no kernel missing (is it declared extern "C"?)`)
}

// TestKernelCompiledOnceAndShared: two Kernels of one source compile it
// once; a new process (an emptied memory cache) reads it from disk; a
// kernel from PTX the program compiled itself runs too.
func TestKernelCompiledOnceAndShared(t *testing.T) {
	if !onGPU(t) {
		t.Skip("compiles for a GPU")
	}
	needKernels(t)
	c := rtc.SetKernelCacheDir(t, t.TempDir())
	k1, k2 := newSaxpy(t), newSaxpy(t)
	require.NoError(t, k1.Compile(0))
	assert.Equal(t, "built", rtc.KernelFrom(k1))
	require.NoError(t, k2.Compile(0))
	assert.Equal(t, "memory", rtc.KernelFrom(k2))
	require.Len(t, c.Files(), 1)
	c.Forget()
	k3 := newSaxpy(t)
	require.NoError(t, k3.Compile(0))
	assert.Equal(t, "disk", rtc.KernelFrom(k3))

	res, err := nvrtc.Compile(saxpySrc, "saxpy.cu")
	require.NoError(t, err)
	k, err := rtc.NewKernelImage("saxpy", res.Image)
	require.NoError(t, err)
	s := newStream(t, freshPool(t))
	f := cuarray.On[float32](s)
	x := cuarray.Must(f.Full(2, 100))
	y := cuarray.Must(f.Full(1, 100))
	require.NoError(t, k.Launch(s, rtc.Linear(100), float32(3), cuarray.In(x), cuarray.InOut(y), int64(100)))
	assert.Equal(t, filled[float32](100, 7), read(t, y))
	assert.Equal(t, "image", rtc.KernelFrom(k))
}

// TestKernelsNeedNoNVRTCOnTheHost: where there is no NVRTC (CI), kernels
// with a host form run on the host backend all the same.
func TestKernelsNeedNoNVRTCOnTheHost(t *testing.T) {
	needHost(t)
	if _, err := nvrtc.Library(); err == nil {
		t.Skip("NVRTC is present")
	}
	s := newStream(t, freshPool(t))
	f := cuarray.On[float32](s)
	x := cuarray.Must(f.Full(1, 8))
	require.NoError(t, newSaxpy(t).Launch(s, rtc.Linear(8), float32(1), cuarray.In(x), cuarray.InOut(x), int64(8)))
	assert.Equal(t, filled[float32](8, 2), read(t, x))
	assert.False(t, errors.Is(newSaxpy(t).Compile(0), nvrtc.ErrNoNVRTC))
}
