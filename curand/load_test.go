package curand

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/internal/libload"
	"github.com/gocuda/gocuda/internal/libload/libloadtest"
	"github.com/gocuda/gocuda/internal/testsupport/drivertest"
)

// cuRAND is looked for in the toolkit and both wheel layouts; its .10 is
// its own version, tried whatever the driver. libload's own tests hold
// the order of the search and its errors.
func TestSearchFindsCURANDsWheels(t *testing.T) {
	root := t.TempDir()
	cu12 := "python3.12/site-packages/nvidia/curand/lib/"
	cu13 := "python3.12/site-packages/nvidia/cu13/lib/"
	libloadtest.Tree(t, root, cu12+"libcurand.so.10", cu13+"libcurand.so.10", cu13+"libcublas.so.13")
	s := library.SearchIn("", 12, []string{root})
	assert.Equal(t, []string{"libcurand.so.10", "libcurand.so"}, s.Names, "cuRAND 10 with a CUDA 12 driver")
	assert.Subset(t, s.Candidates(), []string{filepath.Join(root, cu12+"libcurand.so.10"), filepath.Join(root, cu13+"libcurand.so.10")})
	assert.NotContains(t, s.Candidates(), filepath.Join(root, cu13+"libcublas.so.13"))
	assert.Contains(t, s.Patterns, "/usr/local/cuda/lib64")

	s.Names, s.Dirs = []string{"libcurand-gocuda-bogus.so.10"}, []string{filepath.Join(root, cu12)}
	_, _, err := s.Open()
	require.ErrorIs(t, err, ErrNoCURAND)
	assert.Contains(t, err.Error(), "GOCUDA_BACKEND=host")
	if libload.Available() {
		assert.Contains(t, err.Error(), "curand: no cuRAND library could be loaded; tried libcurand-gocuda-bogus.so.10 (")
		assert.Contains(t, err.Error(), "GOCUDA_CURAND_LIBRARY")
	}
}

// TestCURANDLoads is the dlopen path on a GPU machine: the library loads,
// every entry point resolves, and it reports a version.
func TestCURANDLoads(t *testing.T) {
	drivertest.GPU(t)
	name, err := Library()
	require.NoError(t, err, "a GPU machine without cuRAND: the message says what to install")
	v, err := Version()
	require.NoError(t, err)
	assert.GreaterOrEqual(t, v, 10000, "cuRAND 10 or newer")
	t.Logf("%s, cuRAND version %d", name, v)
}

func TestErrorMatchesStatusAndBackendSentinels(t *testing.T) {
	e := &Error{Op: "curandGenerateNormal", Device: 1, Status: StatusAllocationFailed}
	assert.ErrorIs(t, e, StatusAllocationFailed)
	assert.NotErrorIs(t, e, StatusTypeError)
	assert.True(t, errors.Is(e, backend.ErrOutOfMemory))
	assert.Equal(t, "curand: curandGenerateNormal on device 1: CURAND_STATUS_ALLOCATION_FAILED (102)", e.Error())
	assert.ErrorIs(t, &Error{Status: StatusLengthNotMultiple}, backend.ErrInvalidValue)
	assert.ErrorIs(t, &Error{Status: StatusDoublePrecisionRequired}, backend.ErrNotSupported)
	r := cres{Stage: libload.StageStream, Code: int(StatusNotInitialized)}
	assert.Contains(t, r.err("curandGenerateUniform", 0).Error(), "curandSetStream")
	assert.NoError(t, cres{}.err("x", 0))
	assert.Equal(t, "cuRAND status 7 (unknown)", Status(7).Error())
}
