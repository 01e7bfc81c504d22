// exp/cubsort/bench.cu (issue 30): can CUB's onesweep KERNELS, instantiated
// by us as extern "C" __global__ wrappers and launched by our own host code
// (kernel launches and memsets only, as Go would through the driver), reach
// CUB's / CuPy's time for sorting 16 Mi float32?
//
// Build (run.sh): nvcc -O3 -std=c++17 -arch=sm_90 -I kernels/cuda bench.cu
// CUB comes from the toolkit's own include path.
//
// The wrappers do not instantiate CUB's kernel templates
// (DeviceRadixSortOnesweepKernel & co.): their template heads changed from a
// ChainedPolicy hub (CCCL 3.0-3.4) to a PolicySelector (cccl main, 3.5+).
// They instantiate the AGENTS those kernels are thin shells around, whose
// names and constructors are the same in every CCCL 3.x tag read (3.0.0,
// 3.2.0, 3.4.0, main of 2026-08):
//   cub::detail::radix_sort::AgentRadixSortHistogram<Policy, false, KeyT, OffsetT>
//   cub::detail::radix_sort::AgentRadixSortOnesweep<Policy, false, KeyT, ValueT, OffsetT, PortionOffsetT>
// with policy structs of our own carrying exactly the static members the
// agents read (so no dependence on AgentRadixSort*Policy, deprecated in 3.5),
// set to CUB's sm_90 tuning (tuning_radix_sort.cuh, Policy900 /
// make_onesweep_small_key_policy): histogram 128 threads x 16 items, 1 part,
// 8 bits; exclusive sum 256 threads; onesweep 384 threads, items 20 (u32
// keys only, 32-bit offsets), 19 (float keys only), 15 (4-byte keys + 8-byte
// values: nominal 30 scaled by 4/8), 23 (4-byte keys + 4-byte values),
// RADIX_RANK_MATCH_EARLY_COUNTS_ANY, BLOCK_SCAN_RAKING_MEMOIZE,
// RADIX_SORT_STORE_DIRECT. The kernel bodies are CUB's kernel bodies.
//
// Host sequence (DispatchRadixSort::InvokeOnesweep; CCCL <= 3.4 uses memsets,
// 3.5+ init kernels and PDL for n <= 2^24 on sm_90; both are timed here):
//   zero bins[portions*4*256] and ctrs[portions*4]
//   histogram (grid = occupancy(hist, 128 thr) * SMs) -> bins[pass][256]
//   exclusive sum <<<4 passes, 256>>> over each pass's 256 bins
//   per pass p (bit 8p) and portion: zero lookback[blocks*256];
//     onesweep <<<blocks, 384>>>(lookback, ctrs+portion*4+p,
//       next portion's bins or null, bins+(portion*4+p)*256, out, in+portion*PORTION, ...)
//   ping-pong buffers: 4 passes (even) end in the buffer pass 0 read.
// Keys: CUB sorts uint32 keys made by OUR transform (sort.cuh's key: NaN
// last, -0 tied with +0) or, variant "native", float keys with CUB's own
// twiddle (which ties -0 with +0 but puts NaNs with the sign bit FIRST).
// device_radix_sort.cuh first: it includes the agents after every helper
// they use (LoadDirectWarpStriped, ThreadStore, ...).
#include <cub/device/device_radix_sort.cuh>
#include <cub/agent/agent_radix_sort_histogram.cuh>
#include <cub/agent/agent_radix_sort_onesweep.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/version.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#define CK(x)                                                                                         \
  do {                                                                                                \
    cudaError_t e_ = (x);                                                                             \
    if (e_ != cudaSuccess) {                                                                          \
      printf("CUDA error %s at %s:%d: %s\n", cudaGetErrorString(e_), __FILE__, __LINE__, #x);         \
      exit(1);                                                                                        \
    }                                                                                                 \
  } while (0)

#ifndef CUBSORT_N
#define CUBSORT_N (1LL << 24)  // the timed length
#endif
#ifndef CUBSORT_PORTION_BITS
#define CUBSORT_PORTION_BITS 28  // CUB's portion: (2^28 - 1) rounded down to tiles
#endif

typedef unsigned OffT;  // CUB's OffsetT for an int num_items (choose_offset_t -> uint32)
typedef int PortT;      // CUB's PortionOffsetT = AtomicOffsetT (signed: look-back flags in bits 30, 31)

// ---------------------------------------------------------------------------
// Key transforms (host and device). key_rk is sort.cuh's RK<float>::key
// (stable: every NaN one key, last; -0 the key of +0): lossy, so it serves
// the argsort, whose keys are thrown away. key_rot is a BIJECTION of the 32
// bits for the sort, so that the inverse gives back every input's bits:
// CUB's flip rotated down by 0x007fffff, so -Inf is 0 and the NaNs with the
// sign bit (flip 0..0x007ffffe) wrap to the top: order -Inf < ... < -0 < +0 <
// ... < +Inf < +NaN (by payload) < -NaN. Not stable between -0 and +0
// (all -0 first) nor among NaNs of different bits: a valid sort, exact bits.
// key_cub is CUB's own float order (flip, -0 as +0): the native variants.
__host__ __device__ __forceinline__ unsigned flipf(unsigned b) { return (b & 0x80000000u) ? ~b : (b | 0x80000000u); }
__host__ __device__ __forceinline__ unsigned key_rk(unsigned b) {
  if ((b & 0x7fffffffu) > 0x7f800000u) return 0xffffffffu;
  if (b == 0x80000000u) b = 0;
  return flipf(b);
}
__host__ __device__ __forceinline__ unsigned key_rot(unsigned b) { return flipf(b) - 0x007fffffu; }
__host__ __device__ __forceinline__ unsigned unkey_rot(unsigned k) {
  const unsigned f = k + 0x007fffffu;
  return (f & 0x80000000u) ? (f & 0x7fffffffu) : ~f;
}
__host__ __device__ __forceinline__ unsigned key_cub(unsigned b) { return flipf(b == 0x80000000u ? 0u : b); }

// PDL: every kernel here waits for the grid before it (no-op without the
// launch attribute) and lets the next one launch at once; the next one's
// blocks then wait in griddepcontrol.wait, so this is safe whatever the
// CUB version's own PDL calls (3.5+) do.
__device__ __forceinline__ void pdl_enter() {
#ifdef __CUDA_ARCH__
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

#ifndef CUBSORT_HOST_ONLY
// ---------------------------------------------------------------------------
// CUB's agents with fixed policies.
template <int NT, int IPT>
struct OsPolicy {
  static constexpr int BLOCK_THREADS = NT;
  static constexpr int ITEMS_PER_THREAD = IPT;
  static constexpr int RANK_NUM_PARTS = 1;
  static constexpr int RADIX_BITS = 8;
  static constexpr cub::RadixRankAlgorithm RANK_ALGORITHM = cub::RADIX_RANK_MATCH_EARLY_COUNTS_ANY;
  static constexpr cub::BlockScanAlgorithm SCAN_ALGORITHM = cub::BLOCK_SCAN_RAKING_MEMOIZE;
  static constexpr cub::RadixSortStoreAlgorithm STORE_ALGORITHM = cub::RADIX_SORT_STORE_DIRECT;
};
struct HistPolicy {
  static constexpr int BLOCK_THREADS = 128;
  static constexpr int ITEMS_PER_THREAD = 16;
  static constexpr int NUM_PARTS = 1;
  static constexpr int RADIX_BITS = 8;
};

// DeviceRadixSortOnesweepKernel's body. Arguments (Go: pointers as 8-byte
// words, n/bit/nbits as int32): lookback, ctr, bins_out (null: last
// portion), bins_in, keys_out, keys_in, values_out, values_in (null, keys
// only), num_items of the portion, current_bit, num_bits.
#define OS_KERNEL(NAME, NT, IPT, K, V)                                                                          \
  extern "C" __global__ void __launch_bounds__(NT)                                                              \
      NAME(PortT* lookback, PortT* ctrs, OffT* bins_out, const OffT* bins_in, K* kout, const K* kin, V* vout,   \
           const V* vin, PortT n, int bit, int nbits) {                                                          \
    using A = cub::detail::radix_sort::AgentRadixSortOnesweep<OsPolicy<NT, IPT>, false, K, V, OffT, PortT>;     \
    __shared__ typename A::TempStorage s;                                                                       \
    pdl_enter();                                                                                                \
    A agent(s, lookback, ctrs, bins_out, bins_in, kout, kin, vout, vin, n, bit, nbits);                         \
    agent.Process();                                                                                            \
  }
OS_KERNEL(cubsort_os_u32_384x16, 384, 16, unsigned, cub::NullType)
OS_KERNEL(cubsort_os_u32_384x20, 384, 20, unsigned, cub::NullType)
OS_KERNEL(cubsort_os_u32_384x24, 384, 24, unsigned, cub::NullType)
OS_KERNEL(cubsort_os_f32_384x19, 384, 19, float, cub::NullType)
OS_KERNEL(cubsort_osv_u32_i64_384x15, 384, 15, unsigned, long long)
OS_KERNEL(cubsort_osv_u32_i64_256x20, 256, 20, unsigned, long long)
OS_KERNEL(cubsort_osv_u32_i64_512x11, 512, 11, unsigned, long long)
OS_KERNEL(cubsort_osv_u32_u32_384x23, 384, 23, unsigned, unsigned)
OS_KERNEL(cubsort_osv_f32_i64_384x15, 384, 15, float, long long)

// DeviceRadixSortHistogramKernel's body: bins[4][256] += digit counts of
// keys[0, n) (bins zeroed before; atomics).
#define HIST_KERNEL(NAME, K)                                                                        \
  extern "C" __global__ void __launch_bounds__(128) NAME(OffT* bins, const K* keys, OffT n) {      \
    using A = cub::detail::radix_sort::AgentRadixSortHistogram<HistPolicy, false, K, OffT>;        \
    __shared__ typename A::TempStorage s;                                                          \
    pdl_enter();                                                                                   \
    A agent(s, bins, keys, n, 0, 32);                                                              \
    agent.Process();                                                                               \
  }
HIST_KERNEL(cubsort_hist_u32, unsigned)
HIST_KERNEL(cubsort_hist_f32, float)

// DeviceRadixSortExclusiveSumKernel's body: <<<passes, 256>>>, each block
// scans its pass's 256 bins in place.
extern "C" __global__ void cubsort_exsum(OffT* bins) {
  using BS = cub::BlockScan<OffT, 256>;
  __shared__ typename BS::TempStorage t;
  pdl_enter();
  OffT v = bins[blockIdx.x * 256 + threadIdx.x];
  BS(t).ExclusiveSum(v, v);
  bins[blockIdx.x * 256 + threadIdx.x] = v;
}
#endif  // CUBSORT_HOST_ONLY

// ---------------------------------------------------------------------------
// Our kernels around CUB's: the key transform (optionally with the iota of
// an argsort and with the histogram fused: bins != null), its inverse, the
// zeroing (PDL path), iota and widening.
extern "C" __global__ void __launch_bounds__(256)
    cubsort_key_f32(const unsigned* src, unsigned* keys, long long* iota64, unsigned* iota32, OffT* bins, long long n,
                    int mode) {
  __shared__ unsigned h[4 * 256];
  pdl_enter();
  if (bins) {
    for (int i = threadIdx.x; i < 1024; i += 256) h[i] = 0;
    __syncthreads();
  }
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const unsigned b = src[i];
    const unsigned k = mode ? key_rk(b) : key_rot(b);
    keys[i] = k;
    if (iota64) iota64[i] = i;
    if (iota32) iota32[i] = (unsigned)i;
    if (bins) {
      atomicAdd(&h[k & 255u], 1u);
      atomicAdd(&h[256 + ((k >> 8) & 255u)], 1u);
      atomicAdd(&h[512 + ((k >> 16) & 255u)], 1u);
      atomicAdd(&h[768 + (k >> 24)], 1u);
    }
  }
  if (bins) {
    __syncthreads();
    for (int i = threadIdx.x; i < 1024; i += 256)
      if (h[i]) atomicAdd(&bins[i], h[i]);
  }
}
extern "C" __global__ void __launch_bounds__(256) cubsort_unkey_f32(unsigned* a, long long n) {
  pdl_enter();
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) a[i] = unkey_rot(a[i]);
}
extern "C" __global__ void __launch_bounds__(256) cubsort_zero_u32(unsigned* a, long long n) {
  pdl_enter();
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) a[i] = 0;
}
extern "C" __global__ void __launch_bounds__(256) cubsort_iota_i64(long long* a, long long n) {
  pdl_enter();
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) a[i] = i;
}
extern "C" __global__ void __launch_bounds__(256) cubsort_widen_u32_i64(const unsigned* in, long long* out, long long n) {
  pdl_enter();
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) out[i] = in[i];
}

// ---------------------------------------------------------------------------
// Host side: the launch sequence, as Go would drive it.
static int g_sms = 0;
static bool g_log = false;  // print each launch once (the sequence for the Go port)

static const char* kname(const void* fn);

static void launch(const void* fn, long long grid, int block, bool pdl, cudaStream_t s, void** args) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3((unsigned)grid);
  cfg.blockDim = dim3(block);
  cfg.dynamicSmemBytes = 0;
  cfg.stream = s;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = pdl ? attr : nullptr;
  cfg.numAttrs = pdl ? 1 : 0;
  CK(cudaLaunchKernelExC(&cfg, fn, args));
  if (g_log) {
    cudaFuncAttributes a;
    CK(cudaFuncGetAttributes(&a, fn));
    printf("   %-28s grid %7lld block %3d dyn 0 static %5zu B regs %3d%s\n", kname(fn), grid, block,
           a.sharedSizeBytes, a.numRegs, pdl ? " PDL" : "");
  }
}
static void zero(void* p, size_t words, bool use_kernel, bool pdl, cudaStream_t s) {
  if (use_kernel) {
    long long n = (long long)words;
    void* args[] = {&p, &n};
    launch((const void*)cubsort_zero_u32, (n + 255) / 256, 256, pdl, s, args);
  } else {
    CK(cudaMemsetAsync(p, 0, words * 4, s));
    if (g_log) printf("   memset 0 (cuMemsetD32Async)     %zu words\n", words);
  }
}
static long long ew_grid(long long n) { return std::min((n + 255) / 256, (long long)g_sms * 8); }

#ifndef CUBSORT_HOST_ONLY
struct OsK {
  const void* fn;
  const char* name;
  int nt, ipt, vbytes;
  bool fkeys;  // float keys (CUB's twiddle) rather than our uint32 keys
};
static const OsK OS_U32_16 = {(const void*)cubsort_os_u32_384x16, "cubsort_os_u32_384x16", 384, 16, 0, false};
static const OsK OS_U32_20 = {(const void*)cubsort_os_u32_384x20, "cubsort_os_u32_384x20", 384, 20, 0, false};
static const OsK OS_U32_24 = {(const void*)cubsort_os_u32_384x24, "cubsort_os_u32_384x24", 384, 24, 0, false};
static const OsK OS_F32_19 = {(const void*)cubsort_os_f32_384x19, "cubsort_os_f32_384x19", 384, 19, 0, true};
static const OsK OSV_I64_15 = {(const void*)cubsort_osv_u32_i64_384x15, "cubsort_osv_u32_i64_384x15", 384, 15, 8, false};
static const OsK OSV_I64_20 = {(const void*)cubsort_osv_u32_i64_256x20, "cubsort_osv_u32_i64_256x20", 256, 20, 8, false};
static const OsK OSV_I64_11 = {(const void*)cubsort_osv_u32_i64_512x11, "cubsort_osv_u32_i64_512x11", 512, 11, 8, false};
static const OsK OSV_U32_23 = {(const void*)cubsort_osv_u32_u32_384x23, "cubsort_osv_u32_u32_384x23", 384, 23, 4, false};
static const OsK OSV_F32_15 = {(const void*)cubsort_osv_f32_i64_384x15, "cubsort_osv_f32_i64_384x15", 384, 15, 8, true};
static const OsK* ALL_OS[] = {&OS_U32_16, &OS_U32_20, &OS_U32_24, &OS_F32_19, &OSV_I64_15,
                              &OSV_I64_20, &OSV_I64_11, &OSV_U32_23, &OSV_F32_15};
#endif

static const char* kname(const void* fn) {
#ifndef CUBSORT_HOST_ONLY
  for (const OsK* k : ALL_OS)
    if (k->fn == fn) return k->name;
  if (fn == (const void*)cubsort_hist_u32) return "cubsort_hist_u32";
  if (fn == (const void*)cubsort_hist_f32) return "cubsort_hist_f32";
  if (fn == (const void*)cubsort_exsum) return "cubsort_exsum";
#endif
  if (fn == (const void*)cubsort_key_f32) return "cubsort_key_f32";
  if (fn == (const void*)cubsort_unkey_f32) return "cubsort_unkey_f32";
  if (fn == (const void*)cubsort_zero_u32) return "cubsort_zero_u32";
  if (fn == (const void*)cubsort_iota_i64) return "cubsort_iota_i64";
  if (fn == (const void*)cubsort_widen_u32_i64) return "cubsort_widen_u32_i64";
  return "?";
}

static size_t al256(size_t x) { return (x + 255) & ~(size_t)255; }

#ifndef CUBSORT_HOST_ONLY
enum Prep { NATIVE, KEY_CUBHIST, KEY_FUSED };
struct Var {
  const char* name;
  bool argsort;
  Prep prep;
  bool pdl;
  const OsK* os;
  bool v32;  // argsort passes carry uint32 positions, widened to int64 at the end
};

// The temporary buffer (CUB's layout, every part 256-byte aligned).
struct Layout {
  static const int P = 4;  // passes of 8 bits over 32-bit keys
  long long tile, portion, portions, max_blocks;
  size_t bins, ctrs, zero_words, lookback, kalt, ka, va, valt, total;
};
static Layout layout(long long n, const Var& v) {
  Layout L;
  L.tile = (long long)v.os->nt * v.os->ipt;
  L.portion = ((1LL << CUBSORT_PORTION_BITS) - 1) / L.tile * L.tile;
  L.portions = (n + L.portion - 1) / L.portion;
  L.max_blocks = (std::min(n, L.portion) + L.tile - 1) / L.tile;
  size_t o = 0;
  L.bins = o;
  o += L.portions * L.P * 256 * 4;
  L.ctrs = o;  // right after the bins: one zeroing covers both
  o += L.portions * L.P * 4;
  L.zero_words = (o - L.bins) / 4;
  o = al256(o);
  L.lookback = o;
  o = al256(o + L.max_blocks * 256 * 4);
  L.kalt = o;  // the keys' other buffer
  o = al256(o + n * 4);
  L.ka = o;  // argsort: the keys' first buffer (a sort uses the output)
  if (v.argsort) o = al256(o + n * 4);
  L.va = o;  // v32: the positions' first buffer (int64: the output)
  if (v.v32) o = al256(o + n * 4);
  L.valt = o;
  if (v.argsort) o = al256(o + n * (size_t)(v.v32 ? 4 : 8));
  L.total = o;
  return L;
}

// One sort (dst_keys: float bits) or argsort (dst_idx: int64) of src[0, n).
// ev: if non-null, events recorded before the first pass and after the last
// (the 4 onesweep launches and their lookback zeroing alone).
static void run_ours(const Var& v, long long n, const unsigned* src, unsigned* dst_keys, long long* dst_idx,
                     unsigned char* T, cudaStream_t s, cudaEvent_t* ev = nullptr) {
  const Layout L = layout(n, v);
  const bool pdl = v.pdl;
  OffT* bins = (OffT*)(T + L.bins);
  PortT* ctrs = (PortT*)(T + L.ctrs);
  PortT* lb = (PortT*)(T + L.lookback);
  unsigned* kA = v.argsort ? (unsigned*)(T + L.ka) : dst_keys;
  unsigned* kB = (unsigned*)(T + L.kalt);
  void* vA = v.argsort ? (v.v32 ? (void*)(T + L.va) : (void*)dst_idx) : nullptr;
  void* vB = v.argsort ? (void*)(T + L.valt) : nullptr;
  const int vb = v.argsort ? (v.v32 ? 4 : 8) : 0;
  // 1. zero bins and counters (the first launch: never PDL itself)
  zero(T + L.bins, L.zero_words, pdl, false, s);
  // 2. keys and histogram
  const unsigned* kin0 = v.prep == NATIVE ? src : kA;
  OffT nn = (OffT)n;
  if (v.prep == NATIVE) {
    if (v.argsort) {
      void* a[] = {&vA, &n};
      launch((const void*)cubsort_iota_i64, ew_grid(n), 256, pdl, s, a);
    }
  } else {
    long long* i64p = v.argsort && !v.v32 ? (long long*)vA : nullptr;
    unsigned* i32p = v.argsort && v.v32 ? (unsigned*)vA : nullptr;
    OffT* hb = v.prep == KEY_FUSED ? bins : nullptr;
    int mode = v.argsort ? 1 : 0;
    void* a[] = {&src, &kA, &i64p, &i32p, &hb, &n, &mode};
    launch((const void*)cubsort_key_f32, ew_grid(n), 256, pdl, s, a);
  }
  if (v.prep != KEY_FUSED) {
    static int occ[2] = {0, 0};  // CUB: MaxSmOccupancy(histogram kernel, 128 threads, 0 B) x SMs
    const int w = v.prep == NATIVE;
    const void* hk = w ? (const void*)cubsort_hist_f32 : (const void*)cubsort_hist_u32;
    if (!occ[w]) CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ[w], hk, 128, 0));
    void* a[] = {&bins, &kin0, &nn};
    launch(hk, (long long)occ[w] * g_sms, 128, pdl, s, a);
  }
  // 3. exclusive sum of each pass's bins
  {
    void* a[] = {&bins};
    launch((const void*)cubsort_exsum, L.P, 256, pdl, s, a);
  }
  // 4. the passes
  const bool log = g_log;
  if (ev) CK(cudaEventRecord(ev[0], s));
  for (int p = 0; p < L.P; p++) {
    g_log = log && p == 0;
    const void* kin = p == 0 ? (const void*)kin0 : (p % 2 == 0 ? (const void*)kA : (const void*)kB);
    const void* kout = p % 2 == 0 ? (const void*)kB : (const void*)kA;
    const void* vin = p % 2 == 0 ? vA : vB;
    const void* vout = p % 2 == 0 ? vB : vA;
    for (long long portion = 0; portion < L.portions; portion++) {
      PortT pn = (PortT)std::min(n - portion * L.portion, L.portion);
      long long blocks = (pn + L.tile - 1) / L.tile;
      zero(lb, blocks * 256, pdl, pdl, s);
      PortT* ctr = ctrs + portion * L.P + p;
      OffT* bout = portion < L.portions - 1 ? bins + ((portion + 1) * L.P + p) * 256 : nullptr;
      OffT* bin = bins + (portion * L.P + p) * 256;
      const void* ki = (const unsigned char*)kin + portion * L.portion * 4;
      const void* vi = vin ? (const void*)((const unsigned char*)vin + portion * L.portion * vb) : nullptr;
      int bit = 8 * p, nbits = 8;
      void* a[] = {&lb, &ctr, &bout, &bin, (void*)&kout, (void*)&ki, (void*)&vout, (void*)&vi, &pn, &bit, &nbits};
      launch(v.os->fn, blocks, v.os->nt, pdl, s, a);
    }
  }
  if (ev) CK(cudaEventRecord(ev[1], s));
  g_log = log;
  if (log) printf("   (pass p: bit 8p, ctr ctrs+p, bins_in bins+256p, ping-pong; the 2 lines above x4, p=0..3)\n");
  // 5. back to floats / to int64 positions
  if (!v.argsort && v.prep != NATIVE) {
    void* a[] = {&dst_keys, &n};
    launch((const void*)cubsort_unkey_f32, ew_grid(n), 256, pdl, s, a);
  }
  if (v.argsort && v.v32) {
    void* a[] = {&vA, &dst_idx, &n};
    launch((const void*)cubsort_widen_u32_i64, ew_grid(n), 256, pdl, s, a);
  }
}
#endif  // CUBSORT_HOST_ONLY

// ---------------------------------------------------------------------------
// Host references and checks.
enum Order { ROT, RK, CUBO };
static unsigned hkey(Order o, unsigned b) { return o == ROT ? key_rot(b) : o == RK ? key_rk(b) : key_cub(b); }
static std::vector<unsigned> ref_order(const std::vector<unsigned>& x, Order o) {
  std::vector<unsigned long long> c(x.size());
  for (size_t i = 0; i < x.size(); i++) c[i] = ((unsigned long long)hkey(o, x[i]) << 32) | i;
  std::sort(c.begin(), c.end());  // (key, index) pairs are distinct: a stable sort by key
  std::vector<unsigned> idx(x.size());
  for (size_t i = 0; i < x.size(); i++) idx[i] = (unsigned)c[i];
  return idx;
}
static std::string check_sort(const unsigned* d, const std::vector<unsigned>& x, const std::vector<unsigned>& idx) {
  std::vector<unsigned> h(x.size());
  CK(cudaMemcpy(h.data(), d, x.size() * 4, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < x.size(); i++)
    if (h[i] != x[idx[i]]) {
      char b[96];
      snprintf(b, sizeof b, "FAIL@%zu:%08x!=%08x", i, h[i], x[idx[i]]);
      return b;
    }
  return "PASS";
}
static std::string check_arg(const long long* d, const std::vector<unsigned>& idx) {
  std::vector<long long> h(idx.size());
  CK(cudaMemcpy(h.data(), d, idx.size() * 8, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < idx.size(); i++)
    if (h[i] != (long long)idx[i]) {
      char b[96];
      snprintf(b, sizeof b, "FAIL@%zu:%lld!=%u", i, h[i], idx[i]);
      return b;
    }
  return "PASS";
}

template <class F>
static float time_us(F f, cudaStream_t s) {
  for (int i = 0; i < 3; i++) f();
  CK(cudaStreamSynchronize(s));
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<float> t;
  for (int i = 0; i < 31; i++) {
    CK(cudaEventRecord(a, s));
    f();
    CK(cudaEventRecord(b, s));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms * 1000.f);
  }
  CK(cudaGetLastError());
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct Data {
  long long n;
  std::vector<unsigned> x;
  std::vector<unsigned> ref[3];  // by Order
  unsigned* d_src;
};

int main() {
  int dev = 0;
  CK(cudaSetDevice(dev));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, dev));
  g_sms = prop.multiProcessorCount;
  int rt = 0;
  CK(cudaRuntimeGetVersion(&rt));
  printf("cubsort: %s, %d SMs, CUDA runtime %d, CUB_VERSION %d (CCCL %d.%d.%d)%s\n", prop.name, g_sms, rt, CUB_VERSION,
         CUB_VERSION / 100000, CUB_VERSION / 100 % 1000, CUB_VERSION % 100,
#ifdef CUBSORT_HOST_ONLY
         " [HOST-ONLY fallback: the agent wrappers did not compile]"
#else
         ""
#endif
  );
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  // Data: 16 Mi standard normals; 20011 keys of few values with NaN (both
  // signs, two payloads), +-0, +-Inf, a denormal.
  Data D[2];
  D[0].n = CUBSORT_N;
  D[1].n = 20011;
  {
    std::mt19937 g(12345);
    std::normal_distribution<float> nd(0.f, 1.f);
    D[0].x.resize(D[0].n);
    for (auto& u : D[0].x) {
      float f = nd(g);
      memcpy(&u, &f, 4);
    }
    const unsigned special[] = {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0x80000000u, 0x00000000u,
                                0x7f800000u, 0xff800000u, 0x00000001u, 0x3fc00000u, 0xbfc00000u,
                                0x3f800000u, 0x40000000u, 0xc0000000u, 0x7fffffffu};
    D[1].x.resize(D[1].n);
    for (auto& u : D[1].x) {
      unsigned r = g() % 20;
      if (r < 14)
        u = special[r];
      else {
        float f = (float)(int)(g() % 7) - 3.f;
        memcpy(&u, &f, 4);
      }
    }
  }
  for (Data& d : D) {
    // On the normals the three orders agree (no NaN, no -0): one reference.
    d.ref[CUBO] = ref_order(d.x, CUBO);
    if (&d == &D[0]) {
      d.ref[ROT] = d.ref[RK] = d.ref[CUBO];
    } else {
      d.ref[ROT] = ref_order(d.x, ROT);
      d.ref[RK] = ref_order(d.x, RK);
    }
    CK(cudaMalloc(&d.d_src, d.n * 4));
    CK(cudaMemcpy(d.d_src, d.x.data(), d.n * 4, cudaMemcpyHostToDevice));
  }
  const long long N = D[0].n;
  unsigned* d_out;
  long long *d_idx, *d_iota;
  float* d_ktmp;
  CK(cudaMalloc(&d_out, N * 4));
  CK(cudaMalloc(&d_idx, N * 8));
  CK(cudaMalloc(&d_iota, N * 8));
  CK(cudaMalloc(&d_ktmp, N * 4));
  const double GB = N * 4 / 1e3;  // input bytes / us -> GB/s

  // (1) CUB's host API: the reference.
  size_t tb_k = 0, tb_p = 0;
  CK(cub::DeviceRadixSort::SortKeys(nullptr, tb_k, (const float*)nullptr, (float*)nullptr, (int)N, 0, 32, s));
  CK(cub::DeviceRadixSort::SortPairs(nullptr, tb_p, (const float*)nullptr, (float*)nullptr, (const long long*)nullptr,
                                     (long long*)nullptr, (int)N, 0, 32, s));
  void* d_ctemp;
  CK(cudaMalloc(&d_ctemp, std::max(tb_k, tb_p)));
  printf("variant                              us     GB/s  16Mi  20011  4pass  order (4pass: us of the 4 onesweeps alone)\n");
  {
    std::string c[2];
    float t = 0;
    for (int k = 0; k < 2; k++) {
      const float* in = (const float*)D[k].d_src;
      int n = (int)D[k].n;
      auto f = [&] { CK(cub::DeviceRadixSort::SortKeys(d_ctemp, tb_k, in, (float*)d_out, n, 0, 32, s)); };
      f();
      CK(cudaStreamSynchronize(s));
      c[k] = check_sort(d_out, D[k].x, D[k].ref[CUBO]);
      if (k == 0) t = time_us(f, s);
    }
    printf("cub::DeviceRadixSort::SortKeys   %7.1f %7.1f  %s  %s    -    cub (-NaN first); temp %zu B\n", t, GB / t,
           c[0].c_str(), c[1].c_str(), tb_k);
  }
  {
    std::string c[2];
    float t = 0;
    for (int k = 0; k < 2; k++) {
      const float* in = (const float*)D[k].d_src;
      long long nl = D[k].n;
      int n = (int)nl;
      auto f = [&] {
        void* a[] = {&d_iota, &nl};
        launch((const void*)cubsort_iota_i64, ew_grid(nl), 256, false, s, a);
        CK(cub::DeviceRadixSort::SortPairs(d_ctemp, tb_p, in, d_ktmp, d_iota, d_idx, n, 0, 32, s));
      };
      f();
      CK(cudaStreamSynchronize(s));
      c[k] = check_arg(d_idx, D[k].ref[CUBO]);
      if (k == 0) t = time_us(f, s);
    }
    printf("cub SortPairs<f32,i64> +iota     %7.1f %7.1f  %s  %s    -    cub (-NaN first); temp %zu B\n", t, GB / t,
           c[0].c_str(), c[1].c_str(), tb_p);
  }

#ifndef CUBSORT_HOST_ONLY
  // (2) our launch sequence around CUB's agents.
  const Var vars[] = {
      {"sort u32 key+cubhist 384x20", false, KEY_CUBHIST, false, &OS_U32_20, false},
      {"sort u32 fused 384x16", false, KEY_FUSED, false, &OS_U32_16, false},
      {"sort u32 fused 384x20", false, KEY_FUSED, false, &OS_U32_20, false},
      {"sort u32 fused 384x24", false, KEY_FUSED, false, &OS_U32_24, false},
      {"sort u32 fused 384x20 PDL", false, KEY_FUSED, true, &OS_U32_20, false},
      {"sort native f32 384x19 =CUB", false, NATIVE, false, &OS_F32_19, false},
      {"sort native f32 384x19 PDL", false, NATIVE, true, &OS_F32_19, false},
      {"arg u32 key+cubhist i64 384x15", true, KEY_CUBHIST, false, &OSV_I64_15, false},
      {"arg u32 fused i64 384x15", true, KEY_FUSED, false, &OSV_I64_15, false},
      {"arg u32 fused i64 256x20", true, KEY_FUSED, false, &OSV_I64_20, false},
      {"arg u32 fused i64 512x11", true, KEY_FUSED, false, &OSV_I64_11, false},
      {"arg u32 fused i64 384x15 PDL", true, KEY_FUSED, true, &OSV_I64_15, false},
      {"arg u32 fused u32v 384x23+widen", true, KEY_FUSED, false, &OSV_U32_23, true},
      {"arg u32 fused u32v 384x23 PDL", true, KEY_FUSED, true, &OSV_U32_23, true},
      {"arg native f32 i64 384x15 =CUB", true, NATIVE, false, &OSV_F32_15, false},
      {"arg native f32 i64 384x15 PDL", true, NATIVE, true, &OSV_F32_15, false},
  };
  size_t tmax = 0;
  for (const Var& v : vars) tmax = std::max(tmax, layout(N, v).total);
  unsigned char* T;
  CK(cudaMalloc(&T, tmax));
  float best[2] = {1e30f, 1e30f};
  const char* bestn[2] = {"", ""};
  for (const Var& v : vars) {
    std::string c[2];
    float t = 0;
    const Order o = v.prep == NATIVE ? CUBO : (v.argsort ? RK : ROT);
    for (int k = 0; k < 2; k++) {
      const unsigned* in = D[k].d_src;
      long long n = D[k].n;
      auto f = [&] { run_ours(v, n, in, d_out, d_idx, T, s); };
      CK(cudaMemsetAsync(d_out, 0xff, N * 4, s));
      CK(cudaMemsetAsync(d_idx, 0xff, N * 8, s));
      f();
      CK(cudaStreamSynchronize(s));
      CK(cudaGetLastError());
      c[k] = v.argsort ? check_arg(d_idx, D[k].ref[o]) : check_sort(d_out, D[k].x, D[k].ref[o]);
      if (k == 0) t = time_us(f, s);
    }
    // The passes alone (plain launches only: an event between PDL launches
    // would stand between them).
    float tp = 0;
    if (!v.pdl) {
      cudaEvent_t ev[2];
      CK(cudaEventCreate(&ev[0]));
      CK(cudaEventCreate(&ev[1]));
      std::vector<float> ts;
      for (int i = 0; i < 21; i++) {
        run_ours(v, N, D[0].d_src, d_out, d_idx, T, s, ev);
        CK(cudaEventSynchronize(ev[1]));
        float ms;
        CK(cudaEventElapsedTime(&ms, ev[0], ev[1]));
        ts.push_back(ms * 1000.f);
      }
      std::sort(ts.begin(), ts.end());
      tp = ts[ts.size() / 2];
      CK(cudaStreamSynchronize(s));
    }
    const char* ord = o == CUBO ? "cub (-NaN first)" : o == RK ? "numpy stable" : "numpy; -0<+0, NaN by bits";
    char tps[16];
    if (v.pdl)
      snprintf(tps, sizeof tps, "    -");
    else
      snprintf(tps, sizeof tps, "%5.1f", tp);
    printf("%-32s %7.1f %7.1f  %s  %s  %s  %s\n", v.name, t, GB / t, c[0].c_str(), c[1].c_str(), tps, ord);
    if (c[0] == "PASS" && c[1] == "PASS" && v.prep != NATIVE && t < best[v.argsort]) {
      best[v.argsort] = t;
      bestn[v.argsort] = v.name;
    }
  }
  printf("best in numpy order: %s (%.1f us); %s (%.1f us)\n", bestn[0], best[0], bestn[1], best[1]);

  // (3) the launch sequences for the Go port (16 Mi, one portion).
  // (the PDL variants: memsets become cubsort_zero_u32 <<<words/256, 256>>>,
  // every launch after the first has PROGRAMMATIC_STREAM_SERIALIZATION=1)
  const Var* show[] = {&vars[2], &vars[8]};
  for (const Var* v : show) {
    Layout L = layout(N, *v);
    printf("sequence '%s' n=%lld: temp %zu B (bins@%zu ctrs@%zu lookback@%zu %lld tiles of %lld)\n", v->name, N,
           L.total, L.bins, L.ctrs, L.lookback, L.max_blocks, L.tile);
    g_log = true;
    run_ours(*v, N, D[0].d_src, d_out, d_idx, T, s);
    g_log = false;
    CK(cudaStreamSynchronize(s));
  }
  CK(cudaFree(T));
#endif
  printf("GB/s = 4 B x 16 Mi input / time; times: median of 31 after 3 warm-ups, cudaEvents on one stream\n");
  return 0;
}
