// sort16.cuh: the onesweep digit pass of the long-row radix sort (issue
// 30; Adinets & Merrill, "Onesweep: A Faster Least Significant Digit Radix
// Sort for GPUs", 2022). Included at the end of kernels.cu after sort.cuh,
// whose keys (RK, sort_key, radix_digit), ballot ranking (srt_peers) and
// plan (gocuda_radixup_*, gocuda_radixplan_i64, SRT_* flags) it uses. The
// Go side is kernels/sort16_gpu.go.
//
// sort.cuh's LSD sort takes three kernels a digit pass (each block's digit
// counts, their scan, the scatter), reading the keys twice. Here the digit
// totals of every pass come from gocuda_radixup_* in one read up front, the
// plan from gocuda_radixplan_i64 as before (skipped passes, buffers, the
// identity pass), and each active pass slot is then ONE kernel,
// gocuda_onesweep_* (gocuda_onesweepv_* with values), of a block a tile of
// threads × items keys:
//   - a block takes the next tile id from the slot's counter (atomicAdd),
//     so tiles start in id order and a tile waits only on tiles already
//     running: the look-back cannot deadlock whatever order the hardware
//     starts blocks in;
//   - it loads the tile's keys into registers (warp w holds the tile's
//     keys [w*32*ITEMS, (w+1)*32*ITEMS), item it of lane l at
//     w*32*ITEMS + it*32 + l) and each warp ranks its keys with ballots
//     (srt_peers) and per-warp digit counters in shared memory (a digit's
//     lanes count with one atomicAdd, OS_ATOMIC_RANK, or, as sort.cuh's
//     scatter, with a read and a write between warp barriers);
//   - thread d (digit d; with fewer than 256 threads a thread takes
//     256/NT consecutive digits) scans the warps' counts of d into the
//     tile's count of d, publishes it in the tile's status word for d
//     (status[tile*256 + d]: OS_AGG | count), then looks back: it walks the
//     status words of d of tiles tile-1, tile-2, ... (spinning while one is
//     0, not yet published), adding aggregates until it meets an inclusive
//     prefix (OS_INC), and publishes its own inclusive prefix. Flag and
//     count share one 32-bit word, so a reader sees both or neither: the
//     counts need fewer than 2^30 keys (the Go side takes this path only
//     then);
//   - the keys go through shared memory into (digit, input order) and out
//     to base[d] + their place in the tile, so each digit's run of the tile
//     is written contiguously; then the values the same way. The global
//     place of digit d's run is its start (an exclusive scan of the slot's
//     totals) plus the keys of d in earlier tiles (the look-back).
// Keys land in (digit, tile, warp, item, lane) order, which is input order
// within a digit: stable, as sort.cuh's scatter.
//
// Values (positions) are 32-bit in this path (fewer than 2^30 keys): the
// plan's SRT_VIN64 is never set, and SRT_VOUT64 (the argsort's last pass,
// int64 positions) widens them as they are written.

// The block and the keys a thread of the sort's kernels (OS_THREADS*,
// OS_ITEMS*) and of the argsort's (OS_VTHREADS*, OS_VITEMS*), for keys of
// 4 bytes or fewer (4) and for 8-byte keys (8), which double the shared
// buffer. kernels/sort16_gpu.go's onesweep* constants must match; the bench
// in exp/sort16 sweeps them. Set from its run on the H100 (2026-11-26
// 12:39 UTC, 16 Mi standard-normal keys): float32 sort 256 x 15 704 us
// (256 x 16: 839), argsort 384 x 16 836 us (256 x 16: 857); float64 sort
// 256 x 12 1578 us, argsort 256 x 8 2108 us.
#ifndef OS_THREADS4
#define OS_THREADS4 256
#endif
#ifndef OS_ITEMS4
#define OS_ITEMS4 15
#endif
#ifndef OS_THREADS8
#define OS_THREADS8 256
#endif
#ifndef OS_ITEMS8
#define OS_ITEMS8 12
#endif
#ifndef OS_VTHREADS4
#define OS_VTHREADS4 384
#endif
#ifndef OS_VITEMS4
#define OS_VITEMS4 16
#endif
#ifndef OS_VTHREADS8
#define OS_VTHREADS8 256
#endif
#ifndef OS_VITEMS8
#define OS_VITEMS8 8
#endif

// OS_ATOMIC_RANK 1: a warp's ranking counts a digit with one shared
// atomicAdd by the digit's first lane and a shuffle (CUB's match ranking
// does the same); 0: a read and a write of the counter between warp
// barriers (sort.cuh's scatter).
#ifndef OS_ATOMIC_RANK
#define OS_ATOMIC_RANK 1
#endif

#define OS_AGG 0x40000000u  // the tile's own count of the digit
#define OS_INC 0x80000000u  // the count of the digit in this tile and every earlier one
#define OS_COUNT 0x3fffffffu

// OsBuf: the shared buffer's element, wide enough for a key and a 32-bit
// value.
template <class S>
struct OsBuf {
  typedef unsigned B;
};
template <>
struct OsBuf<u64> {
  typedef u64 B;
};

// os_scan_excl: the sum of v over the block's threads before this one, for
// a block of NT threads (wsum: a word a warp). Two barriers, so that a
// caller may call again at once.
template <int NT, class V>
__device__ __forceinline__ V os_scan_excl(V v, V* wsum) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  V incl = v;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const V y = __shfl_sync(FULL_MASK, incl, (lane - o) & 31);
    if (lane >= o) incl += y;
  }
  if (lane == 31) wsum[warp] = incl;
  __syncthreads();
  V before = 0;
  for (int w = 0; w < warp; w++) before += wsum[w];
  __syncthreads();
  return before + incl - v;
}

// onesweep runs pass slot `slot` of the plan on one tile (see the file's
// comment); VALS: with values (an argsort's passes; without, a sort's,
// which ignore the plan's values and keep fewer registers live); AR picks
// the warp ranking (OS_ATOMIC_RANK). status is the slot's tiles*256 status
// words and counter its tile counter, all zero before the launch; the
// grid is the tile count.
template <class T, int NT, int ITEMS, bool VALS, bool AR = (OS_ATOMIC_RANK != 0)>
__device__ void onesweep(const u64* plan, const u64* totals, unsigned* status, unsigned* counter, i64 n, int slot) {
  typedef typename RK<T>::S S;
  typedef typename OsBuf<S>::B B;
  constexpr int TILE = NT * ITEMS, WARPS = NT / 32;
  constexpr int DPT = NT >= 256 ? 1 : 256 / NT;  // digits a thread of the digit phases
  constexpr int DT = 256 / DPT;                  // threads of the digit phases
  static_assert(NT % 32 == 0 && NT <= 1024 && 256 % DPT == 0 && DT <= NT, "onesweep's block: a multiple of 32 threads, a power of two below 256");
  static_assert(TILE * sizeof(B) + (VALS ? TILE : 0) + WARPS * 256 * 4 + 256 * 8 + 32 * 8 + 16 <= 48 * 1024,
                "onesweep's static shared memory passes 48 KiB");
  const u64* pl = plan + slot * SRT_PLAN;
  const int flags = (int)pl[4];
  if (!(flags & SRT_ACTIVE)) return;
  __shared__ B sbuf[TILE];
  __shared__ u8 sdig[VALS ? TILE : 1];  // the digit of each place, for the values
  __shared__ unsigned wcount[WARPS][256];
  __shared__ unsigned base[256], tstart[256];
  __shared__ u64 wsum[32];
  __shared__ unsigned stile;
  const S* kin = (const S*)pl[0];
  S* kout = (S*)pl[1];
  const unsigned* vin = (const unsigned*)pl[2];
  void* vout = (void*)pl[3];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int shift = 8 * slot;
  const bool desc = flags & SRT_DESC;
  if (tid == 0) stile = atomicAdd(counter, 1u);
  for (int d = tid; d < WARPS * 256; d += NT) wcount[d / 256][d % 256] = 0;
  __syncthreads();
  const unsigned tile = stile;
  const i64 ts = (i64)tile * TILE;
  const int cnt = n - ts < TILE ? (int)(n - ts) : TILE;
  const int wb = warp * 32 * ITEMS;
  S raw[ITEMS];
  unsigned rank[ITEMS];
#pragma unroll
  for (int it = 0; it < ITEMS; it++) {
    const int li = wb + it * 32 + lane;
    raw[it] = li < cnt ? kin[ts + li] : (S)0;
  }
  // The values too, so that their loads are in flight with the keys'
  // rather than after the look-back.
  unsigned val[VALS ? ITEMS : 1];
  if constexpr (VALS) {
    const bool loadv = (flags & SRT_VALUES) && !(flags & SRT_IOTA);
#pragma unroll
    for (int it = 0; it < ITEMS; it++) {
      const int li = wb + it * 32 + lane;
      val[it] = loadv && li < cnt ? vin[ts + li] : (unsigned)(ts + li);
    }
  }
  // Each warp ranks its keys, item by item, in input order.
#pragma unroll
  for (int it = 0; it < ITEMS; it++) {
    const int li = wb + it * 32 + lane;
    const bool ok = li < cnt;
    const unsigned d = ok ? radix_digit<T>(raw[it], shift, desc) : 0u;
    const unsigned peers = srt_peers(d, __ballot_sync(FULL_MASK, ok));
    const unsigned before = __popc(peers & ((1u << lane) - 1));
    if constexpr (AR) {
      // The digit's first lane adds the lanes' count and hands the old
      // count to its peers: no warp barriers. The counter is the warp's
      // own, and the shuffle orders one item's additions before the
      // next's, so ranks stay in input order.
      unsigned have = 0;
      if (ok && before == 0) have = atomicAdd(&wcount[warp][d], (unsigned)__popc(peers));
      const int first = __popc((peers & (0u - peers)) - 1u);  // lowest lane of peers
      rank[it] = __shfl_sync(FULL_MASK, have, first) + before;
    } else {
      const unsigned have = ok ? wcount[warp][d] : 0;
      __syncwarp();
      if (ok && before == 0) wcount[warp][d] = have + __popc(peers);
      __syncwarp();
      rank[it] = have + before;
    }
  }
  __syncthreads();
  // The digit threads: the warps' counts of each digit scanned (each
  // warp's first place among the tile's keys of the digit), the tile's
  // count published, and the digit's start in the tile and in the output.
  unsigned tot[DPT] = {};
  u64 pair = 0;  // the digits' total over all keys (high) and in this tile (low)
  if (tid < DT) {
#pragma unroll
    for (int j = 0; j < DPT; j++) {
      const int d = tid * DPT + j;
      unsigned run = 0;
      for (int w = 0; w < WARPS; w++) {
        const unsigned c = wcount[w][d];
        wcount[w][d] = run;
        run += c;
      }
      tot[j] = run;
      ((volatile unsigned*)status)[(i64)tile * 256 + d] = (tile == 0 ? OS_INC : OS_AGG) | run;
      pair += ((u64)totals[slot * 256 + d] << 32) | run;
    }
  }
  // Both scans at once: a tile holds fewer than 2^32 keys, so the low
  // half never carries into the high.
  u64 at = os_scan_excl<NT, u64>(pair, wsum);
  if (tid < DT) {
#pragma unroll
    for (int j = 0; j < DPT; j++) {
      const int d = tid * DPT + j;
      tstart[d] = (unsigned)at;
      // Look back: the keys of digit d in the tiles before this one.
      unsigned excl = 0;
      if (tile > 0) {
        for (i64 t = (i64)tile - 1;; t--) {
          unsigned w;
          do {
            w = ((volatile unsigned*)status)[t * 256 + d];
          } while (w == 0);
          excl += w & OS_COUNT;
          if (w & OS_INC) break;
        }
        ((volatile unsigned*)status)[(i64)tile * 256 + d] = OS_INC | (excl + tot[j]);
      }
      // base[d] + (place in the tile) is the key's place in the output
      // (unsigned arithmetic: the sum is below 2^30 though base may wrap).
      base[d] = (unsigned)(at >> 32) + excl - (unsigned)at;
      at += ((u64)totals[slot * 256 + d] << 32) | tot[j];
    }
  }
  __syncthreads();
  // The keys into (digit, input order) in shared memory.
#pragma unroll
  for (int it = 0; it < ITEMS; it++) {
    const int li = wb + it * 32 + lane;
    if (li < cnt) {
      const unsigned d = radix_digit<T>(raw[it], shift, desc);
      rank[it] += tstart[d] + wcount[warp][d];
      sbuf[rank[it]] = (B)raw[it];
    }
  }
  __syncthreads();
  // Out in tile order: each digit's run lands contiguous.
#pragma unroll
  for (int m = 0; m < ITEMS; m++) {
    const int i = tid + m * NT;
    if (i < cnt) {
      const S r = (S)sbuf[i];
      const unsigned d = radix_digit<T>(r, shift, desc);
      if constexpr (VALS) sdig[i] = (u8)d;
      if (!(flags & SRT_NOKEYS)) kout[base[d] + (unsigned)i] = r;
    }
  }
  if constexpr (VALS) {
    if (!(flags & SRT_VALUES)) return;
    __syncthreads();
#pragma unroll
    for (int it = 0; it < ITEMS; it++) {
      const int li = wb + it * 32 + lane;
      if (li < cnt) sbuf[rank[it]] = val[it];
    }
    __syncthreads();
#pragma unroll
    for (int m = 0; m < ITEMS; m++) {
      const int i = tid + m * NT;
      if (i < cnt) {
        const unsigned pos = base[sdig[i]] + (unsigned)i;
        const unsigned v = (unsigned)sbuf[i];
        if (flags & SRT_VOUT64)
          ((u64*)vout)[pos] = v;
        else
          ((unsigned*)vout)[pos] = v;
      }
    }
  }
}

// gocuda_onesweep_* (a sort's passes: keys only) and gocuda_onesweepv_*
// (an argsort's or a top-k's: keys and values).
#define OS_KERNEL(T, S, NT, ITEMS, NTV, ITEMSV)                                                                        \
  extern "C" __global__ void __launch_bounds__(NT)                                                                     \
      gocuda_onesweep_##S(const u64* plan, const u64* totals, unsigned* status, unsigned* counter, i64 n, int slot) {   \
    onesweep<T, NT, ITEMS, false>(plan, totals, status, counter, n, slot);                                             \
  }                                                                                                                    \
  extern "C" __global__ void __launch_bounds__(NTV)                                                                    \
      gocuda_onesweepv_##S(const u64* plan, const u64* totals, unsigned* status, unsigned* counter, i64 n, int slot) {  \
    onesweep<T, NTV, ITEMSV, true>(plan, totals, status, counter, n, slot);                                            \
  }

OS_KERNEL(float, f32, OS_THREADS4, OS_ITEMS4, OS_VTHREADS4, OS_VITEMS4)
OS_KERNEL(double, f64, OS_THREADS8, OS_ITEMS8, OS_VTHREADS8, OS_VITEMS8)
OS_KERNEL(int, i32, OS_THREADS4, OS_ITEMS4, OS_VTHREADS4, OS_VITEMS4)
OS_KERNEL(i64, i64, OS_THREADS8, OS_ITEMS8, OS_VTHREADS8, OS_VITEMS8)
OS_KERNEL(u8, u8, OS_THREADS4, OS_ITEMS4, OS_VTHREADS4, OS_VITEMS4)
OS_KERNEL(i8, i8, OS_THREADS4, OS_ITEMS4, OS_VTHREADS4, OS_VITEMS4)
OS_KERNEL(i16, i16, OS_THREADS4, OS_ITEMS4, OS_VTHREADS4, OS_VITEMS4)
OS_KERNEL(u32, u32, OS_THREADS4, OS_ITEMS4, OS_VTHREADS4, OS_VITEMS4)
