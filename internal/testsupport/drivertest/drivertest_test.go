package drivertest_test

import (
	"errors"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/internal/testsupport/drivertest"
)

func TestCtxGetCurrentSeesTheContextPackageCudaMadeCurrent(t *testing.T) {
	if err := cuda.Init(); err != nil {
		require.True(t, errors.Is(err, cuda.ErrNoDriver) || errors.Is(err, cuda.ErrNoDevice), "unexpected init error: %v", err)
		_, err := drivertest.CtxGetCurrent()
		require.Error(t, err, "no driver, yet a current context")
		assert.Contains(t, err.Error(), "drivertest:")
		return
	}
	d, err := cuda.GetDevice(0)
	require.NoError(t, err)
	c, err := d.PrimaryContext()
	require.NoError(t, err)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	_, _, err = c.MemGetInfo() // makes c current on this thread
	require.NoError(t, err)
	cur, err := drivertest.CtxGetCurrent()
	require.NoError(t, err)
	assert.Equal(t, c.Handle(), cur)
}
