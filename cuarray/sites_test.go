package cuarray_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/memprof"
)

// With leak tracing on, using an array after UnsafeFree names where it was
// allocated and where it was freed; with it off, the error names the array
// only.
func TestUseAfterFreeNamesAllocationAndFreeSitesWhenTracing(t *testing.T) {
	memprof.Enable()
	defer memprof.Disable()
	_, file, line, _ := runtime.Caller(0)
	a := cuarray.Must(cuarray.New[float32](16)) // line+1
	a.UnsafeFree()                              // line+2
	_, err := a.ToSlice()
	require.ErrorIs(t, err, cuarray.ErrFreed)
	assert.Contains(t, err.Error(), fmt.Sprintf("allocated at %s:%d", file, line+1))
	assert.Contains(t, err.Error(), fmt.Sprintf("freed at %s:%d", file, line+2))
	assert.Contains(t, err.Error(), "float32[16]")

	memprof.Disable()
	b := cuarray.Must(cuarray.New[float32](16))
	b.UnsafeFree()
	_, err = b.ToSlice()
	require.ErrorIs(t, err, cuarray.ErrFreed)
	assert.NotContains(t, err.Error(), "allocated at")
}
