package cuarray

import "github.com/gocuda/gocuda/half"

// zero and one are T's 0 and 1 (false and true for bool): untyped
// constants do not convert to a type parameter whose set holds bool.
func zero[T Elem]() T { return *new(T) }

func one[T Elem]() T {
	var v T
	switch p := any(&v).(type) {
	case *float32:
		*p = 1
	case *float64:
		*p = 1
	case *int32:
		*p = 1
	case *int64:
		*p = 1
	case *uint8:
		*p = 1
	case *int8:
		*p = 1
	case *int16:
		*p = 1
	case *uint32:
		*p = 1
	case *complex64:
		*p = 1
	case *bool:
		*p = true
	case *half.Float16:
		*p = 0x3c00 // 1.0
	case *half.BFloat16:
		*p = 0x3f80 // 1.0
	}
	return v
}
