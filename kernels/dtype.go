package kernels

import (
	"fmt"
	"math"
	"strings"
	"unsafe"

	"github.com/gocuda/gocuda/half"
)

// DType is the element type of an array.
type DType uint8

// The element types kernels knows. The zero DType is invalid.
const (
	Float32 DType = iota + 1
	Float64
	Int32
	Int64
	Uint8
	Complex64
	// Bool is Go's bool, one byte holding 0 or 1: the result of the
	// comparisons and the condition of Where.
	Bool
	// Float16 and BFloat16 are package half's 16-bit floats: storage
	// and conversion in Go, arithmetic in float32 inside the kernels.
	Float16
	BFloat16
	// Int8, Int16 and Uint32 are Go's: integers that wrap, divide by
	// zero to 0 and sum in 64 bits, as Int32 does.
	Int8
	Int16
	Uint32
	numDTypes = iota + 1 // one past the last, for tables indexed by DType
)

var dtypeInfo = [numDTypes]struct {
	name, suffix string
	size         int
}{
	Float32:   {"float32", "f32", 4},
	Float64:   {"float64", "f64", 8},
	Int32:     {"int32", "i32", 4},
	Int64:     {"int64", "i64", 8},
	Uint8:     {"uint8", "u8", 1},
	Complex64: {"complex64", "c64", 8},
	Bool:      {"bool", "b8", 1},
	Float16:   {"float16", "f16", 2},
	BFloat16:  {"bfloat16", "bf16", 2},
	Int8:      {"int8", "i8", 1},
	Int16:     {"int16", "i16", 2},
	Uint32:    {"uint32", "u32", 4},
}

// Valid reports whether d is one of the declared element types.
func (d DType) Valid() bool { return d >= Float32 && d < numDTypes }

// Size is the size of one element in bytes (0 for an invalid DType).
func (d DType) Size() int {
	if !d.Valid() {
		return 0
	}
	return dtypeInfo[d].size
}

// String is the Go name of the element type, "float32" for Float32.
func (d DType) String() string {
	if !d.Valid() {
		return fmt.Sprintf("DType(%d)", uint8(d))
	}
	return dtypeInfo[d].name
}

// suffix is the dtype's part of a kernel name: "f32" in gocuda_add_f32.
func (d DType) suffix() string { return dtypeInfo[d].suffix }

// Elem is the set of Go element types the kernels take; DTypeOf maps each
// to its DType. Every operation is generic over Elem, so that an array type
// parameterized by Elem can call any of them; an operation that does not
// support a type (Exp on int32) returns an error wrapping
// ErrUnsupportedDType that names the types it accepts.
type Elem interface {
	float32 | float64 | int32 | int64 | uint8 | complex64 | bool | half.Float16 | half.BFloat16 |
		int8 | int16 | uint32
}

// number is Elem less bool and the 16-bit floats: the types Go arithmetic
// is defined on (half.Float16 and half.BFloat16 are bits; Go computes on
// them in float32).
type number interface {
	float32 | float64 | int32 | int64 | uint8 | complex64 | int8 | int16 | uint32
}

// DTypeOf returns the DType of T.
func DTypeOf[T Elem]() DType {
	var z T
	switch any(z).(type) {
	case float32:
		return Float32
	case float64:
		return Float64
	case int32:
		return Int32
	case int64:
		return Int64
	case uint8:
		return Uint8
	case complex64:
		return Complex64
	case bool:
		return Bool
	case half.Float16:
		return Float16
	case half.BFloat16:
		return BFloat16
	case int8:
		return Int8
	case int16:
		return Int16
	case uint32:
		return Uint32
	}
	panic("unreachable: Elem has no other types")
}

// dtypeSet is a set of DTypes, one bit each.
type dtypeSet uint16

func setOf(ds ...DType) dtypeSet {
	var s dtypeSet
	for _, d := range ds {
		s |= 1 << d
	}
	return s
}

var (
	allTypes     = setOf(Float32, Float64, Int32, Int64, Uint8, Complex64, Int8, Int16, Uint32)
	halfTypes    = setOf(Float16, BFloat16)
	everyType    = allTypes | setOf(Bool) | halfTypes // what Fill, Copy and Convert take
	floatTypes   = setOf(Float32, Float64)
	realTypes    = setOf(Float32, Float64, Int32, Int64, Uint8, Int8, Int16, Uint32)
	integerTypes = setOf(Int32, Int64, Uint8, Int8, Int16, Uint32)
	inexactTypes = setOf(Float32, Float64, Complex64)
)

func (s dtypeSet) has(d DType) bool { return d.Valid() && s&(1<<d) != 0 }

// String lists the set's types: "float32, float64".
func (s dtypeSet) String() string {
	var names []string
	for d := Float32; d < numDTypes; d++ {
		if s.has(d) {
			names = append(names, d.String())
		}
	}
	return strings.Join(names, ", ")
}

// bitsOf returns v's bytes as the kernels take a scalar: zero-extended to 64
// bits, a complex64 as real (low 32 bits) and imaginary (high 32 bits), the
// way Go lays it out in memory.
func bitsOf[T Elem](v T) uint64 {
	switch x := any(v).(type) {
	case float32:
		return uint64(math.Float32bits(x))
	case float64:
		return math.Float64bits(x)
	case int32:
		return uint64(uint32(x))
	case int64:
		return uint64(x)
	case uint8:
		return uint64(x)
	case complex64:
		return uint64(math.Float32bits(real(x))) | uint64(math.Float32bits(imag(x)))<<32
	case bool:
		if x {
			return 1
		}
	case half.Float16:
		return uint64(x)
	case half.BFloat16:
		return uint64(x)
	case int8:
		return uint64(uint8(x))
	case int16:
		return uint64(uint16(x))
	case uint32:
		return uint64(x)
	}
	return 0
}

// addrOf turns a host-backend device address into a pointer. The memory is
// mapped from the OS, outside the Go heap, so the collector never looks at
// it; the indirection keeps vet's uintptr-to-pointer check quiet for this
// one deliberate conversion (the host backend does the same).
func addrOf(p uintptr) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&p))
}

// view is the n elements of T at host-backend address p.
func view[T any](p uintptr, n int) []T {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(addrOf(p)), n)
}
