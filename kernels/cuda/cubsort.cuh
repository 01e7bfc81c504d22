// cubsort.cuh (issue 30): the long-row sort and argsort of 4-byte keys
// (float32, int32, uint32) by CUB's onesweep radix sort agents, wrapped in
// our own extern "C" kernels and launched by the Go side's sequence
// (kernels/cubsort_gpu.go), as exp/cubsort's bench measured it on the H100
// (2026-11-26 15:48 UTC, 16 Mi float32): sort 518.8 us (cupy.sort 578.2,
// our sort16.cuh onesweep 701), argsort 719-726 us (cupy.argsort 1073, ours
// 838). Included at the end of kernels.cu, after sort.cuh (RK, sort_key,
// SRT_DESC).
//
// CUB's headers are the toolkit's (nvcc's include path) and exist only on
// the machine that runs scripts/gen-ptx.sh: kernels.cu includes them at its
// very top, before its prelude's macros (THREADS, KERNEL, FULL_MASK, ...)
// could rename anything in them. The CPU emulator (emu/run.sh, g++, no CUB)
// defines GOCUDA_EMU: it compiles and checks this file's own kernels (the
// key transforms, their inverse, the widening) but not CUB's.
//
// The wrappers instantiate CUB's AGENTS, not its kernel templates
// (DeviceRadixSortOnesweepKernel & co.), whose template heads changed from a
// ChainedPolicy hub (CCCL 3.0-3.4) to a PolicySelector (3.5+); the agents'
// names and constructors are the same in every CCCL 3.x tag read (3.0.0,
// 3.2.0, 3.4.0, main of 2026-08):
//   cub::detail::radix_sort::AgentRadixSortOnesweep<Policy, false, K, V, OffT, PortT>
// with policy structs of our own carrying exactly the static members the
// agent reads, at CUB's sm_90 tuning except the tile: 8-bit digits,
// RADIX_RANK_MATCH_EARLY_COUNTS_ANY, BLOCK_SCAN_RAKING_MEMOIZE,
// RADIX_SORT_STORE_DIRECT. The kernel bodies are CUB's kernel bodies.
//
// The sequence (the Go side; CUB's DispatchRadixSort::InvokeOnesweep of
// CCCL <= 3.4 with our key transform in place of its histogram kernel):
//   memset 0: bins[portions][4][256] and ctrs[portions][4] (one run)
//   gocuda_cub_key_*    keys (and positions) of x, and every pass's digit
//                       counts over the whole row into bins[0][pass][256]
//   gocuda_cub_exsum_u32 <<<4, 256>>>: each pass's counts -> digit starts
//   per pass p (bit 8p), per portion q of at most CUBSORT_PORTION keys:
//     memset 0: lookback[tiles of q][256]
//     gocuda_cub_onesweep(v)_u32 <<<tiles of q, threads>>>(lookback,
//       ctrs + 4q + p, q < last ? bins + (4(q+1) + p)*256 : null,
//       bins + (4q + p)*256, keys out, keys in + q*PORTION, ...)
//     (the keys, and positions, ping-pong between two buffers: 4 passes
//     end where pass 0 read)
//   gocuda_cub_unkey_* (a sort) or gocuda_cub_widen_u32 (an argsort).
// Counts are uint32 (OffT): a row has fewer than 2^32 keys on this path.
//
// Order. An argsort's key is sort.cuh's (RK<T>::key: every NaN one key,
// above +Inf, -0 the key of +0) and the positions travel with it: stable,
// as every other sort path. A sort carries no positions, so its key must
// give back every value's bits: float32 keys are CUB's sign flip rotated
// down by 0x007fffff, a bijection of the 32 bits that puts -Inf at 0 and
// the NaNs with the sign bit, which the flip puts first, at the top:
// -Inf < ... < -0 < +0 < ... < +Inf < NaNs (ordered by their bits). So a
// float32 sort on this path puts every -0 before every +0 and orders NaNs
// by their bits, not by their place in x (values that compare equal but
// differ in bits); int32 and uint32 keys are the usual bijections, and
// their sort is the stable one. Descending inverts the key (~k): NaNs
// first, and an argsort's ties still in index order.

#define CUBSORT_PASSES 4  // 8-bit digit passes over 32-bit keys
#define CUBSORT_DIGITS 256

// The onesweep tiles (kernels/cubsort_gpu.go's cubSort* constants must
// match), from exp/cubsort's H100 sweep (2026-11-26 15:48 UTC, 16 Mi
// float32): keys alone 384 x 24 (518.8 us; 384 x 16 523.6, 384 x 20 545.5,
// CUB's own 384 x 20 for uint32 keys), keys with uint32 positions 384 x 23
// (CUB's tuning for 4-byte keys and values; 719-726 us).
#ifndef CUBSORT_THREADS
#define CUBSORT_THREADS 384
#endif
#ifndef CUBSORT_ITEMS
#define CUBSORT_ITEMS 24
#endif
#ifndef CUBSORT_VTHREADS
#define CUBSORT_VTHREADS 384
#endif
#ifndef CUBSORT_VITEMS
#define CUBSORT_VITEMS 23
#endif

// ---------------------------------------------------------------------------
// Our kernels around CUB's (the emulator runs these).

// CubKey<T>: a sort's key, a bijection of the 32 bits, and its inverse.
template <class T>
struct CubKey;
template <>
struct CubKey<float> {
  static __device__ __forceinline__ u32 flip(u32 b) { return (b & 0x80000000u) ? ~b : (b | 0x80000000u); }
  static __device__ __forceinline__ u32 key(u32 b) { return flip(b) - 0x007fffffu; }
  static __device__ __forceinline__ u32 unkey(u32 k) {
    const u32 f = k + 0x007fffffu;
    return (f & 0x80000000u) ? (f & 0x7fffffffu) : ~f;
  }
};
template <>
struct CubKey<int> {
  static __device__ __forceinline__ u32 key(u32 b) { return b ^ 0x80000000u; }
  static __device__ __forceinline__ u32 unkey(u32 k) { return k ^ 0x80000000u; }
};
template <>
struct CubKey<u32> {
  static __device__ __forceinline__ u32 key(u32 b) { return b; }
  static __device__ __forceinline__ u32 unkey(u32 k) { return k; }
};

// cub_key writes the keys of x[0, n) (an argsort's, the stable RK<T> key,
// with the positions 0..n-1 into pos, when pos is not null; else a sort's,
// CubKey<T>), inverted when flags has SRT_DESC, and adds every pass's digit
// counts into bins[pass][256] (zeroed before; a block counts in shared
// memory first). keys may be x (an in-place sort). A grid-stride loop.
template <class T>
__device__ __forceinline__ void cub_key(const u32* x, u32* keys, u32* pos, u32* bins, i64 n, int flags) {
  __shared__ u32 h[CUBSORT_PASSES * CUBSORT_DIGITS];
  const bool desc = flags & SRT_DESC;
  for (int i = threadIdx.x; i < CUBSORT_PASSES * CUBSORT_DIGITS; i += blockDim.x) h[i] = 0;
  __syncthreads();
  for (i64 i = global_tid(); i < n; i += global_stride()) {
    const u32 b = x[i];
    u32 k = pos ? (u32)RK<T>::key(b) : CubKey<T>::key(b);
    if (desc) k = ~k;
    keys[i] = k;
    if (pos) pos[i] = (u32)i;
#pragma unroll
    for (int p = 0; p < CUBSORT_PASSES; p++) atomicAdd(&h[p * CUBSORT_DIGITS + ((k >> (8 * p)) & 255u)], 1u);
  }
  __syncthreads();
  for (int i = threadIdx.x; i < CUBSORT_PASSES * CUBSORT_DIGITS; i += blockDim.x)
    if (h[i]) atomicAdd(&bins[i], h[i]);
}

// cub_unkey turns a sort's keys back into values, in place.
template <class T>
__device__ __forceinline__ void cub_unkey(u32* a, i64 n, int flags) {
  const bool desc = flags & SRT_DESC;
  for (i64 i = global_tid(); i < n; i += global_stride()) {
    u32 k = a[i];
    if (desc) k = ~k;
    a[i] = CubKey<T>::unkey(k);
  }
}

#define CUBSORT_OURS(T, S)                                                                           \
  KERNEL gocuda_cub_key_##S(const u32* x, u32* keys, u32* pos, u32* bins, i64 n, int flags) {         \
    cub_key<T>(x, keys, pos, bins, n, flags);                                                          \
  }                                                                                                    \
  KERNEL gocuda_cub_unkey_##S(u32* a, i64 n, int flags) { cub_unkey<T>(a, n, flags); }
CUBSORT_OURS(float, f32)
CUBSORT_OURS(int, i32)
CUBSORT_OURS(u32, u32)

// gocuda_cub_widen_u32: an argsort's uint32 positions into its int64 output.
KERNEL gocuda_cub_widen_u32(const u32* in, i64* out, i64 n) {
  for (i64 i = global_tid(); i < n; i += global_stride()) out[i] = in[i];
}

// ---------------------------------------------------------------------------
// CUB's agents (not in the emulator).
#ifndef GOCUDA_EMU
#ifndef CUB_VERSION
#error "cubsort.cuh needs CUB's headers included first, at the top of kernels.cu (before its prelude's macros)"
#endif

namespace cubsort {
typedef u32 OffT;  // CUB's OffsetT for fewer than 2^32 keys (choose_offset_t: uint32)
typedef int PortT;  // CUB's PortionOffsetT (AtomicOffsetT): look-back flags in bits 30, 31

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
template <int NT, int IPT, class V>
using Onesweep = cub::detail::radix_sort::AgentRadixSortOnesweep<OsPolicy<NT, IPT>, false, u32, V, OffT, PortT>;
}  // namespace cubsort

static_assert(CUBSORT_DIGITS == 1 << cubsort::OsPolicy<CUBSORT_THREADS, CUBSORT_ITEMS>::RADIX_BITS,
              "8-bit digits: the key kernel counts 4 passes of 256");

// gocuda_cub_exsum_u32 <<<CUBSORT_PASSES, 256>>> (DeviceRadixSortExclusiveSumKernel's
// body): each block scans its pass's 256 digit counts into starts, in place.
extern "C" __global__ void __launch_bounds__(CUBSORT_DIGITS) gocuda_cub_exsum_u32(u32* bins) {
  typedef cub::BlockScan<u32, CUBSORT_DIGITS> BS;
  __shared__ typename BS::TempStorage t;
  u32 v = bins[blockIdx.x * CUBSORT_DIGITS + threadIdx.x];
  BS(t).ExclusiveSum(v, v);
  bins[blockIdx.x * CUBSORT_DIGITS + threadIdx.x] = v;
}

// One digit pass over a portion (DeviceRadixSortOnesweepKernel's body):
// lookback (zeroed before), this pass's tile counter (zeroed with the bins),
// the next portion's digit starts to write (null: the last portion), this
// portion's digit starts, keys (and positions) out and in, the portion's
// keys, the pass's first bit and its bits (8). Pointers arrive as 8-byte
// words, n, bit and nbits as int32.
extern "C" __global__ void __launch_bounds__(CUBSORT_THREADS)
    gocuda_cub_onesweep_u32(cubsort::PortT* lookback, cubsort::PortT* ctr, cubsort::OffT* bins_out,
                            const cubsort::OffT* bins_in, u32* kout, const u32* kin, cubsort::PortT n, int bit,
                            int nbits) {
  typedef cubsort::Onesweep<CUBSORT_THREADS, CUBSORT_ITEMS, cub::NullType> A;
  __shared__ typename A::TempStorage s;
  A agent(s, lookback, ctr, bins_out, bins_in, kout, kin, (cub::NullType*)nullptr, (const cub::NullType*)nullptr, n,
          bit, nbits);
  agent.Process();
}
extern "C" __global__ void __launch_bounds__(CUBSORT_VTHREADS)
    gocuda_cub_onesweepv_u32(cubsort::PortT* lookback, cubsort::PortT* ctr, cubsort::OffT* bins_out,
                             const cubsort::OffT* bins_in, u32* kout, const u32* kin, u32* vout, const u32* vin,
                             cubsort::PortT n, int bit, int nbits) {
  typedef cubsort::Onesweep<CUBSORT_VTHREADS, CUBSORT_VITEMS, u32> A;
  __shared__ typename A::TempStorage s;
  A agent(s, lookback, ctr, bins_out, bins_in, kout, kin, vout, vin, n, bit, nbits);
  agent.Process();
}
#endif  // GOCUDA_EMU
