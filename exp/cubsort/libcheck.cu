// exp/cubsort/libcheck.cu: the LIBRARY's kernels/cuda/cubsort.cuh (the
// gocuda_cub_* kernels the Go side launches), compiled as kernels.cu
// compiles it (CUB's headers first, then kernels.cu's prelude, sort.cuh,
// cubsort.cuh) and run through kernels/cubsort_gpu.go's launch sequence,
// rewritten here in C++: a check that takes seconds, before the minutes of
// scripts/gen-ptx.sh. Each type (float32, int32, uint32), both orders, sort
// (in place and not) and argsort, rows of 4097, 20011 and 1 Mi + 7 keys,
// with the Go side's portion and with portions of 3 tiles (so that the
// multi-portion hand-over of digit starts runs without 2^28 keys), against
// a host reference: the argsort stable by sort.cuh's key, the sort by
// cubsort.cuh's bijective key. Then the 16 Mi float32 sort and argsort
// timed as bench.cu times them, beside the bench's own best.
//
//   bash exp/cubsort/libcheck.sh      (from the repository root, GPU machine)
#include <cub/device/device_radix_sort.cuh>
#include <cub/agent/agent_radix_sort_onesweep.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/version.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

// kernels.cu's prelude, as much as sort.cuh and cubsort.cuh use.
typedef long long i64;
typedef unsigned long long u64;
typedef unsigned char u8;
typedef signed char i8;
typedef short i16;
typedef unsigned u32;
#define THREADS 256
#define FULL_MASK 0xffffffffu
#define KERNEL extern "C" __global__ void __launch_bounds__(THREADS)
__device__ __forceinline__ i64 global_tid() { return (i64)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ i64 global_stride() { return (i64)gridDim.x * blockDim.x; }
#include "sort.cuh"
#include "cubsort.cuh"

#define CK(x)                                                                                 \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      printf("CUDA error %s at %s:%d: %s\n", cudaGetErrorString(e_), __FILE__, __LINE__, #x); \
      exit(1);                                                                                \
    }                                                                                         \
  } while (0)

static int g_sms;
static size_t al256(size_t x) { return (x + 255) & ~(size_t)255; }

// cubPlanFor (kernels/cubsort_gpu.go), with the portion given.
struct Plan {
  i64 threads, tile, portion, portions, maxTiles;
  size_t bins, ctrs, zeroWords, lookback, keysAlt, keys, pos, posAlt, scratch;
};
static Plan plan_for(i64 n, bool indices, i64 portion_tiles) {
  Plan p{};
  p.threads = indices ? CUBSORT_VTHREADS : CUBSORT_THREADS;
  p.tile = p.threads * (indices ? CUBSORT_VITEMS : CUBSORT_ITEMS);
  p.portion = portion_tiles ? portion_tiles * p.tile : ((1LL << 28) - 1) / p.tile * p.tile;
  p.portions = (n + p.portion - 1) / p.portion;
  p.maxTiles = (std::min(n, p.portion) + p.tile - 1) / p.tile;
  size_t o = 0;
  p.bins = o;
  p.ctrs = o + p.portions * 4 * 256 * 4;
  o = al256(p.ctrs + p.portions * 4 * 4);
  p.zeroWords = p.portions * 4 * 257;
  p.lookback = o;
  o = al256(o + p.maxTiles * 256 * 4);
  p.keysAlt = o;
  o = al256(o + n * 4);
  if (indices) {
    p.keys = o;
    o = al256(o + n * 4);
    p.pos = o;
    o = al256(o + n * 4);
    p.posAlt = o;
    o = al256(o + n * 4);
  }
  p.scratch = o;
  return p;
}

typedef void (*KeyFn)(const u32*, u32*, u32*, u32*, i64, int);
typedef void (*UnkeyFn)(u32*, i64, int);

// cubSort (kernels/cubsort_gpu.go): keysOut (a sort; may be x) or idxOut.
static void cub_sort(const Plan& p, KeyFn key, UnkeyFn unkey, bool identity, const u32* x, u32* keysOut,
                     i64* idxOut, i64 n, int flags, unsigned char* sc, cudaStream_t s) {
  const bool arg = idxOut != nullptr;
  u32* bins = (u32*)(sc + p.bins);
  int* ctrs = (int*)(sc + p.ctrs);
  int* lookback = (int*)(sc + p.lookback);
  u32 *ka = keysOut, *kb = (u32*)(sc + p.keysAlt), *va = nullptr, *vb = nullptr;
  if (arg) ka = (u32*)(sc + p.keys), va = (u32*)(sc + p.pos), vb = (u32*)(sc + p.posAlt);
  CK(cudaMemsetAsync(bins, 0, p.zeroWords * 4, s));
  const unsigned ew = (unsigned)std::min<i64>((n + 255) / 256, (i64)g_sms * 8);
  key<<<ew, 256, 0, s>>>(x, ka, va, bins, n, flags);
  gocuda_cub_exsum_u32<<<4, 256, 0, s>>>(bins);
  for (int pass = 0; pass < 4; pass++) {
    u32 *kin = ka, *kout = kb, *vin = va, *vout = vb;
    if (pass % 2) kin = kb, kout = ka, vin = vb, vout = va;
    for (i64 q = 0; q < p.portions; q++) {
      const i64 m = std::min(n - q * p.portion, p.portion);
      const i64 tiles = (m + p.tile - 1) / p.tile;
      CK(cudaMemsetAsync(lookback, 0, tiles * 256 * 4, s));
      const i64 slot = q * 4 + pass;
      u32* bout = q < p.portions - 1 ? bins + (slot + 4) * 256 : nullptr;
      const i64 in = q * p.portion;
      if (arg)
        gocuda_cub_onesweepv_u32<<<(unsigned)tiles, (unsigned)p.threads, 0, s>>>(
            lookback, ctrs + slot, bout, bins + slot * 256, kout, kin + in, vout, vin + in, (int)m, 8 * pass, 8);
      else
        gocuda_cub_onesweep_u32<<<(unsigned)tiles, (unsigned)p.threads, 0, s>>>(lookback, ctrs + slot, bout,
                                                                                bins + slot * 256, kout, kin + in,
                                                                                (int)m, 8 * pass, 8);
    }
  }
  if (arg)
    gocuda_cub_widen_u32<<<ew, 256, 0, s>>>(va, idxOut, n);
  else if (!identity || (flags & SRT_DESC))
    unkey<<<ew, 256, 0, s>>>(ka, n, flags);
  CK(cudaGetLastError());
}

// Host keys: sort.cuh's (the argsort's order) and cubsort.cuh's (the sort's).
enum Ty { F32, I32, U32 };
static u32 h_rk(Ty t, u32 b) {
  if (t == F32) {
    if ((b & 0x7fffffffu) > 0x7f800000u) return 0xffffffffu;
    if (b == 0x80000000u) b = 0;
    return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
  }
  return t == I32 ? b ^ 0x80000000u : b;
}
static u32 h_cub(Ty t, u32 b) {
  if (t == F32) return ((b & 0x80000000u) ? ~b : (b | 0x80000000u)) - 0x007fffffu;
  return t == I32 ? b ^ 0x80000000u : b;
}

static std::vector<u32> gen(Ty t, i64 n, std::mt19937& g) {
  std::vector<u32> x(n);
  const u32 special[] = {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xffffffffu, 0x80000000u, 0u, 0x7f800000u, 0xff800000u};
  for (auto& u : x) {
    const u32 r = g() % 16;
    if (t == F32 && r < 8)
      u = special[r];
    else if (r < 12) {
      float f = (float)((int)(g() % 9) - 4);  // ties
      if (t == F32)
        memcpy(&u, &f, 4);
      else
        u = (u32)(int)f;
    } else if (t == F32) {
      float f = std::normal_distribution<float>(0.f, 100.f)(g);
      memcpy(&u, &f, 4);
    } else
      u = g();
  }
  return x;
}

int main() {
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  g_sms = prop.multiProcessorCount;
  printf("libcheck: kernels/cuda/cubsort.cuh on %s, CUB %d, tiles %dx%d / %dx%d\n", prop.name, CUB_VERSION,
         CUBSORT_THREADS, CUBSORT_ITEMS, CUBSORT_VTHREADS, CUBSORT_VITEMS);
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const KeyFn keys[] = {gocuda_cub_key_f32, gocuda_cub_key_i32, gocuda_cub_key_u32};
  const UnkeyFn unkeys[] = {gocuda_cub_unkey_f32, gocuda_cub_unkey_i32, gocuda_cub_unkey_u32};
  const char* tn[] = {"f32", "i32", "u32"};
  std::mt19937 g(7);
  int fails = 0, runs = 0;
  const i64 maxn = 1 << 24;
  u32 *dx, *dout;
  i64* didx;
  unsigned char* sc;
  CK(cudaMalloc(&dx, maxn * 4));
  CK(cudaMalloc(&dout, maxn * 4));
  CK(cudaMalloc(&didx, maxn * 8));
  const size_t scmax = std::max(plan_for(maxn, true, 0).scratch, plan_for((1 << 20) + 7, true, 3).scratch);
  CK(cudaMalloc(&sc, scmax));
  for (int ti = 0; ti < 3; ti++) {
    const Ty t = (Ty)ti;
    for (i64 n : {4097LL, 20011LL, (1LL << 20) + 7}) {
      const std::vector<u32> x = gen(t, n, g);
      CK(cudaMemcpy(dx, x.data(), n * 4, cudaMemcpyHostToDevice));
      for (int desc = 0; desc < 2; desc++) {
        const int flags = desc ? SRT_DESC : 0;
        std::vector<i64> ra(n), rs(n);
        std::iota(ra.begin(), ra.end(), 0);
        rs = ra;
        std::stable_sort(ra.begin(), ra.end(), [&](i64 a, i64 b) {
          u32 ka = h_rk(t, x[a]), kb = h_rk(t, x[b]);
          if (desc) ka = ~ka, kb = ~kb;
          return ka < kb;
        });
        std::stable_sort(rs.begin(), rs.end(), [&](i64 a, i64 b) {
          u32 ka = h_cub(t, x[a]), kb = h_cub(t, x[b]);
          if (desc) ka = ~ka, kb = ~kb;
          return ka < kb;
        });
        for (i64 ptiles : {0LL, 3LL}) {
          for (int mode = 0; mode < 3; mode++) {  // sort, sort in place, argsort
            const bool arg = mode == 2;
            const Plan p = plan_for(n, arg, ptiles);
            u32* out = mode == 1 ? dx : dout;
            if (mode == 1) CK(cudaMemcpy(dx, x.data(), n * 4, cudaMemcpyHostToDevice));
            CK(cudaMemset(dout, 0xa5, maxn * 4));
            CK(cudaMemset(didx, 0xa5, maxn * 8));
            cub_sort(p, keys[ti], unkeys[ti], t == U32, dx, arg ? nullptr : out, arg ? didx : nullptr, n, flags, sc, s);
            CK(cudaStreamSynchronize(s));
            i64 bad = 0, first = -1;
            if (arg) {
              std::vector<i64> h(n);
              CK(cudaMemcpy(h.data(), didx, n * 8, cudaMemcpyDeviceToHost));
              for (i64 i = 0; i < n; i++)
                if (h[i] != ra[i] && !bad++) first = i;
            } else {
              std::vector<u32> h(n);
              CK(cudaMemcpy(h.data(), out, n * 4, cudaMemcpyDeviceToHost));
              for (i64 i = 0; i < n; i++)
                if (h[i] != x[rs[i]] && !bad++) first = i;
            }
            if (mode == 1) CK(cudaMemcpy(dx, x.data(), n * 4, cudaMemcpyHostToDevice));
            runs++;
            if (bad) {
              fails++;
              printf("FAIL %s n=%lld desc=%d portions=%lld %s: %lld wrong, first at %lld\n", tn[ti], (long long)n,
                     desc, (long long)p.portions, mode == 0 ? "sort" : mode == 1 ? "sort in place" : "argsort",
                     (long long)bad, (long long)first);
            }
          }
        }
      }
    }
  }
  printf("%s: %d of %d runs right\n", fails ? "FAIL" : "PASS", runs - fails, runs);
  // 16 Mi standard-normal float32, timed as bench.cu times its variants.
  {
    std::vector<u32> x(maxn);
    std::normal_distribution<float> nd(0.f, 1.f);
    for (auto& u : x) {
      float f = nd(g);
      memcpy(&u, &f, 4);
    }
    CK(cudaMemcpy(dx, x.data(), maxn * 4, cudaMemcpyHostToDevice));
    for (int arg = 0; arg < 2; arg++) {
      const Plan p = plan_for(maxn, arg, 0);
      auto f = [&] { cub_sort(p, keys[0], unkeys[0], false, dx, arg ? nullptr : dout, arg ? didx : nullptr, maxn, 0, sc, s); };
      for (int i = 0; i < 3; i++) f();
      CK(cudaStreamSynchronize(s));
      cudaEvent_t a, b;
      CK(cudaEventCreate(&a));
      CK(cudaEventCreate(&b));
      std::vector<float> ts;
      for (int i = 0; i < 31; i++) {
        CK(cudaEventRecord(a, s));
        f();
        CK(cudaEventRecord(b, s));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        ts.push_back(ms * 1000.f);
      }
      std::sort(ts.begin(), ts.end());
      printf("library %-8s 16 Mi f32  %7.1f us  (bench 15:48: %s)\n", arg ? "argsort" : "sort", ts[15],
             arg ? "719-726 us, cupy.argsort 1073" : "518.8 us, cupy.sort 578.2");
    }
  }
  return fails ? 1 : 0;
}
