// half_ops.cuh: the hand-written array kernels on float16 and bfloat16
// (kernels/half_ops.go registers them), included at the end of kernels.cu,
// whose drivers (map1, map2, strided2), functors and conventions they use.
// Both types are stored as their 16 bits (u16, half.cuh), so each kernel
// names its type by a converter, F16Cv or BF16Cv, rather than by T.
//
//   add, sub, mul, div (contiguous and strided, row and column broadcast
//   included), adds/subs/muls/divs, axpy, relugrad: each element widened to
//   float32 exactly, computed in float32, rounded once to the type. For +,
//   -, * and / that is the correctly rounded result: float32 has at least
//   2p+2 significand bits for both (p = 11 and 8), so rounding to float32
//   first never changes the final rounding. Axpy is alpha*x + y with the
//   product exact in float32 (2p <= 24 bits) and the sum rounded to float32,
//   then to the type.
//   take, scatter, concat: the 16-bit patterns moved as they are.
//   eye: the pattern of 1 (0x3c00, 0x3f80) on the diagonal.
//   arange: start + i*delta in float32 (delta = second - start, float32's
//   bits from Go), rounded once; dst[1] = second. linspace: in float64 as
//   every type, rounded once from float64.
// Scalars arrive as the Go value's 64 bits: the low 16 are the pattern.
#pragma once
#include "half.cuh"

struct F16Cv {
  static __device__ __forceinline__ float widen(u16 h) { return f16_to_f32(h); }
  static __device__ __forceinline__ u16 narrow(float f) { return f32_to_f16(f); }
};
struct BF16Cv {
  static __device__ __forceinline__ float widen(u16 h) { return bf16_to_f32(h); }
  static __device__ __forceinline__ u16 narrow(float f) { return f32_to_bf16(f); }
};

// a op b for two patterns: widened, Op in float32 (AddF ... DivF), rounded.
template <class Cv, class Op>
struct HalfBinF {
  __device__ __forceinline__ u16 operator()(u16 a, u16 b) const { return Cv::narrow(Op()(Cv::widen(a), Cv::widen(b))); }
};

// a op s for a scalar s, widened once.
template <class Cv, class Op>
struct HalfScalarF {
  float s;
  __device__ __forceinline__ u16 operator()(u16 a) const { return Cv::narrow(Op()(Cv::widen(a), s)); }
};

// y = alpha*x + y: the product is exact in float32, the sum rounds in
// float32 (the _rn intrinsics: no contraction), then to the type.
template <class Cv>
struct HalfAxpyF {
  float alpha;
  __device__ __forceinline__ u16 operator()(u16 x, u16 y) const {
    return Cv::narrow(__fadd_rn(__fmul_rn(alpha, Cv::widen(x)), Cv::widen(y)));
  }
};

// ReluGrad: dy's pattern where x > 0, else +0.
template <class Cv>
struct HalfReluGradF {
  __device__ __forceinline__ u16 operator()(u16 x, u16 dy) const { return Cv::widen(x) > 0.0f ? dy : (u16)0; }
};

// The functors by name: a template's comma cannot pass through a macro.
typedef HalfBinF<F16Cv, AddF> HAddF16;
typedef HalfBinF<F16Cv, SubF> HSubF16;
typedef HalfBinF<F16Cv, MulF> HMulF16;
typedef HalfBinF<F16Cv, DivF> HDivF16;
typedef HalfBinF<BF16Cv, AddF> HAddBF16;
typedef HalfBinF<BF16Cv, SubF> HSubBF16;
typedef HalfBinF<BF16Cv, MulF> HMulBF16;
typedef HalfBinF<BF16Cv, DivF> HDivBF16;

// Eye and linspace reuse index.cuh's templates through a 2-byte type per
// half type: one_ gives its 1, and converting a double rounds once.
struct F16Bits {
  u16 b;
  __device__ __forceinline__ F16Bits() : b(0) {}
  __device__ __forceinline__ explicit F16Bits(double y) : b(f64_to_f16(y)) {}
};
struct BF16Bits {
  u16 b;
  __device__ __forceinline__ BF16Bits() : b(0) {}
  __device__ __forceinline__ explicit BF16Bits(double y) : b(f64_to_bf16(y)) {}
};
__device__ __forceinline__ void one_(F16Bits* v) { v->b = 0x3c00; }
__device__ __forceinline__ void one_(BF16Bits* v) { v->b = 0x3f80; }

// Arange: dst[i] = start + i*delta in float32, rounded once; dst[1] is
// second itself (NumPy's fill of a half array).
template <class Cv>
__device__ __forceinline__ void arange_half(u16* dst, u16 start, u16 second, float delta, i64 n) {
  const float s = Cv::widen(start);
  for (i64 i = global_tid(); i < n; i += global_stride())
    dst[i] = i == 1 ? second : Cv::narrow(__fadd_rn(s, __fmul_rn((float)i, delta)));
}

// HALF_SCALAR: gocuda_NAME_S, dst = a OP s for a scalar s (the Go value's
// pattern in the low 16 bits), widened once, computed in float32, rounded.
#define HALF_SCALAR(CV, S, NAME, OP)                                       \
  KERNEL gocuda_##NAME##_##S(u16* dst, const u16* a, u64 s, i64 n) {       \
    map1(dst, a, n, HalfScalarF<CV, OP>{CV::widen((u16)s)});               \
  }

// HALF_OPS: every hand-written kernel of one half type; take, scatter and
// concat move the 16-bit patterns through index.cuh's INDEX_MOVE.
#define HALF_OPS(CV, BITS, S, ADD, SUB, MUL, DIV)                                                                 \
  KERNEL gocuda_add_##S(u16* dst, const u16* a, const u16* b, i64 n) { map2(dst, a, b, n, ADD()); }               \
  KERNEL gocuda_sub_##S(u16* dst, const u16* a, const u16* b, i64 n) { map2(dst, a, b, n, SUB()); }               \
  KERNEL gocuda_mul_##S(u16* dst, const u16* a, const u16* b, i64 n) { map2(dst, a, b, n, MUL()); }               \
  KERNEL gocuda_div_##S(u16* dst, const u16* a, const u16* b, i64 n) { map2(dst, a, b, n, DIV()); }               \
  HALF_SCALAR(CV, S, adds, AddF)                                                                                  \
  HALF_SCALAR(CV, S, subs, SubF)                                                                                  \
  HALF_SCALAR(CV, S, muls, MulF)                                                                                  \
  HALF_SCALAR(CV, S, divs, DivF)                                                                                  \
  STRIDED_ONE(add, ADD, u16, S)                                                                                   \
  STRIDED_ONE(sub, SUB, u16, S)                                                                                   \
  STRIDED_ONE(mul, MUL, u16, S)                                                                                   \
  STRIDED_ONE(div, DIV, u16, S)                                                                                   \
  KERNEL gocuda_axpy_##S(u16* y, const u16* x, u64 alpha, i64 n) {                                                \
    map2(y, x, y, n, HalfAxpyF<CV>{CV::widen((u16)alpha)});                                                       \
  }                                                                                                               \
  KERNEL gocuda_relugrad_##S(u16* dst, const u16* x, const u16* dy, i64 n) { map2(dst, x, dy, n, HalfReluGradF<CV>()); } \
  KERNEL gocuda_eye_##S(BITS* dst, i64 rows, i64 cols, i64 k) { eye(dst, rows, cols, k); }                        \
  INDEX_MOVE(u16, S)                                                                                              \
  KERNEL gocuda_arange_##S(u16* dst, u64 start, u64 second, u64 delta, i64 n) {                                   \
    arange_half<CV>(dst, (u16)start, (u16)second, __uint_as_float((unsigned)delta), n);                           \
  }                                                                                                               \
  KERNEL gocuda_linspace_##S(BITS* dst, double start, double step, double delta, double div, double stop, i64 n,  \
                             int stepzero, int endpoint) {                                                        \
    linspace(dst, start, step, delta, div, stop, n, stepzero, endpoint);                                          \
  }

HALF_OPS(F16Cv, F16Bits, f16, HAddF16, HSubF16, HMulF16, HDivF16)
HALF_OPS(BF16Cv, BF16Bits, bf16, HAddBF16, HSubBF16, HMulBF16, HDivBF16)
