package rtc

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/internal/devstream"
	"github.com/gocuda/gocuda/kernels"
)

// The package's one seam to a backend: where a launch runs is found here,
// through internal/devstream's capabilities (a GPU with its driver context
// and stream, or a host device whose stream runs Go functions), and the
// launches branch on that alone. No other file names a backend.

// deviceOn is where work on dev runs: On.GPU or On.Host is set.
func deviceOn(op string, dev backend.Device) (devstream.On, error) {
	on, err := devstream.Device(dev)
	if err != nil {
		return on, fmt.Errorf("rtc: %s: %w", op, err)
	}
	return on, nil
}

// gpuStream is the driver stream of bs, a stream WithPointersAs lent on a
// GPU device.
func gpuStream(bs backend.Stream) (devstream.GPUStream, error) {
	on, err := devstream.Resolve(bs.Device(), bs)
	if err != nil {
		return nil, err
	}
	if on.GPUStream == nil {
		return nil, fmt.Errorf("stream %d is not a CUDA stream: %w", bs.ID(), backend.ErrInvalidValue)
	}
	return on.GPUStream, nil
}

// hostStream is bs as a host stream that runs Go functions in order.
func hostStream(bs backend.Stream) (devstream.HostStream, error) {
	on, err := devstream.Resolve(bs.Device(), bs)
	if err != nil {
		return nil, err
	}
	if on.HostStream == nil {
		return nil, fmt.Errorf("stream %d is not a host stream: %w", bs.ID(), backend.ErrInvalidValue)
	}
	return on.HostStream, nil
}

// arrayArg is a as an argument used as acc, if a is an *cuarray.Array of
// any element type.
func arrayArg(a any, acc cuarray.Access) (cuarray.Arg, bool) {
	switch x := a.(type) {
	case *cuarray.Array[float32]:
		return argOf(x, acc), true
	case *cuarray.Array[float64]:
		return argOf(x, acc), true
	case *cuarray.Array[int32]:
		return argOf(x, acc), true
	case *cuarray.Array[int64]:
		return argOf(x, acc), true
	case *cuarray.Array[uint8]:
		return argOf(x, acc), true
	case *cuarray.Array[complex64]:
		return argOf(x, acc), true
	}
	return cuarray.Arg{}, false
}

func argOf[T cuarray.Elem](a *cuarray.Array[T], acc cuarray.Access) cuarray.Arg {
	switch acc {
	case cuarray.Read:
		return cuarray.In(a)
	case cuarray.Write:
		return cuarray.Out(a)
	}
	return cuarray.InOut(a)
}

// sliceType is the Go form's type for an array of dt: []T.
func sliceType(dt kernels.DType) reflect.Type {
	switch dt {
	case kernels.Float32:
		return reflect.TypeFor[[]float32]()
	case kernels.Float64:
		return reflect.TypeFor[[]float64]()
	case kernels.Int32:
		return reflect.TypeFor[[]int32]()
	case kernels.Int64:
		return reflect.TypeFor[[]int64]()
	case kernels.Uint8:
		return reflect.TypeFor[[]uint8]()
	case kernels.Complex64:
		return reflect.TypeFor[[]complex64]()
	case kernels.Bool:
		return reflect.TypeFor[[]bool]()
	}
	return nil
}

// hostSlice is g's elements as a []T over p, its address on the host
// backend, for the Go form.
func hostSlice(g cuarray.Arg, p backend.Ptr) reflect.Value {
	switch g.DType() {
	case kernels.Float32:
		return reflect.ValueOf(sliceAt[float32](p, g.Len()))
	case kernels.Float64:
		return reflect.ValueOf(sliceAt[float64](p, g.Len()))
	case kernels.Int32:
		return reflect.ValueOf(sliceAt[int32](p, g.Len()))
	case kernels.Int64:
		return reflect.ValueOf(sliceAt[int64](p, g.Len()))
	case kernels.Uint8:
		return reflect.ValueOf(sliceAt[uint8](p, g.Len()))
	case kernels.Complex64:
		return reflect.ValueOf(sliceAt[complex64](p, g.Len()))
	case kernels.Bool:
		return reflect.ValueOf(sliceAt[bool](p, g.Len()))
	}
	panic(fmt.Sprintf("rtc: no arrays of %s", g.DType())) // cuarray.Elem is only those
}

func sliceAt[T any](p backend.Ptr, n int) []T {
	if n == 0 {
		return []T{}
	}
	// Host backend memory is outside the Go heap; the indirection keeps
	// vet's uintptr-to-pointer check quiet for this deliberate conversion.
	return unsafe.Slice((*T)(*(*unsafe.Pointer)(unsafe.Pointer(&p))), n)
}
