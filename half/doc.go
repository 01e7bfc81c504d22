// Package half provides Float16 (IEEE 754 binary16) and BFloat16
// (bfloat16, float32's top 16 bits), the 16-bit floating-point element
// types of GPU training and inference, as Go values: conversion to and
// from float32 and float64, printing and parsing, and slice conversion.
// It imports only the standard library.
//
// Arithmetic is not defined on the types: compute in float32 (Float32
// is exact) and round the result back, as a GPU kernel does.
//
//	h := half.Float16FromFloat32(0.1)  // 0x2e66, exactly 0.0999755859375
//	fmt.Println(h, h.Float32())        // 0.1 0.099975586
//	b := half.BFloat16FromFloat32(0.1) // 0x3dcd, exactly 0.10009765625
//	sum := half.BFloat16FromFloat32(b.Float32() + b.Float32())
//
// # Rounding
//
// Every conversion into either type rounds to the nearest value, ties to
// even, as CUDA's __float2half_rn and __float2bfloat16_rn do on the GPU:
//
//   - Float16: normal from 2^-14, subnormal down to 2^-24; values from
//     65520 up (halfway from MaxFloat16, 65504, to 2^16) round to +Inf,
//     and those at most 2^-25 (halfway to the smallest subnormal) to zero
//     of their sign.
//   - BFloat16 has float32's exponent range: float32 subnormals round to
//     bfloat16 subnormals, and only the float32 values from halfway
//     between MaxBFloat16 and 2^128 up round to Inf.
//   - Float16FromFloat64 and BFloat16FromFloat64 round once, from the
//     float64's own bits; rounding to float32 first could land exactly on
//     a halfway point and round twice (numpy's float16 also converts
//     from float64 directly).
//   - Every NaN becomes the canonical NaN 0x7fff (NaNFloat16,
//     NaNBFloat16): sign, payload and signalling bit are dropped, as
//     CUDA's conversions drop them, so the host and the GPU produce the
//     same bits. PyTorch on the CPU gives 0x7e00 (keeping the sign) and
//     0x7fc0; numpy keeps sign and payload.
//   - Float32 and Float64 are exact, and each of the 65 536 bit patterns
//     widens to a float32 of its own: a NaN keeps its sign and payload.
//     So Float16FromFloat32(h.Float32()) == h for every h but NaNs.
//
// # Printing and parsing
//
// String prints the shortest decimal that parses back to the same 16-bit
// value, in fmt's %v form for a float32: Float16FromFloat32(0.1) prints
// "0.1", MaxFloat16 "65500" (the decimals nearest 65504 with fewer digits
// that still round to it; numpy prints the same digits), +Inf "+Inf".
// Format gives the same shortest digits for %v and %g, and the exact value
// for a given precision and for %e, %f, %x. ParseFloat16 and ParseBFloat16
// accept what strconv.ParseFloat does and round exactly from the number
// written.
//
// # Names
//
// Conversions into the types are functions named for both ends,
// Float16FromFloat32, BFloat16FromFloat64, and conversions out are methods
// named for the result, Float32, Float64, as in Go's own math.Float32frombits
// and big.Float's Float64: one idiom for both types, and no constructor
// name (New...) that suggests an allocation or hides which input type
// rounds how. Slices convert as copy does, into a caller's slice, for no
// allocation in a loop: Float16sFromFloat32s(dst, src) returns how many
// elements it converted, the shorter length.
package half
