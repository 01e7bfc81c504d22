// int_types.cuh: the table's C helpers for int8, int16 and uint32 (their
// arithmetic, scalars and reduction identities are with the other types'
// in kernels.cu). Included by ops_gen.cuh; kernels/optable.go has the Go
// twins.

// Saturating float → integer conversions: optable.cuh's sat_to with each
// type's bounds.
__device__ __forceinline__ i8 sat_i8(double x) { return sat_to<i8>(x, -128.0, 127.0); }
__device__ __forceinline__ i16 sat_i16(double x) { return sat_to<i16>(x, -32768.0, 32767.0); }
__device__ __forceinline__ u32 sat_u32(double x) { return sat_to<u32>(x, 0.0, 4294967295.0); }

// |x|, wrapping for the most negative value as Go's -x (abs_(-128) is -128).
__device__ __forceinline__ i8 abs_(i8 x) { return x < 0 ? (i8)(u8)(0u - (unsigned)x) : x; }
__device__ __forceinline__ i16 abs_(i16 x) { return x < 0 ? (i16)(unsigned short)(0u - (unsigned)x) : x; }
