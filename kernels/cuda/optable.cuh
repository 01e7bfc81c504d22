// optable.cuh: the drivers and helpers of the kernels generated from the
// table of elementwise operations (kernels/internal/optable), which
// ops_gen.cuh defines. Written by hand; included by ops_gen.cuh.
//
// The drivers are map1/map2 (kernels.cu) for operands of different element
// types: a comparison reads float32 and writes bool, a conversion reads one
// type and writes another. Each thread moves K elements at a time, K =
// 16 / (the widest operand's size), as one aligned access per operand of
// K * its size bytes (16 for the widest, less for narrower ones), when
// every pointer is aligned to its access; otherwise one element a thread.
// Grid-stride, 64-bit lengths; dst may be an input of its own type exactly.

// Chunk: K elements of T, one aligned access of K * sizeof(T) bytes.
template <class T, int K>
struct alignas(K * sizeof(T)) Chunk {
  T e[K];
};

template <int B>
struct WordOf;
template <>
struct WordOf<1> {
  typedef unsigned char t;
};
template <>
struct WordOf<2> {
  typedef unsigned short t;
};
template <>
struct WordOf<4> {
  typedef unsigned t;
};
template <>
struct WordOf<8> {
  typedef unsigned long long t;
};
template <>
struct WordOf<16> {
  typedef uint4 t;
};

// Chunk loads and stores, through one integer word of the chunk's size.
// One-byte elements (uint8, bool) are unpacked and packed with shifts of
// 32-bit words, as kernels.cu's vload does for uint8, so that the compiler
// keeps one wide access instead of splitting it.
template <class T, int K>
__device__ __forceinline__ Chunk<T, K> cload(const T* p) {
  typedef typename WordOf<K * sizeof(T)>::t W;
  Chunk<T, K> c;
  if constexpr (sizeof(T) == 1 && K >= 4) {
    union {
      W w;
      unsigned u[K / 4];
    } x;
    x.w = *reinterpret_cast<const W*>(p);
#pragma unroll
    for (int k = 0; k < K; k++) c.e[k] = (T)(u8)(x.u[k >> 2] >> (8 * (k & 3)));
  } else {
    union {
      W w;
      Chunk<T, K> c;
    } x;
    x.w = *reinterpret_cast<const W*>(p);
    c = x.c;
  }
  return c;
}

template <class T, int K>
__device__ __forceinline__ void cstore(T* p, const Chunk<T, K>& c) {
  typedef typename WordOf<K * sizeof(T)>::t W;
  if constexpr (sizeof(T) == 1 && K >= 4) {
    union {
      W w;
      unsigned u[K / 4];
    } x;
#pragma unroll
    for (int j = 0; j < K / 4; j++) x.u[j] = 0;
#pragma unroll
    for (int k = 0; k < K; k++) x.u[k >> 2] |= (unsigned)(u8)c.e[k] << (8 * (k & 3));
    *reinterpret_cast<W*>(p) = x.w;
  } else {
    union {
      W w;
      Chunk<T, K> c;
    } x;
    x.c = c;
    *reinterpret_cast<W*>(p) = x.w;
  }
}

__device__ __forceinline__ bool aligned_to(const void* p, unsigned bytes) { return ((u64)p & (bytes - 1)) == 0; }

template <class A, class B>
struct Widest {
  static constexpr int size = sizeof(A) > sizeof(B) ? sizeof(A) : sizeof(B);
};

// dst[i] = f(a[i]).
template <class O, class A, class F>
__device__ __forceinline__ void emap1(O* dst, const A* a, i64 n, F f) {
  constexpr int K = 16 / Widest<O, A>::size;
  const i64 tid = global_tid(), stride = global_stride();
  if (aligned_to(dst, K * sizeof(O)) && aligned_to(a, K * sizeof(A))) {
    const i64 nv = n / K;
    for (i64 i = tid; i < nv; i += stride) {
      const Chunk<A, K> x = cload<A, K>(a + i * K);
      Chunk<O, K> z;
#pragma unroll
      for (int k = 0; k < K; k++) z.e[k] = f(x.e[k]);
      cstore<O, K>(dst + i * K, z);
    }
    const i64 t = nv * K + tid;
    if (t < n) dst[t] = f(a[t]);
  } else {
    for (i64 i = tid; i < n; i += stride) dst[i] = f(a[i]);
  }
}

// dst[i] = f(a[i], b[i]).
template <class O, class A, class F>
__device__ __forceinline__ void emap2(O* dst, const A* a, const A* b, i64 n, F f) {
  constexpr int K = 16 / Widest<O, A>::size;
  const i64 tid = global_tid(), stride = global_stride();
  if (aligned_to(dst, K * sizeof(O)) && aligned_to(a, K * sizeof(A)) && aligned_to(b, K * sizeof(A))) {
    const i64 nv = n / K;
    for (i64 i = tid; i < nv; i += stride) {
      const Chunk<A, K> x = cload<A, K>(a + i * K);
      const Chunk<A, K> y = cload<A, K>(b + i * K);
      Chunk<O, K> z;
#pragma unroll
      for (int k = 0; k < K; k++) z.e[k] = f(x.e[k], y.e[k]);
      cstore<O, K>(dst + i * K, z);
    }
    const i64 t = nv * K + tid;
    if (t < n) dst[t] = f(a[t], b[t]);
  } else {
    for (i64 i = tid; i < n; i += stride) dst[i] = f(a[i], b[i]);
  }
}

// dst[i] = f(c[i], a[i], b[i]) for a bool c (Where).
template <class T, class F>
__device__ __forceinline__ void emap3(T* dst, const bool* c, const T* a, const T* b, i64 n, F f) {
  constexpr int K = 16 / sizeof(T);
  const i64 tid = global_tid(), stride = global_stride();
  if (aligned_to(dst, 16) && aligned_to(c, K) && aligned_to(a, 16) && aligned_to(b, 16)) {
    const i64 nv = n / K;
    for (i64 i = tid; i < nv; i += stride) {
      const Chunk<bool, K> w = cload<bool, K>(c + i * K);
      const Chunk<T, K> x = cload<T, K>(a + i * K);
      const Chunk<T, K> y = cload<T, K>(b + i * K);
      Chunk<T, K> z;
#pragma unroll
      for (int k = 0; k < K; k++) z.e[k] = f(w.e[k], x.e[k], y.e[k]);
      cstore<T, K>(dst + i * K, z);
    }
    const i64 t = nv * K + tid;
    if (t < n) dst[t] = f(c[t], a[t], b[t]);
  } else {
    for (i64 i = tid; i < n; i += stride) dst[i] = f(c[i], a[i], b[i]);
  }
}

// ---------------------------------------------------------------------------
// Helpers of the table's C bodies; kernels/optable.go has their Go twins.

// |x| for signed integers, wrapping for the most negative value as Go's -x.
__device__ __forceinline__ int abs_(int x) { return x < 0 ? (int)(0u - (unsigned)x) : x; }
__device__ __forceinline__ i64 abs_(i64 x) { return x < 0 ? (i64)(0ull - (u64)x) : x; }

// NumPy's sign: -1, 0 or 1; NaN for NaN; 0 (not -0) for ±0.
template <class T>
__device__ __forceinline__ T sign_(T x) {
  return x > (T)0 ? (T)1 : x < (T)0 ? (T)-1 : x == (T)0 ? (T)0 : x;
}

// np.minimum and np.maximum: NaN if either is (a's when both are), a
// when a and b compare equal.
template <class T>
__device__ __forceinline__ T minimum_(T a, T b) {
  return (a <= b || a != a) ? a : b;
}
template <class T>
__device__ __forceinline__ T maximum_(T a, T b) {
  return (a >= b || a != a) ? a : b;
}

// Saturating float → integer conversions, as cvt.rzi.sat: NaN → 0,
// truncation toward zero within the range, the nearest bound outside it.
// Written out so that the host (kernels/optable.go) can match them.
__device__ __forceinline__ int sat_i32(double x) {
  return x != x ? 0 : x <= -2147483648.0 ? (int)0x80000000u : x >= 2147483647.0 ? 2147483647 : (int)x;
}
__device__ __forceinline__ i64 sat_i64(double x) {
  return x != x                        ? 0
         : x <= -9223372036854775808.0 ? (i64)0x8000000000000000ull
         : x >= 9223372036854775808.0  ? (i64)0x7fffffffffffffffll
                                       : (i64)x;
}
__device__ __forceinline__ u8 sat_u8(double x) { return x != x || x <= 0.0 ? (u8)0 : x >= 255.0 ? (u8)255 : (u8)x; }
