package blas

import (
	"errors"
	"fmt"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/cudabackend"
)

// SgemmLoopCost is the time one cublasSgemm_v2 call takes when made from a
// C loop of calls, with no Go, cgo or context handling around it: what
// cuBLAS itself costs to queue a product, to set beside a Go benchmark of
// Gemm on the same sizes so that the binding's own overhead is a measured
// difference. The product is column-major C (m × n) = A (m × k) · B (k × n)
// with tight leading dimensions; a, b and c must hold that many float32.
// With setStream every call is preceded by cublasSetStream_v2, which is
// what a handle shared by streams that alternate costs.
//
// The calls are queued without waiting for them; keep calls below the
// stream's queue depth (a few hundred) and synchronize between uses, or the
// loop measures the GPU's speed instead of the call's.
func SgemmLoopCost(dev *cudabackend.Device, s *cudabackend.Stream, m, n, k int, a, b, c backend.Ptr, setStream bool, calls int64) (float64, error) {
	if dev == nil || s == nil || s.Device() != backend.Device(dev) {
		return 0, fmt.Errorf("blas: SgemmLoopCost: need a CUDA device and one of its streams: %w", errInvalid)
	}
	if m <= 0 || n <= 0 || k <= 0 || m > maxDim || n > maxDim || k > maxDim || calls <= 0 || a == 0 || b == 0 || c == 0 {
		return 0, fmt.Errorf("blas: SgemmLoopCost: m = %d, n = %d, k = %d, calls = %d and the pointers must all be positive: %w",
			m, n, k, calls, errInvalid)
	}
	h, err := handleFor("SgemmLoopCost", dev)
	if err != nil {
		return 0, err
	}
	cs := s.CUDA().Handle()
	h.mu.Lock()
	defer h.mu.Unlock()
	ns := cBenchSgemm(h.ctx, h.h, cs, setStream, m, n, k, uintptr(a), uintptr(b), uintptr(c), calls)
	h.stream = cs // the loop left the handle on s
	if ns < 0 {
		h.stream = 0 // unknown after a failure: the next call sets it
		return 0, fmt.Errorf("blas: SgemmLoopCost on device %d: a cuBLAS call in the loop failed: %w", dev.Ordinal(), ErrLoopFailed)
	}
	return float64(ns) / float64(calls), nil
}

// ErrLoopFailed: a call in SgemmLoopCost's C loop returned an error.
var ErrLoopFailed = errors.New("cuBLAS call failed in the timing loop")
