package cufft

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/config"
	"github.com/gocuda/gocuda/internal/libload"
	"github.com/gocuda/gocuda/internal/libload/libloadtest"
	"github.com/gocuda/gocuda/internal/testsupport/drivertest"
)

// cuFFT is looked for in the toolkit and both wheel layouts, newest first;
// libcufftw (the FFTW interface) is not cuFFT. libload's own tests hold
// the order of the search and its errors.
func TestSearchFindsCUFFTsWheels(t *testing.T) {
	root := t.TempDir()
	cu12 := "python3.12/site-packages/nvidia/cufft/lib/"
	cu13 := "python3.12/site-packages/nvidia/cu13/lib/"
	libloadtest.Tree(t, root, cu12+"libcufft.so.11", cu12+"libcufftw.so.11", cu13+"libcufft.so.12", cu13+"libcublas.so.13")
	s := library.SearchIn("", 0, []string{root})
	assert.Equal(t, []string{"libcufft.so.12", "libcufft.so.11", "libcufft.so.10", "libcufft.so"}, s.Names)
	c := s.Candidates()
	assert.Subset(t, c, []string{filepath.Join(root, cu12+"libcufft.so.11"), filepath.Join(root, cu13+"libcufft.so.12")})
	assert.NotContains(t, c, filepath.Join(root, cu12+"libcufftw.so.11"))
	assert.NotContains(t, c, filepath.Join(root, cu13+"libcublas.so.13"))
	assert.Contains(t, s.Patterns, "/usr/local/cuda/lib64")
}

// cuFFT's number is CUDA's less one: beside a CUDA 12 driver, cuFFT 12 (of
// CUDA 13) is not tried; beside CUDA 13's, everything is, newest first.
func TestSearchSkipsCUFFTsNewerThanTheDriver(t *testing.T) {
	root := t.TempDir()
	cu12 := "python3.12/site-packages/nvidia/cufft/lib/"
	cu13 := "python3.12/site-packages/nvidia/cu13/lib/"
	libloadtest.Tree(t, root, cu12+"libcufft.so.11", cu13+"libcufft.so.12")
	// Only the sonames and the files under root: a machine with a CUDA
	// toolkit has its own cuFFT in the toolkit's folders too.
	ours := func(s libload.Search) []string {
		return slices.DeleteFunc(s.Candidates(), func(f string) bool {
			return filepath.IsAbs(f) && !strings.HasPrefix(f, root)
		})
	}
	all := library.SearchIn("", 0, []string{root})
	on12 := library.SearchIn("", 12, []string{root})
	assert.Equal(t, []string{"libcufft.so.11", "libcufft.so.10", "libcufft.so", filepath.Join(root, cu12+"libcufft.so.11")}, ours(on12))
	on13 := library.SearchIn("", 13, []string{root})
	assert.Equal(t, ours(all), ours(on13))
	assert.Equal(t, all.Patterns, on12.Patterns, "the error still says where it looked")
}

// GOCUDA_CUFFT_LIBRARY naming a missing file: that file alone is tried,
// and the error says so, naming the variable and what to do.
func TestAMissingLibraryFileIsAClearError(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "libcufft.so.12")
	t.Setenv(config.EnvCUFFTLibrary, missing)
	s := library.Search()
	assert.Equal(t, []string{missing}, s.Candidates())
	_, _, err := s.Open()
	require.ErrorIs(t, err, ErrNoCUFFT)
	if libload.Available() {
		assert.Contains(t, err.Error(), `cufft: GOCUDA_CUFFT_LIBRARY="`+missing+`" cannot be loaded: `+missing+" (")
		assert.Contains(t, err.Error(), "unset GOCUDA_CUFFT_LIBRARY to search the usual places")
	} else {
		assert.Contains(t, err.Error(), "cufft: cuFFT cannot be loaded: this program was built with CGO_ENABLED=0")
		assert.Contains(t, err.Error(), "GOCUDA_BACKEND=host")
	}
}

// TestCUFFTLoads is the dlopen path on a GPU machine: the library loads,
// every entry point resolves, and it reports a version.
func TestCUFFTLoads(t *testing.T) {
	drivertest.GPU(t)
	name, err := Library()
	require.NoError(t, err, "a GPU machine without cuFFT: the message says what to install")
	v, err := Version()
	require.NoError(t, err)
	assert.GreaterOrEqual(t, v, 10000, "cuFFT 10 (CUDA 11) or newer")
	t.Logf("%s, cuFFT version %d", name, v)
}

func TestErrorMatchesResultAndBackendSentinels(t *testing.T) {
	e := &Error{Op: "cufftExecC2C", Device: 1, Result: ResultAllocFailed}
	assert.ErrorIs(t, e, ResultAllocFailed)
	assert.NotErrorIs(t, e, ResultExecFailed)
	assert.True(t, errors.Is(e, backend.ErrOutOfMemory))
	assert.Equal(t, "cufft: cufftExecC2C on device 1: CUFFT_ALLOC_FAILED (2)", e.Error())
	assert.ErrorIs(t, &Error{Result: ResultInvalidSize}, backend.ErrInvalidValue)
	assert.ErrorIs(t, &Error{Result: ResultNotSupported}, backend.ErrNotSupported)
	assert.Contains(t, cres{Stage: libload.StageStream, Code: int(ResultInvalidPlan)}.err("cufftExecR2C", 0).Error(), "cufftSetStream")
	assert.Contains(t, cres{Stage: stageWorkArea, Code: int(ResultInvalidValue)}.err("cufftExecR2C", 0).Error(), "cufftSetWorkArea")
	assert.Contains(t, cres{Stage: libload.StageContext, Code: 201}.err("cufftExecR2C", 3).Error(), "cufft: cufftExecR2C on device 3: making the device's context current")
	assert.NoError(t, cres{}.err("x", 0))
	assert.Equal(t, "cuFFT result 99 (unknown)", Result(99).Error())
}
