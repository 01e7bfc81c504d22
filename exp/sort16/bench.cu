// exp/sort16/bench.cu: the onesweep radix sort of kernels/cuda/sort16.cuh
// on 16 Mi random float32 (standard normal, as ../shared/anchors/arrays.py),
// sort (values) and argsort (int64 positions), against the current path of
// sort.cuh (radixhist/radixoff/radixscatter a pass) and, from run.sh, CuPy
// and torch. Sweeps the onesweep block (threads) and keys a thread; also a
// few for 16 Mi float64. Each variant is checked against a host std::sort
// of the same input (values bitwise; argsort: a permutation, values in
// order, equal keys in input order). Median of 25 timed runs (CUDA events),
// after 3 warm-ups; the timed sequence is what kernels/sort16_gpu.go queues:
// one memset (totals, tile counters, status words), gocuda_radixup_*,
// gocuda_radixplan_i64, then a onesweep kernel a pass slot.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <algorithm>
#include <random>
#include <cuda_runtime.h>

typedef long long i64;
typedef unsigned long long u64;
typedef unsigned char u8;
#define THREADS 256
#define FULL_MASK 0xffffffffu
#define KERNEL extern "C" __global__ void __launch_bounds__(THREADS)
__device__ __forceinline__ i64 global_tid() { return (i64)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ i64 global_stride() { return (i64)gridDim.x * blockDim.x; }
#include "sort.cuh"
#include "sort16.cuh"

#define CK(x)                                                                  \
  do {                                                                         \
    cudaError_t e_ = (x);                                                      \
    if (e_ != cudaSuccess) {                                                   \
      printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

template <class T, int NT, int ITEMS, bool VALS, bool AR>
__global__ void __launch_bounds__(NT) os_k(const u64* plan, const u64* totals, unsigned* status, unsigned* counter, i64 n, int slot) {
  onesweep<T, NT, ITEMS, VALS, AR>(plan, totals, status, counter, n, slot);
}

// The sort.cuh kernels of each type, by overload.
static void up_k(int b, u64* t, const float* x, i64 n, i64 tpb) { gocuda_radixup_f32<<<b, 256>>>(t, x, n, tpb, 0); }
static void up_k(int b, u64* t, const double* x, i64 n, i64 tpb) { gocuda_radixup_f64<<<b, 256>>>(t, x, n, tpb, 0); }
static void hist_k(const float*, int b, u64* c, const u64* p, i64 n, int s, i64 tpb) {
  gocuda_radixhist_f32<<<b, 256>>>(c, p, n, s, tpb, b);
}
static void hist_k(const double*, int b, u64* c, const u64* p, i64 n, int s, i64 tpb) {
  gocuda_radixhist_f64<<<b, 256>>>(c, p, n, s, tpb, b);
}
static void scatter_k(const float*, int b, u64* c, const u64* p, i64 n, int s, i64 tpb) {
  gocuda_radixscatter_f32<<<b, 256>>>(c, p, n, s, tpb, b);
}
static void scatter_k(const double*, int b, u64* c, const u64* p, i64 n, int s, i64 tpb) {
  gocuda_radixscatter_f64<<<b, 256>>>(c, p, n, s, tpb, b);
}

static int sms;
static char* scratch;  // big enough for every layout below
static const size_t scratchBytes = (size_t)1 << 31;

static size_t al(size_t b) { return (b + 255) / 256 * 256; }

// Layout as kernels/sort_gpu.go's radixPlanFor: keys0, keys1, vals0,
// vals1, counts (the current path), totals, tile counters, status words
// (onesweep), plan; the memset zeroes totals to the end of the status.
struct Lay {
  char *k0, *k1, *v0, *v1, *counts, *totals, *plan, *counters, *status;
  size_t zeroBytes;  // totals .. end of status
};

static Lay layout(i64 n, int size, i64 tiles, int passes, int blocksOld) {
  Lay l;
  char* p = scratch;
  auto take = [&](size_t b) { char* a = p; p += al(b); return a; };
  l.k0 = take(n * size);
  l.k1 = take(n * size);
  l.v0 = take(n * 4);
  l.v1 = take(n * 4);
  l.counts = take((size_t)256 * blocksOld * 8);
  l.totals = take(SRT_SLOTS * 256 * 8);
  l.counters = take(SRT_SLOTS * 4);
  l.status = take((size_t)(passes + 1) * tiles * 256 * 4);
  l.zeroBytes = p - l.totals;
  l.plan = take(SRT_SLOTS * SRT_PLAN * 8);
  if ((size_t)(p - scratch) > scratchBytes) { printf("scratch too small\n"); exit(1); }
  return l;
}

// The upfront part both paths share, and the grid of gocuda_radixup_*.
template <class T>
static void upfront(const Lay& l, const T* x, T* keysOut, i64* idxOut, i64 n, int passes, int blocks, i64 tpb, size_t zero) {
  CK(cudaMemsetAsync(l.totals, 0, zero));
  up_k(blocks, (u64*)l.totals, x, n, tpb);
  gocuda_radixplan_i64<<<1, 256>>>((u64*)l.totals, (u64*)l.plan, (u64)x, (u64)l.k0, (u64)(idxOut ? l.k1 : nullptr),
                                   (u64)keysOut, (u64)(idxOut ? l.v0 : nullptr), (u64)(idxOut ? l.v1 : nullptr),
                                   (u64)idxOut, n, passes, 0);
}

static void radixGrid(i64 n, int* blocks, i64* tpb) {
  const i64 tiles = (n + SRT_TILE - 1) / SRT_TILE;
  i64 b = std::min<i64>(tiles, (i64)sms * 4);
  *tpb = (tiles + b - 1) / b;
  *blocks = (int)((tiles + *tpb - 1) / *tpb);
}

template <class T, int NT, int ITEMS, bool AR>
static void run_os(const T* x, T* keysOut, i64* idxOut, i64 n) {
  const int passes = sizeof(T);
  const i64 tile = NT * ITEMS, tiles = (n + tile - 1) / tile;
  int blocks;
  i64 tpb;
  radixGrid(n, &blocks, &tpb);
  Lay l = layout(n, sizeof(T), tiles, passes, blocks);
  upfront<T>(l, x, keysOut, idxOut, n, passes, blocks, tpb, l.zeroBytes);
  // The sort's kernel (keys only) or the argsort's (with values), as
  // kernels/sort16_gpu.go picks.
  for (int s = 0; s <= passes; s++) {
    unsigned* st = (unsigned*)l.status + (size_t)s * tiles * 256;
    if (idxOut != nullptr)
      os_k<T, NT, ITEMS, true, AR><<<(unsigned)tiles, NT>>>((u64*)l.plan, (u64*)l.totals, st, (unsigned*)l.counters + s, n, s);
    else
      os_k<T, NT, ITEMS, false, AR><<<(unsigned)tiles, NT>>>((u64*)l.plan, (u64*)l.totals, st, (unsigned*)l.counters + s, n, s);
  }
}

template <class T>
static void run_old(const T* x, T* keysOut, i64* idxOut, i64 n) {
  const int passes = sizeof(T);
  int blocks;
  i64 tpb;
  radixGrid(n, &blocks, &tpb);
  Lay l = layout(n, sizeof(T), 1, passes, blocks);
  upfront<T>(l, x, keysOut, idxOut, n, passes, blocks, tpb, SRT_SLOTS * 256 * 8);
  for (int s = 0; s <= passes; s++) {
    hist_k(x, blocks, (u64*)l.counts, (u64*)l.plan, n, s, tpb);
    gocuda_radixoff_i64<<<8, 256>>>((u64*)l.counts, (u64*)l.totals, (u64*)l.plan, s, blocks);
    scatter_k(x, blocks, (u64*)l.counts, (u64*)l.plan, n, s, tpb);
  }
}

template <class F>
static float med_us(F f) {
  for (int i = 0; i < 3; i++) f();
  CK(cudaDeviceSynchronize());
  std::vector<float> t;
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  for (int i = 0; i < 25; i++) {
    cudaEventRecord(a);
    f();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    t.push_back(ms * 1000);
  }
  CK(cudaGetLastError());
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

template <class T>
struct Case {
  i64 n;
  std::vector<T> h, sorted;
  T *x, *out;
  i64* idx;
  std::vector<T> got;
  std::vector<i64> gidx;
  std::vector<unsigned char> seen;
  float best = 1e30f, bestArg = 1e30f;
  const char *bestName = "", *bestArgName = "";

  explicit Case(i64 n_) : n(n_), h(n_), got(n_), gidx(n_), seen(n_) {
    std::mt19937_64 rng(7);
    std::normal_distribution<double> nd;
    for (i64 i = 0; i < n; i++) h[i] = (T)nd(rng);
    sorted = h;
    std::sort(sorted.begin(), sorted.end());
    CK(cudaMalloc(&x, n * sizeof(T)));
    CK(cudaMalloc(&out, n * sizeof(T)));
    CK(cudaMalloc(&idx, n * 8));
    CK(cudaMemcpy(x, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  }
  bool checkSort() {
    CK(cudaMemcpy(got.data(), out, n * sizeof(T), cudaMemcpyDeviceToHost));
    return memcmp(got.data(), sorted.data(), n * sizeof(T)) == 0;
  }
  bool checkArgsort() {
    CK(cudaMemcpy(gidx.data(), idx, n * 8, cudaMemcpyDeviceToHost));
    std::fill(seen.begin(), seen.end(), 0);
    for (i64 i = 0; i < n; i++) {
      const i64 j = gidx[i];
      if (j < 0 || j >= n || seen[j]) return false;
      seen[j] = 1;
      if (memcmp(&h[j], &sorted[i], sizeof(T)) != 0) return false;
      if (i > 0 && h[gidx[i - 1]] == h[j] && gidx[i - 1] > j) return false;  // stable
    }
    return true;
  }
  template <class R>
  void variant(const char* name, R run, bool isNew) {
    CK(cudaMemset(out, 0, n * sizeof(T)));
    CK(cudaMemset(idx, 0xff, n * 8));
    run(x, out, nullptr, n);
    run(x, nullptr, idx, n);
    const cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess || cudaGetLastError() != cudaSuccess) {
      printf("%-26s FAIL  launch: %s\n", name, cudaGetErrorString(e));
      return;
    }
    const bool ok = checkSort() && checkArgsort();
    const float us = med_us([&] { run(x, out, nullptr, n); });
    const float ua = med_us([&] { run(x, nullptr, idx, n); });
    printf("%-26s %s  sort %7.1f us %6.1f GB/s   argsort %7.1f us\n", name, ok ? "PASS" : "FAIL", us,
           n * sizeof(T) / us / 1e3, ua);
    if (ok && isNew && us < best) best = us, bestName = name;
    if (ok && isNew && ua < bestArg) bestArg = ua, bestArgName = name;
  }
};

int main() {
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CK(cudaMalloc(&scratch, scratchBytes));
  cudaDeviceProp pr;
  cudaGetDeviceProperties(&pr, 0);
  const i64 n = (i64)1 << 24;
  printf("%s, %d SMs; 16 Mi keys (GB/s: input bytes / time, as the issue counts)\n", pr.name, sms);
  {
    Case<float> c(n);
    printf("float32:\n");
    c.variant("current (hist/off/scatter)", run_old<float>, false);
#define V(NT, IT, AR) c.variant("onesweep " #NT "x" #IT " rank" #AR, run_os<float, NT, IT, (AR != 0)>, true);
    V(256, 8, 1) V(256, 12, 1) V(256, 15, 1) V(256, 16, 1) V(256, 20, 1) V(128, 16, 1) V(384, 16, 1) V(512, 8, 1)
    V(512, 10, 1) V(256, 16, 0)
#undef V
    printf("f32 best: sort %s %.1f us, argsort %s %.1f us (sort: set OS_THREADS4 x OS_ITEMS4; argsort: OS_VTHREADS4 x OS_VITEMS4; rankN: OS_ATOMIC_RANK)\n", c.bestName,
           c.best, c.bestArgName, c.bestArg);
    // The upfront part alone (memset, radixup, plan) at the default tile.
    {
      int blocks;
      i64 tpb;
      radixGrid(n, &blocks, &tpb);
      const i64 tiles = (n + OS_THREADS4 * OS_ITEMS4 - 1) / (OS_THREADS4 * OS_ITEMS4);
      Lay l = layout(n, 4, tiles, 4, blocks);
      const float u = med_us([&] { upfront<float>(l, c.x, c.out, nullptr, n, 4, blocks, tpb, l.zeroBytes); });
      printf("  of which memset+radixup+plan (%dx%d tiles): %.1f us\n", OS_THREADS4, OS_ITEMS4, u);
    }
    cudaFree(c.x), cudaFree(c.out), cudaFree(c.idx);
  }
  {
    Case<double> c(n);
    printf("float64:\n");
    c.variant("current (hist/off/scatter)", run_old<double>, false);
#define V(NT, IT, AR) c.variant("onesweep " #NT "x" #IT " rank" #AR, run_os<double, NT, IT, (AR != 0)>, true);
    V(256, 8, 1) V(256, 12, 1) V(256, 16, 1) V(128, 16, 1) V(384, 8, 1)
#undef V
    printf("f64 best: sort %s %.1f us, argsort %s %.1f us (sort: OS_THREADS8 x OS_ITEMS8; argsort: OS_VTHREADS8 x OS_VITEMS8; rankN: OS_ATOMIC_RANK)\n", c.bestName,
           c.best, c.bestArgName, c.bestArg);
    cudaFree(c.x), cudaFree(c.out), cudaFree(c.idx);
  }
  return 0;
}
