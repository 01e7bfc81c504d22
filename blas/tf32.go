package blas

import (
	"os"
	"sync"
	"sync/atomic"

	"github.com/gocuda/gocuda/config"
)

// TF32 (TensorFloat-32) rounds float32 inputs to 10 fraction bits for the
// tensor cores of compute capability 8.0 and newer and accumulates in
// float32: several times float32's speed, at about float16's precision
// per product. It is off by default, as PyTorch's
// torch.backends.cuda.matmul.allow_tf32 is since PyTorch 1.12, because a
// program that asked for float32 should get float32 unless it opts in.

var (
	// tf32Knob is GOCUDA_TF32 as parsed, read once; a value that does not
	// parse leaves it off (the knob's error is reported where the backend
	// or a pool is made, and by doctor).
	tf32Knob = sync.OnceValue(func() bool { return tf32From(os.LookupEnv) })
	// tf32Set is SetTF32's setting: 0 until it is called, then 1 for off
	// and 2 for on.
	tf32Set atomic.Int32
)

// TF32 reports whether float32 products (Gemm, GemmStridedBatched and
// cuarray's Gemm and MatMul on float32) may run on TF32 tensor cores:
// SetTF32's setting once it was called, else GOCUDA_TF32 (off unless set
// to on). GPUs before compute capability 8.0 have no TF32 and multiply in
// full float32 whatever the setting; the host backend always does.
func TF32() bool {
	switch tf32Set.Load() {
	case 1:
		return false
	case 2:
		return true
	}
	return tf32Knob()
}

// SetTF32 allows (on) or forbids float32 products on TF32 tensor cores
// for the whole process, from the next product queued, and returns the
// setting it replaced: torch.backends.cuda.matmul.allow_tf32 = on. It
// overrides GOCUDA_TF32.
func SetTF32(on bool) (previous bool) {
	previous = TF32()
	v := int32(1)
	if on {
		v = 2
	}
	tf32Set.Store(v)
	return previous
}

// tf32From is GOCUDA_TF32 read through lookup: on when it parses as on,
// off when unset, off or not valid.
func tf32From(lookup func(string) (string, bool)) bool {
	c, _ := config.Parse(lookup)
	return c.TF32
}
