package testhook

import (
	"errors"
	"sync/atomic"
	"time"

	"github.com/gocuda/gocuda/backend"
)

// StagePeerCopies makes the CUDA backend's peer copies go through pinned
// host memory even between devices that could reach each other directly,
// so that tests exercise the staged path on machines whose GPUs are all
// peers. Change it only while no copy is being queued.
var StagePeerCopies atomic.Bool

// spin is package kernels' spin kernel, set by kernels' init (before any
// test runs, so it needs no lock): launching it is kernels' business.
var spin func(backend.Device, backend.Stream, time.Duration) error

// SetSpin is for package kernels' init only.
func SetSpin(f func(backend.Device, backend.Stream, time.Duration) error) { spin = f }

// Spin queues work that keeps the stream busy for about d: on a GPU a
// one-thread kernel that busy-waits on the global nanosecond timer, on the
// host a sleep on the stream's goroutine. Tests of stream ordering use it to
// make earlier work slow. d <= 0 queues nothing. The test must link package
// kernels (any test of cuarray or kernels does).
func Spin(dev backend.Device, s backend.Stream, d time.Duration) error {
	if spin == nil {
		return errors.New("testhook: Spin needs package kernels linked into the test")
	}
	return spin(dev, s, d)
}
