// exp/conv/bench.cu: narrowing conversions (issue 27: float32 → bfloat16 of
// 4096×4096 at least torch's GB/s) through the real drivers of
// kernels/cuda/optable.cuh: emap1 (the old conversion driver: chunks of
// 16 / widest elements, a float32 → bfloat16 thread stores 8 bytes) and
// econvk<MAXIN, U> (the new: chunks of 16 / sizeof(out) elements, one
// 16-byte store, at most MAXIN bytes of input a chunk, U chunks a group),
// over a sweep of grids: c = chunks a thread covers (the Go side's
// convertGrid: blocks = chunks / (256 c)) and w = waves of resident blocks.
// GB/s counts read + write bytes, as shared/anchors/arrays.py does.
//
//   bash exp/conv/run.sh
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

// kernels.cu's prelude, the part optable.cuh and half.cuh use.
typedef long long i64;
typedef unsigned long long u64;
typedef unsigned char u8;
#define THREADS 256
#define KERNEL extern "C" __global__ void __launch_bounds__(THREADS)
struct c64 {
  float re, im;
};
__device__ __forceinline__ i64 global_tid() { return (i64)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ i64 global_stride() { return (i64)gridDim.x * blockDim.x; }
template <class T>
struct FillF {
  T v;
  __device__ __forceinline__ T operator()() const { return v; }
};
template <class T, class F>
__device__ __forceinline__ void map0(T* dst, i64 n, F f) {
  for (i64 i = global_tid(); i < n; i += global_stride()) dst[i] = f();
}

#include "half.cuh"
#include "optable.cuh"

// The generated functors (kernels/cuda/ops_gen.cuh's gen_convert_*).
struct CvBF16 {
  __device__ __forceinline__ unsigned short operator()(float x) const { return f32_to_bf16(x); }
};
struct CvF16 {
  __device__ __forceinline__ unsigned short operator()(float x) const { return f32_to_f16(x); }
};
struct CvF64F32 {
  __device__ __forceinline__ float operator()(double x) const { return (float)x; }
};
struct CvU8 {
  __device__ __forceinline__ u8 operator()(float x) const { return sat_u8((double)x); }
};
struct CvCopy {
  __device__ __forceinline__ float operator()(float x) const { return x; }
};

template <class O, class A, class F>
__global__ void __launch_bounds__(THREADS) k_old(O* d, const A* a, i64 n) {
  emap1(d, a, n, F());
}
template <int MAXIN, int U, class O, class A, class F>
__global__ void __launch_bounds__(THREADS) k_new(O* d, const A* a, i64 n) {
  econvk<MAXIN, U>(d, a, n, F());
}

#define CK(x)                                                                           \
  do {                                                                                  \
    cudaError_t e_ = (x);                                                               \
    if (e_ != cudaSuccess) {                                                            \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(1);                                                                          \
    }                                                                                   \
  } while (0)

static int g_sms;
static bool g_quick;  // CONV_QUICK=1: checks only, no timing (the emulator's run)
static cudaEvent_t g_e0, g_e1;

// One launch's median µs over 30 (after 5 warm-up), and the mean µs of a
// back-to-back loop of 20 (arrays.py's way), the median of 5 such loops.
template <class L>
static void timeit(L launch, double* med, double* loop) {
  for (int i = 0; i < 5; i++) launch();
  CK(cudaDeviceSynchronize());
  std::vector<float> ts;
  for (int i = 0; i < 30; i++) {
    CK(cudaEventRecord(g_e0));
    launch();
    CK(cudaEventRecord(g_e1));
    CK(cudaEventSynchronize(g_e1));
    float ms;
    CK(cudaEventElapsedTime(&ms, g_e0, g_e1));
    ts.push_back(ms);
  }
  std::sort(ts.begin(), ts.end());
  *med = ts[ts.size() / 2] * 1e3;
  std::vector<float> ls;
  for (int r = 0; r < 5; r++) {
    CK(cudaEventRecord(g_e0));
    for (int i = 0; i < 20; i++) launch();
    CK(cudaEventRecord(g_e1));
    CK(cudaEventSynchronize(g_e1));
    float ms;
    CK(cudaEventElapsedTime(&ms, g_e0, g_e1));
    ls.push_back(ms / 20);
  }
  std::sort(ls.begin(), ls.end());
  *loop = ls[ls.size() / 2] * 1e3;
  CK(cudaGetLastError());
}

// Host references (independent of half.cuh's code): round to nearest
// even, every NaN → 0x7fff, as half.cuh documents.
static uint32_t f2u(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static unsigned short ref_bf16(float f) {
  if (f != f) return 0x7fff;
  const uint32_t u = f2u(f);
  return (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
static unsigned short ref_f16(float f) {
  uint32_t x = f2u(f);
  const unsigned short sign = (unsigned short)((x >> 16) & 0x8000u);
  x &= 0x7fffffffu;
  if (x > 0x7f800000u) return 0x7fff;
  if (x >= 0x477ff000u) return sign | 0x7c00;  // 65520 and up round to Inf (65520 is a tie to even)
  if (x < 0x38800000u) {                        // below 2^-14: a subnormal (or zero), quantum 2^-24
    float a;
    memcpy(&a, &x, 4);
    return sign | (unsigned short)nearbyintf(a * 16777216.0f);  // exact product, rounded to even
  }
  uint32_t r = x - 0x38000000u;  // rebias the exponent (127 - 15) << 23
  r = (r + 0xfffu + ((r >> 13) & 1u)) >> 13;
  return sign | (unsigned short)r;
}
static u8 ref_u8(float f) {
  const double x = f;
  return x != x || x <= 0.0 ? 0 : x >= 255.0 ? 255 : (u8)x;
}

template <class O>
static bool same(O a, O b) {
  return a == b;
}
template <>
bool same<float>(float a, float b) {
  return (a != a && b != b) || f2u(a) == f2u(b);
}

struct Anchor {
  std::string name;
  double gbs;
};
static std::vector<Anchor> g_anchor;
static double anchor(const char* name) {
  for (auto& a : g_anchor)
    if (a.name == name) return a.gbs;
  return 0;
}

// A conversion's input (device and host), output buffer and reference.
template <class O, class A>
struct Case {
  const char* name;  // the anchor's name too
  i64 n;
  A* da;
  O* dd;
  std::vector<A> ha;
  std::vector<O> ref;
  double bytes() const { return (double)n * (sizeof(A) + sizeof(O)); }

  // check runs kern on (a + off, dst + off, m) with grid g and compares.
  bool check1(void (*kern)(O*, const A*, i64), int g, i64 off, i64 m) {
    CK(cudaMemset(dd, 0xab, n * sizeof(O)));
    kern<<<g, THREADS>>>(dd + off, da + off, m);
    CK(cudaGetLastError());
    std::vector<O> h(n);
    CK(cudaMemcpy(h.data(), dd, n * sizeof(O), cudaMemcpyDeviceToHost));
    for (i64 i = off; i < off + m; i++)
      if (!same(h[i], ref[i])) {
        fprintf(stderr, "  %s mismatch at %lld (grid %d off %lld n %lld)\n", name, (long long)i, g, (long long)off,
                (long long)m);
        return false;
      }
    // Nothing past the end written.
    O pad;
    memset(&pad, 0xab, sizeof(O));
    for (i64 i = off + m; i < n; i++)
      if (memcmp(&h[i], &pad, sizeof(O)) != 0) {
        fprintf(stderr, "  %s wrote past the end at %lld\n", name, (long long)i);
        return false;
      }
    return true;
  }
  // check: the whole array at the Go-side grid; an odd length (a tail) on
  // a few blocks; a view at an odd offset (one element a thread); views 2,
  // 4 and 8 elements in (dst aligned to less than 16 bytes: emap1's
  // narrower chunks, or the wide ones).
  bool check(void (*kern)(O*, const A*, i64), int g) {
    return check1(kern, g, 0, n) && check1(kern, 3, 0, n - 5) && check1(kern, 7, 1, n - 9) &&
           check1(kern, 5, 2, n - 2 - 3) && check1(kern, 5, 4, n - 4 - 3) && check1(kern, 5, 8, n - 8 - 3);
  }

  // run times kern (chunks of K elements, for the c sweep) over the grid
  // sweep and prints one line: the best grid, and GB/s (loop) at each.
  void run(const char* label, void (*kern)(O*, const A*, i64), int K, int goGrid, bool verbose = true) {
    int occ = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, kern, THREADS, 0));
    const i64 chunks = n / K;
    std::vector<std::pair<std::string, int>> grids;
    grids.push_back({"go", goGrid});
    for (int c : {1, 2, 4, 8}) grids.push_back({"c" + std::to_string(c), (int)((chunks + THREADS * c - 1) / (THREADS * c))});
    for (int w : {1, 2, 4, 8}) grids.push_back({"w" + std::to_string(w), w * occ * g_sms});
    const bool ok = check(kern, goGrid);
    if (g_quick) {
      printf("%-4s %s\n", ok ? "PASS" : "FAIL", label);
      return;
    }
    double bestLoop = 1e30, bestMed = 0;
    std::string bestName;
    std::string row;
    for (auto& gr : grids) {
      double med, loop;
      const int g = gr.second;
      timeit([&] { kern<<<g, THREADS>>>(dd, da, n); }, &med, &loop);
      char buf[64];
      snprintf(buf, sizeof buf, " %s=%.0f", gr.first.c_str(), bytes() / loop / 1e3);
      row += buf;
      if (loop < bestLoop) {
        bestLoop = loop;
        bestMed = med;
        bestName = gr.first + "(" + std::to_string(g) + ")";
      }
    }
    const double a = anchor(name);
    printf("%-4s %-22s occ%d best %-11s %6.1fus %6.0f GB/s (med %6.0f) %.3fx torch |%s\n", ok ? "PASS" : "FAIL", label, occ,
           bestName.c_str(), bestLoop, bytes() / bestLoop / 1e3, bytes() / bestMed / 1e3, a > 0 ? bytes() / bestLoop / 1e3 / a : 0.0,
           verbose ? row.c_str() : "");
  }
};

// The Go side's grids: elementwiseGrid (kernels/gpu.go) for the old
// driver, perVec = 16 / widest, 4 vectors a thread, at least min(vectors
// / 256, 2 SMs); convertGrid for the new, the same with the chunk K and
// convChunks chunks a thread.
static int goGrid(i64 n, int perVec, int per) {
  const i64 vecs = (n + perVec - 1) / perVec;
  const i64 blocks = (vecs + THREADS * per - 1) / (THREADS * per);
  const i64 spread = std::min((vecs + THREADS - 1) / THREADS, (i64)2 * g_sms);
  return (int)std::max<i64>(1, std::max(blocks, spread));
}

template <class O, class A>
static Case<O, A> mkcase(const char* name, i64 n, A (*gen)(uint64_t&), O (*ref)(A)) {
  Case<O, A> c;
  c.name = name;
  c.n = n;
  c.ha.resize(n);
  c.ref.resize(n);
  uint64_t s = 0x9e3779b97f4a7c15ull;
  for (i64 i = 0; i < n; i++) {
    c.ha[i] = gen(s);
    c.ref[i] = ref(c.ha[i]);
  }
  CK(cudaMalloc(&c.da, n * sizeof(A)));
  CK(cudaMalloc(&c.dd, n * sizeof(O)));
  CK(cudaMemcpy(c.da, c.ha.data(), n * sizeof(A), cudaMemcpyHostToDevice));
  return c;
}
template <class O, class A>
static void freecase(Case<O, A>& c) {
  CK(cudaFree(c.da));
  CK(cudaFree(c.dd));
}

static uint64_t next(uint64_t& s) {
  s ^= s << 13;
  s ^= s >> 7;
  s ^= s << 17;
  return s;
}
// Every float32 bit pattern (NaN, Inf, subnormals, ties) three in 16; the rest
// normal values of both signs over a wide range.
static float genF32(uint64_t& s) {
  const uint64_t r = next(s);
  if ((r & 15) < 3) {  // any pattern; with the low 12 or 15 bits clear, many ties of f16 and bf16
    float f;
    uint32_t u = (uint32_t)(r >> 32);
    if ((r & 15) == 1) u = (u & ~0xfffu) | 0x38000000u;  // f16's range, often a tie
    if ((r & 15) == 2) u &= ~0x7fffu;
    memcpy(&f, &u, 4);
    return f;
  }
  return (float)(((double)(r >> 11) / 9007199254740992.0 - 0.5) * std::ldexp(1.0, (int)((r >> 4) % 40) - 20));
}
static float genU8src(uint64_t& s) {
  const uint64_t r = next(s);
  return (float)((double)(r >> 11) / 9007199254740992.0 * 300.0 - 20.0);
}
static double genF64(uint64_t& s) {
  const uint64_t r = next(s);
  if ((r & 15) == 0) {
    double d;
    const uint64_t u = next(s);
    memcpy(&d, &u, 8);
    return d;
  }
  return ((double)(r >> 11) / 9007199254740992.0 - 0.5) * std::ldexp(1.0, (int)((r >> 4) % 300) - 150);
}
static unsigned short refBF16(float f) { return ref_bf16(f); }
static unsigned short refF16(float f) { return ref_f16(f); }
static float refF32(double d) { return (float)d; }
static u8 refU8(float f) { return ref_u8(f); }
static float refCopy(float f) { return f; }

int main(int argc, char** argv) {
  // The anchors (run.sh's torch figures of this run): lines "name GB/s".
  if (argc > 1) {
    FILE* f = fopen(argv[1], "r");
    char nm[64];
    double v;
    while (f && fscanf(f, "%63s %lf", nm, &v) == 2) g_anchor.push_back({nm, v});
    if (f) fclose(f);
  }
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  g_sms = p.multiProcessorCount;
  CK(cudaEventCreate(&g_e0));
  CK(cudaEventCreate(&g_e1));
  printf("%s, %d SMs; 4096x4096 (CONV_N elements); GB/s = (in + out bytes) / loop time; grid sweep: go = the Go side's formula,\n", p.name,
         g_sms);
  printf("c<k> = k chunks a thread, w<k> = k waves of resident blocks; new<MAXIN>u<U> = econvk<MAXIN, U>\n");
  const i64 n = getenv("CONV_N") ? atoll(getenv("CONV_N")) : 4096LL * 4096;
  g_quick = getenv("CONV_QUICK") != nullptr;

  {  // yardsticks: cudaMemcpy D2D, and emap1's float32 copy
    auto c = mkcase<float, float>("copy", n, genF32, refCopy);
    double med = 1, loop = 1;
    if (!g_quick) timeit([&] { CK(cudaMemcpyAsync(c.dd, c.da, n * 4, cudaMemcpyDeviceToDevice)); }, &med, &loop);
    printf("     %-22s %6.1fus %6.0f GB/s (med %6.0f)   torch copy_ %6.0f GB/s\n", "cudaMemcpy D2D f32", loop,
           c.bytes() / loop / 1e3, c.bytes() / med / 1e3, anchor("copy"));
    c.run("emap1 copy f32", k_old<float, float, CvCopy>, 4, goGrid(n, 4, 4), false);
    freecase(c);
  }
  {
    auto c = mkcase<unsigned short, float>("bf16", n, genF32, refBF16);
    c.run("f32>bf16 old", k_old<unsigned short, float, CvBF16>, 4, goGrid(n, 4, 4));
    c.run("f32>bf16 new32u1", k_new<32, 1, unsigned short, float, CvBF16>, 8, goGrid(n, 8, 4));
    c.run("f32>bf16 new32u2", k_new<32, 2, unsigned short, float, CvBF16>, 8, goGrid(n, 8, 4));
    c.run("f32>bf16 new32u4", k_new<32, 4, unsigned short, float, CvBF16>, 8, goGrid(n, 8, 4));
    c.run("f32>bf16 new64u1", k_new<64, 1, unsigned short, float, CvBF16>, 8, goGrid(n, 8, 4));
    freecase(c);
  }
  {
    auto c = mkcase<unsigned short, float>("f16", n, genF32, refF16);
    c.run("f32>f16 old", k_old<unsigned short, float, CvF16>, 4, goGrid(n, 4, 4));
    c.run("f32>f16 new32u1", k_new<32, 1, unsigned short, float, CvF16>, 8, goGrid(n, 8, 4));
    c.run("f32>f16 new32u2", k_new<32, 2, unsigned short, float, CvF16>, 8, goGrid(n, 8, 4));
    c.run("f32>f16 new32u4", k_new<32, 4, unsigned short, float, CvF16>, 8, goGrid(n, 8, 4));
    freecase(c);
  }
  {
    auto c = mkcase<float, double>("f64f32", n, genF64, refF32);
    c.run("f64>f32 old", k_old<float, double, CvF64F32>, 2, goGrid(n, 2, 4));
    c.run("f64>f32 new32u1", k_new<32, 1, float, double, CvF64F32>, 4, goGrid(n, 4, 4));
    c.run("f64>f32 new32u2", k_new<32, 2, float, double, CvF64F32>, 4, goGrid(n, 4, 4));
    c.run("f64>f32 new32u4", k_new<32, 4, float, double, CvF64F32>, 4, goGrid(n, 4, 4));
    c.run("f64>f32 new64u1", k_new<64, 1, float, double, CvF64F32>, 4, goGrid(n, 4, 4));
    freecase(c);
  }
  {
    auto c = mkcase<u8, float>("u8", n, genU8src, refU8);
    c.run("f32>u8 old", k_old<u8, float, CvU8>, 4, goGrid(n, 4, 4));
    c.run("f32>u8 new32u1", k_new<32, 1, u8, float, CvU8>, 8, goGrid(n, 8, 4));
    c.run("f32>u8 new32u2", k_new<32, 2, u8, float, CvU8>, 8, goGrid(n, 8, 4));
    c.run("f32>u8 new64u1", k_new<64, 1, u8, float, CvU8>, 16, goGrid(n, 16, 4));
    c.run("f32>u8 new64u2", k_new<64, 2, u8, float, CvU8>, 16, goGrid(n, 16, 4));
    freecase(c);
  }
  printf("pick per conversion the best 'new' line; 'go' = convertGrid with convChunks=4, c<k> = convChunks=k\n");
  return 0;
}
