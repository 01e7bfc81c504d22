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
// Conversions go through econv, which gives a narrowing one (float32 →
// bfloat16) chunks of 16 / (the output's size) elements, so that its
// stores are 16 bytes too. Grid-stride, EW_UNROLL chunks in flight a thread, 64-bit lengths; dst may
// be an input of its own type exactly. The two- and three-input drivers
// take a set of flags naming the inputs that are single elements (a scalar
// broadcast to every element), one kernel for every combination.

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

// EW_UNROLL: the vectors a thread loads before it computes and stores any
// of them, each a grid stride apart (so that a warp's accesses stay
// coalesced). Memory-bound kernels need many loads in flight to reach the
// copy bandwidth; one vector a thread leaves the loop waiting on each.
#define EW_UNROLL 4  // kernels/gpu.go's ewUnroll sizes the grids by it

// In: one input of a driver, of K-element chunks. A full input reads
// element i at p[i]; a scalar one (S) is a single element, read once per
// thread from device memory (no host synchronisation: a graph captures it)
// and used for every i: NumPy's broadcasting of a one-element array.
template <class T, int K, bool S>
struct In {
  const T* p;
  T v;
  __device__ __forceinline__ explicit In(const T* q) : p(q), v() {
    if constexpr (S) v = *q;
  }
  __device__ __forceinline__ bool aligned() const { return S || aligned_to(p, K * sizeof(T)); }
  __device__ __forceinline__ Chunk<T, K> chunk(i64 i) const {
    if constexpr (S) {
      Chunk<T, K> c;
#pragma unroll
      for (int k = 0; k < K; k++) c.e[k] = v;
      return c;
    } else {
      return cload<T, K>(p + i * K);
    }
  }
  __device__ __forceinline__ T at(i64 i) const {
    if constexpr (S)
      return v;
    else
      return p[i];
  }
};

// The drivers' loops, written out in each (no lambdas, so that the chunk
// arrays stay in registers whatever the compiler inlines). In the vector
// path (dst and every full input aligned to its chunk) thread t takes
// chunks t, t + stride, ... EW_UNROLL at a time: it loads all of them,
// then computes and stores each, so that EW_UNROLL loads of every input are
// in flight at once; the n % K elements past the last chunk go one to a
// thread (K ≤ 16 < a block). Otherwise one element a thread. 64-bit
// indices throughout.

// cloadn: a chunk of any size, as K * sizeof(T) / 16 16-byte loads when it
// is wider than 16 bytes (the wide input of a narrowing conversion), else
// as cload's one access. Needs p aligned to min(16, the chunk's bytes).
template <class T, int K>
__device__ __forceinline__ Chunk<T, K> cloadn(const T* p) {
  constexpr int B = K * (int)sizeof(T);
  if constexpr (B <= 16) {
    return cload<T, K>(p);
  } else {
    static_assert(B % 16 == 0, "a wide chunk is whole 16-byte words");
    union {
      uint4 w[B / 16];
      Chunk<T, K> c;
    } x;
    const uint4* q = reinterpret_cast<const uint4*>(p);
#pragma unroll
    for (int j = 0; j < B / 16; j++) x.w[j] = q[j];
    return x.c;
  }
}

// emap1v is emap1's vector path with chunks of K elements, U of them a
// group: dst and a aligned to their chunks' accesses (16 bytes at most).
// It is double-buffered: a thread loads its next U chunks before it
// computes and stores the current ones, so that while it waits 2U chunks'
// loads are in flight (the last group's and the next's), and some while
// it computes. (exp of float32 ran at 0.945 of copy's bandwidth on an H100
// loading only after storing.) Reading the next chunks first is safe with
// dst == a, the one overlap allowed: they are other elements than the ones
// stored, and only this thread stores them. The n % K elements past the
// last chunk go one to a thread (K ≤ 16 < a block).
template <int K, int U, class O, class A, class F>
__device__ __forceinline__ void emap1v(O* dst, const A* a, i64 n, F f) {
  const i64 tid = global_tid(), stride = global_stride();
  const i64 nv = n / K, step = U * stride;
  Chunk<A, K> xs[U] = {};
#pragma unroll
  for (int u = 0; u < U; u++) {
    const i64 i = tid + u * stride;
    if (i < nv) xs[u] = cloadn<A, K>(a + i * K);
  }
  for (i64 i0 = tid; i0 < nv; i0 += step) {
    Chunk<A, K> ys[U] = {};
#pragma unroll
    for (int u = 0; u < U; u++) {
      const i64 i = i0 + step + u * stride;
      if (i < nv) ys[u] = cloadn<A, K>(a + i * K);
    }
#pragma unroll
    for (int u = 0; u < U; u++) {
      const i64 i = i0 + u * stride;
      if (i < nv) {
        Chunk<O, K> z;
#pragma unroll
        for (int k = 0; k < K; k++) z.e[k] = f(xs[u].e[k]);
        cstore<O, K>(dst + i * K, z);
      }
    }
#pragma unroll
    for (int u = 0; u < U; u++) xs[u] = ys[u];
  }
  const i64 t = nv * K + tid;
  if (t < n) dst[t] = f(a[t]);
}

// dst[i] = f(a[i]): chunks of K = 16 / (the wider type's size) elements,
// EW_UNROLL/2 a group double-buffered (EW_UNROLL chunks in registers, as
// the other drivers), when dst and a are aligned to their chunks; else one
// element a thread.
template <class O, class A, class F>
__device__ __forceinline__ void emap1(O* dst, const A* a, i64 n, F f) {
  constexpr int K = 16 / Widest<O, A>::size;
  if (aligned_to(dst, K * sizeof(O)) && aligned_to(a, K * sizeof(A))) {
    emap1v<K, EW_UNROLL / 2>(dst, a, n, f);
  } else {
    const i64 tid = global_tid(), stride = global_stride();
    for (i64 i = tid; i < n; i += stride) dst[i] = f(a[i]);
  }
}

// Conversions (the generated gocuda_convert_* kernels). A conversion to a
// type as wide or wider than its input is emap1: its chunks fill the
// output's 16-byte stores. A narrowing one (float32 → bfloat16, float64 →
// float32, float32 → uint8) through emap1 would store only a fraction of
// 16 bytes a chunk (8 for float32 → bfloat16), and ran at 0.98 of torch's
// bandwidth on an H100; econv gives it chunks of 16 / sizeof(O) elements
// (one 16-byte store, two or more 16-byte loads), capped at CONV_MAXIN
// bytes of input a chunk so that the registers stay sane (float64 → uint8
// would be 16 doubles), CONV_UNROLL chunks a group (double-buffered as
// emap1). kernels/gpu.go's convertGrid sizes the grid by the same chunk
// (convK) and CONV_UNROLL (convUnroll). Views whose pointers are not
// aligned to the wide chunks take emap1 (narrower chunks, or one element a
// thread).
#define CONV_MAXIN 32   // kernels/gpu.go's convMaxIn
#define CONV_UNROLL 2   // kernels/gpu.go's convUnroll

// ConvK: the chunk of a narrowing conversion from A to O, with at most
// MAXIN bytes of input.
template <class O, class A, int MAXIN>
struct ConvK {
  static constexpr int out = 16 / (int)sizeof(O), in = MAXIN / (int)sizeof(A);
  static constexpr int value = out < in ? out : in;
};

template <int MAXIN, int U, class O, class A, class F>
__device__ __forceinline__ void econvk(O* dst, const A* a, i64 n, F f) {
  if constexpr (sizeof(O) < sizeof(A)) {
    constexpr int K = ConvK<O, A, MAXIN>::value;
    static_assert(K * sizeof(A) >= 16, "a narrowing chunk reads 16 bytes or more");
    if (aligned_to(dst, K * sizeof(O)) && aligned_to(a, 16)) {
      emap1v<K, U>(dst, a, n, f);
      return;
    }
  }
  emap1(dst, a, n, f);
}

template <class O, class A, class F>
__device__ __forceinline__ void econv(O* dst, const A* a, i64 n, F f) {
  econvk<CONV_MAXIN, CONV_UNROLL>(dst, a, n, f);
}

// dst[i] = f(a[i], b[i]), with a (SA) or b (SB) a single element.
template <class O, class A, bool SA, bool SB, class F>
__device__ __forceinline__ void emap2s(O* dst, const A* a, const A* b, i64 n, F f) {
  constexpr int K = 16 / Widest<O, A>::size;
  const In<A, K, SA> x(a);
  const In<A, K, SB> y(b);
  const i64 tid = global_tid(), stride = global_stride();
  if (aligned_to(dst, K * sizeof(O)) && x.aligned() && y.aligned()) {
    const i64 nv = n / K;
    for (i64 i0 = tid; i0 < nv; i0 += EW_UNROLL * stride) {
      Chunk<A, K> xs[EW_UNROLL] = {}, ys[EW_UNROLL] = {};
#pragma unroll
      for (int u = 0; u < EW_UNROLL; u++) {
        const i64 i = i0 + u * stride;
        if (i < nv) {
          xs[u] = x.chunk(i);
          ys[u] = y.chunk(i);
        }
      }
#pragma unroll
      for (int u = 0; u < EW_UNROLL; u++) {
        const i64 i = i0 + u * stride;
        if (i < nv) {
          Chunk<O, K> z;
#pragma unroll
          for (int k = 0; k < K; k++) z.e[k] = f(xs[u].e[k], ys[u].e[k]);
          cstore<O, K>(dst + i * K, z);
        }
      }
    }
    const i64 t = nv * K + tid;
    if (t < n) dst[t] = f(x.at(t), y.at(t));
  } else {
    for (i64 i = tid; i < n; i += stride) dst[i] = f(x.at(i), y.at(i));
  }
}

// Scalar-operand flags of the binary and Where kernels (their last
// argument, a set of these): the input is one element, read for every i.
// They are the Go side's kernels.Scalars bits, input by input.
#define EW_SCALAR0 1u
#define EW_SCALAR1 2u
#define EW_SCALAR2 4u

// dst[i] = f(a[i], b[i]); sc says which inputs are single elements. One
// kernel per operation and type covers every case: the flags pick one of
// the driver's instantiations once, outside the loop.
template <class O, class A, class F>
__device__ __forceinline__ void emap2(O* dst, const A* a, const A* b, i64 n, unsigned sc, F f) {
  switch (sc & (EW_SCALAR0 | EW_SCALAR1)) {
    case 0:
      emap2s<O, A, false, false>(dst, a, b, n, f);
      break;
    case EW_SCALAR0:
      emap2s<O, A, true, false>(dst, a, b, n, f);
      break;
    case EW_SCALAR1:
      emap2s<O, A, false, true>(dst, a, b, n, f);
      break;
    default:
      emap2s<O, A, true, true>(dst, a, b, n, f);
  }
}

// dst[i] = f(c[i], a[i], b[i]) for a bool c (Where), with c (SC), a (SA)
// or b (SB) single elements. The condition moves K bytes at a time
// (K = 16 / sizeof(T): 4 for float32, 16 for uint8) as one access.
template <class T, bool SC, bool SA, bool SB, class F>
__device__ __forceinline__ void emap3s(T* dst, const bool* c, const T* a, const T* b, i64 n, F f) {
  constexpr int K = 16 / sizeof(T);
  const In<bool, K, SC> w(c);
  const In<T, K, SA> x(a);
  const In<T, K, SB> y(b);
  const i64 tid = global_tid(), stride = global_stride();
  if (aligned_to(dst, 16) && w.aligned() && x.aligned() && y.aligned()) {
    const i64 nv = n / K;
    for (i64 i0 = tid; i0 < nv; i0 += EW_UNROLL * stride) {
      Chunk<bool, K> ws[EW_UNROLL] = {};
      Chunk<T, K> xs[EW_UNROLL] = {}, ys[EW_UNROLL] = {};
#pragma unroll
      for (int u = 0; u < EW_UNROLL; u++) {
        const i64 i = i0 + u * stride;
        if (i < nv) {
          ws[u] = w.chunk(i);
          xs[u] = x.chunk(i);
          ys[u] = y.chunk(i);
        }
      }
#pragma unroll
      for (int u = 0; u < EW_UNROLL; u++) {
        const i64 i = i0 + u * stride;
        if (i < nv) {
          Chunk<T, K> z;
#pragma unroll
          for (int k = 0; k < K; k++) z.e[k] = f(ws[u].e[k], xs[u].e[k], ys[u].e[k]);
          cstore<T, K>(dst + i * K, z);
        }
      }
    }
    const i64 t = nv * K + tid;
    if (t < n) dst[t] = f(w.at(t), x.at(t), y.at(t));
  } else {
    for (i64 i = tid; i < n; i += stride) dst[i] = f(w.at(i), x.at(i), y.at(i));
  }
}

template <class T, class F>
__device__ __forceinline__ void emap3(T* dst, const bool* c, const T* a, const T* b, i64 n, unsigned sc, F f) {
  switch (sc & (EW_SCALAR0 | EW_SCALAR1 | EW_SCALAR2)) {
    case 0:
      emap3s<T, false, false, false>(dst, c, a, b, n, f);
      break;
    case EW_SCALAR0:
      emap3s<T, true, false, false>(dst, c, a, b, n, f);
      break;
    case EW_SCALAR1:
      emap3s<T, false, true, false>(dst, c, a, b, n, f);
      break;
    case EW_SCALAR0 | EW_SCALAR1:
      emap3s<T, true, true, false>(dst, c, a, b, n, f);
      break;
    case EW_SCALAR2:
      emap3s<T, false, false, true>(dst, c, a, b, n, f);
      break;
    case EW_SCALAR0 | EW_SCALAR2:
      emap3s<T, true, false, true>(dst, c, a, b, n, f);
      break;
    case EW_SCALAR1 | EW_SCALAR2:
      emap3s<T, false, true, true>(dst, c, a, b, n, f);
      break;
    default:
      emap3s<T, true, true, true>(dst, c, a, b, n, f);
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
// Written out so that the host (kernels/optable.go's satTo) can match
// them: one body, each type's bounds (exact doubles); int64's upper bound
// is not a double, so sat_i64 has its own.
template <class I>
__device__ __forceinline__ I sat_to(double x, double lo, double hi) {
  return x != x ? (I)0 : x <= lo ? (I)lo : x >= hi ? (I)hi : (I)x;
}
__device__ __forceinline__ int sat_i32(double x) { return sat_to<int>(x, -2147483648.0, 2147483647.0); }
__device__ __forceinline__ i64 sat_i64(double x) {
  return x != x                        ? 0
         : x <= -9223372036854775808.0 ? (i64)0x8000000000000000ull
         : x >= 9223372036854775808.0  ? (i64)0x7fffffffffffffffll
                                       : (i64)x;
}
__device__ __forceinline__ u8 sat_u8(double x) { return sat_to<u8>(x, 0.0, 255.0); }
