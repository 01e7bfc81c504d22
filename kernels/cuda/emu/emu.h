// CPU emulation of the CUDA features kernels.cu uses, to run its kernels
// with g++: one std::thread per CUDA thread, blocks one at a time, so that
// __syncthreads and warp shuffles are real barriers between real threads.
// __shared__ variables become statics, which is right while one block runs
// at a time.
// kernels.cu and cubsort.cuh leave out what needs CUB's headers (nvcc's).
#define GOCUDA_EMU 1
#include <math.h>
#include <string.h>
#include <stdint.h>
#include <thread>
#include <barrier>
#include <vector>
#include <memory>
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __launch_bounds__(...)
#define __shared__ static
struct dim3e { unsigned x, y, z; };
thread_local dim3e threadIdx, blockIdx;
dim3e blockDim, gridDim;
struct alignas(16) uint4 { unsigned x, y, z, w; };
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return uint4{x, y, z, w}; }
inline float __uint_as_float(unsigned u) { float f; memcpy(&f, &u, 4); return f; }
inline float __int_as_float(int u) { float f; memcpy(&f, &u, 4); return f; }
// rsqrt is CUDA's; the C library has none.
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
inline double __longlong_as_double(long long u) { double f; memcpy(&f, &u, 8); return f; }
std::barrier<>* emu_block_barrier;
inline void __syncthreads() { emu_block_barrier->arrive_and_wait(); }
struct EmuWarp { std::barrier<>* bar; unsigned char buf[32][8]; };
EmuWarp emu_warps[32];
template <class V>
V __shfl_down_sync(unsigned, V v, unsigned o) {
  static_assert(sizeof(V) <= 8, "shfl of more than 8 bytes");
  const unsigned lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  memcpy(emu_warps[w].buf[lane], &v, sizeof(V));
  emu_warps[w].bar->arrive_and_wait();
  V r = v;
  if (lane + o < 32) memcpy(&r, emu_warps[w].buf[lane + o], sizeof(V));
  emu_warps[w].bar->arrive_and_wait();
  return r;
}
// __shfl_sync: every lane gets lane src's value (the warp-wide broadcast the
// row kernels use after a warp_reduce).
template <class V>
V __shfl_sync(unsigned, V v, int src) {
  static_assert(sizeof(V) <= 8, "shfl of more than 8 bytes");
  const unsigned lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  memcpy(emu_warps[w].buf[lane], &v, sizeof(V));
  emu_warps[w].bar->arrive_and_wait();
  V r;
  memcpy(&r, emu_warps[w].buf[src & 31], sizeof(V));
  emu_warps[w].bar->arrive_and_wait();
  return r;
}
// emu_launch runs kernel's blocks one after another, in launch order or,
// reversed, last first (harness_sort16.h: a kernel that takes its tile from
// a counter must not depend on the order blocks run in).
template <class K>
void emu_launch(unsigned grid, unsigned block, K kernel, bool reversed = false) {
  gridDim = {grid, 1, 1};
  blockDim = {block, 1, 1};
  for (unsigned i = 0; i < grid; i++) {
    const unsigned b = reversed ? grid - 1 - i : i;
    std::barrier<> bar(block);
    emu_block_barrier = &bar;
    std::vector<std::unique_ptr<std::barrier<>>> wb;
    for (unsigned w = 0; w < (block + 31) / 32; w++) {
      wb.emplace_back(new std::barrier<>(32));
      emu_warps[w].bar = wb.back().get();
    }
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < block; t++)
      ts.emplace_back([=] { threadIdx = {t, 0, 0}; blockIdx = {b, 0, 0}; kernel(); });
    for (auto& t : ts) t.join();
  }
}
// Warp votes and syncs (scan_sort.cuh's radix ranking): every lane of the
// warp takes part, as the kernels call them with the full mask.
inline unsigned __ballot_sync(unsigned, int pred) {
  const unsigned lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  emu_warps[w].buf[lane][0] = pred != 0;
  emu_warps[w].bar->arrive_and_wait();
  unsigned m = 0;
  for (unsigned l = 0; l < 32; l++) m |= (unsigned)emu_warps[w].buf[l][0] << l;
  emu_warps[w].bar->arrive_and_wait();
  return m;
}
// __shfl_xor_sync: lane gets lane ^ m's value (the row sort's bitonic
// exchanges); __match_any_sync: the mask of lanes holding the same value
// (the radix scatter's ranking). Every lane takes part, as the kernels call
// them with the full mask.
template <class V>
V __shfl_xor_sync(unsigned, V v, int m) {
  static_assert(sizeof(V) <= 8, "shfl of more than 8 bytes");
  const unsigned lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  memcpy(emu_warps[w].buf[lane], &v, sizeof(V));
  emu_warps[w].bar->arrive_and_wait();
  V r;
  memcpy(&r, emu_warps[w].buf[(lane ^ m) & 31], sizeof(V));
  emu_warps[w].bar->arrive_and_wait();
  return r;
}
inline unsigned __match_any_sync(unsigned, unsigned v) {
  const unsigned lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  memcpy(emu_warps[w].buf[lane], &v, 4);
  emu_warps[w].bar->arrive_and_wait();
  unsigned m = 0;
  for (unsigned l = 0; l < 32; l++) {
    unsigned o;
    memcpy(&o, emu_warps[w].buf[l], 4);
    if (o == v) m |= 1u << l;
  }
  emu_warps[w].bar->arrive_and_wait();
  return m;
}
inline void __syncwarp(unsigned = 0xffffffffu) { emu_warps[threadIdx.x >> 5].bar->arrive_and_wait(); }
inline int __popc(unsigned v) { return __builtin_popcount(v); }
// __ffs: the position (from 1) of the lowest set bit, 0 for none.
inline int __ffs(int v) { return __builtin_ffs(v); }
// Round-to-nearest arithmetic intrinsics (no contraction on the host: g++
// for x86-64 has no FMA without -mfma) and atomics on real threads through
// std::atomic_ref, for the construction and indexing kernels (index.cuh).
#include <atomic>
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __ddiv_rn(double a, double b) { return a / b; }
template <class V>
V atomicAdd(V* p, V v) { return std::atomic_ref<V>(*p).fetch_add(v); }
inline unsigned atomicCAS(unsigned* p, unsigned cmp, unsigned v) {
  std::atomic_ref<unsigned>(*p).compare_exchange_strong(cmp, v);
  return cmp;  // the old value, whether or not the swap happened
}
inline unsigned long long atomicExch(unsigned long long* p, unsigned long long v) {
  return std::atomic_ref<unsigned long long>(*p).exchange(v);
}
