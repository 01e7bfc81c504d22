package nccl

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/gocuda/gocuda/kernels"
)

// DataType is the element type of a buffer, as NCCL names them. The zero
// DataType is invalid, so that a forgotten argument is an error.
type DataType uint8

// The element types NCCL reduces and moves.
const (
	Int8 DataType = iota + 1
	Uint8
	Int32
	Uint32
	Int64
	Uint64
	Float16
	Float32
	Float64
	BFloat16
	numDataTypes = iota + 1
)

var dataTypeInfo = [numDataTypes]struct {
	name string
	size int
}{
	Int8: {"int8", 1}, Uint8: {"uint8", 1}, Int32: {"int32", 4}, Uint32: {"uint32", 4},
	Int64: {"int64", 8}, Uint64: {"uint64", 8}, Float16: {"float16", 2}, Float32: {"float32", 4},
	Float64: {"float64", 8}, BFloat16: {"bfloat16", 2},
}

// Valid reports whether d is one of the declared types.
func (d DataType) Valid() bool { return d >= Int8 && d < numDataTypes }

// Size is one element's size in bytes (0 for an invalid DataType).
func (d DataType) Size() int {
	if !d.Valid() {
		return 0
	}
	return dataTypeInfo[d].size
}

func (d DataType) String() string {
	if !d.Valid() {
		return fmt.Sprintf("DataType(%d)", uint8(d))
	}
	return dataTypeInfo[d].name
}

// nccl is d as an ncclDataType_t: ncclInt8 = 0 to ncclBfloat16 = 9, in
// the order declared above.
func (d DataType) nccl() int { return int(d) - 1 }

// dataTypeNames lists the valid types, for errors.
func dataTypeNames() string {
	var names []string
	for d := Int8; d < numDataTypes; d++ {
		names = append(names, d.String())
	}
	return strings.Join(names, ", ")
}

// DataTypeOf maps an array's element type to NCCL's. complex64 has no NCCL
// type: move or sum it as Float32 with twice the count (its real and
// imaginary parts are two float32s), which is exact for Sum and Avg and
// for every operation that only moves data, and wrong for Prod, Max and
// Min.
func DataTypeOf(dt kernels.DType) (DataType, error) {
	switch dt {
	case kernels.Float32:
		return Float32, nil
	case kernels.Float64:
		return Float64, nil
	case kernels.Int32:
		return Int32, nil
	case kernels.Int64:
		return Int64, nil
	case kernels.Uint8:
		return Uint8, nil
	case kernels.Int8:
		return Int8, nil
	case kernels.Uint32:
		return Uint32, nil
	case kernels.Complex64:
		return 0, fmt.Errorf("nccl: NCCL has no complex64 type; send it as Float32 with twice the count (valid for Sum, Avg and data movement, not Prod, Max or Min): %w", errInvalid)
	}
	return 0, fmt.Errorf("nccl: %v is not an element type NCCL takes; it takes %s: %w", dt, dataTypeNames(), errInvalid)
}

// Op is a reduction. The zero Op is invalid.
type Op uint8

// The reductions NCCL offers. Avg is the sum divided by the number of
// ranks: for floating-point types each element is multiplied by 1/ranks
// before the sum, as NCCL does; for integers the sum is divided, rounding
// towards zero.
const (
	Sum Op = iota + 1
	Prod
	Max
	Min
	Avg
	numOps = iota + 1
)

var opNames = [numOps]string{Sum: "sum", Prod: "prod", Max: "max", Min: "min", Avg: "avg"}

// Valid reports whether o is one of the declared reductions.
func (o Op) Valid() bool { return o >= Sum && o < numOps }

func (o Op) String() string {
	if !o.Valid() {
		return fmt.Sprintf("Op(%d)", uint8(o))
	}
	return opNames[o]
}

// nccl is o as an ncclRedOp_t: ncclSum = 0 to ncclAvg = 4.
func (o Op) nccl() int { return int(o) - 1 }

// UniqueIDBytes is the size of a UniqueID, NCCL_UNIQUE_ID_BYTES.
const UniqueIDBytes = 128

// UniqueID names one communicator while its ranks gather: one rank (or a
// launcher) makes it with NewUniqueID and hands it to every rank, which
// passes it to NewComm. On the GPU it is NCCL's ncclUniqueId (the address
// where rank 0 listens, and a secret); on the host backend it is a key in
// this process's table of communicators being formed.
//
// String and ParseUniqueID carry it through text, such as an environment
// variable of each rank's process.
type UniqueID [UniqueIDBytes]byte

// String is the ID as 256 lower-case hexadecimal digits.
func (id UniqueID) String() string { return hex.EncodeToString(id[:]) }

// ParseUniqueID reads what String wrote. Surrounding spaces are ignored.
func ParseUniqueID(s string) (UniqueID, error) {
	var id UniqueID
	s = strings.TrimSpace(s)
	if len(s) != 2*UniqueIDBytes {
		return id, fmt.Errorf("nccl: a unique id is %d hexadecimal digits (as UniqueID.String writes it); got %d characters: %w",
			2*UniqueIDBytes, len(s), errInvalid)
	}
	if _, err := hex.Decode(id[:], []byte(s)); err != nil {
		return id, fmt.Errorf("nccl: a unique id is %d hexadecimal digits: %v: %w", 2*UniqueIDBytes, err, errInvalid)
	}
	return id, nil
}
