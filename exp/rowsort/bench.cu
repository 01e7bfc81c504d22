// bench.cu: the row sort (kernels/cuda/rowsort.cuh) on float32 rows: the
// kernel as it was (baseline.cuh), the production gocuda_rowsort_f32 as
// rowsort.cuh's RS_* defaults build it, and row_sort<float, MAXT, ITEMS,
// MATCH> swept over keys a thread (16: blocks of 256 threads for 4096-key
// rows; 8: 512), __launch_bounds__'s minimum blocks an SM (the register cap)
// and the peer finding (ballots or __match_any_sync). Each variant sorts
// values and indices (as torch.sort(x, 1) returns), is checked bit for bit
// against a stable std::sort of each row on the host, and is timed with
// cudaEvents (5 warm-up runs, median of 30). run.sh prints torch's time.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

typedef long long i64;
typedef unsigned long long u64;
typedef unsigned char u8;
#define THREADS 256
#define FULL_MASK 0xffffffffu
#define KERNEL extern "C" __global__ void __launch_bounds__(THREADS)
__device__ __forceinline__ i64 global_tid() { return (i64)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ i64 global_stride() { return (i64)gridDim.x * blockDim.x; }

#include "sort.cuh"
#include "rowsort.cuh"
#include "baseline.cuh"

#define CK(x)                                                                     \
  do {                                                                            \
    cudaError_t e_ = (x);                                                         \
    if (e_ != cudaSuccess) {                                                      \
      printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); \
      exit(1);                                                                    \
    }                                                                             \
  } while (0)

typedef void (*RowSortFn)(float*, i64*, const float*, i64, i64, i64, int);

__global__ void __launch_bounds__(256) k_base(float* v, i64* i, const float* x, i64 rows, i64 n, i64 k, int f) {
  row_sort_base<float>(v, i, x, rows, n, k, f);
}

template <int MAXT, int ITEMS, int MINB, bool MATCH>
__global__ void __launch_bounds__(MAXT, MINB) k_new(float* v, i64* i, const float* x, i64 rows, i64 n, i64 k, int f) {
  row_sort<float, MAXT, ITEMS, MATCH>(v, i, x, rows, n, k, f);
}

struct Variant {
  std::string name;
  RowSortFn fn;
  int items, maxt;
  bool prod;
};

// The host key: rowsort's RK<float>::key (NaNs largest, -0 as +0).
static unsigned hkey(unsigned b) {
  if ((b & 0x7fffffffu) > 0x7f800000u) return 0xffffffffu;
  if (b == 0x80000000u) b = 0;
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

static u64 rng_state = 0x9e3779b97f4a7c15ULL;
static u64 rng() {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

int main() {
  const int shapes[][2] = {{4096, 4096}, {16384, 1024}};
  std::vector<Variant> vs = {
      {"baseline (i16 t256)", k_base, 16, 256, false},
      {"prod gocuda_rowsort_f32", gocuda_rowsort_f32, RS_ITEMS, RS_MAXT, true},
      {"new i16 t256 minb1 ballot", k_new<256, 16, 1, false>, 16, 256, false},
      {"new i16 t256 minb2 ballot", k_new<256, 16, 2, false>, 16, 256, false},
      {"new i16 t256 minb3 ballot", k_new<256, 16, 3, false>, 16, 256, false},
      {"new i16 t256 minb4 ballot", k_new<256, 16, 4, false>, 16, 256, false},
      {"new i16 t256 minb5 ballot", k_new<256, 16, 5, false>, 16, 256, false},
      {"new i16 t256 minb3 match", k_new<256, 16, 3, true>, 16, 256, false},
      {"new i16 t256 minb4 match", k_new<256, 16, 4, true>, 16, 256, false},
      {"new i8 t512 minb1 ballot", k_new<512, 8, 1, false>, 8, 512, false},
      {"new i8 t512 minb2 ballot", k_new<512, 8, 2, false>, 8, 512, false},
      {"new i8 t512 minb3 ballot", k_new<512, 8, 3, false>, 8, 512, false},
      {"new i8 t512 minb4 ballot", k_new<512, 8, 4, false>, 8, 512, false},
      {"new i8 t512 minb2 match", k_new<512, 8, 2, true>, 8, 512, false},
  };
  printf("row sort bench: RS_ITEMS=%d RS_MINB=%d RS_MATCH=%d (production)\n", RS_ITEMS, RS_MINB, RS_MATCH);
  for (auto& sh : shapes) {
    const i64 rows = sh[0], n = sh[1], N = rows * n;
    std::vector<float> hx(N);
    for (i64 i = 0; i < N; i++) {
      // Normal-ish values (sum of uniforms), a few NaNs, -0s, +0s and ties.
      const u64 r = rng();
      float v = 0;
      for (int j = 0; j < 4; j++) v += (float)((r >> (16 * j)) & 0xffff) / 65536.0f;
      v -= 2.0f;
      const int c = (int)(rng() % 2000);
      if (c == 0) v = NAN;
      if (c == 1) v = -0.0f;
      if (c == 2) v = 0.0f;
      if (c == 3) v = 1.0f;
      hx[i] = v;
    }
    for (i64 j = 0; j < n; j++) hx[n + j] = 3.5f;  // row 1: all equal
    // The reference: a stable sort of each row's indices by key, on all cores.
    std::vector<int> want(N);
    {
      const int nt = std::max(1u, std::thread::hardware_concurrency());
      std::vector<std::thread> ts;
      for (int t = 0; t < nt; t++)
        ts.emplace_back([&, t] {
          for (i64 r = t; r < rows; r += nt) {
            int* w = want.data() + r * n;
            std::iota(w, w + n, 0);
            const float* xr = hx.data() + r * n;
            std::stable_sort(w, w + n, [&](int a, int b) {
              unsigned ba, bb;
              memcpy(&ba, &xr[a], 4);
              memcpy(&bb, &xr[b], 4);
              return hkey(ba) < hkey(bb);
            });
          }
        });
      for (auto& t : ts) t.join();
    }
    float *dx, *dv;
    i64* di;
    CK(cudaMalloc(&dx, N * 4));
    CK(cudaMalloc(&dv, N * 4));
    CK(cudaMalloc(&di, N * 8));
    CK(cudaMemcpy(dx, hx.data(), N * 4, cudaMemcpyHostToDevice));
    std::vector<float> hv(N);
    std::vector<i64> hi(N);
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    printf("%lldx%lld float32, values+indices (GB/s: 4 B read, 4+8 B written a key)\n", rows, n);
    double best = 1e30;
    std::string bestName;
    for (int vo = 0; vo < (int)vs.size() + 1; vo++) {
      // The last run: the production kernel, values only (cuarray.Sort).
      const bool valsOnly = vo == (int)vs.size();
      const Variant& v = valsOnly ? vs[1] : vs[vo];
      int block = 32;
      while ((i64)block * v.items < n) block <<= 1;
      if (block > v.maxt) {
        printf("  %-28s skipped: rows of %lld exceed its block\n", v.name.c_str(), n);
        continue;
      }
      i64* idx = valsOnly ? nullptr : di;
      auto launch = [&] { v.fn<<<(unsigned)rows, block>>>(dv, idx, dx, rows, n, n, 0); };
      CK(cudaMemset(dv, 0xff, N * 4));
      CK(cudaMemset(di, 0xff, N * 8));
      launch();
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      CK(cudaMemcpy(hv.data(), dv, N * 4, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(hi.data(), di, N * 8, cudaMemcpyDeviceToHost));
      i64 bad = 0;
      for (i64 r = 0; r < rows; r++)
        for (i64 j = 0; j < n; j++) {
          const int w = want[r * n + j];
          if (!valsOnly && hi[r * n + j] != w) bad++;
          if (memcmp(&hv[r * n + j], &hx[r * n + w], 4) != 0) bad++;
        }
      for (int i = 0; i < 5; i++) launch();
      std::vector<float> ts;
      for (int i = 0; i < 30; i++) {
        CK(cudaEventRecord(e0));
        launch();
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        ts.push_back(ms * 1000);
      }
      std::sort(ts.begin(), ts.end());
      const double us = ts[ts.size() / 2];
      // Registers a thread, local (spilled) bytes, and blocks an SM at this block.
      cudaFuncAttributes fa;
      CK(cudaFuncGetAttributes(&fa, v.fn));
      int bps = 0;
      CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&bps, v.fn, block, 0));
      const double gbs = (double)N * (valsOnly ? 8 : 16) / (us * 1e3);
      printf("  %-28s%s %8.1f us %7.1f GB/s  %s  (t%d r%d l%zu %db/SM)\n", v.name.c_str(), valsOnly ? " vals" : "     ",
             us, gbs, bad == 0 ? "PASS" : "FAIL", block, fa.numRegs, (size_t)fa.localSizeBytes, bps);
      if (bad != 0) printf("    %lld wrong\n", bad);
      if (!valsOnly && bad == 0 && us < best) {
        best = us;
        bestName = v.name;
      }
    }
    printf("  best %lldx%lld: %s %.1f us\n", rows, n, bestName.c_str(), best);
    CK(cudaFree(dx));
    CK(cudaFree(dv));
    CK(cudaFree(di));
  }
  return 0;
}
