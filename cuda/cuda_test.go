package cuda_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/cuda"
)

// gpu returns device 0's primary context, or skips the test on a machine
// where the driver cannot be used — after checking that the failure is the
// documented ErrNoDriver or no-device error and not something else.
func gpu(t testing.TB) *cuda.Context {
	t.Helper()
	if err := cuda.Init(); err != nil {
		if os.Getenv("GOCUDA_BACKEND") == "cuda" {
			t.Fatalf("GOCUDA_BACKEND=cuda but the driver cannot be used: %v", err)
		}
		require.True(t, errors.Is(err, cuda.ErrNoDriver) || errors.Is(err, cuda.ErrNoDevice), "unexpected init error: %v", err)
		t.Skipf("no CUDA driver: %v", err)
	}
	d, err := cuda.GetDevice(0)
	require.NoError(t, err)
	c, err := d.PrimaryContext()
	require.NoError(t, err)
	return c
}

func TestNoDriverIsAClearError(t *testing.T) {
	err := cuda.Init()
	if err == nil {
		t.Skip("a driver is present")
	}
	assert.ErrorIs(t, err, cuda.ErrNoDriver)
	assert.Contains(t, err.Error(), noDriverText, "the error says why there is no driver")
	_, err = cuda.DeviceCount()
	assert.ErrorIs(t, err, cuda.ErrNoDriver)
	_, err = cuda.GetDevice(0)
	assert.ErrorIs(t, err, cuda.ErrNoDriver)
}

func TestErrorsCarryCodeNameAndText(t *testing.T) {
	gpu(t)
	_, err := cuda.GetDevice(1 << 20)
	require.Error(t, err)
	assert.ErrorIs(t, err, cuda.ErrInvalidDevice)
	assert.Contains(t, err.Error(), "ordinals 0 to")

	c := gpu(t)
	_, err = c.MemAlloc(1 << 62)
	require.Error(t, err)
	assert.ErrorIs(t, err, cuda.ErrOutOfMemory)
	var ce *cuda.Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "CUDA_ERROR_OUT_OF_MEMORY", ce.Name)
	assert.NotEmpty(t, ce.Text)
	assert.Equal(t, "cuMemAlloc_v2", ce.Op)

	_, err = c.MemAlloc(0)
	assert.ErrorIs(t, err, cuda.ErrInvalidValue)
}

func TestDeviceFacts(t *testing.T) {
	c := gpu(t)
	d := c.Device()
	name, err := d.Name()
	require.NoError(t, err)
	assert.NotEmpty(t, name)
	total, err := d.TotalMem()
	require.NoError(t, err)
	assert.Greater(t, total, uint64(1<<30))
	major, _, err := d.ComputeCapability()
	require.NoError(t, err)
	assert.GreaterOrEqual(t, major, 5)
	v, err := cuda.DriverVersion()
	require.NoError(t, err)
	assert.GreaterOrEqual(t, v, 11000)
	free, tot, err := c.MemGetInfo()
	require.NoError(t, err)
	assert.Equal(t, total, tot)
	assert.LessOrEqual(t, free, tot)
	for _, a := range []cuda.DeviceAttribute{cuda.AttrMultiProcessorCount, cuda.AttrMemoryPoolsSupported,
		cuda.AttrVirtualMemoryManagement, cuda.AttrUnifiedAddressing, cuda.AttrConcurrentManagedAccess} {
		_, err := d.Attribute(a)
		assert.NoError(t, err, "attribute %d", a)
	}
	u, err := d.UUID()
	require.NoError(t, err)
	assert.NotEqual(t, cuda.UUID{}, u, "a device's UUID is not all zeros")
	assert.Regexp(t, `^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`, u.String())
	u2, err := d.UUID()
	require.NoError(t, err)
	assert.Equal(t, u, u2, "the UUID is stable")
}

func TestUUIDPrintsAsNvidiaSmiDoes(t *testing.T) {
	for _, tc := range []struct {
		u    cuda.UUID
		want string
	}{
		{cuda.UUID{}, "GPU-00000000-0000-0000-0000-000000000000"},
		{cuda.UUID{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, "GPU-00010203-0405-0607-0809-0a0b0c0d0e0f"},
		{cuda.UUID{0xde, 0xad, 0xbe, 0xef, 0xAB, 0xCD, 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x01, 0xff}, "GPU-deadbeef-abcd-1234-5678-9abcdef001ff"},
		{cuda.UUID{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, "GPU-ffffffff-ffff-ffff-ffff-ffffffffffff"},
	} {
		assert.Equal(t, tc.want, tc.u.String())
		assert.Equal(t, tc.want, fmt.Sprint(tc.u), "fmt uses String")
	}
}

func TestCopiesAndMemsetRoundTrip(t *testing.T) {
	c := gpu(t)
	s, err := c.NewStream(cuda.StreamNonBlocking)
	require.NoError(t, err)
	defer s.Destroy()
	for _, n := range []int{1, 4099, 4 << 20} {
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(rand.IntN(256))
		}
		a, err := c.MemAlloc(uint64(n))
		require.NoError(t, err)
		b, err := c.MemAlloc(uint64(n))
		require.NoError(t, err)
		require.NoError(t, s.MemcpyHtoDAsync(a, unsafe.Pointer(&src[0]), uint64(n)))
		require.NoError(t, s.MemcpyDtoDAsync(b, a, uint64(n)))
		dst := make([]byte, n)
		require.NoError(t, s.MemcpyDtoHAsync(unsafe.Pointer(&dst[0]), b, uint64(n)))
		require.NoError(t, s.Synchronize())
		assert.Equal(t, src, dst, "size %d", n)

		require.NoError(t, s.MemsetD8Async(a, 0x5a, uint64(n)))
		require.NoError(t, c.MemcpyDtoH(unsafe.Pointer(&dst[0]), a, uint64(n)))
		require.NoError(t, s.Synchronize())
		require.NoError(t, c.MemcpyDtoH(unsafe.Pointer(&dst[0]), a, uint64(n)))
		for i := range dst {
			if dst[i] != 0x5a {
				t.Fatalf("byte %d is %#x after memset", i, dst[i])
			}
		}
		require.NoError(t, c.MemFree(a))
		require.NoError(t, c.MemFree(b))
	}
	words := uint64(1 << 20)
	p, err := c.MemAlloc(4 * words)
	require.NoError(t, err)
	require.NoError(t, s.MemsetD32Async(p, 0xdeadbeef, words))
	out := make([]uint32, words)
	require.NoError(t, s.MemcpyDtoHAsync(unsafe.Pointer(&out[0]), p, 4*words))
	require.NoError(t, s.Synchronize())
	assert.Equal(t, uint32(0xdeadbeef), out[0])
	assert.Equal(t, uint32(0xdeadbeef), out[words-1])
	require.NoError(t, c.MemFree(p))
}

func TestEventsOrderStreamsAndTime(t *testing.T) {
	c := gpu(t)
	a, err := c.NewStream(cuda.StreamNonBlocking)
	require.NoError(t, err)
	b, err := c.NewStream(cuda.StreamNonBlocking)
	require.NoError(t, err)
	defer a.Destroy()
	defer b.Destroy()
	start, err := c.NewEvent(0)
	require.NoError(t, err)
	end, err := c.NewEvent(0)
	require.NoError(t, err)
	const n = 256 << 20
	buf, err := c.MemAlloc(n)
	require.NoError(t, err)
	defer c.MemFree(buf)

	// Many large memsets on a take real time; b waits for them through the
	// event and must see the last value, never an earlier one.
	require.NoError(t, start.Record(a))
	for v := uint32(1); v <= 20; v++ {
		require.NoError(t, a.MemsetD32Async(buf, v, n/4))
	}
	require.NoError(t, end.Record(a))
	require.NoError(t, b.WaitEvent(end))
	res, err := c.MemAlloc(4)
	require.NoError(t, err)
	defer c.MemFree(res)
	require.NoError(t, b.MemcpyDtoDAsync(res, buf+n-4, 4))
	var got uint32
	require.NoError(t, b.MemcpyDtoHAsync(unsafe.Pointer(&got), res, 4))
	require.NoError(t, b.Synchronize())
	assert.Equal(t, uint32(20), got)

	done, err := end.Query()
	require.NoError(t, err)
	assert.True(t, done)
	el, err := end.Elapsed(start)
	require.NoError(t, err)
	assert.Greater(t, el.Nanoseconds(), int64(0))
	idle, err := a.Query()
	require.NoError(t, err)
	assert.True(t, idle)
	require.NoError(t, start.Destroy())
	require.NoError(t, end.Destroy())
}

func TestModuleLoadAndLaunch(t *testing.T) {
	c := gpu(t)
	ptx, err := os.ReadFile("testdata/add_one.ptx")
	require.NoError(t, err)
	m, err := c.LoadModule(ptx)
	require.NoError(t, err)
	defer m.Unload()
	f, err := m.Function("add_one")
	require.NoError(t, err)
	_, err = m.Function("no_such_kernel")
	assert.ErrorIs(t, err, cuda.ErrNotFound)

	s, err := c.NewStream(cuda.StreamNonBlocking)
	require.NoError(t, err)
	defer s.Destroy()
	const n = 100003
	in := make([]float32, n)
	for i := range in {
		in[i] = float32(i)
	}
	p, err := c.MemAlloc(4 * n)
	require.NoError(t, err)
	defer c.MemFree(p)
	require.NoError(t, s.MemcpyHtoDAsync(p, unsafe.Pointer(&in[0]), 4*n))
	require.NoError(t, s.Launch(f, cuda.Dim3{X: (n + 255) / 256, Y: 1, Z: 1}, cuda.Dim3{X: 256, Y: 1, Z: 1}, 0, p, uint32(n)))
	out := make([]float32, n)
	require.NoError(t, s.MemcpyDtoHAsync(unsafe.Pointer(&out[0]), p, 4*n))
	require.NoError(t, s.Synchronize())
	for i := range out {
		if out[i] != float32(i)+1 {
			t.Fatalf("out[%d] = %v, want %v", i, out[i], float32(i)+1)
		}
	}
	err = s.Launch(f, cuda.Dim3{X: 1, Y: 1, Z: 1}, cuda.Dim3{X: 1, Y: 1, Z: 1}, 0, "not an argument")
	assert.ErrorContains(t, err, "accepted are")

	// The same kernel through LaunchWords: a pointer word and a 32-bit word.
	require.NoError(t, s.LaunchWords(f, cuda.Dim3{X: (n + 255) / 256, Y: 1, Z: 1}, cuda.Dim3{X: 256, Y: 1, Z: 1}, 0,
		uint64(p), cuda.Word32(n)))
	require.NoError(t, s.MemcpyDtoHAsync(unsafe.Pointer(&out[0]), p, 4*n))
	require.NoError(t, s.Synchronize())
	for i := range out {
		if out[i] != float32(i)+2 {
			t.Fatalf("after LaunchWords out[%d] = %v, want %v", i, out[i], float32(i)+2)
		}
	}
	err = s.LaunchWords(f, cuda.Dim3{X: 1, Y: 1, Z: 1}, cuda.Dim3{X: 1, Y: 1, Z: 1}, 0, make([]uint64, cuda.MaxWords+1)...)
	require.ErrorIs(t, err, cuda.ErrInvalidValue)
	assert.ErrorContains(t, err, "LaunchWords takes at most 16")
}

func TestVirtualMemoryMapsPhysicalChunksContiguously(t *testing.T) {
	c := gpu(t)
	if v, _ := c.Device().Attribute(cuda.AttrVirtualMemoryManagement); v == 0 {
		t.Skip("device lacks VMM")
	}
	g, err := c.Granularity(false)
	require.NoError(t, err)
	require.NotZero(t, g)
	va, err := c.AddressReserve(2*g, g)
	require.NoError(t, err)
	h1, err := c.MemCreate(g)
	require.NoError(t, err)
	h2, err := c.MemCreate(g)
	require.NoError(t, err)
	require.NoError(t, c.MemMap(va, g, h1))
	require.NoError(t, c.MemMap(va+cuda.DevicePtr(g), g, h2))
	require.NoError(t, c.MemSetAccess(va, 2*g))
	src := make([]byte, 2*g)
	for i := range src {
		src[i] = byte(i * 7)
	}
	require.NoError(t, c.MemcpyHtoD(va, unsafe.Pointer(&src[0]), 2*g))
	dst := make([]byte, 2*g)
	require.NoError(t, c.MemcpyDtoH(unsafe.Pointer(&dst[0]), va, 2*g))
	assert.Equal(t, src, dst)
	require.NoError(t, c.MemUnmap(va, 2*g))
	require.NoError(t, c.MemRelease(h1))
	require.NoError(t, c.MemRelease(h2))
	require.NoError(t, c.AddressFree(va, 2*g))
}

func TestMemPoolAllocatesOnStreamsAndReportsUsage(t *testing.T) {
	c := gpu(t)
	if v, _ := c.Device().Attribute(cuda.AttrMemoryPoolsSupported); v == 0 {
		t.Skip("device lacks memory pools")
	}
	p, err := c.NewMemPool()
	require.NoError(t, err)
	defer p.Destroy()
	require.NoError(t, p.SetAttribute(cuda.PoolReleaseThreshold, 1<<62))
	th, err := p.Attribute(cuda.PoolReleaseThreshold)
	require.NoError(t, err)
	assert.Equal(t, uint64(1<<62), th)
	s, err := c.NewStream(cuda.StreamNonBlocking)
	require.NoError(t, err)
	defer s.Destroy()
	d, err := s.MemAllocAsync(p, 8<<20)
	require.NoError(t, err)
	require.NoError(t, s.MemsetD8Async(d, 1, 8<<20))
	require.NoError(t, s.Synchronize())
	used, err := p.Attribute(cuda.PoolUsedMemCurrent)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, used, uint64(8<<20))
	require.NoError(t, s.MemFreeAsync(d))
	require.NoError(t, s.Synchronize())
	res, err := p.Attribute(cuda.PoolReservedMemCurrent)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, res, uint64(8<<20), "release threshold keeps memory cached")
	require.NoError(t, p.TrimTo(0))
	res, err = p.Attribute(cuda.PoolReservedMemCurrent)
	require.NoError(t, err)
	assert.Zero(t, res)
}

func TestPinnedAndManagedMemory(t *testing.T) {
	c := gpu(t)
	h, err := c.MemAllocHost(1 << 20)
	require.NoError(t, err)
	hb := unsafe.Slice((*byte)(h), 1<<20)
	for i := range hb {
		hb[i] = byte(i)
	}
	d, err := c.MemAlloc(1 << 20)
	require.NoError(t, err)
	require.NoError(t, c.MemcpyHtoD(d, h, 1<<20))
	out := make([]byte, 1<<20)
	require.NoError(t, c.MemcpyDtoH(unsafe.Pointer(&out[0]), d, 1<<20))
	assert.Equal(t, hb, out)
	require.NoError(t, c.MemFreeHost(h))
	require.NoError(t, c.MemFree(d))

	m, err := c.MemAllocManaged(1 << 20)
	require.NoError(t, err)
	require.NoError(t, c.MemFree(m))
}

func TestPeerAccessAcrossDevices(t *testing.T) {
	gpu(t)
	n, err := cuda.DeviceCount()
	require.NoError(t, err)
	if n < 2 {
		t.Skip("needs two GPUs")
	}
	d0, _ := cuda.GetDevice(0)
	d1, _ := cuda.GetDevice(1)
	c0, err := d0.PrimaryContext()
	require.NoError(t, err)
	c1, err := d1.PrimaryContext()
	require.NoError(t, err)
	ok, err := d0.CanAccessPeer(d1)
	require.NoError(t, err)
	if ok {
		require.NoError(t, c0.EnablePeerAccess(c1))
		require.NoError(t, c0.EnablePeerAccess(c1), "enabling twice is fine")
	}
	a, err := c0.MemAlloc(1 << 20)
	require.NoError(t, err)
	b, err := c1.MemAlloc(1 << 20)
	require.NoError(t, err)
	s, err := c0.NewStream(cuda.StreamNonBlocking)
	require.NoError(t, err)
	require.NoError(t, s.MemsetD8Async(a, 9, 1<<20))
	require.NoError(t, s.MemcpyPeerAsync(b, c1, a, c0, 1<<20))
	require.NoError(t, s.Synchronize())
	out := make([]byte, 1<<20)
	require.NoError(t, c1.MemcpyDtoH(unsafe.Pointer(&out[0]), b, 1<<20))
	assert.Equal(t, byte(9), out[len(out)-1])
}

// TestManyGoroutinesNeedNoLockOSThread runs thousands of driver operations
// from 64 goroutines that the scheduler moves between threads at will: the
// per-call context switch must leave no call without its context.
func TestManyGoroutinesNeedNoLockOSThread(t *testing.T) {
	c := gpu(t)
	iters := 1000
	if testing.Short() {
		iters = 100
	}
	old := runtime.GOMAXPROCS(16)
	defer runtime.GOMAXPROCS(old)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 64; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			s, err := c.NewStream(cuda.StreamNonBlocking)
			if err != nil {
				errs <- err
				return
			}
			defer s.Destroy()
			ev, err := c.NewEvent(cuda.EventDisableTiming)
			if err != nil {
				errs <- err
				return
			}
			defer ev.Destroy()
			in := []uint32{uint32(g), 0, 0, 0}
			out := make([]uint32, 4)
			for i := 0; i < iters; i++ {
				in[1] = uint32(i)
				p, err := c.MemAlloc(16)
				if err == nil {
					err = s.MemcpyHtoDAsync(p, unsafe.Pointer(&in[0]), 16)
				}
				if err == nil {
					err = ev.Record(s)
				}
				runtime.Gosched() // invite a move to another thread mid-sequence
				if err == nil {
					err = ev.Synchronize()
				}
				if err == nil {
					err = s.MemcpyDtoHAsync(unsafe.Pointer(&out[0]), p, 16)
				}
				if err == nil {
					err = s.Synchronize()
				}
				if err == nil {
					err = c.MemFree(p)
				}
				if err != nil {
					errs <- err
					return
				}
				if out[0] != uint32(g) || out[1] != uint32(i) {
					errs <- errors.New("data mixed up between goroutines")
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
