// index.cuh: construction and indexing kernels (kernels/index.go), included
// at the end of kernels.cu, whose types, arithmetic and conventions they use:
// THREADS-thread blocks, 1-D grids, grid-stride loops over 64-bit lengths.
//
//   arange     dst[i] = start + i*delta in T (dst[1] = second), as NumPy
//   linspace   dst[i] = T(start + i*step) computed in double, as NumPy
//   eye        dst[r, c] = (c - r == k)
//   concat     up to CONCAT_SLOTS row-major inputs side by side in dst's rows
//   take       dst[o, j, k] = src[o, idx[j], k]
//   scatter    dst[o, idx[j], k] = src[o, j, k]
//   scatteradd dst[o, idx[j], k] += src[o, j, k] (atomics: not deterministic
//              for floats; integer sums are exact whatever the order)
//
// Floating-point arithmetic goes through the _rn intrinsics: gen-ptx.sh
// compiles with --fmad=true, which would otherwise contract start + i*delta
// into one fused multiply-add and round differently from NumPy and the Go
// host kernels.
//
// Index kernels wrap a negative index once (i + dim, as NumPy); an index
// still outside [0, dim) never reads or writes out of bounds: take reads the
// nearest valid row (clamps), scatter and scatteradd drop the element. Either
// way, when bad is not null, the raw index is stored there (a nonzero value,
// since 0 is always valid: the Go side never launches with dim == 0).

// ---------------------------------------------------------------------------
// Arange and linspace.

__device__ __forceinline__ float arange_at(float start, float delta, i64 i) {
  return __fadd_rn(start, __fmul_rn((float)i, delta));
}
__device__ __forceinline__ double arange_at(double start, double delta, i64 i) {
  return __dadd_rn(start, __dmul_rn((double)i, delta));
}
__device__ __forceinline__ int arange_at(int start, int delta, i64 i) { return add_(start, mul_((int)i, delta)); }
__device__ __forceinline__ i64 arange_at(i64 start, i64 delta, i64 i) { return add_(start, mul_(i, delta)); }
__device__ __forceinline__ u8 arange_at(u8 start, u8 delta, i64 i) { return add_(start, mul_((u8)i, delta)); }
__device__ __forceinline__ i8 arange_at(i8 start, i8 delta, i64 i) { return add_(start, mul_((i8)i, delta)); }
__device__ __forceinline__ i16 arange_at(i16 start, i16 delta, i64 i) { return add_(start, mul_((i16)i, delta)); }
__device__ __forceinline__ u32 arange_at(u32 start, u32 delta, i64 i) { return add_(start, mul_((u32)i, delta)); }

template <class T>
__device__ __forceinline__ void arange(T* dst, T start, T second, T delta, i64 n) {
  for (i64 i = global_tid(); i < n; i += global_stride()) dst[i] = i == 1 ? second : arange_at(start, delta, i);
}

// NumPy's linspace in double: i*step + start, or (i/div)*delta + start when
// step underflowed to 0 (stepzero), the last element stop when endpoint.
// Integers truncate toward zero (NumPy's astype); the Go side checks that
// every value is in T's range.
template <class T>
__device__ __forceinline__ void linspace(T* dst, double start, double step, double delta, double div, double stop, i64 n,
                                         int stepzero, int endpoint) {
  for (i64 i = global_tid(); i < n; i += global_stride()) {
    double y = stepzero ? __dmul_rn(__ddiv_rn((double)i, div), delta) : __dmul_rn((double)i, step);
    y = __dadd_rn(y, start);
    if (endpoint && i == n - 1 && n > 1) y = stop;
    dst[i] = (T)y;
  }
}

// ---------------------------------------------------------------------------
// Eye.

__device__ __forceinline__ void one_(float* v) { *v = 1; }
__device__ __forceinline__ void one_(double* v) { *v = 1; }
__device__ __forceinline__ void one_(int* v) { *v = 1; }
__device__ __forceinline__ void one_(i64* v) { *v = 1; }
__device__ __forceinline__ void one_(u8* v) { *v = 1; }
__device__ __forceinline__ void one_(i16* v) { *v = 1; }  // int8's and uint32's eye are uint8's and int32's
__device__ __forceinline__ void one_(c64* v) { *v = c64{1, 0}; }

template <class T>
__device__ __forceinline__ void eye(T* dst, i64 rows, i64 cols, i64 k) {
  T one, zero{};
  one_(&one);
  const i64 n = rows * cols;
  for (i64 i = global_tid(); i < n; i += global_stride()) {
    const i64 r = i / cols, c = i - r * cols;
    dst[i] = c - r == k ? one : zero;
  }
}

// ---------------------------------------------------------------------------
// Concat: dst is rows x dcols (row pitch dcols elements); this launch fills
// its columns [0, ncols) (dst already points at the first) from m <= 8
// row-major inputs of w0..w7 columns, side by side in order (w0 + ... +
// w{m-1} == ncols; unused slots have width 0). A thread an element of the
// window; the slot is found by scanning the widths (uniform loop of at most 8).

#define CONCAT_SLOTS 8

template <class T>
__device__ __forceinline__ void concat(T* dst, i64 rows, i64 dcols, i64 ncols, const T* const* src, const i64* w) {
  const i64 n = rows * ncols;
  for (i64 i = global_tid(); i < n; i += global_stride()) {
    const i64 r = i / ncols;
    i64 c = i - r * ncols;
    int j = 0;
    while (j < CONCAT_SLOTS - 1 && c >= w[j]) c -= w[j++];
    dst[r * dcols + (i - r * ncols)] = src[j][r * w[j] + c];
  }
}

// ---------------------------------------------------------------------------
// Take, scatter, scatteradd over the layout dst/src = outer x dim x inner
// (the indexed array) and outer x nidx x inner (the gathered one).

// idx_at wraps a negative index once; out of range it records the raw index
// in bad and returns -1.
__device__ __forceinline__ i64 idx_at(const i64* idx, i64 j, i64 dim, i64* bad) {
  const i64 raw = idx[j];
  const i64 w = raw < 0 ? raw + dim : raw;
  if (w < 0 || w >= dim) {
    if (bad != nullptr) atomicExch((unsigned long long*)bad, (unsigned long long)raw);
    return -1;
  }
  return w;
}

template <class T>
__device__ __forceinline__ void take(T* dst, const T* src, const i64* idx, i64 outer, i64 nidx, i64 dim, i64 inner,
                                     i64* bad) {
  const i64 n = outer * nidx * inner;
  for (i64 i = global_tid(); i < n; i += global_stride()) {
    const i64 t = i / inner, k = i - t * inner;
    const i64 o = t / nidx, j = t - o * nidx;
    i64 w = idx_at(idx, j, dim, bad);
    if (w < 0) w = idx[j] < 0 ? 0 : dim - 1;  // clamp: never out of bounds
    dst[i] = src[(o * dim + w) * inner + k];
  }
}

template <class T>
__device__ __forceinline__ void scatter(T* dst, const T* src, const i64* idx, i64 outer, i64 nidx, i64 dim, i64 inner,
                                        i64* bad) {
  const i64 n = outer * nidx * inner;
  for (i64 i = global_tid(); i < n; i += global_stride()) {
    const i64 t = i / inner, k = i - t * inner;
    const i64 o = t / nidx, j = t - o * nidx;
    const i64 w = idx_at(idx, j, dim, bad);
    if (w >= 0) dst[(o * dim + w) * inner + k] = src[i];
  }
}

// Atomic adds. int64 adds as unsigned long long (two's complement: the same
// bits); uint8 by a compare-and-swap of the aligned 32-bit word holding the
// byte, which leaves the word's other bytes as they are even when another
// thread changes them meanwhile (the swap then fails and retries). complex64
// adds its two parts separately.
__device__ __forceinline__ void atomic_add_(float* p, float v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add_(double* p, double v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add_(int* p, int v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add_(i64* p, i64 v) { atomicAdd((unsigned long long*)p, (unsigned long long)v); }
__device__ __forceinline__ void atomic_add_(c64* p, c64 v) {
  atomicAdd(&p->re, v.re);
  atomicAdd(&p->im, v.im);
}
__device__ __forceinline__ void atomic_add_(u8* p, u8 v) {
  unsigned* word = (unsigned*)((u64)p & ~(u64)3);
  const unsigned shift = 8 * (unsigned)((u64)p & 3);
  unsigned old = *word, assumed;
  do {
    assumed = old;
    const unsigned b = ((assumed >> shift) + v) & 0xffu;
    old = atomicCAS(word, assumed, (assumed & ~(0xffu << shift)) | (b << shift));
  } while (old != assumed);
}

// int16 likewise, in the 32-bit word's half that holds it (int8's and
// uint32's adds are uint8's and int32's: the same bits).
__device__ __forceinline__ void atomic_add_(i16* p, i16 v) {
  unsigned* word = (unsigned*)((u64)p & ~(u64)3);
  const unsigned shift = 8 * (unsigned)((u64)p & 2);
  unsigned old = *word, assumed;
  do {
    assumed = old;
    const unsigned h = ((assumed >> shift) + (unsigned)(unsigned short)v) & 0xffffu;
    old = atomicCAS(word, assumed, (assumed & ~(0xffffu << shift)) | (h << shift));
  } while (old != assumed);
}

template <class T>
__device__ __forceinline__ void scatter_add(T* dst, const T* src, const i64* idx, i64 outer, i64 nidx, i64 dim,
                                            i64 inner, i64* bad) {
  const i64 n = outer * nidx * inner;
  for (i64 i = global_tid(); i < n; i += global_stride()) {
    const i64 t = i / inner, k = i - t * inner;
    const i64 o = t / nidx, j = t - o * nidx;
    const i64 w = idx_at(idx, j, dim, bad);
    if (w >= 0) atomic_add_(dst + (o * dim + w) * inner + k, src[i]);
  }
}

// INDEX_MOVE: the kernels that move elements as they are (concat, take,
// scatter), for any T of the element's size; half_ops.cuh invokes it with
// u16 for float16 and bfloat16.
#define INDEX_MOVE(T, S)                                                                                         \
  KERNEL gocuda_concat_##S(T* dst, i64 rows, i64 dcols, i64 ncols, const T* s0, i64 w0, const T* s1, i64 w1,     \
                           const T* s2, i64 w2, const T* s3, i64 w3, const T* s4, i64 w4, const T* s5, i64 w5,   \
                           const T* s6, i64 w6, const T* s7, i64 w7) {                                           \
    const T* const src[CONCAT_SLOTS] = {s0, s1, s2, s3, s4, s5, s6, s7};                                         \
    const i64 w[CONCAT_SLOTS] = {w0, w1, w2, w3, w4, w5, w6, w7};                                                \
    concat(dst, rows, dcols, ncols, src, w);                                                                     \
  }                                                                                                              \
  KERNEL gocuda_take_##S(T* dst, const T* src, const i64* idx, i64 outer, i64 nidx, i64 dim, i64 inner,          \
                         i64* bad) {                                                                             \
    take(dst, src, idx, outer, nidx, dim, inner, bad);                                                           \
  }                                                                                                              \
  KERNEL gocuda_scatter_##S(T* dst, const T* src, const i64* idx, i64 outer, i64 nidx, i64 dim, i64 inner,       \
                            i64* bad) {                                                                          \
    scatter(dst, src, idx, outer, nidx, dim, inner, bad);                                                        \
  }

// INDEX_ALL: every index kernel of a numeric T: eye, the moves, and
// scatteradd (T's arithmetic).
#define INDEX_ALL(T, S)                                                                                          \
  KERNEL gocuda_eye_##S(T* dst, i64 rows, i64 cols, i64 k) { eye(dst, rows, cols, k); }                          \
  INDEX_MOVE(T, S)                                                                                               \
  KERNEL gocuda_scatteradd_##S(T* dst, const T* src, const i64* idx, i64 outer, i64 nidx, i64 dim, i64 inner,    \
                               i64* bad) {                                                                       \
    scatter_add(dst, src, idx, outer, nidx, dim, inner, bad);                                                    \
  }

INDEX_ALL(float, f32)
INDEX_ALL(double, f64)
INDEX_ALL(int, i32)
INDEX_ALL(i64, i64)
INDEX_ALL(u8, u8)
INDEX_ALL(c64, c64)

#define RANGE_REAL(T, S)                                                                                          \
  KERNEL gocuda_arange_##S(T* dst, u64 start, u64 second, u64 delta, i64 n) {                                     \
    arange(dst, scalar<T>(start), scalar<T>(second), scalar<T>(delta), n);                                        \
  }                                                                                                               \
  KERNEL gocuda_linspace_##S(T* dst, double start, double step, double delta, double div, double stop, i64 n,     \
                             int stepzero, int endpoint) {                                                        \
    linspace(dst, start, step, delta, div, stop, n, stepzero, endpoint);                                          \
  }

RANGE_REAL(float, f32)
RANGE_REAL(double, f64)
RANGE_REAL(int, i32)
RANGE_REAL(i64, i64)
RANGE_REAL(u8, u8)
RANGE_REAL(i8, i8)
RANGE_REAL(i16, i16)
RANGE_REAL(u32, u32)
