package libload_test

import (
	"errors"
	"fmt"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/internal/libload"
	"github.com/gocuda/gocuda/internal/libload/libloadtest"
)

var errNoM = errors.New("no libm")

// libm is bound through cudalib.h by libloadtest: a library every Linux
// machine has, standing in for a CUDA one.
func libm() *libload.Binding {
	return &libload.Binding{
		Library: libload.Library{
			Pkg: "mathlib", Name: "libm", Knob: "GOCUDA_TEST_LIBM",
			Sonames: []string{"libm.so.6"}, File: regexp.MustCompile(`^libm\.so(\.[0-9]+)*$`),
			WheelDirs: []string{"nvidia/m/lib"}, Need: "a libm with cos and sqrt", Sentinel: errNoM,
		},
		SetStream: "mSetStream",
		Resolve:   libloadtest.Install,
	}
}

func TestBindingLoadsOnceAndFillsTheTable(t *testing.T) {
	if !libload.Available() {
		t.Skip("no dlopen without cgo on Linux")
	}
	t.Setenv("GOCUDA_TEST_LIBM", "libm.so.6")
	b := libm()
	ready := 0
	b.Ready = func(file string) error { ready++; return nil }
	for range 2 {
		file, err := b.Load()
		require.NoError(t, err)
		assert.Equal(t, "libm.so.6", file)
	}
	assert.Equal(t, 1, ready, "Ready runs once")
	assert.InDelta(t, 1.0, libloadtest.Cos(0), 1e-12, "cos through the table")
	assert.False(t, libloadtest.HasOptional(), "an optional symbol the library lacks stays unset, and is no error")
}

func TestBindingNamesTheFirstMissingSymbol(t *testing.T) {
	if !libload.Available() {
		t.Skip("no dlopen without cgo on Linux")
	}
	// libc loads, but exports no cos: the table's first entry.
	t.Setenv("GOCUDA_TEST_LIBM", "libc.so.6")
	_, err := libm().Load()
	require.ErrorIs(t, err, errNoM)
	assert.Equal(t, "mathlib: libc.so.6 does not export cos; a libm with cos and sqrt is needed: no libm", err.Error())
}

func TestBindingKeepsTheFailureOfReady(t *testing.T) {
	if !libload.Available() {
		t.Skip("no dlopen without cgo on Linux")
	}
	t.Setenv("GOCUDA_TEST_LIBM", "libm.so.6")
	b := libm()
	b.Ready = func(file string) error { return fmt.Errorf("mathlib: %s is too old: %w", file, errNoM) }
	for range 2 {
		file, err := b.Load()
		assert.Empty(t, file)
		assert.EqualError(t, err, "mathlib: libm.so.6 is too old: no libm")
	}
}

func TestBindingWithoutTheLibraryWrapsItsSentinel(t *testing.T) {
	t.Setenv("GOCUDA_TEST_LIBM", "/nonexistent/libm.so.6")
	_, err := libm().Load()
	require.ErrorIs(t, err, errNoM)
	assert.Contains(t, err.Error(), "mathlib: ")
}

func TestErrWordsEachStage(t *testing.T) {
	b := libm()
	status := func(op string, code int) error { return fmt.Errorf("status %d from %s", code, op) }
	for _, tc := range []struct {
		res  libload.Res
		want string
		is   error
	}{
		{libload.Res{Stage: libload.StageContext, Code: 201}, "mathlib: mCall on device 3: making the device's context current: ", cuda.Result(201)},
		{libload.Res{Stage: libload.StageRestore, Code: 201}, "mathlib: mCall on device 3: restoring the thread's previous context: ", cuda.Result(201)},
		{libload.Res{Stage: libload.StageStream, Code: 7}, "status 7 from mSetStream", nil},
		{libload.Res{Stage: libload.StageCall, Code: 7}, "status 7 from mCall", nil},
	} {
		err := b.Err(tc.res, "mCall", 3, status)
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.want)
		if tc.is != nil {
			assert.ErrorIs(t, err, tc.is)
		}
	}
	assert.NoError(t, b.Err(libload.Res{}, "mCall", 3, status))
}

func TestNamesFallBackToUnknown(t *testing.T) {
	n := libload.Names{3: "M_STATUS_BAD"}
	assert.Equal(t, "M_STATUS_BAD", n.Name(3))
	assert.Equal(t, "unknown", n.Name(4))
}
