package rtc

import (
	"testing"

	"github.com/gocuda/gocuda/internal/kernelcache"
)

// SetKernelCacheDir replaces the compile cache of user kernels with an
// empty one in dir ("" for memory only), for the test's life.
func SetKernelCacheDir(t testing.TB, dir string) *kernelcache.Cache {
	old := compiledCache.Load()
	c := &kernelcache.Cache{Dir: dir}
	compiledCache.Store(c)
	t.Cleanup(func() { compiledCache.Store(old) })
	return c
}

// KernelFrom says where k's code on its last device came from: "built",
// "memory" or "disk" for source, "image" for an image, "" before any.
func KernelFrom(k *Kernel) string {
	if l := k.last.Load(); l != nil {
		return l.from
	}
	return ""
}

// ElementwiseSource is the source k generates for inputs of kinds ("s"
// scalar, "a" array, "b" broadcast array) over nd broadcast dimensions.
func ElementwiseSource(k *ElementwiseKernel, kinds string, nd int) string {
	return k.source([]byte(kinds), nd)
}

// ElementwiseSpecs lists the specializations k has made, and where each
// one's code on its last device came from (KernelFrom's words).
func ElementwiseSpecs(k *ElementwiseKernel) map[string]string {
	out := map[string]string{}
	k.specs.Range(func(key, v any) bool {
		out[key.(string)] = KernelFrom(v.(*Kernel))
		return true
	})
	return out
}

// ElementwiseLayout is ewLayout, for tests.
var ElementwiseLayout = ewLayout

// ElementwiseParams is k's parameter lists in canonical form.
func ElementwiseParams(k *ElementwiseKernel) (in, out string) {
	return formatEWParams(k.in), formatEWParams(k.out)
}

// SetElementwiseHostSplit makes the host's evaluation of elementwise
// bodies split launches into pieces of at least grain elements and gather
// broadcast inputs block elements at a time, for the test's life.
func SetElementwiseHostSplit(t testing.TB, grain, block int) {
	oldGrain, oldBlock := ewHostGrain, ewHostBlock
	ewHostGrain, ewHostBlock = grain, block
	t.Cleanup(func() { ewHostGrain, ewHostBlock = oldGrain, oldBlock })
}

// ElementwiseGather is elements lo to hi of src read through strides over
// dims (row-major), as the host's evaluation gathers a broadcast input.
func ElementwiseGather(src []float32, dims, strides []int, lo, hi int) []float32 {
	o := ewGatherOp[float32]{src: src, dims: dims, strides: strides, buf: make([]float32, hi-lo)}
	return o.piece(lo, hi).([]float32)
}
