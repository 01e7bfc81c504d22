package blas

import (
	"errors"
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
)

// cuBLAS is looked for in the toolkit and in both wheel layouts (the one
// PyTorch's CUDA 12 builds install, and CUDA 13's), not in cuBLASLt's
// files; a failure names what was tried and what to do. libload's own
// tests hold the order of the search and the rest of its errors.
func TestSearchFindsCUBLASsWheels(t *testing.T) {
	root := t.TempDir()
	cu12 := "python3.12/site-packages/nvidia/cublas/lib/"
	cu13 := "python3.12/site-packages/nvidia/cu13/lib/"
	libloadtest.Tree(t, root, cu12+"libcublas.so.12", cu12+"libcublasLt.so.12", cu12+"libnvblas.so.12", cu13+"libcublas.so.13")
	s := library.SearchIn("", 13, []string{root})
	assert.Equal(t, []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so"}, s.Candidates()[:4])
	assert.Subset(t, s.Candidates(), []string{filepath.Join(root, cu13+"libcublas.so.13"), filepath.Join(root, cu12+"libcublas.so.12")})
	assert.NotContains(t, s.Candidates(), filepath.Join(root, cu12+"libcublasLt.so.12"))
	assert.Contains(t, s.Patterns, "/usr/local/cuda/lib64")

	s = library.SearchIn("", 12, []string{root})
	assert.Equal(t, []string{"libcublas.so.12", "libcublas.so.11", "libcublas.so"}, s.Names, "no cuBLAS 13 with a CUDA 12 driver")
	assert.NotContains(t, s.Candidates(), filepath.Join(root, cu13+"libcublas.so.13"))

	// Nothing loads: only the fake tree is tried, whatever this machine has.
	s.Names, s.Dirs = []string{"libcublas-gocuda-bogus.so.12"}, []string{filepath.Join(root, cu12)}
	_, _, err := s.Open()
	require.ErrorIs(t, err, ErrNoCUBLAS)
	msg := err.Error()
	assert.Contains(t, msg, "GOCUDA_BACKEND=host")
	if !libload.Available() {
		assert.Contains(t, msg, "CGO_ENABLED=0")
		return
	}
	assert.Contains(t, msg, "blas: no cuBLAS library could be loaded; tried libcublas-gocuda-bogus.so.12 (")
	assert.Contains(t, msg, filepath.Join(root, cu12+"libcublas.so.12")+" (")
	assert.Contains(t, msg, "nvidia-cublas-cu12")
	assert.Contains(t, msg, "GOCUDA_CUBLAS_LIBRARY")
}

func TestKnobIsTheOnlyCandidate(t *testing.T) {
	t.Setenv(config.EnvCUBLASLibrary, "/opt/x/libcublas.so.13")
	s := library.Search()
	assert.Equal(t, []string{"/opt/x/libcublas.so.13"}, s.Candidates())
}

// TestCUBLASLoads is the dlopen path on a GPU machine: a library from the
// list loads, every entry point resolves, and a handle reports a version.
func TestCUBLASLoads(t *testing.T) {
	dev := drivertest.GPU(t)
	name, err := Library()
	require.NoError(t, err, "a GPU machine without cuBLAS: the message says what to install")
	assert.Regexp(t, library.File, filepath.Base(name), "a cuBLAS library file")
	v, err := Version(dev)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, v, 110000, "cuBLAS 11 or newer encodes its version as major*10000+minor*100+patch")
	t.Logf("%s, cuBLAS version %d", name, v)
}

// TestContextRestored checks that a cuBLAS call on one device leaves the
// calling thread's current context as it found it, so package cuda's
// per-thread note of it stays true. It needs two devices.
func TestContextRestored(t *testing.T) {
	d0 := drivertest.GPU(t)
	b, _ := cudabackend.Open()
	if b.DeviceCount() < 2 {
		t.Skip("needs two GPUs")
	}
	d1v, err := b.Device(1)
	require.NoError(t, err)
	d1 := d1v.(*cudabackend.Device)
	s1, err := d1.NewStream()
	require.NoError(t, err)
	defer s1.Destroy()
	p, err := d1.Alloc(64)
	require.NoError(t, err)
	defer d1.Free(p)

	runtime.LockOSThread() // one thread for the whole check
	defer runtime.UnlockOSThread()
	_, _, err = d0.Context().MemGetInfo() // makes device 0's context current here
	require.NoError(t, err)
	require.NoError(t, Gemm[float32](d1, s1, false, false, 2, 2, 2, 1, p, 2, p, 2, 0, p+32, 2))
	cur, err := drivertest.CtxGetCurrent()
	require.NoError(t, err)
	assert.Equal(t, d0.Context().Handle(), cur, "the thread's context after a cuBLAS call on device 1")
	require.NoError(t, s1.Synchronize())
}

func TestErrorMatchesStatusAndBackendSentinels(t *testing.T) {
	e := &Error{Op: "cublasSgemm_v2", Device: 1, Status: StatusAllocFailed}
	assert.ErrorIs(t, e, StatusAllocFailed)
	assert.NotErrorIs(t, e, StatusInvalidValue)
	assert.True(t, errors.Is(e, backend.ErrOutOfMemory))
	assert.Equal(t, "blas: cublasSgemm_v2 on device 1: CUBLAS_STATUS_ALLOC_FAILED (3)", e.Error())
	r := cres{Stage: libload.StageStream, Code: int(StatusInvalidValue)}
	assert.ErrorIs(t, r.err("cublasDgemm_v2", 0), errInvalid)
	assert.Contains(t, r.err("cublasDgemm_v2", 0).Error(), "cublasSetStream_v2")
	assert.NoError(t, cres{}.err("x", 0))
}
