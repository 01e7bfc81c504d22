package nccl

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/cudabackend"
	"github.com/gocuda/gocuda/config"
	"github.com/gocuda/gocuda/internal/libload"
	"github.com/gocuda/gocuda/internal/libload/libloadtest"
	"github.com/gocuda/gocuda/internal/testsupport/drivertest"
	"github.com/gocuda/gocuda/kernels"
)

// NCCL is looked for on the system first, then in pip's wheels (its .2
// is its own version, kept whatever the driver); a failure names every
// file tried and what to do. libload's own tests hold the rest.
func TestSearchFindsTheSystemThenPip(t *testing.T) {
	venv := t.TempDir()
	lib := filepath.Join(venv, "python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2")
	libloadtest.Tree(t, venv, "python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2", "python3.12/site-packages/nvidia/nccl/lib/libnccl-net.so")
	s := library.SearchIn("", 12, []string{venv})
	assert.Equal(t, []string{"libnccl.so.2", lib}, s.Candidates()[:2], "the system's library, then the wheel's")
	assert.NotContains(t, s.Patterns, "/usr/local/cuda/lib64", "NCCL is not part of the toolkit")
	assert.Contains(t, s.Patterns, "/usr/lib/python3/dist-packages/nvidia/nccl/lib")

	s.Names, s.Dirs = []string{"libnccl-gocuda-bogus.so.2"}, []string{filepath.Dir(lib)}
	_, _, err := s.Open()
	require.ErrorIs(t, err, ErrNoNCCL)
	assert.Contains(t, err.Error(), "GOCUDA_BACKEND=host")
	if !libload.Available() {
		assert.Contains(t, err.Error(), "CGO_ENABLED=0")
		return
	}
	assert.Contains(t, err.Error(), "nccl: no NCCL library could be loaded; tried libnccl-gocuda-bogus.so.2 (")
	assert.Contains(t, err.Error(), lib+" (")
	assert.Contains(t, err.Error(), config.EnvNCCL)
	assert.Contains(t, err.Error(), "nvidia-nccl-cu12")

	_, _, err = library.SearchIn("/nonexistent/libnccl.so.2", 0, nil).Open()
	require.ErrorIs(t, err, ErrNoNCCL)
	assert.Contains(t, err.Error(), `nccl: GOCUDA_NCCL_LIBRARY="/nonexistent/libnccl.so.2" cannot be loaded`)
}

func TestVersionCodes(t *testing.T) {
	for _, tc := range []struct {
		code        int
		maj, mi, pa int
	}{{22809, 2, 28, 9}, {21400, 2, 14, 0}, {2804, 2, 8, 4}} {
		a, b, c := splitVersion(tc.code)
		assert.Equal(t, [3]int{tc.maj, tc.mi, tc.pa}, [3]int{a, b, c}, "%d", tc.code)
	}
}

func TestEnvironKeepsNVLSOff(t *testing.T) {
	base := []string{"PATH=/bin", "HOME=/h"}
	got := Environ(base)
	assert.Equal(t, []string{"PATH=/bin", "HOME=/h", "NCCL_NVLS_ENABLE=0"}, got)
	assert.Len(t, base, 2, "env itself is not changed")
	set := []string{"NCCL_NVLS_ENABLE=1"}
	assert.Equal(t, set, Environ(set), "a value someone set stays")
}

func TestErrorMatchesResultAndBackendSentinels(t *testing.T) {
	e := &Error{Op: "ncclAllReduce", Rank: 1, Device: 0, Result: ResultInvalidUsage, Text: "invalid usage", Last: "Duplicate GPU detected"}
	assert.ErrorIs(t, e, ResultInvalidUsage)
	assert.NotErrorIs(t, e, ResultSystemError)
	assert.True(t, errors.Is(e, backend.ErrInvalidValue))
	assert.Equal(t, "nccl: ncclAllReduce on rank 1 (device 0): ncclInvalidUsage (5): invalid usage: Duplicate GPU detected", e.Error())
	r := cres{Stage: stageUngrouped, Code: 1}
	assert.ErrorIs(t, r.err("ncclSend", &where{rank: 2}), backend.ErrInvalidValue)
	assert.Contains(t, r.err("ncclSend", &where{rank: 2}).Error(), "from the goroutine that called Group")
	assert.NoError(t, cres{}.err("x", nil))
	assert.Equal(t, "NCCL result 8 (ncclTimeout)", ResultTimeout.Error())
}

func TestDataTypeOf(t *testing.T) {
	for dt, want := range map[kernels.DType]DataType{
		kernels.Float32: Float32, kernels.Float64: Float64, kernels.Int32: Int32, kernels.Int64: Int64, kernels.Uint8: Uint8,
		kernels.Int8: Int8, kernels.Uint32: Uint32,
	} {
		got, err := DataTypeOf(dt)
		require.NoError(t, err)
		assert.Equal(t, want, got)
		assert.Equal(t, dt.Size(), got.Size(), "%v", dt)
	}
	_, err := DataTypeOf(kernels.Complex64)
	require.ErrorIs(t, err, backend.ErrInvalidValue)
	assert.Contains(t, err.Error(), "Float32 with twice the count")
	_, err = DataTypeOf(0)
	require.ErrorIs(t, err, backend.ErrInvalidValue)
	_, err = DataTypeOf(kernels.Int16) // NCCL has no 16-bit integer
	require.ErrorIs(t, err, backend.ErrInvalidValue)
	// The C side passes these numbers as ncclDataType_t and ncclRedOp_t.
	assert.Equal(t, 7, Float32.nccl())
	assert.Equal(t, 9, BFloat16.nccl())
	assert.Equal(t, 0, Sum.nccl())
	assert.Equal(t, 4, Avg.nccl())
}

func TestHalfConversionsRoundToNearestEven(t *testing.T) {
	for _, tc := range []struct {
		f float32
		h uint16
	}{
		{0, 0}, {float32(math.Copysign(0, -1)), 0x8000}, {1, 0x3c00}, {-2, 0xc000}, {65504, 0x7bff},
		{65520, 0x7c00},        // halfway above the largest: to infinity
		{1 + 1.0/2048, 0x3c00}, // halfway between 1 and its successor: even
		{1 + 3.0/2048, 0x3c02},
		{5.960464477539063e-08, 0x0001}, // the smallest subnormal
		{2.980232238769531e-08, 0x0000}, // half of it: even, zero
		{float32(math.Inf(1)), 0x7c00},
	} {
		assert.Equal(t, tc.h, floatToHalf(tc.f), "%v", tc.f)
	}
	for h := range uint32(1 << 16) { // every binary16 survives the round trip
		f := halfToFloat(uint16(h))
		if f != f {
			assert.True(t, uint16(h)&0x7c00 == 0x7c00 && uint16(h)&0x3ff != 0, "NaN from %#x", h)
			continue
		}
		require.Equal(t, uint16(h), floatToHalf(f), "%#04x → %v", h, f)
	}
	assert.Equal(t, uint16(0x3f80), floatToBfloat(1))
	assert.Equal(t, uint16(0x3f80), floatToBfloat(math.Float32frombits(0x3f808000)), "halfway: even")
	assert.Equal(t, uint16(0x3f82), floatToBfloat(math.Float32frombits(0x3f818000)), "halfway: even, up")
	assert.Equal(t, float32(-2.5), bfloatToFloat(floatToBfloat(-2.5)))
}

// gpuDevice returns GPU 0 with NCCL loaded, or skips saying why.
func gpuDevice(t *testing.T) *cudabackend.Device {
	t.Helper()
	d := drivertest.GPU(t)
	if _, err := Library(); err != nil {
		t.Skipf("no NCCL on this GPU machine: %v", err)
	}
	return d
}

// TestNCCLLoadsAndAgreesAboutItsCommunicator: on a GPU, NCCL loads, is
// new enough, keeps NVLink multicast off, and a one-rank communicator is
// what NCCL itself says it is. The thread's context after each call is
// the one it had before.
func TestNCCLLoadsAndAgreesAboutItsCommunicator(t *testing.T) {
	dev := gpuDevice(t)
	path, err := Library()
	require.NoError(t, err)
	major, minor, patch, err := Version()
	require.NoError(t, err)
	t.Logf("%s: NCCL %d.%d.%d", path, major, minor, patch)
	assert.GreaterOrEqual(t, major*10000+minor*100+patch, minVersion)

	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	_, _, err = dev.Context().MemGetInfo() // makes the device's context current here
	require.NoError(t, err)
	id, err := NewUniqueID(cudaBackend(t))
	require.NoError(t, err)
	_, set := os.LookupEnv(NVLSVariable)
	assert.True(t, set, "NCCL_NVLS_ENABLE is set before NCCL reads it")

	comms, err := NewComms(t.Context(), []backend.Device{dev})
	require.NoError(t, err)
	g := comms[0].impl.(*gpuComm)
	count, rank, cudaDev, r := cCommInfo(g.w.comm)
	require.NoError(t, r.err("ncclCommCount", &g.w))
	assert.Equal(t, [3]int{1, 0, dev.Ordinal()}, [3]int{count, rank, cudaDev})
	cur, err := drivertest.CtxGetCurrent()
	require.NoError(t, err)
	assert.Equal(t, dev.Context().Handle(), cur, "the thread's context after NewComms")
	require.NoError(t, comms[0].Destroy())

	c, err := NewComm(t.Context(), dev, id, 0, 1)
	require.NoError(t, err)
	assert.Equal(t, 0, c.Rank())
	assert.Equal(t, 1, c.Size())
	require.NoError(t, c.Err())
	require.NoError(t, c.Destroy())
}

func cudaBackend(t *testing.T) backend.Backend {
	b, err := cudabackend.Open()
	require.NoError(t, err)
	return b
}
