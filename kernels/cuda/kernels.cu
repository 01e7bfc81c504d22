// kernels.cu: gocuda's array kernels, compiled to PTX by scripts/gen-ptx.sh
// and embedded in package kernels (kernels/ptx/kernels.ptx).
//
// Every exported kernel is extern "C" and named gocuda_<op>_<dtype>, with
// dtype one of f32, f64, i32, i64, u8, c64, b8, i8, i16, u32 (Go's float32,
// float64, int32, int64, uint8, complex64, bool, int8, int16, uint32; f16 and
// bf16 are package half's); reductions come in two kernels, _pass1 and
// _pass2. The elementwise operations of the table (kernels/internal/optable)
// are generated into ops_gen.cuh, included at the end.
// The Go side (kernels/gpu.go) builds the same names, and a test checks that
// this file's PTX defines every one of them.
//
// Conventions the Go side relies on:
//   - Blocks are THREADS (256) threads; grids are 1-D and sized in Go from
//     the device's multiprocessor count. Every elementwise kernel is a
//     grid-stride loop, correct for any grid of at least one block.
//   - Lengths are 64-bit (long long): arrays past 2^31 elements work.
//   - Scalars (fill values, the scalar operand, alpha) arrive as the 64 bits
//     of the Go value (unsigned long long): a float32 or int32 in the low 32
//     bits, a uint8 in the low 8, a complex64 as real (low 32) and imaginary
//     (high 32), as Go lays it out in memory.
//   - Elementwise kernels take 16-byte vector loads and stores when every
//     pointer they touch is 16-byte aligned, and fall back to one element a
//     thread otherwise (views at an offset). dst may equal an input exactly
//     (in-place), but must not overlap one partially.
//   - Integer arithmetic wraps (two's complement) as in Go; integer division
//     by zero gives 0 (Go would panic), and MinInt / -1 gives MinInt as in Go.
//   - Reductions are deterministic: each block reduces a fixed, grid-strided
//     share in a fixed order, pass 2 reduces the block partials in one block.
//     Sums of float32 accumulate in float64, of integers in (wrapping) 64-bit
//     integers, of complex64 in complex128. Max and Min propagate NaN.
//   - No --use_fast_math: float division and sqrt are IEEE round-to-nearest,
//     exp/log/tanh have the CUDA math library's documented error (at most
//     2 ulp for float, 1 ulp for double), denormals are kept.

// CUB's headers (the toolkit's, on the machine that runs gen-ptx.sh) for
// cubsort.cuh's wrappers of its onesweep agents, first: before the macros
// below (THREADS, KERNEL, FULL_MASK, ...) could rename anything in them.
// device_radix_sort.cuh before the agents: it includes every helper they use
// (LoadDirectWarpStriped, ThreadStore, ...). The CPU emulator (emu/emu.h
// defines GOCUDA_EMU) has no CUB and skips them, as cubsort.cuh skips CUB's
// part.
#ifndef GOCUDA_EMU
#include <cub/device/device_radix_sort.cuh>
#include <cub/agent/agent_radix_sort_onesweep.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/version.cuh>
// Thread-block clusters (reduce_axes.cuh's column reductions on 9.0).
#include <cooperative_groups.h>
#endif

typedef long long i64;
typedef unsigned long long u64;
typedef unsigned char u8;
typedef signed char i8;
typedef short i16;
typedef unsigned u32;

#define THREADS 256
#define FULL_MASK 0xffffffffu
#define KERNEL extern "C" __global__ void __launch_bounds__(THREADS)

// complex64 as Go lays it out, and the complex128 that sums of it use.
struct c64 {
  float re, im;
};
struct c128 {
  double re, im;
};

// A 16-byte vector of T: loads and stores of it are single 128-bit accesses.
template <class T>
struct alignas(16) Vec {
  T e[16 / sizeof(T)];
};

// Vector loads and stores go through uint4 so that every dtype, uint8
// included, moves as one 128-bit access (ld.global.v4.u32) rather than as
// whatever pieces the compiler picks for a struct of small elements.
template <class T>
__device__ __forceinline__ Vec<T> vload(const Vec<T>* p) {
  union {
    uint4 u;
    Vec<T> v;
  } x;
  x.u = *reinterpret_cast<const uint4*>(p);
  return x.v;
}
template <class T>
__device__ __forceinline__ void vstore(Vec<T>* p, const Vec<T>& v) {
  union {
    uint4 u;
    Vec<T> v;
  } x;
  x.v = v;
  *reinterpret_cast<uint4*>(p) = x.u;
}
// uint8 (and int8, below) by hand: compilers otherwise split the 16 bytes
// into 4-byte pieces.
template <>
__device__ __forceinline__ Vec<u8> vload(const Vec<u8>* p) {
  const uint4 u = *reinterpret_cast<const uint4*>(p);
  const unsigned w[4] = {u.x, u.y, u.z, u.w};
  Vec<u8> v;
#pragma unroll
  for (int k = 0; k < 16; k++) v.e[k] = (u8)(w[k >> 2] >> (8 * (k & 3)));
  return v;
}
template <>
__device__ __forceinline__ void vstore(Vec<u8>* p, const Vec<u8>& v) {
  unsigned w[4] = {0, 0, 0, 0};
#pragma unroll
  for (int k = 0; k < 16; k++) w[k >> 2] |= (unsigned)v.e[k] << (8 * (k & 3));
  *reinterpret_cast<uint4*>(p) = make_uint4(w[0], w[1], w[2], w[3]);
}
template <>
__device__ __forceinline__ Vec<i8> vload(const Vec<i8>* p) {
  const Vec<u8> u = vload(reinterpret_cast<const Vec<u8>*>(p));
  Vec<i8> v;
#pragma unroll
  for (int k = 0; k < 16; k++) v.e[k] = (i8)u.e[k];
  return v;
}
template <>
__device__ __forceinline__ void vstore(Vec<i8>* p, const Vec<i8>& v) {
  Vec<u8> u;
#pragma unroll
  for (int k = 0; k < 16; k++) u.e[k] = (u8)v.e[k];
  vstore(reinterpret_cast<Vec<u8>*>(p), u);
}

__device__ __forceinline__ i64 global_tid() { return (i64)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ i64 global_stride() { return (i64)gridDim.x * blockDim.x; }
__device__ __forceinline__ bool aligned16(const void* p) { return ((u64)p & 15) == 0; }

// ---------------------------------------------------------------------------
// Scalars from their Go bits.

__device__ __forceinline__ void from_bits(u64 b, float* v) { *v = __uint_as_float((unsigned)b); }
__device__ __forceinline__ void from_bits(u64 b, double* v) { *v = __longlong_as_double((i64)b); }
__device__ __forceinline__ void from_bits(u64 b, int* v) { *v = (int)(unsigned)b; }
__device__ __forceinline__ void from_bits(u64 b, i64* v) { *v = (i64)b; }
__device__ __forceinline__ void from_bits(u64 b, u8* v) { *v = (u8)b; }
__device__ __forceinline__ void from_bits(u64 b, i8* v) { *v = (i8)(u8)b; }
__device__ __forceinline__ void from_bits(u64 b, i16* v) { *v = (i16)(unsigned short)b; }
__device__ __forceinline__ void from_bits(u64 b, u32* v) { *v = (u32)b; }
__device__ __forceinline__ void from_bits(u64 b, c64* v) {
  v->re = __uint_as_float((unsigned)b);
  v->im = __uint_as_float((unsigned)(b >> 32));
}
template <class T>
__device__ __forceinline__ T scalar(u64 b) {
  T v;
  from_bits(b, &v);
  return v;
}

// ---------------------------------------------------------------------------
// Arithmetic with Go's semantics. Signed integers go through unsigned
// arithmetic so that overflow wraps instead of being undefined.

__device__ __forceinline__ float add_(float a, float b) { return a + b; }
__device__ __forceinline__ double add_(double a, double b) { return a + b; }
__device__ __forceinline__ int add_(int a, int b) { return (int)((unsigned)a + (unsigned)b); }
__device__ __forceinline__ i64 add_(i64 a, i64 b) { return (i64)((u64)a + (u64)b); }
__device__ __forceinline__ u8 add_(u8 a, u8 b) { return (u8)(a + b); }
__device__ __forceinline__ i8 add_(i8 a, i8 b) { return (i8)(u8)((unsigned)a + (unsigned)b); }
__device__ __forceinline__ i16 add_(i16 a, i16 b) { return (i16)(unsigned short)((unsigned)a + (unsigned)b); }
__device__ __forceinline__ u32 add_(u32 a, u32 b) { return a + b; }
__device__ __forceinline__ c64 add_(c64 a, c64 b) { return c64{a.re + b.re, a.im + b.im}; }

__device__ __forceinline__ float sub_(float a, float b) { return a - b; }
__device__ __forceinline__ double sub_(double a, double b) { return a - b; }
__device__ __forceinline__ int sub_(int a, int b) { return (int)((unsigned)a - (unsigned)b); }
__device__ __forceinline__ i64 sub_(i64 a, i64 b) { return (i64)((u64)a - (u64)b); }
__device__ __forceinline__ u8 sub_(u8 a, u8 b) { return (u8)(a - b); }
__device__ __forceinline__ i8 sub_(i8 a, i8 b) { return (i8)(u8)((unsigned)a - (unsigned)b); }
__device__ __forceinline__ i16 sub_(i16 a, i16 b) { return (i16)(unsigned short)((unsigned)a - (unsigned)b); }
__device__ __forceinline__ u32 sub_(u32 a, u32 b) { return a - b; }
__device__ __forceinline__ c64 sub_(c64 a, c64 b) { return c64{a.re - b.re, a.im - b.im}; }

__device__ __forceinline__ float mul_(float a, float b) { return a * b; }
__device__ __forceinline__ double mul_(double a, double b) { return a * b; }
__device__ __forceinline__ int mul_(int a, int b) { return (int)((unsigned)a * (unsigned)b); }
__device__ __forceinline__ i64 mul_(i64 a, i64 b) { return (i64)((u64)a * (u64)b); }
__device__ __forceinline__ u8 mul_(u8 a, u8 b) { return (u8)((unsigned)a * (unsigned)b); }
__device__ __forceinline__ i8 mul_(i8 a, i8 b) { return (i8)(u8)((unsigned)a * (unsigned)b); }
__device__ __forceinline__ i16 mul_(i16 a, i16 b) { return (i16)(unsigned short)((unsigned)a * (unsigned)b); }
__device__ __forceinline__ u32 mul_(u32 a, u32 b) { return a * b; }
__device__ __forceinline__ c64 mul_(c64 a, c64 b) {
  return c64{a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}

__device__ __forceinline__ float div_(float a, float b) { return a / b; }
__device__ __forceinline__ double div_(double a, double b) { return a / b; }
// Integer division: by zero gives 0; by -1 is negation, which wraps for the
// most negative value (MinInt / -1 == MinInt), as in Go.
__device__ __forceinline__ int div_(int a, int b) {
  if (b == 0) return 0;
  if (b == -1) return (int)(0u - (unsigned)a);
  return a / b;
}
__device__ __forceinline__ i64 div_(i64 a, i64 b) {
  if (b == 0) return 0;
  if (b == -1) return (i64)(0ull - (u64)a);
  return a / b;
}
__device__ __forceinline__ u8 div_(u8 a, u8 b) { return b == 0 ? (u8)0 : (u8)(a / b); }
// int8 and int16 divide in int, where MinInt / -1 does not overflow; the
// narrowing wraps it back to MinInt.
__device__ __forceinline__ i8 div_(i8 a, i8 b) { return b == 0 ? (i8)0 : (i8)(u8)(unsigned)((int)a / (int)b); }
__device__ __forceinline__ i16 div_(i16 a, i16 b) {
  return b == 0 ? (i16)0 : (i16)(unsigned short)(unsigned)((int)a / (int)b);
}
__device__ __forceinline__ u32 div_(u32 a, u32 b) { return b == 0 ? 0u : a / b; }

__device__ __forceinline__ double inf64() { return __longlong_as_double(0x7ff0000000000000ll); }
__device__ __forceinline__ bool isnan_(double x) { return x != x; }
__device__ __forceinline__ bool isinf_(double x) { return fabs(x) == inf64(); }
__device__ __forceinline__ bool isfinite_(double x) { return fabs(x) < inf64(); }
__device__ __forceinline__ double inf2one(double f) { return copysign(isinf_(f) ? 1.0 : 0.0, f); }

// complex64 division as Go does it: widen to complex128, Smith's algorithm
// with C99's corrections for infinities and zeros (runtime.complex128div),
// round back.
__device__ __noinline__ c64 div_(c64 n, c64 m) {
  double a = n.re, b = n.im, c = m.re, d = m.im, e, f;
  if (fabs(c) >= fabs(d)) {
    double ratio = d / c;
    double denom = c + ratio * d;
    e = (a + b * ratio) / denom;
    f = (b - a * ratio) / denom;
  } else {
    double ratio = c / d;
    double denom = d + ratio * c;
    e = (a * ratio + b) / denom;
    f = (b * ratio - a) / denom;
  }
  if (isnan_(e) && isnan_(f)) {
    const double inf = inf64();
    if (c == 0 && d == 0 && (!isnan_(a) || !isnan_(b))) {
      e = copysign(inf, c) * a;
      f = copysign(inf, c) * b;
    } else if ((isinf_(a) || isinf_(b)) && isfinite_(c) && isfinite_(d)) {
      a = inf2one(a);
      b = inf2one(b);
      e = inf * (a * c + b * d);
      f = inf * (b * c - a * d);
    } else if ((isinf_(c) || isinf_(d)) && isfinite_(a) && isfinite_(b)) {
      c = inf2one(c);
      d = inf2one(d);
      e = 0.0 * (a * c + b * d);
      f = 0.0 * (b * c - a * d);
    }
  }
  return c64{(float)e, (float)f};
}

// ---------------------------------------------------------------------------
// Elementwise drivers: dst[i] = f(), f(a[i]), f(a[i], b[i]) for i < n.
// With every pointer 16-byte aligned, each thread moves whole Vec<T>s and
// the first threads of the grid finish the (< 16 / sizeof(T)) tail elements.

template <class T, class F>
__device__ __forceinline__ void map0(T* dst, i64 n, F f) {
  constexpr int K = 16 / sizeof(T);
  const i64 tid = global_tid(), stride = global_stride();
  if (aligned16(dst)) {
    const i64 nv = n / K;
    Vec<T>* d = reinterpret_cast<Vec<T>*>(dst);
    for (i64 i = tid; i < nv; i += stride) {
      Vec<T> z;
#pragma unroll
      for (int k = 0; k < K; k++) z.e[k] = f();
      vstore(d + i, z);
    }
    const i64 t = nv * K + tid;
    if (t < n) dst[t] = f();
  } else {
    for (i64 i = tid; i < n; i += stride) dst[i] = f();
  }
}

template <class T, class F>
__device__ __forceinline__ void map1(T* dst, const T* a, i64 n, F f) {
  constexpr int K = 16 / sizeof(T);
  const i64 tid = global_tid(), stride = global_stride();
  if (aligned16(dst) && aligned16(a)) {
    const i64 nv = n / K;
    Vec<T>* d = reinterpret_cast<Vec<T>*>(dst);
    const Vec<T>* av = reinterpret_cast<const Vec<T>*>(a);
    for (i64 i = tid; i < nv; i += stride) {
      const Vec<T> x = vload(av + i);
      Vec<T> z;
#pragma unroll
      for (int k = 0; k < K; k++) z.e[k] = f(x.e[k]);
      vstore(d + i, z);
    }
    const i64 t = nv * K + tid;
    if (t < n) dst[t] = f(a[t]);
  } else {
    for (i64 i = tid; i < n; i += stride) dst[i] = f(a[i]);
  }
}

template <class T, class F>
__device__ __forceinline__ void map2(T* dst, const T* a, const T* b, i64 n, F f) {
  constexpr int K = 16 / sizeof(T);
  const i64 tid = global_tid(), stride = global_stride();
  if (aligned16(dst) && aligned16(a) && aligned16(b)) {
    const i64 nv = n / K;
    Vec<T>* d = reinterpret_cast<Vec<T>*>(dst);
    const Vec<T>* av = reinterpret_cast<const Vec<T>*>(a);
    const Vec<T>* bv = reinterpret_cast<const Vec<T>*>(b);
    for (i64 i = tid; i < nv; i += stride) {
      const Vec<T> x = vload(av + i);
      const Vec<T> y = vload(bv + i);
      Vec<T> z;
#pragma unroll
      for (int k = 0; k < K; k++) z.e[k] = f(x.e[k], y.e[k]);
      vstore(d + i, z);
    }
    const i64 t = nv * K + tid;
    if (t < n) dst[t] = f(a[t], b[t]);
  } else {
    for (i64 i = tid; i < n; i += stride) dst[i] = f(a[i], b[i]);
  }
}

// ---------------------------------------------------------------------------
// Elementwise operations as functors.

template <class T>
struct FillF {
  T v;
  __device__ __forceinline__ T operator()() const { return v; }
};

struct AddF {
  template <class T>
  __device__ __forceinline__ T operator()(T a, T b) const { return add_(a, b); }
};
struct SubF {
  template <class T>
  __device__ __forceinline__ T operator()(T a, T b) const { return sub_(a, b); }
};
struct MulF {
  template <class T>
  __device__ __forceinline__ T operator()(T a, T b) const { return mul_(a, b); }
};
struct DivF {
  template <class T>
  __device__ __forceinline__ T operator()(T a, T b) const { return div_(a, b); }
};

// dst = a op s, for a scalar s.
template <class T, class Op>
struct ScalarF {
  T s;
  __device__ __forceinline__ T operator()(T a) const { return Op()(a, s); }
};

// y = alpha*x + y
template <class T>
struct AxpyF {
  T alpha;
  __device__ __forceinline__ T operator()(T x, T y) const { return add_(mul_(alpha, x), y); }
};

struct ExpF {
  __device__ __forceinline__ float operator()(float x) const { return expf(x); }
  __device__ __forceinline__ double operator()(double x) const { return exp(x); }
};
// ReluGrad: dst = dy where x > 0, else 0.
struct ReluGradF {
  template <class T>
  __device__ __forceinline__ T operator()(T x, T dy) const { return x > (T)0 ? dy : (T)0; }
};

// ---------------------------------------------------------------------------
// Elementwise kernels.

#define ELEMENTWISE_ALL(T, S)                                                                    \
  KERNEL gocuda_fill_##S(T* dst, u64 v, i64 n) { map0(dst, n, FillF<T>{scalar<T>(v)}); }         \
  KERNEL gocuda_add_##S(T* dst, const T* a, const T* b, i64 n) { map2(dst, a, b, n, AddF()); }   \
  KERNEL gocuda_sub_##S(T* dst, const T* a, const T* b, i64 n) { map2(dst, a, b, n, SubF()); }   \
  KERNEL gocuda_mul_##S(T* dst, const T* a, const T* b, i64 n) { map2(dst, a, b, n, MulF()); }   \
  KERNEL gocuda_div_##S(T* dst, const T* a, const T* b, i64 n) { map2(dst, a, b, n, DivF()); }   \
  KERNEL gocuda_adds_##S(T* dst, const T* a, u64 s, i64 n) {                                     \
    map1(dst, a, n, ScalarF<T, AddF>{scalar<T>(s)});                                             \
  }                                                                                              \
  KERNEL gocuda_subs_##S(T* dst, const T* a, u64 s, i64 n) {                                     \
    map1(dst, a, n, ScalarF<T, SubF>{scalar<T>(s)});                                             \
  }                                                                                              \
  KERNEL gocuda_muls_##S(T* dst, const T* a, u64 s, i64 n) {                                     \
    map1(dst, a, n, ScalarF<T, MulF>{scalar<T>(s)});                                             \
  }                                                                                              \
  KERNEL gocuda_divs_##S(T* dst, const T* a, u64 s, i64 n) {                                     \
    map1(dst, a, n, ScalarF<T, DivF>{scalar<T>(s)});                                             \
  }

ELEMENTWISE_ALL(float, f32)
ELEMENTWISE_ALL(double, f64)
ELEMENTWISE_ALL(int, i32)
ELEMENTWISE_ALL(i64, i64)
ELEMENTWISE_ALL(u8, u8)
ELEMENTWISE_ALL(c64, c64)
ELEMENTWISE_ALL(i8, i8)
ELEMENTWISE_ALL(i16, i16)
ELEMENTWISE_ALL(u32, u32)

// ---------------------------------------------------------------------------
// Strided binary operations: dst[i] = f(a[..], b[..]) over the row-major
// shape of dst, each input read through its own element strides (0 along a
// dimension it is broadcast over). The Go side (strided.go) simplifies the
// layout first (drops dimensions of 1, merges neighbours contiguous in both
// inputs) and picks a mode:
//   STRIDED_ROW: [rows cols], one input full, the other one row of cols
//     elements, read at i % cols (a bias added to every row);
//   STRIDED_COL: [rows cols], the other input one column of rows elements,
//     read at i / cols; with one row, a single value against a vector;
//   STRIDED_SWAP, with either: the small input is a (f keeps its order);
//   STRIDED_GENERAL: up to STRIDED_DIMS dimensions, right-aligned (leading
//     dimensions of 1 and stride 0), with any strides; Go launches a layout
//     of more dimensions once for each index of the outer ones.
// Row and column move 16-byte vectors when the pointers are 16-byte aligned
// and cols is a whole number of vectors, so that a vector never straddles
// two rows; indices below 2^32 are divided in 32 bits. dst may be the full
// input (in place), never the small one.

#define STRIDED_GENERAL 0
#define STRIDED_ROW 1
#define STRIDED_COL 2
#define STRIDED_SWAP 4
#define STRIDED_DIMS 6

struct Strides {
  i64 d[STRIDED_DIMS], sa[STRIDED_DIMS], sb[STRIDED_DIMS];
};

// i / c, in 32 bits when narrow (every index and c below 2^32): a fraction
// of the cost of 64-bit division, which the GPU does in software.
__device__ __forceinline__ i64 div_index(i64 i, i64 c, bool narrow) {
  return narrow ? (i64)((unsigned)i / (unsigned)c) : i / c;
}

template <class T, class F>
__device__ __forceinline__ void rowcol(T* dst, const T* full, const T* small, i64 n, i64 cols, int mode, F f) {
  constexpr int K = 16 / sizeof(T);
  const i64 tid = global_tid(), stride = global_stride();
  const bool col = (mode & STRIDED_COL) != 0, swap = (mode & STRIDED_SWAP) != 0;
  const bool narrow = n <= 0xffffffffll;
  if (aligned16(dst) && aligned16(full) && (col || aligned16(small)) && cols % K == 0) {
    const i64 nv = n / K;  // n = rows * cols, a multiple of K: no tail
    Vec<T>* d = reinterpret_cast<Vec<T>*>(dst);
    const Vec<T>* fv = reinterpret_cast<const Vec<T>*>(full);
    for (i64 v = tid; v < nv; v += stride) {
      const i64 i = v * K, r = div_index(i, cols, narrow);
      const Vec<T> x = vload(fv + v);
      Vec<T> z;
      if (col) {
        const T y = small[r];
#pragma unroll
        for (int k = 0; k < K; k++) z.e[k] = swap ? f(y, x.e[k]) : f(x.e[k], y);
      } else {
        const Vec<T> y = vload(reinterpret_cast<const Vec<T>*>(small + (i - r * cols)));
#pragma unroll
        for (int k = 0; k < K; k++) z.e[k] = swap ? f(y.e[k], x.e[k]) : f(x.e[k], y.e[k]);
      }
      vstore(d + v, z);
    }
  } else {
    for (i64 i = tid; i < n; i += stride) {
      const i64 r = div_index(i, cols, narrow);
      const T y = small[col ? r : i - r * cols];
      dst[i] = swap ? f(y, full[i]) : f(full[i], y);
    }
  }
}

// StridedCursor walks a thread's elements of a layout of STRIDED_DIMS
// dimensions by the grid's stride: it finds the coordinates of its first
// element and of the stride once (divisions), then steps the coordinates and
// two offsets (oa through s.sa, ob through s.sb) with carries, which need
// none. The strided binary kernels and the strided copy (strided_copy.cuh)
// both walk with it.
struct StridedCursor {
  i64 c[STRIDED_DIMS], st[STRIDED_DIMS], oa, ob;
  __device__ __forceinline__ StridedCursor(i64 tid, i64 stride, const Strides& s) : oa(0), ob(0) {
    i64 x = tid, y = stride;
#pragma unroll
    for (int k = STRIDED_DIMS - 1; k > 0; k--) {
      c[k] = x % s.d[k];
      x /= s.d[k];
      st[k] = y % s.d[k];
      y /= s.d[k];
    }
    c[0] = x;
    st[0] = y;  // the outermost coordinate does not wrap: past it, i >= n
#pragma unroll
    for (int k = 0; k < STRIDED_DIMS; k++) {
      oa += c[k] * s.sa[k];
      ob += c[k] * s.sb[k];
    }
  }
  __device__ __forceinline__ void step(const Strides& s) {
    i64 carry = 0;
#pragma unroll
    for (int k = STRIDED_DIMS - 1; k > 0; k--) {
      i64 v = c[k] + st[k] + carry;  // < 2 d[k]: one subtraction wraps it
      carry = v >= s.d[k];
      if (carry) v -= s.d[k];
      const i64 dv = v - c[k];
      oa += dv * s.sa[k];
      ob += dv * s.sb[k];
      c[k] = v;
    }
    const i64 dv = st[0] + carry;
    oa += dv * s.sa[0];
    ob += dv * s.sb[0];
  }
};

// The general mode: dst is contiguous, a and b walk their strides.
template <class T, class F>
__device__ __forceinline__ void strided_general(T* dst, const T* a, const T* b, i64 n, const Strides& s, F f) {
  const i64 tid = global_tid(), stride = global_stride();
  if (tid >= n) return;
  StridedCursor p(tid, stride, s);
  for (i64 i = tid; i < n; i += stride) {
    dst[i] = f(a[p.oa], b[p.ob]);
    p.step(s);
  }
}

template <class T, class F>
__device__ __forceinline__ void strided2(T* dst, const T* a, const T* b, i64 n, int mode, const Strides& s, F f) {
  const i64 cols = s.d[STRIDED_DIMS - 1];
  if (mode == STRIDED_GENERAL)
    strided_general(dst, a, b, n, s, f);
  else if (mode & STRIDED_SWAP)
    rowcol(dst, b, a, n, cols, mode, f);
  else
    rowcol(dst, a, b, n, cols, mode, f);
}

#define STRIDED_PARAMS(p) i64 p##0, i64 p##1, i64 p##2, i64 p##3, i64 p##4, i64 p##5
#define STRIDED_VALUES(p) {p##0, p##1, p##2, p##3, p##4, p##5}
#define STRIDED_ONE(OP, F, T, S)                                                                           \
  KERNEL gocuda_##OP##_strided_##S(T* dst, const T* a, const T* b, i64 n, int mode, STRIDED_PARAMS(d),    \
                                   STRIDED_PARAMS(sa), STRIDED_PARAMS(sb)) {                              \
    const Strides s = {STRIDED_VALUES(d), STRIDED_VALUES(sa), STRIDED_VALUES(sb)};                         \
    strided2(dst, a, b, n, mode, s, F());                                                                  \
  }
#define STRIDED_ALL(T, S)       \
  STRIDED_ONE(add, AddF, T, S)  \
  STRIDED_ONE(sub, SubF, T, S)  \
  STRIDED_ONE(mul, MulF, T, S)  \
  STRIDED_ONE(div, DivF, T, S)

STRIDED_ALL(float, f32)
STRIDED_ALL(double, f64)
STRIDED_ALL(int, i32)
STRIDED_ALL(i64, i64)
STRIDED_ALL(u8, u8)
STRIDED_ALL(c64, c64)
STRIDED_ALL(i8, i8)
STRIDED_ALL(i16, i16)
STRIDED_ALL(u32, u32)

// y = alpha*x + y (Scale is muls in place).
#define AXPY(T, S) \
  KERNEL gocuda_axpy_##S(T* y, const T* x, u64 alpha, i64 n) { map2(y, x, y, n, AxpyF<T>{scalar<T>(alpha)}); }

AXPY(float, f32)
AXPY(double, f64)
AXPY(c64, c64)

// Exp, Log, Tanh, Sqrt, Abs, Neg, Relu and Sigmoid come from the table
// (ops_gen.cuh) since it took them over.
#define UNARY_FLOAT(T, S) \
  KERNEL gocuda_relugrad_##S(T* dst, const T* x, const T* dy, i64 n) { map2(dst, x, dy, n, ReluGradF()); }

UNARY_FLOAT(float, f32)
UNARY_FLOAT(double, f64)

// ---------------------------------------------------------------------------
// Reductions.

// Lifting an element into the accumulator type (the pointer only picks the
// overload).
template <class T>
__device__ __forceinline__ T lift(T v, T*) { return v; }
__device__ __forceinline__ double lift(float v, double*) { return (double)v; }
__device__ __forceinline__ u64 lift(int v, u64*) { return (u64)(i64)v; }
__device__ __forceinline__ u64 lift(i64 v, u64*) { return (u64)v; }
__device__ __forceinline__ u64 lift(u8 v, u64*) { return (u64)v; }
__device__ __forceinline__ u64 lift(i8 v, u64*) { return (u64)(i64)v; }
__device__ __forceinline__ u64 lift(i16 v, u64*) { return (u64)(i64)v; }
__device__ __forceinline__ u64 lift(u32 v, u64*) { return (u64)v; }
__device__ __forceinline__ c128 lift(c64 v, c128*) { return c128{(double)v.re, (double)v.im}; }

__device__ __forceinline__ c128 operator+(c128 a, c128 b) { return c128{a.re + b.re, a.im + b.im}; }

// The identities of Max and Min.
__device__ __forceinline__ float lowest(float*) { return __int_as_float((int)0xff800000u); }  // -Inf
__device__ __forceinline__ double lowest(double*) { return __longlong_as_double((i64)0xfff0000000000000ull); }
__device__ __forceinline__ int lowest(int*) { return (int)0x80000000u; }
__device__ __forceinline__ i64 lowest(i64*) { return (i64)0x8000000000000000ull; }
__device__ __forceinline__ u8 lowest(u8*) { return 0; }
__device__ __forceinline__ i8 lowest(i8*) { return (i8)-128; }
__device__ __forceinline__ i16 lowest(i16*) { return (i16)-32768; }
__device__ __forceinline__ u32 lowest(u32*) { return 0u; }
__device__ __forceinline__ float highest(float*) { return __int_as_float(0x7f800000); }  // +Inf
__device__ __forceinline__ double highest(double*) { return __longlong_as_double(0x7ff0000000000000ll); }
__device__ __forceinline__ int highest(int*) { return 0x7fffffff; }
__device__ __forceinline__ i64 highest(i64*) { return 0x7fffffffffffffffll; }
__device__ __forceinline__ u8 highest(u8*) { return 255; }
__device__ __forceinline__ i8 highest(i8*) { return 127; }
__device__ __forceinline__ i16 highest(i16*) { return 32767; }
__device__ __forceinline__ u32 highest(u32*) { return 0xffffffffu; }

struct SumOp {
  template <class A>
  __device__ __forceinline__ A operator()(A a, A b) const { return a + b; }
};
// Max and Min propagate NaN whatever the order: once the accumulator is NaN
// no comparison replaces it, and a NaN operand always replaces it.
struct MaxOp {
  template <class A>
  __device__ __forceinline__ A operator()(A a, A b) const { return (b > a || b != b) ? b : a; }
};
struct MinOp {
  template <class A>
  __device__ __forceinline__ A operator()(A a, A b) const { return (b < a || b != b) ? b : a; }
};

__device__ __forceinline__ float shfl_down(float v, int o) { return __shfl_down_sync(FULL_MASK, v, o); }
__device__ __forceinline__ double shfl_down(double v, int o) { return __shfl_down_sync(FULL_MASK, v, o); }
__device__ __forceinline__ int shfl_down(int v, int o) { return __shfl_down_sync(FULL_MASK, v, o); }
__device__ __forceinline__ i64 shfl_down(i64 v, int o) { return __shfl_down_sync(FULL_MASK, v, o); }
__device__ __forceinline__ u64 shfl_down(u64 v, int o) { return __shfl_down_sync(FULL_MASK, v, o); }
__device__ __forceinline__ u8 shfl_down(u8 v, int o) { return (u8)__shfl_down_sync(FULL_MASK, (unsigned)v, o); }
__device__ __forceinline__ i8 shfl_down(i8 v, int o) { return (i8)__shfl_down_sync(FULL_MASK, (int)v, o); }
__device__ __forceinline__ i16 shfl_down(i16 v, int o) { return (i16)__shfl_down_sync(FULL_MASK, (int)v, o); }
__device__ __forceinline__ u32 shfl_down(u32 v, int o) { return __shfl_down_sync(FULL_MASK, v, o); }
__device__ __forceinline__ c128 shfl_down(c128 v, int o) {
  return c128{__shfl_down_sync(FULL_MASK, v.re, o), __shfl_down_sync(FULL_MASK, v.im, o)};
}

// The warp's reduction lands in lane 0; every lane of the warp must call it.
template <class A, class Op>
__device__ __forceinline__ A warp_reduce(A v, Op op) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = op(v, shfl_down(v, o));
  return v;
}

// The block's reduction lands in thread 0; every thread must call it, once
// per kernel.
template <class A, class Op>
__device__ __forceinline__ A block_reduce(A v, A ident, Op op) {
  __shared__ A warps[THREADS / 32];
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  v = warp_reduce(v, op);
  if (lane == 0) warps[w] = v;
  __syncthreads();
  if (w == 0) {
    v = lane < (int)(blockDim.x >> 5) ? warps[lane] : ident;
    v = warp_reduce(v, op);
  }
  return v;
}

// Pass 1: block b reduces its grid-strided share of x and writes out[b].
// Each thread keeps 4 independent 16-byte loads in flight (and 4
// accumulators, combined in a fixed order at the end), so that the grid Go
// sizes to the resident blocks (reduceBlocksPerSM a multiprocessor, which
// the kernels' __launch_bounds__ guarantee) streams at full bandwidth.
// Which elements a thread takes, and in what order, depends only on n and
// the grid: deterministic.
template <class T, class A, class Op>
__device__ __forceinline__ void reduce1(const T* x, i64 n, A* out, A ident, Op op) {
  constexpr int K = 16 / sizeof(T), U = 4;
  const i64 tid = global_tid(), stride = global_stride();
  A acc[U] = {ident, ident, ident, ident};
  if (aligned16(x)) {
    const i64 nv = n / K;
    const Vec<T>* xv = reinterpret_cast<const Vec<T>*>(x);
    i64 i = tid;
    for (; i + (U - 1) * stride < nv; i += U * stride) {
      Vec<T> v[U];
#pragma unroll
      for (int u = 0; u < U; u++) v[u] = vload(xv + i + u * stride);
#pragma unroll
      for (int u = 0; u < U; u++)
#pragma unroll
        for (int k = 0; k < K; k++) acc[u] = op(acc[u], lift(v[u].e[k], (A*)0));
    }
    for (; i < nv; i += stride) {
      const Vec<T> v = vload(xv + i);
#pragma unroll
      for (int k = 0; k < K; k++) acc[0] = op(acc[0], lift(v.e[k], (A*)0));
    }
    const i64 t = nv * K + tid;
    if (t < n) acc[0] = op(acc[0], lift(x[t], (A*)0));
  } else {
    i64 i = tid;
    for (; i + (U - 1) * stride < n; i += U * stride) {
      T v[U];
#pragma unroll
      for (int u = 0; u < U; u++) v[u] = x[i + u * stride];
#pragma unroll
      for (int u = 0; u < U; u++) acc[u] = op(acc[u], lift(v[u], (A*)0));
    }
    for (; i < n; i += stride) acc[0] = op(acc[0], lift(x[i], (A*)0));
  }
  A r = op(op(acc[0], acc[1]), op(acc[2], acc[3]));
  r = block_reduce(r, ident, op);
  if (threadIdx.x == 0) out[blockIdx.x] = r;
}

// Pass 1 of a dot product: sum of x[i]*y[i], each product in A, loads in
// flight as reduce1's.
template <class T, class A>
__device__ __forceinline__ void dot1(const T* x, const T* y, i64 n, A* out) {
  constexpr int K = 16 / sizeof(T), U = 4;
  const i64 tid = global_tid(), stride = global_stride();
  A acc[U] = {0, 0, 0, 0};
  if (aligned16(x) && aligned16(y)) {
    const i64 nv = n / K;
    const Vec<T>* xv = reinterpret_cast<const Vec<T>*>(x);
    const Vec<T>* yv = reinterpret_cast<const Vec<T>*>(y);
    i64 i = tid;
    for (; i + (U - 1) * stride < nv; i += U * stride) {
      Vec<T> a[U], b[U];
#pragma unroll
      for (int u = 0; u < U; u++) {
        a[u] = vload(xv + i + u * stride);
        b[u] = vload(yv + i + u * stride);
      }
#pragma unroll
      for (int u = 0; u < U; u++)
#pragma unroll
        for (int k = 0; k < K; k++) acc[u] += lift(a[u].e[k], (A*)0) * lift(b[u].e[k], (A*)0);
    }
    for (; i < nv; i += stride) {
      const Vec<T> a = vload(xv + i);
      const Vec<T> b = vload(yv + i);
#pragma unroll
      for (int k = 0; k < K; k++) acc[0] += lift(a.e[k], (A*)0) * lift(b.e[k], (A*)0);
    }
    const i64 t = nv * K + tid;
    if (t < n) acc[0] += lift(x[t], (A*)0) * lift(y[t], (A*)0);
  } else {
    for (i64 i = tid; i < n; i += stride) acc[0] += lift(x[i], (A*)0) * lift(y[i], (A*)0);
  }
  A r = (acc[0] + acc[1]) + (acc[2] + acc[3]);
  r = block_reduce(r, (A)0, SumOp());
  if (threadIdx.x == 0) out[blockIdx.x] = r;
}

// Pass 2: one block reduces the m partials of pass 1 into out[0].
template <class A, class Op>
__device__ __forceinline__ void reduce2(const A* partials, int m, A* out, A ident, Op op) {
  A acc = ident;
  for (int i = threadIdx.x; i < m; i += blockDim.x) acc = op(acc, partials[i]);
  acc = block_reduce(acc, ident, op);
  if (threadIdx.x == 0) out[0] = acc;
}

// The whole-array pass-1 kernels keep 4 blocks an SM resident (at most 64
// registers a thread): Go sizes their grids to that (reduceBlocksPerSM).
#define KERNEL_R4 extern "C" __global__ void __launch_bounds__(THREADS, 4)

#define SUM(T, S, A)                                                                                      \
  KERNEL_R4 gocuda_sum_##S##_pass1(const T* x, i64 n, A* out) { reduce1(x, n, out, A(), SumOp()); }          \
  KERNEL gocuda_sum_##S##_pass2(const A* partials, int m, A* out) { reduce2(partials, m, out, A(), SumOp()); }

SUM(float, f32, double)
SUM(double, f64, double)
SUM(int, i32, u64)
SUM(i64, i64, u64)
SUM(u8, u8, u64)
SUM(c64, c64, c128)
SUM(i8, i8, u64)
SUM(i16, i16, u64)
SUM(u32, u32, u64)

#define MINMAX(T, S)                                                                                            \
  KERNEL_R4 gocuda_max_##S##_pass1(const T* x, i64 n, T* out) { reduce1(x, n, out, lowest((T*)0), MaxOp()); }      \
  KERNEL gocuda_max_##S##_pass2(const T* partials, int m, T* out) {                                             \
    reduce2(partials, m, out, lowest((T*)0), MaxOp());                                                          \
  }                                                                                                             \
  KERNEL_R4 gocuda_min_##S##_pass1(const T* x, i64 n, T* out) { reduce1(x, n, out, highest((T*)0), MinOp()); }     \
  KERNEL gocuda_min_##S##_pass2(const T* partials, int m, T* out) {                                             \
    reduce2(partials, m, out, highest((T*)0), MinOp());                                                         \
  }

MINMAX(float, f32)
MINMAX(double, f64)
MINMAX(int, i32)
MINMAX(i64, i64)
MINMAX(u8, u8)
MINMAX(i8, i8)
MINMAX(i16, i16)
MINMAX(u32, u32)

#define DOT(T, S)                                                                                             \
  KERNEL_R4 gocuda_dot_##S##_pass1(const T* x, const T* y, i64 n, double* out) { dot1(x, y, n, out); }           \
  KERNEL gocuda_dot_##S##_pass2(const double* partials, int m, double* out) {                                 \
    reduce2(partials, m, out, 0.0, SumOp());                                                                  \
  }

DOT(float, f32)
DOT(double, f64)

// ---------------------------------------------------------------------------
// Row reductions of a row-major rows x cols matrix into a vector of rows
// elements: one warp a row, lanes striding over the columns (coalesced),
// warps striding over the rows. Sums accumulate as Sum does.

template <class T, class A, class Op>
__device__ __forceinline__ void rows_reduce(T* dst, const T* x, i64 rows, i64 cols, A ident, Op op) {
  const i64 warp = global_tid() >> 5, nwarps = global_stride() >> 5;
  const int lane = threadIdx.x & 31;
  for (i64 r = warp; r < rows; r += nwarps) {  // uniform across the warp
    const T* row = x + r * cols;
    A acc = ident;
    for (i64 c = lane; c < cols; c += 32) acc = op(acc, lift(row[c], (A*)0));
    acc = warp_reduce(acc, op);
    if (lane == 0) dst[r] = (T)acc;
  }
}

#define ROWS(T, S, A)                                                                                      \
  KERNEL gocuda_sumrows_##S(T* dst, const T* x, i64 rows, i64 cols) {                                      \
    rows_reduce(dst, x, rows, cols, A(), SumOp());                                                         \
  }                                                                                                        \
  KERNEL gocuda_maxrows_##S(T* dst, const T* x, i64 rows, i64 cols) {                                      \
    rows_reduce(dst, x, rows, cols, lowest((T*)0), MaxOp());                                               \
  }

ROWS(float, f32, double)
ROWS(double, f64, double)

// ---------------------------------------------------------------------------
// Spin busy-waits for ns nanoseconds of the GPU's global timer (launched as
// one thread): a long-running kernel for tests of stream ordering. The
// global timer counts nanoseconds whatever the SM clock, which clock64 does
// not.

__device__ __forceinline__ u64 globaltimer() {
  u64 t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

KERNEL gocuda_spin(u64 ns) {
  const u64 start = globaltimer();
  while (globaltimer() - start < ns) {
  }
}

// ---------------------------------------------------------------------------
// Layers of a small neural network (float32 and float64), on row-major
// batches: rows are examples, columns features or classes.

// AddRowVec: dst[r, c] = x[r, c] + b[c], a bias broadcast over the rows of a
// batch. One warp a row as in rows_reduce: lanes stride over the columns
// (coalesced, and b is read the same way by every warp, so it stays in L1),
// and no thread divides an index by cols. dst may be x.
template <class T>
__device__ __forceinline__ void add_row_vec(T* dst, const T* x, const T* b, i64 rows, i64 cols) {
  const i64 warp = global_tid() >> 5, nwarps = global_stride() >> 5;
  const int lane = threadIdx.x & 31;
  for (i64 r = warp; r < rows; r += nwarps) {
    T* d = dst + r * cols;
    const T* row = x + r * cols;
    for (i64 c = lane; c < cols; c += 32) d[c] = row[c] + b[c];
  }
}

// SumCols: dst[c] = sum over r of x[r, c], the gradient of a bias, in two
// passes of one tiled column sum. Pass 1: a block takes a tile of 32
// columns (a warp reads 32 consecutive elements of a row: coalesced) and
// one of `chunks` equal runs of rows, which its 8 warps split; the 8 partial
// sums of a column are added in a fixed order. With one chunk that is the
// column's sum, written to dst, and there is no pass 2. With more, each
// chunk's sums go to partials (chunk-major, chunks x cols accumulators),
// and pass 2 is the same sum over that chunks x cols matrix in one chunk,
// so its 8 warps share a column's chunks too. Either way the order of every
// addition is fixed by the grid, so the result is deterministic. The chunks
// are what fill the GPU when the matrix is narrow: a 1024-column batch is
// only 32 tiles, 32 blocks on a GPU that keeps a thousand resident. float32
// accumulates in float64, as Sum does.
//
// The grid is tiles x chunks blocks (Go sizes it; gridDim.x is a multiple
// of chunks): block b takes chunk b / gtiles and tiles b % gtiles, b %
// gtiles + gtiles, ... (with one chunk the grid may be smaller than the
// tiles, and blocks stride over them). Every thread of a block runs the same
// number of tiles, so the __syncthreads are reached by all.
template <class In, class T, class A>
__device__ __forceinline__ void sum_cols(T* dst, A* partials, const In* x, i64 rows, i64 cols, i64 chunks) {
  constexpr int W = 32, H = THREADS / 32;
  __shared__ A part[H][W];
  const int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;
  const i64 gtiles = gridDim.x / chunks;
  const i64 chunk = blockIdx.x / gtiles;
  const i64 per = (rows + chunks - 1) / chunks;
  const i64 r0 = chunk * per, r1 = r0 + per < rows ? r0 + per : rows;
  for (i64 c0 = (i64)(blockIdx.x % gtiles) * W; c0 < cols; c0 += gtiles * W) {
    const i64 c = c0 + tx;
    A acc = 0;
    // Unrolled so that each warp has several loads in flight: the adds
    // still happen in row order.
    if (c < cols) {
#pragma unroll 4
      for (i64 r = r0 + ty; r < r1; r += H) acc += lift(x[r * cols + c], (A*)0);
    }
    part[ty][tx] = acc;
    __syncthreads();
    if (ty == 0 && c < cols) {
      A s = 0;
#pragma unroll
      for (int k = 0; k < H; k++) s += part[k][tx];
      if (chunks == 1)
        dst[c] = (T)s;
      else
        partials[chunk * cols + c] = s;
    }
    __syncthreads();  // part is reused by the next tile
  }
}

// SoftmaxXent: softmax cross-entropy of each row of logits x against its
// class labels[r] in [0, cols):
//   loss[r]  = log(sum_c exp(x[r, c])) - x[r, labels[r]]
//   dx[r, c] = scale * (softmax(x[r, :])[c] - (c == labels[r]))
// dx is skipped when it is null (forward only); scale is the bits of a T
// (1/batch for the gradient of the mean loss). One warp a row, three sweeps
// over it: the maximum m, then sum exp(x - m) (no exp overflows, and the
// largest term is exactly 1, so the sum is at least 1 and its log is
// finite), then the loss and the gradient. The sum accumulates in float64
// for both types. A label outside [0, cols) has no loss to give: its row's
// loss and gradient are NaN, where the caller will see them.
template <class T>
__device__ __forceinline__ void softmax_xent(T* loss, T* dx, const T* x, const int* labels, i64 rows, i64 cols,
                                             T scale) {
  const i64 warp = global_tid() >> 5, nwarps = global_stride() >> 5;
  const int lane = threadIdx.x & 31;
  const T nan = (T)__longlong_as_double(0x7ff8000000000000ll);
  for (i64 r = warp; r < rows; r += nwarps) {  // uniform across the warp
    const T* row = x + r * cols;
    const int label = labels[r];
    const bool valid = label >= 0 && (i64)label < cols;
    T m = lowest((T*)0);
    for (i64 c = lane; c < cols; c += 32) m = MaxOp()(m, row[c]);
    m = warp_reduce(m, MaxOp());
    m = __shfl_sync(FULL_MASK, m, 0);
    double s = 0;
    for (i64 c = lane; c < cols; c += 32) s += (double)ExpF()(row[c] - m);
    s = warp_reduce(s, SumOp());
    s = __shfl_sync(FULL_MASK, s, 0);
    if (lane == 0) loss[r] = valid ? (T)((double)m + log(s) - (double)row[label]) : nan;
    if (dx != nullptr) {
      T* d = dx + r * cols;
      const T inv = (T)(1.0 / s);
      for (i64 c = lane; c < cols; c += 32) {
        const T p = ExpF()(row[c] - m) * inv;
        d[c] = valid ? scale * (c == label ? p - (T)1 : p) : nan;
      }
    }
  }
}

#define NN(T, S, A)                                                                                  \
  KERNEL gocuda_addrowvec_##S(T* dst, const T* x, const T* b, i64 rows, i64 cols) {                  \
    add_row_vec(dst, x, b, rows, cols);                                                              \
  }                                                                                                  \
  KERNEL gocuda_sumcols_##S##_pass1(T* dst, A* partials, const T* x, i64 rows, i64 cols, i64 chunks) {  \
    sum_cols<T, T, A>(dst, partials, x, rows, cols, chunks);                                         \
  }                                                                                                  \
  KERNEL gocuda_sumcols_##S##_pass2(T* dst, const A* partials, i64 cols, i64 chunks) {                \
    sum_cols<A, T, A>(dst, (A*)nullptr, partials, chunks, cols, 1);                                  \
  }                                                                                                  \
  KERNEL gocuda_softmaxxent_##S(T* loss, T* dx, const T* x, const int* labels, i64 rows, i64 cols, u64 scale) { \
    softmax_xent(loss, dx, x, labels, rows, cols, scalar<T>(scale));                                 \
  }

NN(float, f32, double)
NN(double, f64, double)

#include "strided_copy.cuh"
// The table's elementwise operations (kernels/internal/optable, generated).
#include "ops_gen.cuh"
#include "reduce_axes.cuh"
#include "scan_sort.cuh"
#include "index.cuh"
#include "sort.cuh"
#include "rowsort.cuh"
#include "half_ops.cuh"
#include "sort16.cuh"
#include "int_types_index.cuh"
#include "cubsort.cuh"
