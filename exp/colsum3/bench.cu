// Column sums of a row-major float32 matrix by thread-block clusters: the
// CL blocks of a cluster split the rows of one strip of W columns, each
// folds its rows into W sums in shared memory, and the cluster adds them
// through distributed shared memory (no partials in global memory, no
// second launch, no counters).
#include <cooperative_groups.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>
namespace cg = cooperative_groups;
typedef long long i64;

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

template <int LD>
__device__ __forceinline__ float4 ld(const float4* p) {
  if constexpr (LD == 1) return __ldcs(p);
  else return __ldg(p);
}

struct D4 { double x, y, z, w; };
template <class A> struct Acc4 { A x, y, z, w; };
template <int CL, int W, int T, int U, int LD, class A = float, int NA = 1, int MINB = 1, int GF = 0>
__global__ void __cluster_dims__(CL, 1, 1) __launch_bounds__(T, MINB)
colsum_cl(float* __restrict__ dst, const float* __restrict__ x, i64 rows, i64 cols) {
  constexpr int TW = W / 4, G = T / TW, PER = W / CL;
  static_assert(T % TW == 0 && TW <= T && W % CL == 0 && U % NA == 0, "shape");
  __shared__ Acc4<A> part[G][TW];
  __shared__ A fin[W];
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = (int)cluster.block_rank();
  const i64 strip = blockIdx.x / CL;
  const int tx = threadIdx.x % TW, gy = threadIdx.x / TW;
  const i64 c0 = strip * W;
  const i64 per = (rows + CL - 1) / CL;
  const i64 r0 = rank * per, r1 = r0 + per < rows ? r0 + per : rows;
  Acc4<A> accs[NA];
#pragma unroll
  for (int a = 0; a < NA; a++) accs[a] = Acc4<A>{0, 0, 0, 0};
  if (c0 + tx * 4 < cols) {  // cols % 4 == 0: a vector is all in or all out
    const float4* b = reinterpret_cast<const float4*>(x + c0) + tx;
    const i64 rsv = cols / 4;
    i64 r = r0 + gy;
    for (; r + (U - 1) * (i64)G < r1; r += U * (i64)G) {
      float4 e[U];
#pragma unroll
      for (int q = 0; q < U; q++) e[q] = ld<LD>(b + (r + q * G) * rsv);
      if constexpr (GF) {
        float4 g = e[0];
#pragma unroll
        for (int q = 1; q < U; q++) { g.x += e[q].x; g.y += e[q].y; g.z += e[q].z; g.w += e[q].w; }
        accs[0].x += (A)g.x; accs[0].y += (A)g.y; accs[0].z += (A)g.z; accs[0].w += (A)g.w;
      } else {
#pragma unroll
        for (int q = 0; q < U; q++) {
          Acc4<A>& acc = accs[q % NA];
          acc.x += (A)e[q].x; acc.y += (A)e[q].y; acc.z += (A)e[q].z; acc.w += (A)e[q].w;
        }
      }
    }
    for (; r < r1; r += G) {
      const float4 e = ld<LD>(b + r * rsv);
      accs[0].x += (A)e.x; accs[0].y += (A)e.y; accs[0].z += (A)e.z; accs[0].w += (A)e.w;
    }
  }
  Acc4<A> acc = accs[0];
#pragma unroll
  for (int a = 1; a < NA; a++) { acc.x += accs[a].x; acc.y += accs[a].y; acc.z += accs[a].z; acc.w += accs[a].w; }
  part[gy][tx] = acc;
  __syncthreads();
  for (int c = threadIdx.x; c < W; c += T) {
    A s = 0;
#pragma unroll
    for (int q = 0; q < G; q++) s += reinterpret_cast<const A*>(&part[q][0])[c];
    fin[c] = s;
  }
  cluster.sync();  // every block's fin is written
  for (int j = threadIdx.x; j < PER; j += T) {
    const int c = rank * PER + j;
    A s = 0;
#pragma unroll
    for (int q = 0; q < CL; q++) s += cluster.map_shared_rank(fin, q)[c];
    if (c0 + c < cols) dst[c0 + c] = (float)s;
  }
  cluster.sync();  // no block leaves while another still reads its fin
}


// The library's col_cluster (kernels/cuda/reduce_axes.cuh) for a float32
// sum in float64, with lg at run time (LGT < 0) or compile time.
template <class T> struct alignas(16) Vec { T e[16 / sizeof(T)]; };
template <class T>
__device__ __forceinline__ Vec<T> vload_cs(const Vec<T>* p) {
  union { uint4 u; Vec<T> v; } x;
  x.u = __ldcs(reinterpret_cast<const uint4*>(p));
  return x.v;
}
#define THREADS 256
#define COLC_CL 8
template <int LGT>
__global__ void __cluster_dims__(COLC_CL, 1, 1) __launch_bounds__(THREADS, 4)
ours(float* dst, const float* x, i64 inner, i64 nred, i64 rs, int lgr) {
  typedef float T;
  typedef double A;
  constexpr int K = 4, U = 8;
  __shared__ A part[K][THREADS];
  __shared__ A fin[32 * K];
  const int lg = LGT < 0 ? lgr : LGT;
  const int LW = 32 >> lg, RS = (THREADS / 32) << lg, W = LW * K;
  const int lx = threadIdx.x & (LW - 1), slot = threadIdx.x >> (5 - lg);
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = (int)cluster.block_rank(), nrank = COLC_CL;
  const i64 c0 = (i64)(blockIdx.x / COLC_CL) * W, c = c0 + (i64)lx * K;
  const i64 per = (nred + nrank - 1) / nrank, r0 = rank * per, r1 = r0 + per < nred ? r0 + per : nred;
  A acc[2][K];
#pragma unroll
  for (int k = 0; k < K; k++) acc[0][k] = acc[1][k] = 0;
  if (c < inner) {
    const Vec<T>* col = reinterpret_cast<const Vec<T>*>(x + c);
    const i64 rsv = rs / K;
    i64 r = r0 + slot;
    for (; r + (U - 1) * (i64)RS < r1; r += U * (i64)RS) {
      Vec<T> e[U];
#pragma unroll
      for (int u = 0; u < U; u++) e[u] = vload_cs(col + (r + u * RS) * rsv);
#pragma unroll
      for (int u = 0; u < U; u++)
#pragma unroll
        for (int k = 0; k < K; k++) acc[u & 1][k] = acc[u & 1][k] + (A)e[u].e[k];
    }
    for (; r < r1; r += RS) {
      const Vec<T> e = vload_cs(col + r * rsv);
#pragma unroll
      for (int k = 0; k < K; k++) acc[0][k] = acc[0][k] + (A)e.e[k];
    }
  }
#pragma unroll
  for (int k = 0; k < K; k++) part[k][threadIdx.x] = acc[0][k] + acc[1][k];
  __syncthreads();
  if (threadIdx.x < W) {
    const int j = threadIdx.x, jl = j / K, jk = j % K;
    A s = part[jk][jl];
    for (int q = 1; q < RS; q++) s = s + part[jk][q * LW + jl];
    fin[j] = s;
  }
  cluster.sync();
  const int share = W / COLC_CL;
  if (threadIdx.x < share) {
    const int j = rank * share + threadIdx.x;
    A s = *cluster.map_shared_rank(&fin[j], 0);
#pragma unroll
    for (int q = 1; q < COLC_CL; q++) s = s + *cluster.map_shared_rank(&fin[j], q);
    if (c0 + j < inner) dst[c0 + j] = (float)s;
  }
  cluster.sync();
}
template <int LGT, int LG>
void launch_ours(float* d, const float* x, i64 rows, i64 cols, cudaStream_t s) {
  const i64 strips = (cols + (32 >> LG) * 4 - 1) / ((32 >> LG) * 4);
  ours<LGT><<<(unsigned)(strips * COLC_CL), THREADS, 0, s>>>(d, x, cols, rows, cols, LG);
}

struct Variant {
  const char* name;
  void (*launch)(float*, const float*, i64, i64, cudaStream_t);
};
template <int CL, int W, int T, int U, int LD, class A, int NA, int MINB, int GF>
void launch(float* d, const float* x, i64 rows, i64 cols, cudaStream_t s) {
  const i64 strips = (cols + W - 1) / W;
  colsum_cl<CL, W, T, U, LD, A, NA, MINB, GF><<<(unsigned)(strips * CL), T, 0, s>>>(d, x, rows, cols);
}
#define V(CL, W, T, U, LD) Variant{"cl" #CL " w" #W " t" #T " u" #U " ld" #LD " f", launch<CL, W, T, U, LD, float, 1, 1, 0>}
#define VD(CL, W, T, U, NA, MINB, GF) Variant{"cl" #CL " w" #W " t" #T " u" #U " d na" #NA " mb" #MINB " gf" #GF, launch<CL, W, T, U, 1, double, NA, MINB, GF>}

int main() {
  std::vector<Variant> vs = {
      V(8, 128, 256, 8, 1), VD(8, 128, 256, 8, 2, 4, 0),
      Variant{"ours lg0 runtime", launch_ours<-1, 0>}, Variant{"ours lg0 const", launch_ours<0, 0>},
      VD(8, 128, 256, 8, 2, 4, 0), Variant{"ours lg0 runtime", launch_ours<-1, 0>}, Variant{"ours lg0 const", launch_ours<0, 0>},
      Variant{"ours lg2 runtime", launch_ours<-1, 2>}, Variant{"ours lg2 const", launch_ours<2, 2>}, VD(8, 32, 256, 8, 2, 4, 0),
  };
  std::vector<Variant> unused = {
      V(8, 128, 256, 8, 1),  V(8, 32, 256, 8, 1),
      VD(8, 128, 256, 8, 1, 4, 0), VD(8, 128, 256, 8, 1, 1, 0), VD(8, 128, 256, 8, 2, 4, 0), VD(8, 128, 256, 8, 4, 4, 0),
      VD(8, 128, 512, 8, 1, 2, 0), VD(8, 128, 512, 8, 2, 2, 0), VD(8, 128, 256, 16, 2, 2, 0), VD(8, 128, 256, 16, 4, 1, 0),
      VD(8, 128, 256, 8, 1, 4, 1), VD(8, 64, 256, 8, 2, 4, 0), VD(8, 32, 256, 8, 1, 4, 0), VD(8, 32, 256, 8, 2, 4, 0),
      VD(8, 32, 512, 8, 2, 2, 0), VD(8, 64, 512, 8, 2, 2, 0), VD(8, 128, 1024, 8, 2, 1, 0), VD(8, 128, 512, 4, 1, 2, 0),
  };
  struct Shape { i64 r, c; };
  std::vector<Shape> shapes = {{4096, 4096}, {65536, 1024}, {3, 8}};
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  auto timeit = [&](auto f) {
    for (int i = 0; i < 3; i++) f();
    CK(cudaStreamSynchronize(s));
    std::vector<float> t;
    for (int k = 0; k < 9; k++) {
      CK(cudaEventRecord(e0, s));
      for (int i = 0; i < 20; i++) f();
      CK(cudaEventRecord(e1, s));
      CK(cudaEventSynchronize(e1));
      float ms;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      t.push_back(ms * 1000.f / 20.f);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  };
  for (auto sh : shapes) {
    const i64 n = sh.r * sh.c;
    std::vector<float> h(n);
    unsigned st = 12345;
    for (auto& v : h) { st = st * 1664525u + 1013904223u; v = (float)((st >> 8) & 0xffff) / 32768.f - 1.f; }
    std::vector<double> ref(sh.c, 0.0), mag(sh.c, 0.0);
    for (i64 r = 0; r < sh.r; r++)
      for (i64 c = 0; c < sh.c; c++) { ref[c] += h[r * sh.c + c]; mag[c] += std::fabs(h[r * sh.c + c]); }
    float *x, *d, *y;
    CK(cudaMalloc(&x, n * 4));
    CK(cudaMalloc(&y, n * 4));
    CK(cudaMalloc(&d, sh.c * 4));
    CK(cudaMemcpy(x, h.data(), n * 4, cudaMemcpyHostToDevice));
    const double bytes = (double)n * 4 + sh.c * 4;
    const float tc = timeit([&] { CK(cudaMemcpyAsync(y, x, n * 4, cudaMemcpyDeviceToDevice, s)); });
    const double copy = 2.0 * n * 4 / tc / 1e3;
    printf("%lld x %lld: copy %.1f us %.0f GB/s\n", sh.r, sh.c, tc, copy);
    float best = 1e30f; const char* bn = "";
    for (auto& v : vs) {
      CK(cudaMemset(d, 0xff, sh.c * 4));
      v.launch(d, x, sh.r, sh.c, s);
      CK(cudaGetLastError());
      CK(cudaStreamSynchronize(s));
      std::vector<float> got(sh.c);
      CK(cudaMemcpy(got.data(), d, sh.c * 4, cudaMemcpyDeviceToHost));
      bool ok = true;
      for (i64 c = 0; c < sh.c; c++)
        if (!(std::fabs(got[c] - ref[c]) <= 1e-5 * mag[c] + 1e-5)) { ok = false; break; }
      const float t = timeit([&] { v.launch(d, x, sh.r, sh.c, s); });
      if (sh.r * sh.c >= (1 << 22)) printf("  %-32s %s %6.1f us %6.0f GB/s %.3f of copy\n", v.name, ok ? "PASS" : "FAIL", t, bytes / t / 1e3, bytes / t / 1e3 / copy);
      else printf("  %-32s %s\n", v.name, ok ? "PASS" : "FAIL");
      if (ok && t < best) { best = t; bn = v.name; }
    }
    if (sh.r * sh.c >= (1 << 22)) printf("  best %s %.1f us %.3f of copy\n", bn, best, bytes / best / 1e3 / copy);
    CK(cudaFree(x)); CK(cudaFree(y)); CK(cudaFree(d));
  }
  return 0;
}
