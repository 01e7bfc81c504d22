// exp/colsum: float32 sum down the columns (axis 0 of a contiguous matrix,
// torch x.sum(0)) with reduce_axes.cuh's real column kernel (col_vec, the
// RMODE_COL_VEC modes of gocuda_rsumcol_f32) and its pass 2 (raxes2):
//   current: the launch kernels/reduce_axes.go picks today (tiles narrowed
//            to 16, 8 or 4 lanes a row until they fill the SMs, one pass);
//   split:   wide tiles (LW = 32, 16 or 8 lanes of 16 bytes a row: 512, 256
//            or 128 contiguous bytes of a row a warp) with the rows split
//            into `chunks` runs, pass 2 combining the chunks' partials;
//            swept over the lanes, the chunks, the rows in flight a thread
//            (U) and the grid (a block a tile, or a block two tiles).
// Timed like ../shared/anchors/arrays.py (a loop of calls between two
// events), median of REPS loops. GB/s counts the matrix's bytes read; the
// copy (cudaMemcpyAsync D2D of the same matrix) counts read + write, and
// "of copy" is a variant's GB/s over the copy's.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

// ---- the part of kernels.cu's prelude reduce_axes.cuh uses ----
typedef long long i64;
typedef unsigned long long u64;
typedef unsigned char u8;
#define THREADS 256
#define FULL_MASK 0xffffffffu
#define KERNEL extern "C" __global__ void __launch_bounds__(THREADS)
struct c64 {
  float re, im;
};
struct c128 {
  double re, im;
};
template <class T>
struct alignas(16) Vec {
  T e[16 / sizeof(T)];
};
template <class T>
__device__ __forceinline__ Vec<T> vload(const Vec<T>* p) {
  union {
    uint4 u;
    Vec<T> v;
  } x;
  x.u = *reinterpret_cast<const uint4*>(p);
  return x.v;
}
__device__ __forceinline__ i64 global_tid() { return (i64)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ i64 global_stride() { return (i64)gridDim.x * blockDim.x; }
__device__ __forceinline__ c128 operator+(c128 a, c128 b) { return c128{a.re + b.re, a.im + b.im}; }
__device__ __forceinline__ float lowest(float*) { return __int_as_float((int)0xff800000u); }
__device__ __forceinline__ double lowest(double*) { return __longlong_as_double((i64)0xfff0000000000000ull); }
__device__ __forceinline__ float highest(float*) { return __int_as_float(0x7f800000); }
__device__ __forceinline__ double highest(double*) { return __longlong_as_double(0x7ff0000000000000ll); }
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
template <class A, class Op>
__device__ __forceinline__ A warp_reduce(A v, Op op) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = op(v, shfl_down(v, o));
  return v;
}

#define RAXES_NO_KERNELS
#include "reduce_axes.cuh"

typedef RFold<float, double, float, RFOLD_SUM> rsum;
typedef RExt<float, true> rmax;
typedef RArg<float, true> rargmax;

// As gocuda_r<op>col_f32 (KERNEL_R: 4 blocks an SM), with U a parameter.
template <class R, int U>
__global__ void __launch_bounds__(THREADS, 4) colvec_k(typename R::Out* dst, typename R::Acc* partials, const float* x,
                                                       i64 nout, i64 nred, int mode, i64 chunks, RLayout L) {
  col_vec<float, R, U>(dst, partials, x, nout, nred, mode, chunks, L);
}
// As gocuda_r<op>_f32_pass2.
template <class R>
__global__ void __launch_bounds__(THREADS)
    pass2_k(typename R::Out* dst, const typename R::Acc* partials, i64 nout, i64 nred, i64 chunks) {
  raxes2<R>(dst, partials, nout, nred, chunks);
}

#define CK(x)                                                                              \
  do {                                                                                     \
    cudaError_t e_ = (x);                                                                  \
    if (e_ != cudaSuccess) {                                                               \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(1);                                                                             \
    }                                                                                      \
  } while (0)

static int REPS = 21, LOOP = 5;
static int sms;
static cudaEvent_t ev0, ev1;

// Median over REPS of the mean time of LOOP back-to-back calls, in µs.
template <class F>
static double timeit(F f) {
  for (int i = 0; i < 3; i++) f();
  CK(cudaDeviceSynchronize());
  std::vector<double> t;
  for (int r = 0; r < REPS; r++) {
    CK(cudaEventRecord(ev0));
    for (int i = 0; i < LOOP; i++) f();
    CK(cudaEventRecord(ev1));
    CK(cudaEventSynchronize(ev1));
    float ms;
    CK(cudaEventElapsedTime(&ms, ev0, ev1));
    t.push_back(ms * 1e3 / LOOP);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct Launch {
  int mode, U;
  i64 chunks;
  unsigned grid;
};

static i64 cdiv(i64 a, i64 b) { return (a + b - 1) / b; }

// kernels/reduce_axes.go's launch today for a rows x cols float32 matrix
// down its columns (colVec holds: cols is a multiple of 4), with its
// default U.
template <class R>
static Launch current(i64 rows, i64 cols) {
  const i64 resident = (i64)sms * 4, target = 2 * resident;
  int mode = RMODE_COL_VEC;
  i64 width = 128;
  while (mode < RMODE_COL_VEC + 3 && cdiv(cols, width) < 2 * sms) mode++, width /= 2;
  const i64 tiles = cdiv(cols, width);
  i64 chunks = 1;
  if (tiles < sms) chunks = std::max<i64>(1, std::min(cdiv(target, tiles), rows / 128));
  const unsigned grid = chunks == 1 ? (unsigned)std::min(tiles, 16 * target) : (unsigned)(tiles * chunks);
  return {mode, col_vec_rows<R>(), chunks, grid};
}

// kernels/reduce_axes.go's colSplit with its constants as committed
// (colSplitLanesLog 0, colSplitBlocksPerSM 8, colSplitMinRows 128); the
// current launch where it declines.
static const int kLanesLog = 0, kBlocksPerSM = 8, kMinRows = 128;
template <class R>
static Launch proposed(i64 rows, i64 cols) {
  if (cdiv(cols, 128) < 2 * sms) {
    const i64 tiles = cdiv(cols, 128 >> kLanesLog);
    const i64 chunks = std::min(cdiv((i64)kBlocksPerSM * sms, tiles), rows / kMinRows);
    if (chunks >= 2 && tiles * chunks >= 2 * sms)
      return {RMODE_COL_VEC + kLanesLog, col_vec_rows<R>(), chunks, (unsigned)(tiles * chunks)};
  }
  return current<R>(rows, cols);
}

struct Ctx {
  i64 rows, cols;
  const float* x;
  void* d;      // cols outputs
  void* parts;  // maxch * cols accumulators
};

template <class R, int U>
static void launch_u(const Ctx& c, const Launch& l) {
  RLayout L = {{1, 1, 1, c.cols}, {0, 0, 0, 1}, {1, 1, 1, c.rows}, {0, 0, 0, c.cols}};
  typename R::Acc* p = l.chunks > 1 ? (typename R::Acc*)c.parts : nullptr;
  colvec_k<R, U><<<l.grid, THREADS>>>((typename R::Out*)c.d, p, c.x, c.cols, c.rows, l.mode, l.chunks, L);
}

// Pass 1 (and pass 2 unless p1only) as ReduceAxes launches them.
template <class R>
static void launch(const Ctx& c, const Launch& l, bool p1only = false) {
  switch (l.U) {
    case 4: launch_u<R, 4>(c, l); break;
    case 8: launch_u<R, 8>(c, l); break;
    case 16:
      if constexpr (sizeof(typename R::Acc) <= 8) launch_u<R, 16>(c, l);
      break;
  }
  if (l.chunks > 1 && !p1only) {
    const i64 nout = c.cols;
    const unsigned g2 = nout < 32 ? (unsigned)nout : (unsigned)std::min<i64>(cdiv(nout, 32), (i64)sms * 8);
    pass2_k<R><<<g2, THREADS>>>((typename R::Out*)c.d, (const typename R::Acc*)c.parts, nout, c.rows, l.chunks);
  }
}

// The outputs against want, to tol relative (0: exactly).
template <class R>
static bool check(const Ctx& c, const std::vector<double>& want, double tol) {
  typedef typename R::Out O;
  std::vector<O> got(c.cols);
  CK(cudaMemcpy(got.data(), c.d, c.cols * sizeof(O), cudaMemcpyDeviceToHost));
  for (i64 j = 0; j < c.cols; j++)
    if (!(fabs((double)got[j] - want[j]) <= tol * (1 + fabs(want[j])))) return false;
  return true;
}

static bool allpass = true;
static double copybw;
static i64 resident;

static double line(const char* name, const Launch& l, double bytes, double us, bool ok) {
  const double bw = bytes / us / 1e3;
  printf("%-12s LW %2d U %2d chunks %4lld grid %5u (%.2f waves) %7.1f µs %5.0f GB/s %.3f of copy %s\n", name,
         32 >> (l.mode - RMODE_COL_VEC), l.U, l.chunks, l.grid, (double)l.grid / resident, us, bw, bw / copybw,
         ok ? "PASS" : "FAIL");
  allpass = allpass && ok;
  return bw / copybw;
}

// Runs op R's current launch, the one Go's colSplit would pick and the
// sweep on c; full 1 prints the best of each lane width and pass 1 alone
// too, 2 also the best of each U, 0 only the best of all.
template <class R>
static Launch sweep(const char* op, const Ctx& c, const std::vector<double>& want, double tol, i64 maxch,
                    std::vector<int> modes, std::vector<int> us, bool halves, int full) {
  const double bytes = (double)c.rows * c.cols * 4;
  auto run = [&](const Launch& l, bool* ok) {
    CK(cudaMemset(c.d, 0xff, c.cols * sizeof(typename R::Out)));
    launch<R>(c, l);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    *ok = check<R>(c, want, tol);
    return timeit([&] { launch<R>(c, l); });
  };
  char name[64];
  bool ok;
  const Launch cur = current<R>(c.rows, c.cols);
  snprintf(name, sizeof name, "%s current", op);
  line(name, cur, bytes, run(cur, &ok), ok);
  const Launch pro = proposed<R>(c.rows, c.cols);
  snprintf(name, sizeof name, "%s go-split", op);
  line(name, pro, bytes, run(pro, &ok), ok);
  double best = 1e30, bmode[8], bu[17];
  Launch bl{}, lmode[8], lu[17];
  for (auto& b : bmode) b = 1e30;
  for (auto& b : bu) b = 1e30;
  bool allok = true;
  for (int mode : modes) {
    const i64 tiles = cdiv(c.cols, 128 >> (mode - RMODE_COL_VEC));
    std::vector<i64> cand = {1, 2, 4, 8, 16, 32, 64, 128, 256};
    for (double w : {0.5, 1.0, 1.5, 2.0, 3.0, 4.0}) cand.push_back(cdiv((i64)(w * resident), tiles));
    std::sort(cand.begin(), cand.end());
    cand.erase(std::unique(cand.begin(), cand.end()), cand.end());
    for (int U : us)
      for (i64 ch : cand) {
        if (ch < 1 || ch > maxch || tiles * ch > 8 * resident) continue;
        for (int half = 0; half < (halves && tiles > 1 ? 2 : 1); half++) {
          const i64 gt = half ? cdiv(tiles, 2) : tiles;
          const Launch l{mode, U, ch, (unsigned)(gt * ch)};
          const double t = run(l, &ok);
          if (!ok) {
            snprintf(name, sizeof name, "%s FAILED", op);
            line(name, l, bytes, t, ok);
            allok = false;
          }
          if (t < best) best = t, bl = l;
          if (t < bmode[mode - RMODE_COL_VEC]) bmode[mode - RMODE_COL_VEC] = t, lmode[mode - RMODE_COL_VEC] = l;
          if (t < bu[U]) bu[U] = t, lu[U] = l;
        }
      }
  }
  if (full) {
    for (int mode : modes) {
      snprintf(name, sizeof name, "%s LW %d", op, 32 >> (mode - RMODE_COL_VEC));
      line(name, lmode[mode - RMODE_COL_VEC], bytes, bmode[mode - RMODE_COL_VEC], allok);
    }
    for (int U : us) {
      if (full < 2) break;
      snprintf(name, sizeof name, "%s U %d", op, U);
      line(name, lu[U], bytes, bu[U], allok);
    }
  }
  snprintf(name, sizeof name, "%s BEST", op);
  line(name, bl, bytes, best, allok);
  if (full && bl.chunks > 1) {
    snprintf(name, sizeof name, "%s pass1", op);
    line(name, bl, bytes, timeit([&] { launch<R>(c, bl, true); }), allok);
  }
  return bl;
}

int main() {
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  sms = prop.multiProcessorCount;
  resident = (i64)sms * 4;
  CK(cudaEventCreate(&ev0));
  CK(cudaEventCreate(&ev1));
  printf("%s, %d SMs; µs: median of %d loops of %d calls; GB/s: bytes read / time; of copy: GB/s / copy's (read+write)\n",
         prop.name, sms, REPS, LOOP);
  printf("LW: lanes a row (LW*16 contiguous bytes); U: rows in flight a thread; chunks: runs of rows; waves: grid / (4 * SMs)\n");
  const i64 shapes[3][2] = {{4096, 4096}, {65536, 1024}, {1024, 65536}};
  Launch bsq{};
  for (auto& sh : shapes) {
    const i64 rows = sh[0], cols = sh[1], n = rows * cols;
    std::vector<float> hx(n);
    unsigned s = 12345;
    for (i64 i = 0; i < n; i++) {
      s = s * 1664525u + 1013904223u;
      hx[i] = (float)((int)(s >> 9) % 2001 - 1000) / 256.0f;  // sums exact in double; many ties for argmax
    }
    std::vector<double> wsum(cols, 0.0), wmax(cols, -INFINITY), warg(cols, 0.0);
    for (i64 r = 0; r < rows; r++)
      for (i64 j = 0; j < cols; j++) {
        const float v = hx[r * cols + j];
        wsum[j] += v;
        if (v > wmax[j]) wmax[j] = v, warg[j] = (double)r;
      }
    const i64 maxch = std::min<i64>(1024, rows / 16);  // the sweep's most chunks
    Ctx c{rows, cols, nullptr, nullptr, nullptr};
    float *x, *y;
    CK(cudaMalloc(&x, n * 4));
    CK(cudaMalloc(&y, n * 4));
    CK(cudaMalloc(&c.d, cols * 8));
    CK(cudaMalloc(&c.parts, (size_t)(cols * 16 * maxch)));
    CK(cudaMemcpy(x, hx.data(), n * 4, cudaMemcpyHostToDevice));
    c.x = x;
    const double tcopy = timeit([&] { CK(cudaMemcpyAsync(y, x, n * 4, cudaMemcpyDeviceToDevice)); });
    copybw = 2.0 * n * 4 / tcopy / 1e3;
    printf("== %lldx%lld f32 down the columns: copy D2D %.1f µs %.0f GB/s (read+write)\n", rows, cols, tcopy, copybw);
    const int c4 = RMODE_COL_VEC;
    const Launch b = sweep<rsum>("sum", c, wsum, 1e-6, maxch, {c4, c4 + 1, c4 + 2}, {4, 8, 16}, true,
                                 rows == 4096 ? 2 : 1);
    if (rows == 4096 && cols == 4096) bsq = b;
    sweep<rmax>("max", c, wmax, 0, maxch, {c4, c4 + 1}, {4, 8}, false, 0);
    sweep<rargmax>("argmax", c, warg, 0, maxch, {c4, c4 + 1}, {4, 8}, false, 0);
    CK(cudaFree(x));
    CK(cudaFree(y));
    CK(cudaFree(c.d));
    CK(cudaFree(c.parts));
  }
  printf("sum 4096x4096 best: LW %d U %d chunks %lld (%lld rows a chunk), grid %u = %.2f waves of %lld resident blocks"
         " = %.1f blocks an SM\n",
         32 >> (bsq.mode - RMODE_COL_VEC), bsq.U, bsq.chunks, cdiv(4096, bsq.chunks), bsq.grid,
         (double)bsq.grid / resident, resident, (double)bsq.grid / sms);
  printf("set in kernels/reduce_axes.go: colSplitLanesLog = %d (LW %d), colSplitBlocksPerSM ~ %.0f, colSplitMinRows <= %lld;"
         " col_vec_rows (reduce_axes.cuh) = %d if U differs from 8\n",
         bsq.mode - RMODE_COL_VEC, 32 >> (bsq.mode - RMODE_COL_VEC), (double)bsq.grid / sms, cdiv(4096, bsq.chunks), bsq.U);
  printf("%s\n", allpass ? "ALL PASS" : "SOME FAIL");
  return allpass ? 0 : 1;
}
