package nccl

import (
	"math"
	"unsafe"

	"github.com/gocuda/gocuda/backend"
)

// The host implementation's arithmetic: reductions over byte views of
// every rank's buffer, in rank order.

// bytesAt is the n bytes at host-backend address p. The memory is mapped
// from the OS, outside the Go heap, so the collector never looks at it;
// the indirection keeps vet's uintptr-to-pointer check quiet for this one
// deliberate conversion (kernels and the host backend do the same).
func bytesAt(p backend.Ptr, n uint64) []byte {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&p))), n)
}

// scratch is n bytes of Go memory aligned for any element type.
func scratch(n uint64) []byte {
	if n == 0 {
		return nil
	}
	words := make([]uint64, (n+7)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), n)
}

// as views b as elements of T; b is aligned for T (check and scratch
// see to it).
func as[T any](b []byte) []T {
	var z T
	n := len(b) / int(unsafe.Sizeof(z))
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), n)
}

func asAll[T any](bs [][]byte) [][]T {
	out := make([][]T, len(bs))
	for i, b := range bs {
		out[i] = as[T](b)
	}
	return out
}

// reduce sets dst to red over srcs, element by element, for nranks ranks.
func reduce(dt DataType, red Op, dst []byte, srcs [][]byte) {
	switch dt {
	case Int8:
		reduceInt(red, as[int8](dst), asAll[int8](srcs))
	case Uint8:
		reduceInt(red, as[uint8](dst), asAll[uint8](srcs))
	case Int32:
		reduceInt(red, as[int32](dst), asAll[int32](srcs))
	case Uint32:
		reduceInt(red, as[uint32](dst), asAll[uint32](srcs))
	case Int64:
		reduceInt(red, as[int64](dst), asAll[int64](srcs))
	case Uint64:
		reduceInt(red, as[uint64](dst), asAll[uint64](srcs))
	case Float32:
		reduceFloat(red, as[float32](dst), asAll[float32](srcs))
	case Float64:
		reduceFloat(red, as[float64](dst), asAll[float64](srcs))
	case Float16:
		reduceWidened(red, as[uint16](dst), asAll[uint16](srcs), halfToFloat, floatToHalf)
	case BFloat16:
		reduceWidened(red, as[uint16](dst), asAll[uint16](srcs), bfloatToFloat, floatToBfloat)
	}
}

type integer interface {
	~int8 | ~uint8 | ~int32 | ~uint32 | ~int64 | ~uint64
}

// reduceInt: wrapping sums and products, as C's unsigned arithmetic and
// NCCL's kernels give; Avg divides the sum, rounding towards zero.
func reduceInt[T integer](red Op, dst []T, srcs [][]T) {
	if red == Avg {
		fold(Sum, dst, srcs)
		n := T(len(srcs))
		for i := range dst {
			dst[i] /= n
		}
		return
	}
	fold(red, dst, srcs)
}

// reduceFloat: Avg multiplies each element by 1/ranks before summing, as
// NCCL's ncclAvg does for floating-point types.
func reduceFloat[T float32 | float64](red Op, dst []T, srcs [][]T) {
	if red == Avg {
		scale := 1 / T(len(srcs))
		for i := range dst {
			var acc T
			for _, s := range srcs {
				acc += s[i] * scale
			}
			dst[i] = acc
		}
		return
	}
	fold(red, dst, srcs)
}

// fold sets dst to the ranks' srcs combined in rank order by red (Sum,
// Prod, Max or Min).
func fold[T integer | float32 | float64](red Op, dst []T, srcs [][]T) {
	copy(dst, srcs[0])
	for _, s := range srcs[1:] {
		switch red {
		case Sum:
			for i, v := range s {
				dst[i] += v
			}
		case Prod:
			for i, v := range s {
				dst[i] *= v
			}
		case Max:
			for i, v := range s {
				dst[i] = max(dst[i], v)
			}
		case Min:
			for i, v := range s {
				dst[i] = min(dst[i], v)
			}
		}
	}
}

// reduceWidened reduces 16-bit floats in float32 and rounds once.
func reduceWidened(red Op, dst []uint16, srcs [][]uint16, widen func(uint16) float32, narrow func(float32) uint16) {
	wide := make([][]float32, len(srcs))
	for r, s := range srcs {
		wide[r] = make([]float32, len(s))
		for i, v := range s {
			wide[r][i] = widen(v)
		}
	}
	out := make([]float32, len(dst))
	reduceFloat(red, out, wide)
	for i, v := range out {
		dst[i] = narrow(v)
	}
}

// halfToFloat converts an IEEE 754 binary16 to float32, exactly.
func halfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch exp {
	case 0: // zero or subnormal: mant × 2⁻²⁴
		f := float32(mant) / (1 << 24)
		return math.Float32frombits(math.Float32bits(f) | sign)
	case 0x1f: // infinity or NaN
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
}

// floatToHalf rounds a float32 to the nearest binary16, ties to even.
func floatToHalf(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	mant := b & 0x7fffff
	if exp == 0xff {
		if mant != 0 {
			return sign | 0x7e00 // a quiet NaN
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00 // too large: infinity
	}
	if e <= 0 { // subnormal in binary16 (or zero)
		if e < -10 {
			return sign
		}
		m := mant | 0x800000
		shift := uint32(14 - e)
		h := m >> shift
		rem, halfway := m&(1<<shift-1), uint32(1)<<(shift-1)
		if rem > halfway || rem == halfway && h&1 == 1 {
			h++
		}
		return sign | uint16(h)
	}
	h := uint32(e)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || rem == 0x1000 && h&1 == 1 {
		h++ // a carry into the exponent is right, up to infinity
	}
	return sign | uint16(h)
}

func bfloatToFloat(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// floatToBfloat rounds a float32 to the nearest bfloat16, ties to even.
func floatToBfloat(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 {
		return uint16(b>>16) | 0x40 // NaN stays NaN
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}
