// half.cuh: float16 and bfloat16 (Go's half.Float16 and half.BFloat16),
// stored as their bits in an unsigned short; arithmetic is float32's. The
// conversions here give the same bits as package half's:
//   - widening to float32 is exact, NaNs keep sign and payload (the
//     payload in the float32's top fraction bits);
//   - rounding from float32 or float64 is to nearest, ties to even, with
//     subnormals, overflow to ±Inf, and every NaN becoming 0x7fff (what
//     CUDA's __float2half_rn and __float2bfloat16_rn return).
// On a GPU the float32 conversions are the hardware's cvt (sm_80 and
// later), with NaN fixed up by a select (no branch); the emulator (and
// float64 → half everywhere) uses the bit-exact integer rounding below.
// No cuda_fp16.h: the emulator has no CUDA headers.
#pragma once

typedef unsigned short u16;

__device__ __forceinline__ unsigned half_f32_bits(float f) {
  union {
    float f;
    unsigned u;
  } x;
  x.f = f;
  return x.u;
}
__device__ __forceinline__ float half_bits_f32(unsigned u) {
  union {
    unsigned u;
    float f;
  } x;
  x.u = u;
  return x.f;
}
__device__ __forceinline__ u64 half_f64_bits(double d) {
  union {
    double d;
    u64 u;
  } x;
  x.d = d;
  return x.u;
}

__device__ __forceinline__ int half_clz64(u64 m) {
#ifdef __CUDA_ARCH__
  return __clzll((long long)m);
#else
  return __builtin_clzll(m);
#endif
}

// Layouts: P significand bits (the implicit one included), EMIN the least
// normal exponent, INF the +Inf pattern.
#define F16_P 11
#define F16_EMIN (-14)
#define F16_INF 0x7c00u
#define BF16_P 8
#define BF16_EMIN (-126)
#define BF16_INF 0x7f80u

// half_round is the 16-bit pattern nearest to m * 2^e (m > 0), ties to
// even, with sign (0 or 0x8000) set: the result's quantum is 2^(max(E,
// emin) - (p-1)) for the value's exponent E, so that subnormals come out
// of the same integer rounding, and a carry out of the significand moves
// into the exponent (or to Inf) by the addition.
__device__ __forceinline__ u16 half_round(unsigned sign, u64 m, int e, int p, int emin, unsigned inf) {
  const int lz = half_clz64(m);
  m <<= lz;
  e -= lz;  // m in [2^63, 2^64)
  const int E = e + 63;
  const int Eq = E < emin ? emin : E;
  const int s = Eq - (p - 1) - e;  // bits of m below the quantum, > 0
  u64 r;
  if (s > 64) {
    r = 0;
  } else if (s == 64) {
    r = m > (1ull << 63) ? 1 : 0;  // exactly half a quantum ties to 0
  } else {
    r = m >> s;
    const u64 rem = m & ((1ull << s) - 1), hf = 1ull << (s - 1);
    if (rem > hf || (rem == hf && (r & 1))) r++;
  }
  u64 bits = ((u64)(Eq - emin) << (p - 1)) + r;
  if (bits > inf) bits = inf;
  return (u16)(sign | (unsigned)bits);
}

// Rounding from float32 and float64 in integers: bit-exact on any machine.
__device__ __forceinline__ u16 half_from_f32_soft(float f, int p, int emin, unsigned inf) {
  const unsigned u = half_f32_bits(f), sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return 0x7fff;
  if (a == 0x7f800000u) return (u16)(sign | inf);
  if (a == 0) return (u16)sign;
  const unsigned ex = a >> 23, m = a & 0x7fffffu;
  return ex == 0 ? half_round(sign, m, -149, p, emin, inf) : half_round(sign, m | 0x800000u, (int)ex - 150, p, emin, inf);
}
__device__ __forceinline__ u16 half_from_f64_soft(double d, int p, int emin, unsigned inf) {
  const u64 u = half_f64_bits(d), a = u & 0x7fffffffffffffffull;
  const unsigned sign = (unsigned)(u >> 48) & 0x8000u;
  if (a > 0x7ff0000000000000ull) return 0x7fff;
  if (a == 0x7ff0000000000000ull) return (u16)(sign | inf);
  if (a == 0) return (u16)sign;
  const int ex = (int)(a >> 52);
  const u64 m = a & 0xfffffffffffffull;
  return ex == 0 ? half_round(sign, m, -1074, p, emin, inf) : half_round(sign, m | (1ull << 52), ex - 1075, p, emin, inf);
}

// f16_to_f32 widens a float16 exactly.
__device__ __forceinline__ float f16_to_f32_soft(u16 h) {
  const unsigned s = (unsigned)(h & 0x8000u) << 16, ex = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (ex == 31) return half_bits_f32(s | 0x7f800000u | m << 13);
  if (ex == 0) {
    const float v = (float)m * 5.9604644775390625e-08f;  // m * 2^-24, exact
    return s ? -v : v;
  }
  return half_bits_f32(s | (ex + 112) << 23 | m << 13);
}

__device__ __forceinline__ float f16_to_f32(u16 h) {
#ifdef __CUDA_ARCH__
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  // A NaN keeps its sign and payload, as package half widens it.
  const unsigned nan = ((unsigned)(h & 0x8000u) << 16) | 0x7f800000u | (unsigned)(h & 0x3ffu) << 13;
  return (h & 0x7fffu) > 0x7c00u ? half_bits_f32(nan) : f;
#else
  return f16_to_f32_soft(h);
#endif
}

__device__ __forceinline__ float bf16_to_f32(u16 b) { return half_bits_f32((unsigned)b << 16); }

__device__ __forceinline__ u16 f32_to_f16(float f) {
#ifdef __CUDA_ARCH__
  u16 h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return f != f ? (u16)0x7fff : h;
#else
  return half_from_f32_soft(f, F16_P, F16_EMIN, F16_INF);
#endif
}

__device__ __forceinline__ u16 f32_to_bf16(float f) {
#ifdef __CUDA_ARCH__
  u16 h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return f != f ? (u16)0x7fff : h;
#else
  return half_from_f32_soft(f, BF16_P, BF16_EMIN, BF16_INF);
#endif
}

// From float64 in one rounding (through float32 would round twice).
__device__ __forceinline__ u16 f64_to_f16(double d) { return half_from_f64_soft(d, F16_P, F16_EMIN, F16_INF); }
__device__ __forceinline__ u16 f64_to_bf16(double d) { return half_from_f64_soft(d, BF16_P, BF16_EMIN, BF16_INF); }

// Fill: the 2-byte pattern (both types), as kernels.cu's fill kernels.
KERNEL gocuda_fill_f16(u16* dst, u64 v, i64 n) { map0(dst, n, FillF<u16>{(u16)v}); }
KERNEL gocuda_fill_bf16(u16* dst, u64 v, i64 n) { map0(dst, n, FillF<u16>{(u16)v}); }
