// scan_sort.cuh: scans along an axis and sorting (issue 30), included at the
// end of kernels.cu. The Go side is kernels/scansort.go and scansort_gpu.go.
//
// Scans (gocuda_scanrows_*, gocuda_scancols_*) see their operand as
// outer × n × inner and run along n. A contiguous axis (inner == 1) is cut
// into chunks of whole SCAN_TILE tiles; a block scans a chunk tile by tile
// (a coalesced load into shared memory, a sequential run of SCAN_ITEMS a
// thread, a block-wide exclusive scan of the threads' totals, a coalesced
// store) with a running carry. A strided axis gives each thread a column
// and a chunk of rows. When a row or column has several chunks, pass 1
// reduces each chunk to a partial and pass 2 starts each chunk from the
// reduction of the partials before it (read in order: deterministic).
// float32 accumulates in double, integers in their own width (wrapping as
// Go does), uint8 and uint32 in unsigned, int8 and int16 in int, truncated.
//
// The sorts are in sort.cuh.

#define SCAN_ITEMS 8
#define SCAN_TILE (THREADS * SCAN_ITEMS)
#define SCAN_PAD(i) ((i) + ((i) >> 5))
#define SCAN_SUM 0
#define SCAN_PROD 1
#define SCAN_MAX 2
#define SCAN_MIN 3

// ---------------------------------------------------------------------------
// Scan arithmetic on the accumulator types.

__device__ __forceinline__ double sc_add(double a, double b) { return a + b; }
__device__ __forceinline__ int sc_add(int a, int b) { return (int)((unsigned)a + (unsigned)b); }
__device__ __forceinline__ i64 sc_add(i64 a, i64 b) { return (i64)((u64)a + (u64)b); }
__device__ __forceinline__ unsigned sc_add(unsigned a, unsigned b) { return a + b; }
__device__ __forceinline__ double sc_mul(double a, double b) { return a * b; }
__device__ __forceinline__ int sc_mul(int a, int b) { return (int)((unsigned)a * (unsigned)b); }
__device__ __forceinline__ i64 sc_mul(i64 a, i64 b) { return (i64)((u64)a * (u64)b); }
__device__ __forceinline__ unsigned sc_mul(unsigned a, unsigned b) { return a * b; }

// sc_op: a NaN, once reached, stays for max and min (b != b only for a
// float NaN).
template <class A>
__device__ __forceinline__ A sc_op(int op, A a, A b) {
  switch (op) {
    case SCAN_SUM:
      return sc_add(a, b);
    case SCAN_PROD:
      return sc_mul(a, b);
    case SCAN_MAX:
      return (b > a || b != b) ? b : a;
    default:
      return (b < a || b != b) ? b : a;
  }
}

// The identity of each operation: -0.0 for a float sum, so that a sum of
// -0 stays -0.
template <class A>
struct ScanLim;
template <>
struct ScanLim<double> {
  static __device__ __forceinline__ double lo() { return -__longlong_as_double(0x7ff0000000000000LL); }
  static __device__ __forceinline__ double hi() { return __longlong_as_double(0x7ff0000000000000LL); }
  static __device__ __forceinline__ double zero() { return __longlong_as_double((i64)0x8000000000000000ULL); }
};
template <>
struct ScanLim<int> {
  static __device__ __forceinline__ int lo() { return (int)0x80000000u; }
  static __device__ __forceinline__ int hi() { return 0x7fffffff; }
  static __device__ __forceinline__ int zero() { return 0; }
};
template <>
struct ScanLim<i64> {
  static __device__ __forceinline__ i64 lo() { return (i64)0x8000000000000000ULL; }
  static __device__ __forceinline__ i64 hi() { return 0x7fffffffffffffffLL; }
  static __device__ __forceinline__ i64 zero() { return 0; }
};
template <>
struct ScanLim<unsigned> {
  static __device__ __forceinline__ unsigned lo() { return 0; }
  static __device__ __forceinline__ unsigned hi() { return 0xffffffffu; }
  static __device__ __forceinline__ unsigned zero() { return 0; }
};
template <class A>
__device__ __forceinline__ A sc_ident(int op) {
  switch (op) {
    case SCAN_SUM:
      return ScanLim<A>::zero();
    case SCAN_PROD:
      return (A)1;
    case SCAN_MAX:
      return ScanLim<A>::lo();
    default:
      return ScanLim<A>::hi();
  }
}

// block_reduce_sc: thread 0 gets the block's reduction, warps in order.
template <class A>
__device__ A block_reduce_sc(A v, int op, A* red) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const A y = __shfl_down_sync(FULL_MASK, v, o);
    if (lane + o < 32) v = sc_op(op, v, y);
  }
  if (lane == 0) red[warp] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    v = red[0];
    for (int w = 1; w < THREADS / 32; w++) v = sc_op(op, v, red[w]);
  }
  __syncthreads();
  return v;
}

// block_scan_excl returns the reduction of the values of the threads
// before this one (the identity for thread 0) and, in *total, of all.
template <class A>
__device__ A block_scan_excl(A v, int op, A* wt, A* total) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  A incl = v;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const A y = __shfl_sync(FULL_MASK, incl, (lane - o) & 31);
    if (lane >= o) incl = sc_op(op, y, incl);
  }
  A excl = __shfl_sync(FULL_MASK, incl, (lane - 1) & 31);
  if (lane == 31) wt[warp] = incl;
  __syncthreads();
  A before = sc_ident<A>(op), all = sc_ident<A>(op);
  for (int w = 0; w < THREADS / 32; w++) {
    if (w < warp) before = sc_op(op, before, wt[w]);
    all = sc_op(op, all, wt[w]);
  }
  __syncthreads();
  *total = all;
  return lane == 0 ? before : sc_op(op, before, excl);
}

// Pass 1 along a contiguous axis: partials[r*c + ch] is the reduction of
// chunk ch of row r.
template <class T, class A>
__device__ void scan_rows_pass1(u64* partials, const T* x, i64 rows, i64 n, i64 L, i64 c, int op) {
  __shared__ A red[THREADS / 32];
  for (i64 w = blockIdx.x; w < rows * c; w += gridDim.x) {
    const i64 r = w / c, lo = (w % c) * L, hi = lo + L < n ? lo + L : n;
    const T* p = x + r * n;
    A acc = sc_ident<A>(op);
    for (i64 i = lo + threadIdx.x; i < hi; i += THREADS) acc = sc_op(op, acc, (A)p[i]);
    acc = block_reduce_sc(acc, op, red);
    if (threadIdx.x == 0) *(A*)(partials + w) = acc;
  }
}

template <class T, class A>
__device__ void scan_rows_pass2(T* dst, const T* x, const u64* partials, i64 rows, i64 n, i64 L, i64 c, int op) {
  __shared__ T tile[SCAN_PAD(SCAN_TILE)];
  __shared__ A wt[THREADS / 32];
  const int base = threadIdx.x * SCAN_ITEMS;
  for (i64 w = blockIdx.x; w < rows * c; w += gridDim.x) {
    const i64 r = w / c, ch = w % c, lo = ch * L, hi = lo + L < n ? lo + L : n;
    const T* p = x + r * n;
    T* d = dst + r * n;
    A carry = sc_ident<A>(op);
    for (i64 j = 0; j < ch; j++) carry = sc_op(op, carry, *(const A*)(partials + r * c + j));
    for (i64 t0 = lo; t0 < hi; t0 += SCAN_TILE) {
      const int cnt = hi - t0 < SCAN_TILE ? (int)(hi - t0) : SCAN_TILE;
      for (int i = threadIdx.x; i < cnt; i += THREADS) tile[SCAN_PAD(i)] = p[t0 + i];
      __syncthreads();
      A local = sc_ident<A>(op);
#pragma unroll
      for (int k = 0; k < SCAN_ITEMS; k++)
        if (base + k < cnt) local = sc_op(op, local, (A)tile[SCAN_PAD(base + k)]);
      A total;
      A run = sc_op(op, carry, block_scan_excl(local, op, wt, &total));
#pragma unroll
      for (int k = 0; k < SCAN_ITEMS; k++) {
        if (base + k < cnt) {
          run = sc_op(op, run, (A)tile[SCAN_PAD(base + k)]);
          tile[SCAN_PAD(base + k)] = (T)run;
        }
      }
      __syncthreads();
      for (int i = threadIdx.x; i < cnt; i += THREADS) d[t0 + i] = tile[SCAN_PAD(i)];
      carry = sc_op(op, carry, total);
      __syncthreads();
    }
  }
}

// Down a strided axis: a thread owns K adjacent columns (K = 1, or with
// SCAN_VEC in op a 16-byte vector of them: Go checks that inner is whole
// vectors and x and dst are 16-byte aligned) of outer*inner, and chunk ch
// of their n elements inner apart, SCAN_ROWS rows loaded at once. Pass 1
// writes each chunk's reduction to partials[ch*cols + col];
// scan_cols_carry turns them into each chunk's carry-in (the reduction of
// the chunks before it, in chunk order: deterministic), which pass 2 starts
// from. Pass 2 takes the work items in reverse, so that it first rescans
// the rows pass 1 read last, which the L2 cache still holds.
#define SCAN_VEC 16
#define SCAN_ROWS 4

template <class T, int K>
struct ScanLine {
  T e[K];
};
template <class T, int K>
__device__ __forceinline__ ScanLine<T, K> scan_ld(const T* p) {
  ScanLine<T, K> l;
  if constexpr (K == 1) {
    l.e[0] = *p;
  } else {
    const Vec<T> v = vload(reinterpret_cast<const Vec<T>*>(p));
#pragma unroll
    for (int k = 0; k < K; k++) l.e[k] = v.e[k];
  }
  return l;
}
template <class T, int K>
__device__ __forceinline__ void scan_st(T* p, const ScanLine<T, K>& l) {
  if constexpr (K == 1) {
    *p = l.e[0];
  } else {
    Vec<T> v;
#pragma unroll
    for (int k = 0; k < K; k++) v.e[k] = l.e[k];
    vstore(reinterpret_cast<Vec<T>*>(p), v);
  }
}

template <class T, class A, int K>
__device__ __forceinline__ void scan_cols_k(T* dst, const T* x, u64* partials, bool pass1, i64 outer, i64 n, i64 inner,
                                            i64 L, i64 c, int op) {
  constexpr int U = SCAN_ROWS;
  const i64 cols = outer * inner, vcols = cols / K, colBlocks = (vcols + THREADS - 1) / THREADS;
  const i64 items = colBlocks * c;
  for (i64 w0 = blockIdx.x; w0 < items; w0 += gridDim.x) {
    const i64 w = pass1 ? w0 : items - 1 - w0;
    const i64 ch = w / colBlocks, vc = (w % colBlocks) * THREADS + threadIdx.x;
    if (vc >= vcols) continue;
    const i64 col = vc * K;
    const i64 off = (col / inner) * n * inner + col % inner;  // inner is whole vectors: one group
    const i64 lo = ch * L, hi = lo + L < n ? lo + L : n;
    const T* p = x + off;
    A acc[K];
#pragma unroll
    for (int k = 0; k < K; k++) acc[k] = (pass1 || c == 1) ? sc_ident<A>(op) : *(const A*)(partials + ch * cols + col + k);
    i64 j = lo;
    if (pass1) {
      for (; j + U - 1 < hi; j += U) {
        ScanLine<T, K> e[U];
#pragma unroll
        for (int u = 0; u < U; u++) e[u] = scan_ld<T, K>(p + (j + u) * inner);
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
          for (int k = 0; k < K; k++) acc[k] = sc_op(op, acc[k], (A)e[u].e[k]);
      }
      for (; j < hi; j++) {
        const ScanLine<T, K> e = scan_ld<T, K>(p + j * inner);
#pragma unroll
        for (int k = 0; k < K; k++) acc[k] = sc_op(op, acc[k], (A)e.e[k]);
      }
#pragma unroll
      for (int k = 0; k < K; k++) *(A*)(partials + ch * cols + col + k) = acc[k];
      continue;
    }
    T* d = dst + off;
    for (; j + U - 1 < hi; j += U) {
      ScanLine<T, K> e[U];
#pragma unroll
      for (int u = 0; u < U; u++) e[u] = scan_ld<T, K>(p + (j + u) * inner);
#pragma unroll
      for (int u = 0; u < U; u++) {
#pragma unroll
        for (int k = 0; k < K; k++) {
          acc[k] = sc_op(op, acc[k], (A)e[u].e[k]);
          e[u].e[k] = (T)acc[k];
        }
        scan_st<T, K>(d + (j + u) * inner, e[u]);
      }
    }
    for (; j < hi; j++) {
      ScanLine<T, K> e = scan_ld<T, K>(p + j * inner);
#pragma unroll
      for (int k = 0; k < K; k++) {
        acc[k] = sc_op(op, acc[k], (A)e.e[k]);
        e.e[k] = (T)acc[k];
      }
      scan_st<T, K>(d + j * inner, e);
    }
  }
}

template <class T, class A>
__device__ void scan_cols(T* dst, const T* x, u64* partials, bool pass1, i64 outer, i64 n, i64 inner, i64 L, i64 c,
                          int op) {
  if (op & SCAN_VEC)
    scan_cols_k<T, A, 16 / sizeof(T)>(dst, x, partials, pass1, outer, n, inner, L, c, op & ~SCAN_VEC);
  else
    scan_cols_k<T, A, 1>(dst, x, partials, pass1, outer, n, inner, L, c, op);
}

// The carry-in of each chunk of each column: partials[j*cols + col] becomes
// the reduction of chunks 0 .. j-1 (the identity for j = 0), folded in
// chunk order. A thread a column; 16 loads in flight before the stores
// that follow them.
template <class A>
__device__ void scan_cols_carry(u64* partials, i64 cols, i64 c, int op) {
  constexpr int B = 16;
  for (i64 col = global_tid(); col < cols; col += global_stride()) {
    A acc = sc_ident<A>(op);
    for (i64 j = 0; j < c; j += B) {
      A v[B];
#pragma unroll
      for (int u = 0; u < B; u++)
        if (j + u < c) v[u] = *(const A*)(partials + (j + u) * cols + col);
#pragma unroll
      for (int u = 0; u < B; u++) {
        if (j + u < c) {
          *(A*)(partials + (j + u) * cols + col) = acc;
          acc = sc_op(op, acc, v[u]);
        }
      }
    }
  }
}

#define SCANSORT(T, S, A)                                                                                        \
  KERNEL gocuda_scanrows_##S##_pass1(u64* partials, const T* x, i64 rows, i64 n, i64 L, i64 c, int op) {         \
    scan_rows_pass1<T, A>(partials, x, rows, n, L, c, op);                                                       \
  }                                                                                                              \
  KERNEL gocuda_scanrows_##S##_pass2(T* dst, const T* x, const u64* partials, i64 rows, i64 n, i64 L, i64 c,     \
                                     int op) {                                                                   \
    scan_rows_pass2<T, A>(dst, x, partials, rows, n, L, c, op);                                                  \
  }                                                                                                              \
  KERNEL gocuda_scancols_##S##_pass1(u64* partials, const T* x, i64 outer, i64 n, i64 inner, i64 L, i64 c,       \
                                     int op) {                                                                   \
    scan_cols<T, A>((T*)nullptr, x, partials, true, outer, n, inner, L, c, op);                                  \
  }                                                                                                              \
  KERNEL gocuda_scancols_##S##_pass2(T* dst, const T* x, const u64* partials, i64 outer, i64 n, i64 inner, i64 L, \
                                     i64 c, int op) {                                                            \
    scan_cols<T, A>(dst, x, (u64*)partials, false, outer, n, inner, L, c, op);                                   \
  }                                                                                                              \
  KERNEL gocuda_scancolscarry_##S(u64* partials, i64 cols, i64 c, int op) {                                       \
    scan_cols_carry<A>(partials, cols, c, op);                                                                   \
  }

SCANSORT(float, f32, double)
SCANSORT(double, f64, double)
SCANSORT(int, i32, int)
SCANSORT(i64, i64, i64)
SCANSORT(u8, u8, unsigned)
SCANSORT(i8, i8, int)
SCANSORT(i16, i16, int)
SCANSORT(u32, u32, unsigned)
