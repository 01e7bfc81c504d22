// Column sums by thread-block clusters, second sweep (issue 30): clusters
// of 16 (non-portable, launched with cudaLaunchKernelEx), the input in
// memory mapped as the split pool maps it (cuMemCreate chunks of 32 MiB)
// against cudaMalloc, 20 and 50 calls between the timing events, the
// kernel's tail (TAIL: where the result is stored and how the last cluster
// barrier fences), and, given the library's fatbin (kernels/ptx, gunzipped),
// the library's own gocuda_rsumcolc0_f32 beside them. With no argument it
// runs the first sweep's list; with the fatbin, the tail variants; a second
// argument runs each variant a few times untimed, for Nsight Compute.
// readsum is a diagnostic only (one atomic address: it measures contention).
#include <cooperative_groups.h>
#include <cuda.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>
namespace cg = cooperative_groups;
typedef long long i64;

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)
#define DK(x) do { CUresult e_ = (x); if (e_ != CUDA_SUCCESS) { printf("%s: %d\n", #x, (int)e_); exit(1); } } while (0)

template <class A> struct Acc4 { A x, y, z, w; };
// colsum3's best body (W columns a strip, T threads, U rows in flight, two
// accumulator sets of double), cluster size CL given at launch.
// TAIL: 0 the dst store before the final cluster barrier (as the library
// did), 1 the store after it (the barrier's release fence then waits for
// no store), 2 a relaxed final barrier (no fence).
template <int CL, int W, int T, int U, int MINB, int TAIL = 0>
__global__ void __launch_bounds__(T, MINB)
colsum(float* __restrict__ dst, const float* __restrict__ x, i64 rows, i64 cols) {
  typedef double A;
  constexpr int TW = W / 4, G = T / TW, PER = W / CL;
  static_assert(T % TW == 0 && TW <= T && W % CL == 0, "shape");
  __shared__ Acc4<A> part[G][TW];
  __shared__ A fin[W];
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = (int)cluster.block_rank();
  const i64 strip = blockIdx.x / CL;
  const int tx = threadIdx.x % TW, gy = threadIdx.x / TW;
  const i64 c0 = strip * W;
  const i64 per = (rows + CL - 1) / CL;
  const i64 r0 = rank * per, r1 = r0 + per < rows ? r0 + per : rows;
  Acc4<A> accs[2] = {{0, 0, 0, 0}, {0, 0, 0, 0}};
  if (c0 + tx * 4 < cols) {
    const float4* b = reinterpret_cast<const float4*>(x + c0) + tx;
    const i64 rsv = cols / 4;
    i64 r = r0 + gy;
    for (; r + (U - 1) * (i64)G < r1; r += U * (i64)G) {
      float4 e[U];
#pragma unroll
      for (int q = 0; q < U; q++) e[q] = __ldcs(b + (r + q * G) * rsv);
#pragma unroll
      for (int q = 0; q < U; q++) {
        Acc4<A>& acc = accs[q % 2];
        acc.x += (A)e[q].x; acc.y += (A)e[q].y; acc.z += (A)e[q].z; acc.w += (A)e[q].w;
      }
    }
    for (; r < r1; r += G) {
      const float4 e = __ldcs(b + r * rsv);
      accs[0].x += (A)e.x; accs[0].y += (A)e.y; accs[0].z += (A)e.z; accs[0].w += (A)e.w;
    }
  }
  Acc4<A> acc = accs[0];
  acc.x += accs[1].x; acc.y += accs[1].y; acc.z += accs[1].z; acc.w += accs[1].w;
  part[gy][tx] = acc;
  __syncthreads();
  for (int c = threadIdx.x; c < W; c += T) {
    A s = 0;
#pragma unroll
    for (int q = 0; q < G; q++) s += reinterpret_cast<const A*>(&part[q][0])[c];
    fin[c] = s;
  }
  cluster.sync();
  static_assert(PER <= T, "one column a thread");
  A s = 0;
  const int c = rank * PER + threadIdx.x;
  if (threadIdx.x < PER && c0 + c < cols) {
#pragma unroll
    for (int q = 0; q < CL; q++) s += cluster.map_shared_rank(fin, q)[c];
    if (TAIL == 0 || TAIL == 3) dst[c0 + c] = (float)s;
  }
  if constexpr (TAIL >= 2) {
    asm volatile("barrier.cluster.arrive.relaxed.aligned;\n\tbarrier.cluster.wait.aligned;" ::: "memory");
  } else {
    cluster.sync();
  }
  if ((TAIL == 1 || TAIL == 2) && threadIdx.x < PER && c0 + c < cols) dst[c0 + c] = (float)s;
}

// The read ceiling: a contiguous sum of n floats, a block's sum added
// atomically (result unchecked beyond finiteness: a diagnostic).
__global__ void __launch_bounds__(512) readsum(float* dst, const float4* x, i64 n4) {
  float s = 0;
  for (i64 i = blockIdx.x * (i64)blockDim.x + threadIdx.x; i < n4; i += (i64)gridDim.x * blockDim.x) {
    float4 e = __ldcs(x + i);
    s += e.x + e.y + e.z + e.w;
  }
  for (int o = 16; o; o >>= 1) s += __shfl_xor_sync(~0u, s, o);
  if ((threadIdx.x & 31) == 0) atomicAdd(dst, s);
}

struct Variant {
  const char* name;
  cudaError_t (*launch)(float*, const float*, i64, i64, cudaStream_t);
};
template <int CL, int W, int T, int U, int MINB, int TAIL = 0>
cudaError_t launch(float* d, const float* x, i64 rows, i64 cols, cudaStream_t s) {
  static bool once = false;
  auto k = colsum<CL, W, T, U, MINB, TAIL>;
  if (!once) {
    once = true;
    if (CL > 8) CK(cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  }
  const i64 strips = (cols + W - 1) / W;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3((unsigned)(strips * CL));
  cfg.blockDim = dim3(T);
  cfg.stream = s;
  cudaLaunchAttribute at[1];
  at[0].id = cudaLaunchAttributeClusterDimension;
  at[0].val.clusterDim.x = CL; at[0].val.clusterDim.y = 1; at[0].val.clusterDim.z = 1;
  cfg.attrs = at;
  cfg.numAttrs = 1;
  return cudaLaunchKernelEx(&cfg, k, d, x, rows, cols);
}
// The library's own kernel, from the fatbin it embeds (kernels/ptx),
// loaded with the driver API and launched with cuLaunchKernel as Go does.
static CUfunction libk;
cudaError_t launch_lib(float* d, const float* x, i64 rows, i64 cols, cudaStream_t s) {
  i64 inner = cols, nred = rows, rs = cols;
  void* args[] = {&d, &x, &inner, &nred, &rs};
  const unsigned grid = (unsigned)((cols + 127) / 128 * 8);
  return cuLaunchKernel(libk, grid, 1, 1, 256, 1, 1, 0, (CUstream)s, args, nullptr) == CUDA_SUCCESS ? cudaSuccess : cudaErrorLaunchFailure;
}
#define V(CL, W, T, U, MB) Variant{"cl" #CL " w" #W " t" #T " u" #U " mb" #MB, launch<CL, W, T, U, MB>}
#define VT(CL, W, T, U, MB, TL) Variant{"cl" #CL " w" #W " t" #T " u" #U " mb" #MB " tail" #TL, launch<CL, W, T, U, MB, TL>}

// mapped is n bytes as the split pool maps them: chunks of 32 MiB from
// cuMemCreate, mapped into one reservation, readable and writable.
static float* mapped(size_t n) {
  CUmemAllocationProp p = {};
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = 0;
  size_t g;
  DK(cuMemGetAllocationGranularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  n = (n + g - 1) / g * g;
  CUdeviceptr va;
  DK(cuMemAddressReserve(&va, n, g, 0, 0));
  const size_t chunk = 32 << 20;
  for (size_t o = 0; o < n; o += chunk) {
    const size_t m = std::min(chunk, n - o);
    CUmemGenericAllocationHandle h;
    DK(cuMemCreate(&h, m, &p, 0));
    DK(cuMemMap(va + o, m, 0, h, 0));
  }
  CUmemAccessDesc d = {};
  d.location = p.location;
  d.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  DK(cuMemSetAccess(va, n, &d, 1));
  return reinterpret_cast<float*>(va);
}

int main(int argc, char** argv) {
  CK(cudaFree(0));
  const bool quick = argc > 2;  // under Nsight Compute: a few calls of each
  if (argc > 1) {
    FILE* f = fopen(argv[1], "rb");
    if (!f) { printf("cannot open %s\n", argv[1]); return 1; }
    std::vector<char> img;
    char buf[1 << 16];
    size_t m;
    while ((m = fread(buf, 1, sizeof buf, f)) > 0) img.insert(img.end(), buf, buf + m);
    fclose(f);
    CUmodule mod;
    DK(cuModuleLoadData(&mod, img.data()));
    DK(cuModuleGetFunction(&libk, mod, "gocuda_rsumcolc0_f32"));
  }
  std::vector<Variant> vs = {
      V(8, 128, 256, 8, 4),   V(16, 128, 256, 8, 4), V(16, 256, 256, 8, 4), V(16, 256, 512, 8, 2),
      V(16, 256, 512, 4, 2),  V(8, 256, 512, 8, 2),  V(4, 64, 256, 8, 4),   V(16, 64, 256, 8, 4),
      V(16, 512, 512, 8, 2),  V(8, 128, 256, 8, 4),
  };
  if (argc > 1) vs = {V(8, 128, 256, 8, 4), VT(8, 128, 256, 8, 4, 2), VT(8, 128, 256, 8, 4, 3), Variant{"library fatbin", launch_lib},
                      V(8, 128, 256, 8, 4), VT(8, 128, 256, 8, 4, 2), VT(8, 128, 256, 8, 4, 3), Variant{"library fatbin", launch_lib}};
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  auto timeit = [&](int iters, auto f) {
    if (quick) { for (int i = 0; i < 4; i++) f(); CK(cudaStreamSynchronize(s)); return 1.f; }
    for (int i = 0; i < 3; i++) f();
    CK(cudaStreamSynchronize(s));
    std::vector<float> t;
    for (int k = 0; k < 9; k++) {
      CK(cudaEventRecord(e0, s));
      for (int i = 0; i < iters; i++) f();
      CK(cudaEventRecord(e1, s));
      CK(cudaEventSynchronize(e1));
      float ms;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      t.push_back(ms * 1000.f / iters);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  };
  const i64 R = 4096, C = 4096, n = R * C;
  std::vector<float> h(n);
  unsigned st = 12345;
  for (auto& v : h) { st = st * 1664525u + 1013904223u; v = (float)((st >> 8) & 0xffff) / 32768.f - 1.f; }
  std::vector<double> ref(C, 0.0), mag(C, 0.0);
  for (i64 r = 0; r < R; r++)
    for (i64 c = 0; c < C; c++) { ref[c] += h[r * C + c]; mag[c] += std::fabs(h[r * C + c]); }
  for (int mem = 0; mem < (quick ? 1 : 2); mem++) {
    float *x, *y, *d;
    if (mem == 0) {
      CK(cudaMalloc(&x, n * 4)); CK(cudaMalloc(&y, n * 4)); CK(cudaMalloc(&d, C * 4));
    } else {
      x = mapped(n * 4); y = mapped(n * 4); d = mapped(C * 4);
    }
    CK(cudaMemcpy(x, h.data(), n * 4, cudaMemcpyHostToDevice));
    const double bytes = (double)n * 4 + C * 4;
    for (int iters : {20, 50}) {
      if (quick && iters == 50) break;
      const float tc = timeit(iters, [&] { CK(cudaMemcpyAsync(y, x, n * 4, cudaMemcpyDeviceToDevice, s)); });
      const double copy = 2.0 * n * 4 / tc / 1e3;
      const float tr = timeit(iters, [&] { readsum<<<132 * 4, 512, 0, s>>>(d, reinterpret_cast<const float4*>(x), n / 4); });
      printf("%s, %d calls: copy %.2f us %.0f GB/s; contiguous read-sum %.2f us %.3f of copy\n",
             mem ? "cuMemCreate 32 MiB chunks" : "cudaMalloc", iters, tc, copy, tr, bytes / tr / 1e3 / copy);
      for (auto& v : vs) {
        CK(cudaMemset(d, 0xff, C * 4));
        CK(v.launch(d, x, R, C, s));
        CK(cudaStreamSynchronize(s));
        std::vector<float> got(C);
        CK(cudaMemcpy(got.data(), d, C * 4, cudaMemcpyDeviceToHost));
        bool ok = true;
        for (i64 c = 0; c < C; c++)
          if (!(std::fabs(got[c] - ref[c]) <= 1e-5 * mag[c] + 1e-5)) { ok = false; break; }
        const float t = timeit(iters, [&] { CK(v.launch(d, x, R, C, s)); });
        printf("  %-24s %s %6.2f us %.3f of copy\n", v.name, ok ? "PASS" : "FAIL", t, bytes / t / 1e3 / copy);
      }
    }
  }
  return 0;
}
