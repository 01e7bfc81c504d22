package rtc

import (
	"fmt"
	"reflect"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/cuarray"
)

// launchHost queues the kernel's Go form on s's host stream, with the
// inputs broadcast to the result's shape, or without one the host's
// evaluation of its body (launchExpr). The borrowing has told the stream
// checker of the inputs' reads and the outputs' writes.
func (k *ElementwiseKernel) launchHost(s *cuarray.Stream, l *ewLaunch) error {
	if !k.HasHost() {
		return k.launchExpr(s, l)
	}
	for j, p := range k.in {
		if k.hostScalar[j] && l.kinds[j] != kindScalar {
			return k.errorf(backend.ErrInvalidValue, "input %s is an array, but the HostFunc %s takes it as a %s (a scalar); make that parameter []%s to take arrays",
				p.name, k.host.Type(), p.typ.goName, p.typ.goName)
		}
	}
	if l.n == 0 {
		return nil
	}
	return cuarray.WithPointersAs(k.op, s, func(bs backend.Stream, ptrs []backend.Ptr) error {
		hs, err := hostStream(bs)
		if err != nil {
			return err
		}
		fn := k.host
		return hs.Enqueue(func() {
			// In stream order, where the arrays hold what earlier work
			// wrote: only now can broadcast inputs be expanded.
			in := make([]reflect.Value, len(k.in)+len(k.out))
			for j := range k.in {
				switch l.kinds[j] {
				case kindScalar:
					if k.hostScalar[j] {
						in[j] = reflect.ValueOf(l.scalars[j])
					} else {
						in[j] = repeat(l.scalars[j], l.n)
					}
				case kindFull:
					x := l.inArr[j]
					in[j] = hostSlice(l.arrs[x], ptrs[x])
				case kindBroadcast:
					x := l.inArr[j]
					in[j] = expand(hostSlice(l.arrs[x], ptrs[x]), l.shape, l.strides[j], l.n)
				}
			}
			nin := len(ptrs) - len(k.out)
			for j := range k.out {
				in[len(k.in)+j] = hostSlice(l.arrs[nin+j], ptrs[nin+j])
			}
			fn.Call(in)
		})
	}, l.arrs...)
}

// repeat is a slice of n copies of v.
func repeat(v any, n int) reflect.Value {
	switch x := v.(type) {
	case float32:
		return reflect.ValueOf(fillSlice(x, n))
	case float64:
		return reflect.ValueOf(fillSlice(x, n))
	case int32:
		return reflect.ValueOf(fillSlice(x, n))
	case int64:
		return reflect.ValueOf(fillSlice(x, n))
	case uint8:
		return reflect.ValueOf(fillSlice(x, n))
	}
	panic(fmt.Sprintf("rtc: no scalar of type %T", v)) // ewScalar makes only those
}

func fillSlice[T any](v T, n int) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// expand is src, read through strides, as a row-major slice of shape.
func expand(src reflect.Value, shape, strides []int, n int) reflect.Value {
	switch x := src.Interface().(type) {
	case []float32:
		return reflect.ValueOf(expandSlice(x, shape, strides, n))
	case []float64:
		return reflect.ValueOf(expandSlice(x, shape, strides, n))
	case []int32:
		return reflect.ValueOf(expandSlice(x, shape, strides, n))
	case []int64:
		return reflect.ValueOf(expandSlice(x, shape, strides, n))
	case []uint8:
		return reflect.ValueOf(expandSlice(x, shape, strides, n))
	}
	panic(fmt.Sprintf("rtc: no arrays of %s", src.Type())) // the parameter types are only those
}

func expandSlice[T any](src []T, shape, strides []int, n int) []T {
	out := make([]T, n)
	idx := make([]int, len(shape))
	off := 0
	for i := range out {
		out[i] = src[off]
		for d := len(shape) - 1; d >= 0; d-- {
			idx[d]++
			off += strides[d]
			if idx[d] < shape[d] {
				break
			}
			off -= strides[d] * shape[d]
			idx[d] = 0
		}
	}
	return out
}
