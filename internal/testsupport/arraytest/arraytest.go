// Package arraytest is the scaffolding the tests of cuarray and of the
// packages above it (rtc) share: a pool of their own to count one test's
// work, and a stream on it. The
// tests run on the backend gocuda picks (GOCUDA_BACKEND) with the pool
// strategy GOCUDA_MEMORY_POOL names.
package arraytest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/pool"
)

// FreshPool makes a pool of the configured strategy on device 0 that only
// the calling test uses, so that its Stats count that test's work alone.
func FreshPool(t testing.TB) pool.Pool {
	t.Helper()
	c, err := gocuda.Config()
	require.NoError(t, err)
	dev, err := gocuda.Device(0)
	require.NoError(t, err)
	p, err := pool.New(c.Pool, dev, gocuda.LimitsFor(c, dev))
	require.NoError(t, err)
	return p
}

// NewStream makes a stream on device 0 whose arrays come from p.
func NewStream(t testing.TB, p pool.Pool) *cuarray.Stream {
	t.Helper()
	s, err := cuarray.NewStreamPool(p)
	require.NoError(t, err)
	return s
}
