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
// contiguously to dst[o]. Pass 1 runs in one of five modes, each mode's
// kernel lean so that it keeps enough blocks resident (the row and column
// kernels are bound to 4 an SM, which Go's grids assume):
//   RMODE_ROW_WARP (gocuda_<op>row_*): one contiguous reduced dimension
//     (rs = 1), short rows: a warp an output;
//   RMODE_ROW_BLOCK (the same kernel): longer rows: a block an (output,
//     chunk), the row cut into `chunks` runs of a multiple of 16 elements.
//     Both read a row's elements before its first 16-byte boundary one by
//     one and the rest as 16-byte vectors, RUNROLL loads in flight a thread
//     into as many accumulators;
//   RMODE_COL (gocuda_<op>col_*): the innermost kept dimension is
//     contiguous (os = 1): a block takes a tile of 32 consecutive outputs (a
//     warp reads 32 consecutive elements of a reduced row: coalesced) and
//     one of `chunks` runs of the reduced index, which its 8 warps split,
//     RUNROLL rows in flight a warp;
//   RMODE_COL_VEC .. RMODE_COL_VEC + 3 (the same kernel): RMODE_COL with one
//     reduced dimension, elements of 4 or 8 bytes and every row of a tile
//     16-byte aligned (Go checks the pointer, the strides and that the
//     innermost kept dimension is a whole number of vectors): each lane owns
//     a 16-byte vector of K columns, LW = 32 >> (mode - RMODE_COL_VEC) lanes
//     span a tile's row (LW*K columns, LW*16 contiguous bytes: 512 for
//     mode RMODE_COL_VEC, down to 64), so that a warp reads 32/LW rows at
//     once. Go splits the rows of wide tiles into chunks when the tiles
//     are too few to fill the GPU (colSplit: a warp reads 512 contiguous
//     bytes of a row), and narrows the tiles instead when the rows or the
//     scratch are too few for that;
//   RMODE_GENERAL (gocuda_<op>_*_pass1): anything else, a thread an output.
// With chunks > 1 pass 1 writes each chunk's accumulator to
// partials[chunk * nout + o] and pass 2 combines them in an order fixed by
// nout and chunks. Every combination happens in an order fixed by the
// launch, so results are deterministic (no atomics); indices are 64-bit.
//
// Each reduction is a struct R: R::Acc (the accumulator), R::Out (what dst
// holds), ident(), lift(v, r) (element v at reduced index r), combine(a, b),
// step(a, v, r) (combine(a, lift(v, r)) where r is past a's indices: every
// fold of elements into an accumulator), finish(a, nred). ArgMax/ArgMin accumulate (value, index) and break ties by
// the smaller index, so their combine is commutative and any order gives
// the first index; NaN beats every number (NumPy's argmax).

#define RDIMS 4
#define RMODE_GENERAL 0
#define RMODE_ROW_WARP 1
#define RMODE_ROW_BLOCK 2
#define RMODE_COL 3
#define RMODE_COL_VEC 4  // to RMODE_COL_VEC + 3: 32, 16, 8 or 4 lanes a row

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
  __device__ static __forceinline__ A step(A a, T v, i64 r) { return combine(a, lift(v, r)); }
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
  __device__ static __forceinline__ T step(T a, T v, i64 r) { return combine(a, lift(v, r)); }
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
  // step folds element v at index r into a, whose indices are all below r
  // (every fold visits an accumulator's elements in increasing index):
  // the first NaN stays, a NaN or a strictly better value replaces a, a
  // tie keeps a's smaller index. The identity (index past every real one)
  // gives way to any element. Two compares, not combine's branches.
  __device__ static __forceinline__ Acc step(Acc a, T v, i64 r) {
    const bool take = a.i == 0x7fffffffffffffffll || (a.v == a.v && (MAX ? !(v <= a.v) : !(v >= a.v)));
    return take ? Acc{v, r} : a;
  }
  __device__ static __forceinline__ i64 finish(Acc a, i64) { return a.i; }
};

__device__ __forceinline__ bool nonzero(float v) { return v != 0; }
__device__ __forceinline__ bool nonzero(double v) { return v != 0; }
__device__ __forceinline__ bool nonzero(int v) { return v != 0; }
__device__ __forceinline__ bool nonzero(i64 v) { return v != 0; }
__device__ __forceinline__ bool nonzero(u8 v) { return v != 0; }
__device__ __forceinline__ bool nonzero(i8 v) { return v != 0; }
__device__ __forceinline__ bool nonzero(i16 v) { return v != 0; }
__device__ __forceinline__ bool nonzero(u32 v) { return v != 0; }
__device__ __forceinline__ bool nonzero(c64 v) { return v.re != 0 || v.im != 0; }

// Any and All: an element is true when nonzero (NaN is); 1 or 0 as uint8.
template <class T, bool ALL>
struct RTruth {
  typedef int Acc;
  typedef u8 Out;
  __device__ static __forceinline__ int ident() { return ALL ? 1 : 0; }
  __device__ static __forceinline__ int lift(T v, i64) { return nonzero(v) ? 1 : 0; }
  __device__ static __forceinline__ int combine(int a, int b) { return ALL ? (a & b) : (a | b); }
  __device__ static __forceinline__ int step(int a, T v, i64 r) { return combine(a, lift(v, r)); }
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

// RUNROLL is the 16-byte loads a thread has in flight at once (and its
// independent accumulators): 256 threads x 4 x 16 bytes is 16 KiB a block,
// 64 KiB an SM at the 4 blocks __launch_bounds__ guarantees, more than the
// bytes H100's memory needs in flight to stream at full rate.
#define RUNROLL 4

// Thread t of nt folds elements [lo, hi) of a contiguous row: the elements
// before the first 16-byte boundary one each, then 16-byte vectors t,
// t + nt, ... RUNROLL at a time into RUNROLL accumulators, then the tail.
// The order depends only on (lo, hi, t, nt): deterministic.
template <class T, class R>
__device__ __forceinline__ typename R::Acc row_fold(const T* row, i64 lo, i64 hi, int t, int nt) {
  typedef typename R::Acc A;
  constexpr int K = 16 / sizeof(T), U = RUNROLL;
  A acc[U];
#pragma unroll
  for (int u = 0; u < U; u++) acc[u] = R::ident();
  if (hi < lo) hi = lo;
  const u64 addr = (u64)(row + lo);
  i64 head = (i64)((16 - (addr & 15)) & 15) / (i64)sizeof(T);
  if (addr % sizeof(T) != 0 || head > hi - lo) head = hi - lo;  // no vectors
  if (t < head) acc[0] = R::step(acc[0], row[lo + t], lo + t);
  const i64 vlo = lo + head, nv = (hi - vlo) / K;
  const Vec<T>* v = reinterpret_cast<const Vec<T>*>(row + vlo);
  i64 i = t;
  for (; i + (U - 1) * (i64)nt < nv; i += U * (i64)nt) {
    Vec<T> e[U];
#pragma unroll
    for (int u = 0; u < U; u++) e[u] = vload(v + i + u * nt);
#pragma unroll
    for (int u = 0; u < U; u++) {
      const i64 r = vlo + (i + u * nt) * K;
#pragma unroll
      for (int k = 0; k < K; k++) acc[u] = R::step(acc[u], e[u].e[k], r + k);
    }
  }
  for (; i < nv; i += nt) {
    const Vec<T> e = vload(v + i);
#pragma unroll
    for (int k = 0; k < K; k++) acc[0] = R::step(acc[0], e.e[k], vlo + i * K + k);
  }
  for (i64 j = vlo + nv * K + t; j < hi; j += nt) acc[0] = R::step(acc[0], row[j], j);
  static_assert(U == 4, "the accumulators' combination below");
  return R::combine(R::combine(acc[0], acc[1]), R::combine(acc[2], acc[3]));
}

// RMODE_ROW_WARP and RMODE_ROW_BLOCK (the reduced dimension is one and
// contiguous; L.od/L.os place each output's row).
template <class T, class R>
__device__ __forceinline__ void raxes_row(typename R::Out* dst, typename R::Acc* partials, const T* x, i64 nout, i64 nred,
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
    return;
  }
  i64 per = (nred + chunks - 1) / chunks;
  per = (per + 15) / 16 * 16;  // chunks start on a vector boundary of an aligned row
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
}

// The kept dimensions but the innermost, as a layout of each column
// tile's outer group.
__device__ __forceinline__ void rl_groups(const RLayout& L, i64* gd, i64* gs) {
#pragma unroll
  for (int k = 0; k < RDIMS; k++) {
    gd[k] = k == 0 ? 1 : L.od[k - 1];
    gs[k] = k == 0 ? 0 : L.os[k - 1];
  }
}

// RMODE_COL_VEC + lg: LW = 32 >> lg lanes span a tile row of LW*K columns,
// so a warp covers 32/LW rows and the block RS = 8*32/LW row slots. Thread
// threadIdx.x = slot*LW + lx (slot = warp*32/LW + lane/LW) folds columns
// c .. c+K-1 (c = the tile's first + lx*K) from rows r0+slot, r0+slot+RS,
// ... (U rows loaded at once, folded in row order). Then thread j < LW*K
// combines column j's RS partials in slot order. Every order is fixed by
// the launch: deterministic.
//
// U is the rows in flight a thread: by default 8 (128 bytes) where the
// accumulators are small enough to stay within the 64 registers of 4
// blocks an SM, else 4 (exp/colsum's bench sweeps it).
template <class R>
__host__ __device__ constexpr int col_vec_rows() {
  return sizeof(typename R::Acc) <= 8 ? 8 : 4;
}
template <class T, class R, int U = col_vec_rows<R>()>
__device__ __forceinline__ void col_vec(typename R::Out* dst, typename R::Acc* partials, const T* x, i64 nout, i64 nred,
                                        int mode, i64 chunks, const RLayout& L) {
  typedef typename R::Acc A;
  constexpr int K = 16 / sizeof(T);
  // part holds every thread's K accumulators at once (at most 16 KiB: K = 4
  // of 16-byte ArgAcc), so a tile needs two barriers, not two a column.
  __shared__ A part[K][THREADS];
  const int lg = mode - RMODE_COL_VEC, LW = 32 >> lg, RS = (THREADS / 32) << lg;
  const int lx = threadIdx.x & (LW - 1), slot = threadIdx.x >> (5 - lg);
  const i64 inner = L.od[RDIMS - 1], ct = (inner + LW * K - 1) / (LW * K), tiles = nout / inner * ct;
  const i64 gtiles = gridDim.x / chunks, chunk = blockIdx.x / gtiles;
  const i64 per = (nred + chunks - 1) / chunks;
  const i64 r0 = chunk * per, r1 = r0 + per < nred ? r0 + per : nred;
  const i64 rsv = L.rs[RDIMS - 1] / K;  // the reduced stride in vectors
  i64 gd[RDIMS], gs[RDIMS];
  rl_groups(L, gd, gs);
  for (i64 tile = blockIdx.x % gtiles; tile < tiles; tile += gtiles) {  // uniform across the block
    const i64 g = tile / ct, c0 = (tile % ct) * LW * K, c = c0 + (i64)lx * K;
    const i64 gbase = rl_offset(g, gd, gs);
    A acc[K];
#pragma unroll
    for (int k = 0; k < K; k++) acc[k] = R::ident();
    if (c < inner) {  // inner is a multiple of K: all K columns are there
      const Vec<T>* col = reinterpret_cast<const Vec<T>*>(x + gbase + c);
      i64 r = r0 + slot;
      for (; r + (U - 1) * (i64)RS < r1; r += U * (i64)RS) {
        Vec<T> e[U];
#pragma unroll
        for (int u = 0; u < U; u++) e[u] = vload(col + (r + u * RS) * rsv);
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
          for (int k = 0; k < K; k++) acc[k] = R::step(acc[k], e[u].e[k], r + u * RS);
      }
      for (; r < r1; r += RS) {
        const Vec<T> e = vload(col + r * rsv);
#pragma unroll
        for (int k = 0; k < K; k++) acc[k] = R::step(acc[k], e.e[k], r);
      }
    }
#pragma unroll
    for (int k = 0; k < K; k++) part[k][threadIdx.x] = acc[k];
    __syncthreads();
    const int j = threadIdx.x;  // column c0 + j: lane j / K's vector, element j % K
    if (j < LW * K && c0 + j < inner) {
      const int jl = j / K, jk = j % K;
      A s = part[jk][jl];
      for (int q = 1; q < RS; q++) s = R::combine(s, part[jk][q * LW + jl]);
      const i64 o = g * inner + c0 + j;
      if (chunks == 1)
        dst[o] = R::finish(s, nred);
      else
        partials[chunk * nout + o] = s;
    }
    __syncthreads();  // part is rewritten by the next tile
  }
}

// RMODE_COL and RMODE_COL_VEC: the innermost kept dimension is contiguous.
template <class T, class R>
__device__ __forceinline__ void raxes_col(typename R::Out* dst, typename R::Acc* partials, const T* x, i64 nout, i64 nred,
                                          int mode, i64 chunks, const RLayout& L) {
  typedef typename R::Acc A;
  if constexpr (sizeof(T) >= 4) {  // Go picks vectors of columns for 4- and 8-byte elements only
    if (mode >= RMODE_COL_VEC) {
      col_vec<T, R>(dst, partials, x, nout, nred, mode, chunks, L);
      return;
    }
  }
  constexpr int W = 32, H = THREADS / 32, U = RUNROLL;
  __shared__ A part[H][W];
  const int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;
  const i64 inner = L.od[RDIMS - 1], ct = (inner + W - 1) / W, tiles = nout / inner * ct;
  const i64 gtiles = gridDim.x / chunks, chunk = blockIdx.x / gtiles;
  const i64 per = (nred + chunks - 1) / chunks;
  const i64 r0 = chunk * per, r1 = r0 + per < nred ? r0 + per : nred;
  const bool single = rl_single(L.rd);
  const i64 rs = L.rs[RDIMS - 1];
  i64 gd[RDIMS], gs[RDIMS];
  rl_groups(L, gd, gs);
  for (i64 tile = blockIdx.x % gtiles; tile < tiles; tile += gtiles) {  // uniform across the block
    const i64 g = tile / ct, c = (tile % ct) * W + tx;
    A acc = R::ident();
    if (c < inner) {
      const T* col = x + rl_offset(g, gd, gs) + c;
      if (single) {
        i64 r = r0 + ty;
        for (; r + (U - 1) * H < r1; r += U * H) {
          T e[U];
#pragma unroll
          for (int u = 0; u < U; u++) e[u] = col[(r + u * H) * rs];
#pragma unroll
          for (int u = 0; u < U; u++) acc = R::step(acc, e[u], r + u * H);
        }
        for (; r < r1; r += H) acc = R::step(acc, col[r * rs], r);
      } else {
        for (i64 r = r0 + ty; r < r1; r += H) acc = R::step(acc, col[rl_offset(r, L.rd, L.rs)], r);
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
}

// RMODE_GENERAL: a thread an output, stepping the reduced coordinates with
// carries (no division inside the loop).
template <class T, class R>
__device__ __forceinline__ void raxes_general(typename R::Out* dst, const T* x, i64 nout, i64 nred, const RLayout& L) {
  typedef typename R::Acc A;
  const i64 tid = global_tid(), stride = global_stride();
  for (i64 o = tid; o < nout; o += stride) {
    const T* base = x + rl_offset(o, L.od, L.os);
    A acc = R::ident();
    i64 cr[RDIMS] = {0, 0, 0, 0}, off = 0;
    for (i64 r = 0; r < nred; r++) {
      acc = R::step(acc, base[off], r);
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

// Pass 2: output o combines its chunks' partials. Fewer than 32 outputs
// (a whole array, a few long rows) take a block each: thread t combines
// chunks t, t + 256, ... and the block's tree the threads'. More take 32
// consecutive outputs a block (coalesced): warp w combines chunks w, w + 8,
// ... of its lane's output, then the warps' results in warp order. Either
// order is fixed by nout and chunks alone: deterministic for any grid.
template <class R>
__device__ __forceinline__ void raxes2(typename R::Out* dst, const typename R::Acc* partials, i64 nout, i64 nred,
                                       i64 chunks) {
  typedef typename R::Acc A;
  if (nout < 32) {
    for (i64 o = blockIdx.x; o < nout; o += gridDim.x) {  // uniform across the block
      A acc = R::ident();
      for (i64 c = threadIdx.x; c < chunks; c += blockDim.x) acc = R::combine(acc, partials[c * nout + o]);
      acc = rblock_reduce<R>(acc);
      if (threadIdx.x == 0) dst[o] = R::finish(acc, nred);
    }
    return;
  }
  constexpr int W = 32, H = THREADS / 32;
  __shared__ A part[H][W];
  const int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;
  const i64 tiles = (nout + W - 1) / W;
  for (i64 tile = blockIdx.x; tile < tiles; tile += gridDim.x) {  // uniform across the block
    const i64 o = tile * W + tx;
    A acc = R::ident();
    if (o < nout) {
#pragma unroll 4
      for (i64 c = ty; c < chunks; c += H) acc = R::combine(acc, partials[c * nout + o]);
    }
    part[ty][tx] = acc;
    __syncthreads();
    if (ty == 0 && o < nout) {
      A s = part[0][tx];
#pragma unroll
      for (int j = 1; j < H; j++) s = R::combine(s, part[j][tx]);
      dst[o] = R::finish(s, nred);
    }
    __syncthreads();  // part is reused by the next tile
  }
}

// The row and column kernels are bound to 4 resident blocks an SM (at most
// 64 registers a thread), which Go's grids assume (reduceBlocksPerSM).
#define KERNEL_R extern "C" __global__ void __launch_bounds__(THREADS, 4)
#define RL_PARAMS(p) i64 p##0, i64 p##1, i64 p##2, i64 p##3
#define RL_VALUES(p) {p##0, p##1, p##2, p##3}
#define RAXES_ARGS(T, R)                                                                                     \
  R::Out *dst, R::Acc *partials, const T *x, i64 nout, i64 nred, int mode, i64 chunks, RL_PARAMS(od), RL_PARAMS(os), \
      RL_PARAMS(rd), RL_PARAMS(rs)
#define RAXES_LAYOUT const RLayout L = {RL_VALUES(od), RL_VALUES(os), RL_VALUES(rd), RL_VALUES(rs)}
// Four kernels an (operation, type): _pass1 the general mode, <name>row_
// and <name>col_ the row and column modes (the same arguments), _pass2 the
// combination of chunks.
#define RAXES_K(NAME, S, T, R)                                                                                   \
  KERNEL gocuda_##NAME##_##S##_pass1(RAXES_ARGS(T, R)) {                                                               \
    RAXES_LAYOUT;                                                                                                \
    raxes_general<T, R>(dst, x, nout, nred, L);                                                                  \
  }                                                                                                              \
  KERNEL_R gocuda_##NAME##row_##S(RAXES_ARGS(T, R)) {                                                                  \
    RAXES_LAYOUT;                                                                                                \
    raxes_row<T, R>(dst, partials, x, nout, nred, mode, chunks, L);                                              \
  }                                                                                                              \
  KERNEL_R gocuda_##NAME##col_##S(RAXES_ARGS(T, R)) {                                                                  \
    RAXES_LAYOUT;                                                                                                \
    raxes_col<T, R>(dst, partials, x, nout, nred, mode, chunks, L);                                              \
  }                                                                                                              \
  KERNEL gocuda_##NAME##_##S##_pass2(R::Out* dst, const R::Acc* partials, i64 nout, i64 nred, i64 chunks) {       \
    raxes2<R>(dst, partials, nout, nred, chunks);                                                                 \
  }
#define RAXES(NAME, S, T, R) RAXES_K(NAME, S, T, R)

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

// exp/colsum's bench defines RAXES_NO_KERNELS to take the templates alone.
#ifndef RAXES_NO_KERNELS
RAXES_FOLDS(f32, float, double, float, double, float)
RAXES_FOLDS(f64, double, double, double, double, double)
RAXES_FOLDS(i32, int, u64, i64, double, double)
RAXES_FOLDS(i64, i64, u64, i64, double, double)
RAXES_FOLDS(u8, u8, u64, i64, double, double)
RAXES_FOLDS(c64, c64, c128, c64, c128, c64)
RAXES_FOLDS(i8, i8, u64, i64, double, double)
RAXES_FOLDS(i16, i16, u64, i64, double, double)
RAXES_FOLDS(u32, u32, u64, i64, double, double)
RAXES_ORDER(f32, float)
RAXES_ORDER(f64, double)
RAXES_ORDER(i32, int)
RAXES_ORDER(i64, i64)
RAXES_ORDER(u8, u8)
RAXES_ORDER(i8, i8)
RAXES_ORDER(i16, i16)
RAXES_ORDER(u32, u32)
#endif  // RAXES_NO_KERNELS

// RMODE_COL_CLUSTER (gocuda_<op>colc<lg>_<dtype>: Sum, Mean, Max and Min of
// float32 and float64, which Go picks on compute capability 9.0 and up):
// the columns of a (nred, inner) matrix, rows rs elements apart, read as
// 16-byte vectors as in RMODE_COL_VEC + lg (LW = 32 >> lg lanes span a
// strip's row of W = LW*K columns). A cluster of COLC_CL blocks takes a
// strip: block `rank` folds the rank-th of COLC_CL runs of the rows into W
// accumulators in its shared memory, and after the cluster's barrier each
// block combines its W/COLC_CL columns across the cluster's shared memory
// (distributed shared memory) in rank order and writes them. So the rows
// split into chunks with no partials in global memory, no counters and no
// second pass: on the H100, 4096×4096 float32 down the columns (summed in
// float64) took 26.2 µs (0.916 of a copy's bandwidth) against 28.0 for the
// best split with partials (exp/colsum3, 2026-11-26 18:20-18:40 UTC). Go launches strips ×
// COLC_CL blocks (whole clusters). Every order is fixed: deterministic.
//
// Without clusters (compute capability 8.x code: the PTX, which a GPU of
// 9.0 runs only when it cannot load the fatbin) the first block of each
// group of COLC_CL folds the whole strip and the others return: slower,
// the same results up to the order of the additions. The CPU emulator has
// no clusters (nor __ldcs) and leaves the mode out.
#ifndef GOCUDA_EMU
#define COLC_CL 8
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define COLC_CLUSTER 1
#define KERNEL_C extern "C" __global__ void __cluster_dims__(COLC_CL, 1, 1) __launch_bounds__(THREADS, 4)
#else
#define COLC_CLUSTER 0
#define KERNEL_C KERNEL_R
#endif

// vload_cs is vload with the streaming hint (ld.global.cs): the matrix is
// read once, so its lines need not stay in L2 (26.3 µs against 26.8 with
// plain loads on 4096×4096 float32, exp/colsum3).
template <class T>
__device__ __forceinline__ Vec<T> vload_cs(const Vec<T>* p) {
  union {
    uint4 u;
    Vec<T> v;
  } x;
  x.u = __ldcs(reinterpret_cast<const uint4*>(p));
  return x.v;
}

// LG is a kernel's own (three kernels an operation and type): with the
// strip's width known at compile time the 4096² float32 sum took 26.3 µs
// against 26.6 (exp/colsum3).
template <class T, class R, int LG>
__device__ __forceinline__ void col_cluster(typename R::Out* dst, const T* x, i64 inner, i64 nred, i64 rs) {
  typedef typename R::Acc A;
  constexpr int K = 16 / sizeof(T), U = col_vec_rows<R>();
  __shared__ A part[K][THREADS];
  __shared__ A fin[32 * K];
  constexpr int LW = 32 >> LG, RS = (THREADS / 32) << LG, W = LW * K;
  const int lx = threadIdx.x & (LW - 1), slot = threadIdx.x >> (5 - LG);
#if COLC_CLUSTER
  cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
  const int rank = (int)cluster.block_rank(), nrank = COLC_CL;
#else
  if (blockIdx.x % COLC_CL != 0) return;  // uniform across the block
  const int rank = 0, nrank = 1;
#endif
  const i64 c0 = (i64)(blockIdx.x / COLC_CL) * W, c = c0 + (i64)lx * K;
  const i64 per = (nred + nrank - 1) / nrank, r0 = rank * per, r1 = r0 + per < nred ? r0 + per : nred;
  // Two sets of accumulators, the even and the odd rows of each round of
  // U: half as long a chain of dependent adds between a round's loads and
  // the next's (26.2 µs against 27.1 with one set on 4096×4096 float32
  // summed in float64, 92.4 against 97.8 on 65536×1024, exp/colsum3).
  A acc[2][K];
#pragma unroll
  for (int k = 0; k < K; k++) acc[0][k] = acc[1][k] = R::ident();
  if (c < inner) {  // inner is a multiple of K: all K columns are there
    const Vec<T>* col = reinterpret_cast<const Vec<T>*>(x + c);
    const i64 rsv = rs / K;  // the row stride in vectors
    i64 r = r0 + slot;
    for (; r + (U - 1) * (i64)RS < r1; r += U * (i64)RS) {
      Vec<T> e[U];
#pragma unroll
      for (int u = 0; u < U; u++) e[u] = vload_cs(col + (r + u * RS) * rsv);
#pragma unroll
      for (int u = 0; u < U; u++)
#pragma unroll
        for (int k = 0; k < K; k++) acc[u & 1][k] = R::step(acc[u & 1][k], e[u].e[k], r + u * RS);
    }
    for (; r < r1; r += RS) {
      const Vec<T> e = vload_cs(col + r * rsv);
#pragma unroll
      for (int k = 0; k < K; k++) acc[0][k] = R::step(acc[0][k], e.e[k], r);
    }
  }
#pragma unroll
  for (int k = 0; k < K; k++) part[k][threadIdx.x] = R::combine(acc[0][k], acc[1][k]);
  __syncthreads();
  // Column j of the strip: lane j / K's vector, element j % K, combined
  // over the row slots in slot order (W <= 128 < THREADS: one round).
  if (threadIdx.x < W) {
    const int j = threadIdx.x, jl = j / K, jk = j % K;
    A s = part[jk][jl];
    for (int q = 1; q < RS; q++) s = R::combine(s, part[jk][q * LW + jl]);
    fin[j] = s;
  }
#if COLC_CLUSTER
  cluster.sync();  // every block's fin is written and visible to the cluster
  const int share = W / COLC_CL, j = rank * share + threadIdx.x;
  if (threadIdx.x < share && c0 + j < inner) {
    A s = *cluster.map_shared_rank(&fin[j], 0);
#pragma unroll
    for (int q = 1; q < COLC_CL; q++) s = R::combine(s, *cluster.map_shared_rank(&fin[j], q));
    dst[c0 + j] = R::finish(s, nred);
  }
  // No block exits (freeing its fin) while another reads it. The arrive is
  // relaxed: the store above consumed every value this thread read from
  // the other blocks, so those reads are done before it issues, and the
  // store itself need not be fenced (the kernel's end makes it visible).
  // With cluster.sync()'s release fence (MEMBAR.ALL.GPU) here, the 4096²
  // float32 sum took 26.6 µs on the H100; with this, 25.9 (exp/colsum4,
  // 2026-11-26 21:52-21:58 UTC).
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\n\tbarrier.cluster.wait.aligned;" ::: "memory");
#else
  __syncthreads();
  if (threadIdx.x < W && c0 + threadIdx.x < inner) dst[c0 + threadIdx.x] = R::finish(fin[threadIdx.x], nred);
#endif
}

// One kernel an (operation, type) of the cluster mode.
#ifndef RAXES_NO_KERNELS
#define RAXES_C1(NAME, S, T, R, LG)                                                        \
  KERNEL_C gocuda_##NAME##colc##LG##_##S(R::Out* dst, const T* x, i64 inner, i64 nred, i64 rs) { \
    col_cluster<T, R, LG>(dst, x, inner, nred, rs);                                             \
  }
#define RAXES_C(NAME, S, T, R) RAXES_C1(NAME, S, T, R, 0) RAXES_C1(NAME, S, T, R, 1) RAXES_C1(NAME, S, T, R, 2)
RAXES_C(rsum, f32, float, rsum_f32)
RAXES_C(rmean, f32, float, rmean_f32)
RAXES_C(rmax, f32, float, rmax_f32)
RAXES_C(rmin, f32, float, rmin_f32)
RAXES_C(rsum, f64, double, rsum_f64)
RAXES_C(rmean, f64, double, rmean_f64)
RAXES_C(rmax, f64, double, rmax_f64)
RAXES_C(rmin, f64, double, rmin_f64)
#endif  // RAXES_NO_KERNELS
#endif  // GOCUDA_EMU
