// reduce_axes.cuh: reductions over any set of axes (kernels/reduce_axes.go),
// included at the end of kernels.cu, whose helpers it uses (Vec, vload,
// lift's types, MaxOp/MinOp, lowest/highest, warp_reduce, shfl_down).
//
// Go simplifies the layout first: the kept dimensions (od, os: shape and
// strides in elements, outermost first) and the reduced ones (rd, rs), each
// at most RDIMS after dropping dimensions of 1 and merging neighbours, right-
// aligned (leading dimensions of 1, stride 0). Output o (row-major over the
// kept dimensions) reduces the nred elements at kept_off(o) + red_off(r) for
// reduced index r (row-major over the reduced dimensions), and is written
// contiguously to dst[o]. Pass 1 runs in one of four modes:
//   RMODE_ROW_WARP: one contiguous reduced dimension (rs = 1), many
//     outputs: a warp an output, lanes over 16-byte vectors of the row;
//   RMODE_ROW_BLOCK: the same with few outputs: a block an (output, chunk),
//     the row cut into `chunks` runs of a multiple of 16 elements;
//   RMODE_COL: the innermost kept dimension is contiguous (os = 1): a block
//     takes a tile of 32 consecutive outputs (a warp reads 32 consecutive
//     elements of a reduced row: coalesced) and one of `chunks` runs of the
//     reduced index, which its 8 warps split;
//   RMODE_COL_VEC: RMODE_COL with one reduced dimension, elements of 4 or 8
//     bytes and every row of a tile 16-byte aligned (Go checks the pointer,
//     the strides and that the innermost kept dimension is a whole number
//     of vectors): each lane owns a 16-byte vector of K columns, so a tile
//     is 32*K columns and a warp reads 512 contiguous bytes of a row;
//   RMODE_GENERAL: anything else, a thread an output.
// With chunks > 1 pass 1 writes each chunk's accumulator to
// partials[chunk * nout + o] and pass 2 combines them in chunk order, a
// thread an output, and finishes. Every combination happens in an order
// fixed by the launch, so results are deterministic; indices are 64-bit.
//
// Each reduction is a struct R: R::Acc (the accumulator), R::Out (what dst
// holds), ident(), lift(v, r) (element v at reduced index r), combine(a, b),
// finish(a, nred). ArgMax/ArgMin accumulate (value, index) and break ties by
// the smaller index, so their combine is commutative and any order gives
// the first index; NaN beats every number (NumPy's argmax).

#define RDIMS 4
#define RMODE_GENERAL 0
#define RMODE_ROW_WARP 1
#define RMODE_ROW_BLOCK 2
#define RMODE_COL 3
#define RMODE_COL_VEC 4

struct RLayout {
  i64 od[RDIMS], os[RDIMS], rd[RDIMS], rs[RDIMS];
};

// Offset of index i, row-major over d, through strides s.
__device__ __forceinline__ i64 rl_offset(i64 i, const i64* d, const i64* s) {
  i64 off = 0;
#pragma unroll
  for (int k = RDIMS - 1; k >= 0; k--) {
    if (d[k] == 1) continue;
    off += (i % d[k]) * s[k];
    i /= d[k];
  }
  return off;
}

__device__ __forceinline__ bool rl_single(const i64* d) { return d[0] == 1 && d[1] == 1 && d[2] == 1; }

__device__ __forceinline__ c128 operator*(c128 a, c128 b) {
  return c128{a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}

// Element to accumulator: a conversion (ints to u64 wrap as Go's int64
// arithmetic does), complex64 widened to complex128.
template <class T, class A>
__device__ __forceinline__ A to_acc(T v, A*) { return (A)v; }
__device__ __forceinline__ c128 to_acc(c64 v, c128*) { return c128{(double)v.re, (double)v.im}; }
__device__ __forceinline__ c128 to_acc(u8 v, c128*) { return c128{(double)v, 0}; }  // Prod's identity

__device__ __forceinline__ float to_out(double a, float*) { return (float)a; }
__device__ __forceinline__ double to_out(double a, double*) { return a; }
__device__ __forceinline__ i64 to_out(u64 a, i64*) { return (i64)a; }
__device__ __forceinline__ c64 to_out(c128 a, c64*) { return c64{(float)a.re, (float)a.im}; }

__device__ __forceinline__ double rdiv(double a, i64 n) { return a / (double)n; }
__device__ __forceinline__ c128 rdiv(c128 a, i64 n) { return c128{a.re / (double)n, a.im / (double)n}; }

#define RFOLD_SUM 0
#define RFOLD_PROD 1
#define RFOLD_MEAN 2

// Sum, Prod and Mean of T in A, written as O.
template <class T, class A, class O, int KIND>
struct RFold {
  typedef A Acc;
  typedef O Out;
  __device__ static __forceinline__ A ident() {
    if constexpr (KIND == RFOLD_PROD)
      return to_acc((u8)1, (A*)0);
    else
      return A();
  }
  __device__ static __forceinline__ A lift(T v, i64) { return to_acc(v, (A*)0); }
  __device__ static __forceinline__ A combine(A a, A b) {
    if constexpr (KIND == RFOLD_PROD)
      return a * b;
    else
      return a + b;
  }
  __device__ static __forceinline__ O finish(A a, i64 n) {
    if constexpr (KIND == RFOLD_MEAN)
      return to_out(rdiv(a, n), (O*)0);
    else
      return to_out(a, (O*)0);
  }
};

// Max and Min of T, propagating NaN (kernels.cu's MaxOp and MinOp).
template <class T, bool MAX>
struct RExt {
  typedef T Acc;
  typedef T Out;
  __device__ static __forceinline__ T ident() { return MAX ? lowest((T*)0) : highest((T*)0); }
  __device__ static __forceinline__ T lift(T v, i64) { return v; }
  __device__ static __forceinline__ T combine(T a, T b) { return MAX ? MaxOp()(a, b) : MinOp()(a, b); }
  __device__ static __forceinline__ T finish(T a, i64) { return a; }
};

template <class T>
struct ArgAcc {
  T v;
  i64 i;
};
template <class T>
__device__ __forceinline__ ArgAcc<T> shfl_down(ArgAcc<T> a, int o) {
  return ArgAcc<T>{shfl_down(a.v, o), shfl_down(a.i, o)};
}

// ArgMax and ArgMin: the best (value, index), NaN best of all, ties to the
// smaller index. The identity's index is past every real one, so a real
// element equal to the identity's value (-Inf for ArgMax) wins the tie.
template <class T, bool MAX>
struct RArg {
  typedef ArgAcc<T> Acc;
  typedef i64 Out;
  __device__ static __forceinline__ Acc ident() { return Acc{MAX ? lowest((T*)0) : highest((T*)0), 0x7fffffffffffffffll}; }
  __device__ static __forceinline__ Acc lift(T v, i64 r) { return Acc{v, r}; }
  __device__ static __forceinline__ Acc combine(Acc a, Acc b) {
    const bool an = a.v != a.v, bn = b.v != b.v;
    if (an || bn) {
      if (an && bn) return a.i <= b.i ? a : b;
      return an ? a : b;
    }
    if (MAX ? b.v > a.v : b.v < a.v) return b;
    if (MAX ? a.v > b.v : a.v < b.v) return a;
    return a.i <= b.i ? a : b;
  }
  __device__ static __forceinline__ i64 finish(Acc a, i64) { return a.i; }
};

__device__ __forceinline__ bool nonzero(float v) { return v != 0; }
__device__ __forceinline__ bool nonzero(double v) { return v != 0; }
__device__ __forceinline__ bool nonzero(int v) { return v != 0; }
__device__ __forceinline__ bool nonzero(i64 v) { return v != 0; }
__device__ __forceinline__ bool nonzero(u8 v) { return v != 0; }
__device__ __forceinline__ bool nonzero(c64 v) { return v.re != 0 || v.im != 0; }

// Any and All: an element is true when nonzero (NaN is); 1 or 0 as uint8.
template <class T, bool ALL>
struct RTruth {
  typedef int Acc;
  typedef u8 Out;
  __device__ static __forceinline__ int ident() { return ALL ? 1 : 0; }
  __device__ static __forceinline__ int lift(T v, i64) { return nonzero(v) ? 1 : 0; }
  __device__ static __forceinline__ int combine(int a, int b) { return ALL ? (a & b) : (a | b); }
  __device__ static __forceinline__ u8 finish(int a, i64) { return (u8)a; }
};

template <class R>
struct RComb {
  template <class A>
  __device__ __forceinline__ A operator()(A a, A b) const { return R::combine(a, b); }
};

// The block's reduction, in thread 0; every thread must call it. It ends
// with a barrier, so a block may call it once per unit of a loop.
template <class R>
__device__ __forceinline__ typename R::Acc rblock_reduce(typename R::Acc v) {
  __shared__ typename R::Acc w[THREADS / 32];
  const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
  v = warp_reduce(v, RComb<R>());
  if (lane == 0) w[wid] = v;
  __syncthreads();
  if (wid == 0) {
    v = lane < (int)(blockDim.x >> 5) ? w[lane] : R::ident();
    v = warp_reduce(v, RComb<R>());
  }
  __syncthreads();  // w is reused by the next call
  return v;
}

// Thread t of nt folds elements [lo, hi) of a contiguous row: 16-byte
// vectors t, t + nt, ... when the row is aligned (lo is a multiple of 16
// elements), then the tail.
template <class T, class R>
__device__ __forceinline__ typename R::Acc row_fold(const T* row, i64 lo, i64 hi, int t, int nt) {
  constexpr int K = 16 / sizeof(T);
  typename R::Acc acc = R::ident();
  if (hi < lo) hi = lo;
  i64 start = lo + t;
  if (aligned16(row + lo)) {
    const i64 nv = (hi - lo) / K;
    const Vec<T>* v = reinterpret_cast<const Vec<T>*>(row + lo);
#pragma unroll 4
    for (i64 i = t; i < nv; i += nt) {
      const Vec<T> e = vload(v + i);
#pragma unroll
      for (int k = 0; k < K; k++) acc = R::combine(acc, R::lift(e.e[k], lo + i * K + k));
    }
    start = lo + nv * K + t;
  }
  for (i64 i = start; i < hi; i += nt) acc = R::combine(acc, R::lift(row[i], i));
  return acc;
}

// RMODE_COL_VEC: lane tx of warp ty folds columns c .. c+K-1 of its tile
// from rows r0+ty, r0+ty+H, ...; the H partials of each column are then
// combined in warp order, one of the K columns at a time through part.
template <class T, class R>
__device__ __forceinline__ void col_vec(typename R::Out* dst, typename R::Acc* partials, const T* x, i64 nout, i64 nred,
                                        i64 chunks, const RLayout& L) {
  typedef typename R::Acc A;
  constexpr int K = 16 / sizeof(T), W = 32, H = THREADS / 32;
  __shared__ A part[H][W];
  const int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;
  const i64 inner = L.od[RDIMS - 1], ct = (inner + W * K - 1) / (W * K), tiles = nout / inner * ct;
  const i64 gtiles = gridDim.x / chunks, chunk = blockIdx.x / gtiles;
  const i64 per = (nred + chunks - 1) / chunks;
  const i64 r0 = chunk * per, r1 = r0 + per < nred ? r0 + per : nred;
  const i64 rsv = L.rs[RDIMS - 1] / K;  // the reduced stride in vectors
  i64 gd[RDIMS], gs[RDIMS];
#pragma unroll
  for (int k = 0; k < RDIMS; k++) {
    gd[k] = k == 0 ? 1 : L.od[k - 1];
    gs[k] = k == 0 ? 0 : L.os[k - 1];
  }
  for (i64 tile = blockIdx.x % gtiles; tile < tiles; tile += gtiles) {  // uniform across the block
    const i64 g = tile / ct, c = (tile % ct) * W * K + (i64)tx * K;
    A acc[K];
#pragma unroll
    for (int k = 0; k < K; k++) acc[k] = R::ident();
    if (c < inner) {  // inner is a multiple of K: all K columns are there
      const Vec<T>* col = reinterpret_cast<const Vec<T>*>(x + rl_offset(g, gd, gs) + c);
#pragma unroll 4
      for (i64 r = r0 + ty; r < r1; r += H) {
        const Vec<T> e = vload(col + r * rsv);
#pragma unroll
        for (int k = 0; k < K; k++) acc[k] = R::combine(acc[k], R::lift(e.e[k], r));
      }
    }
#pragma unroll
    for (int k = 0; k < K; k++) {
      part[ty][tx] = acc[k];
      __syncthreads();
      if (ty == 0 && c < inner) {
        A s = part[0][tx];
#pragma unroll
        for (int j = 1; j < H; j++) s = R::combine(s, part[j][tx]);
        const i64 o = g * inner + c + k;
        if (chunks == 1)
          dst[o] = R::finish(s, nred);
        else
          partials[chunk * nout + o] = s;
      }
      __syncthreads();  // part is rewritten for the next column
    }
  }
}

template <class T, class R>
__device__ __forceinline__ void raxes1(typename R::Out* dst, typename R::Acc* partials, const T* x, i64 nout, i64 nred,
                                       int mode, i64 chunks, const RLayout& L) {
  typedef typename R::Acc A;
  const int lane = threadIdx.x & 31;
  if (mode == RMODE_ROW_WARP) {
    const i64 warp = global_tid() >> 5, nwarps = global_stride() >> 5;
    for (i64 o = warp; o < nout; o += nwarps) {  // uniform across the warp
      A acc = row_fold<T, R>(x + rl_offset(o, L.od, L.os), 0, nred, lane, 32);
      acc = warp_reduce(acc, RComb<R>());
      if (lane == 0) dst[o] = R::finish(acc, nred);
    }
  } else if (mode == RMODE_ROW_BLOCK) {
    i64 per = (nred + chunks - 1) / chunks;
    per = (per + 15) / 16 * 16;  // chunks start on a vector boundary
    const i64 units = nout * chunks;
    for (i64 u = blockIdx.x; u < units; u += gridDim.x) {  // uniform across the block
      const i64 o = u % nout, c = u / nout;
      const i64 lo = c * per, hi = lo + per < nred ? lo + per : nred;
      A acc = row_fold<T, R>(x + rl_offset(o, L.od, L.os), lo, hi, threadIdx.x, blockDim.x);
      acc = rblock_reduce<R>(acc);
      if (threadIdx.x == 0) {
        if (chunks == 1)
          dst[o] = R::finish(acc, nred);
        else
          partials[c * nout + o] = acc;
      }
    }
  } else if (mode == RMODE_COL_VEC) {
    col_vec<T, R>(dst, partials, x, nout, nred, chunks, L);
  } else if (mode == RMODE_COL) {
    constexpr int W = 32, H = THREADS / 32;
    __shared__ A part[H][W];
    const int tx = lane, ty = threadIdx.x >> 5;
    const i64 inner = L.od[RDIMS - 1], ct = (inner + W - 1) / W, tiles = nout / inner * ct;
    const i64 gtiles = gridDim.x / chunks, chunk = blockIdx.x / gtiles;
    const i64 per = (nred + chunks - 1) / chunks;
    const i64 r0 = chunk * per, r1 = r0 + per < nred ? r0 + per : nred;
    const bool single = rl_single(L.rd);
    const i64 rs = L.rs[RDIMS - 1];
    // The kept dimensions but the innermost: each tile's outer group.
    i64 gd[RDIMS], gs[RDIMS];
#pragma unroll
    for (int k = 0; k < RDIMS; k++) {
      gd[k] = k == 0 ? 1 : L.od[k - 1];
      gs[k] = k == 0 ? 0 : L.os[k - 1];
    }
    for (i64 tile = blockIdx.x % gtiles; tile < tiles; tile += gtiles) {  // uniform across the block
      const i64 g = tile / ct, c = (tile % ct) * W + tx;
      A acc = R::ident();
      if (c < inner) {
        const T* col = x + rl_offset(g, gd, gs) + c;
        if (single) {
#pragma unroll 4
          for (i64 r = r0 + ty; r < r1; r += H) acc = R::combine(acc, R::lift(col[r * rs], r));
        } else {
          for (i64 r = r0 + ty; r < r1; r += H) acc = R::combine(acc, R::lift(col[rl_offset(r, L.rd, L.rs)], r));
        }
      }
      part[ty][tx] = acc;
      __syncthreads();
      if (ty == 0 && c < inner) {
        A s = part[0][tx];
#pragma unroll
        for (int k = 1; k < H; k++) s = R::combine(s, part[k][tx]);
        const i64 o = g * inner + c;
        if (chunks == 1)
          dst[o] = R::finish(s, nred);
        else
          partials[chunk * nout + o] = s;
      }
      __syncthreads();  // part is reused by the next tile
    }
  } else {
    // General: a thread an output, stepping the reduced coordinates with
    // carries (no division inside the loop).
    const i64 tid = global_tid(), stride = global_stride();
    for (i64 o = tid; o < nout; o += stride) {
      const T* base = x + rl_offset(o, L.od, L.os);
      A acc = R::ident();
      i64 cr[RDIMS] = {0, 0, 0, 0}, off = 0;
      for (i64 r = 0; r < nred; r++) {
        acc = R::combine(acc, R::lift(base[off], r));
        for (int k = RDIMS - 1; k >= 0; k--) {
          off += L.rs[k];
          if (++cr[k] < L.rd[k]) break;
          off -= L.rd[k] * L.rs[k];
          cr[k] = 0;
        }
      }
      dst[o] = R::finish(acc, nred);
    }
  }
}

// Pass 2: output o combines its chunks' partials in chunk order.
template <class R>
__device__ __forceinline__ void raxes2(typename R::Out* dst, const typename R::Acc* partials, i64 nout, i64 nred,
                                       i64 chunks) {
  const i64 tid = global_tid(), stride = global_stride();
  for (i64 o = tid; o < nout; o += stride) {
    typename R::Acc acc = partials[o];
    for (i64 c = 1; c < chunks; c++) acc = R::combine(acc, partials[c * nout + o]);
    dst[o] = R::finish(acc, nred);
  }
}

#define RL_PARAMS(p) i64 p##0, i64 p##1, i64 p##2, i64 p##3
#define RL_VALUES(p) {p##0, p##1, p##2, p##3}
#define RAXES(NAME, S, T, R)                                                                                     \
  KERNEL gocuda_##NAME##_##S##_pass1(R::Out* dst, R::Acc* partials, const T* x, i64 nout, i64 nred, int mode,     \
                                     i64 chunks, RL_PARAMS(od), RL_PARAMS(os), RL_PARAMS(rd), RL_PARAMS(rs)) {   \
    const RLayout L = {RL_VALUES(od), RL_VALUES(os), RL_VALUES(rd), RL_VALUES(rs)};                               \
    raxes1<T, R>(dst, partials, x, nout, nred, mode, chunks, L);                                                  \
  }                                                                                                              \
  KERNEL gocuda_##NAME##_##S##_pass2(R::Out* dst, const R::Acc* partials, i64 nout, i64 nred, i64 chunks) {       \
    raxes2<R>(dst, partials, nout, nred, chunks);                                                                 \
  }

// The reductions of each type: sums and products of integers in (wrapping)
// int64, of float32 in float64, of complex64 in complex128; means of
// integers in float64.
#define RAXES_FOLDS(S, T, A, O, MA, MO)                        \
  typedef RFold<T, A, O, RFOLD_SUM> rsum_##S;                  \
  typedef RFold<T, A, O, RFOLD_PROD> rprod_##S;                \
  typedef RFold<T, MA, MO, RFOLD_MEAN> rmean_##S;              \
  typedef RTruth<T, false> rany_##S;                           \
  typedef RTruth<T, true> rall_##S;                            \
  RAXES(rsum, S, T, rsum_##S)                                  \
  RAXES(rprod, S, T, rprod_##S)                                \
  RAXES(rmean, S, T, rmean_##S)                                \
  RAXES(rany, S, T, rany_##S)                                  \
  RAXES(rall, S, T, rall_##S)
#define RAXES_ORDER(S, T)                                      \
  typedef RExt<T, true> rmax_##S;                              \
  typedef RExt<T, false> rmin_##S;                             \
  typedef RArg<T, true> rargmax_##S;                           \
  typedef RArg<T, false> rargmin_##S;                          \
  RAXES(rmax, S, T, rmax_##S)                                  \
  RAXES(rmin, S, T, rmin_##S)                                  \
  RAXES(rargmax, S, T, rargmax_##S)                            \
  RAXES(rargmin, S, T, rargmin_##S)

RAXES_FOLDS(f32, float, double, float, double, float)
RAXES_FOLDS(f64, double, double, double, double, double)
RAXES_FOLDS(i32, int, u64, i64, double, double)
RAXES_FOLDS(i64, i64, u64, i64, double, double)
RAXES_FOLDS(u8, u8, u64, i64, double, double)
RAXES_FOLDS(c64, c64, c128, c64, c128, c64)
RAXES_ORDER(f32, float)
RAXES_ORDER(f64, double)
RAXES_ORDER(i32, int)
RAXES_ORDER(i64, i64)
RAXES_ORDER(u8, u8)
