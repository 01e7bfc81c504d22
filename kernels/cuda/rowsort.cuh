// rowsort.cuh: the row sort (a block sorts a row of up to ROWSORT_CAP4 or
// ROWSORT_CAP8 elements), included at the end of kernels.cu after sort.cuh,
// whose keys (RK, sort_key, radix_digit), srt_peers and SRT_* flags it
// uses. The Go side is kernels/sort_gpu.go.

// ---------------------------------------------------------------------------
// A row a block: LSD radix sort in shared memory.
//
// A block of B threads (32 to RS_MAXT, a power of two; the row of
// n ≤ B*RS_ITEMS) sorts a row in RK<T>::BITS/8 passes of 8-bit digits. Warp
// w holds positions [w*32*ITEMS, (w+1)*32*ITEMS) of the current order, item
// `it` of lane l at w*32*ITEMS + it*32 + l (a warp's loads and stores
// coalesced, no bank conflicts). Each pass:
//   - rank: a warp takes its items in position order; for each, the lanes
//     with the same digit (srt_peers: ballots, or __match_any_sync) elect
//     their lowest lane, which adds their count to the warp's counter of
//     the digit (a shared atomicAdd: a warp's atomics are applied in
//     instruction order, so item it+1 sees item it's counts without a warp
//     barrier) and hands the old count to its peers (a shuffle); an item's
//     rank is that count plus its peers in lower lanes;
//   - the warps' counters of each digit become each warp's first place for
//     the digit: digit start (an exclusive scan of the digits' totals over
//     the block) plus the earlier warps' counts of the digit;
//   - each key goes to sk (its 16-bit row index to si) at that place plus
//     its rank, and comes back to the registers in position order.
// Ranks follow position order within a digit, so each pass is stable. A
// pass whose digit is the same for every key (a digit total of n) moves
// nothing. Between passes a thread keeps its keys (the row's bits, so
// values keep their bits) and, in one word each, the index (low 16 bits)
// and the rank (high 16); the first k go out from the registers, coalesced.
//
// RS_ITEMS (keys a thread) and RS_MINB (blocks an SM the registers are
// fitted to) are the production choice; exp/rowsort's bench sweeps them.
// kernels/sort_gpu.go's rowSortItems must equal RS_ITEMS.

#ifndef RS_ITEMS
#define RS_ITEMS 16
#endif
// exp/rowsort on the H100 (2026-11-26 12:39 UTC), 4096x4096 float32,
// values+indices: 16 keys a thread, 4 blocks an SM, __match_any_sync
// ranking 391.6 us; 3 blocks with ballots (the first cut) 491.9 us; torch
// 580.9 us.
#ifndef RS_MINB
#define RS_MINB 4
#endif
#ifndef RS_MATCH
#define RS_MATCH 1
#endif
#define RS_MAXT (ROWSORT_CAP4 / RS_ITEMS)

static_assert(RS_MAXT >= 32 && RS_MAXT <= 512 && ROWSORT_CAP4 <= 65536 && ROWSORT_CAP8 <= ROWSORT_CAP4,
              "the row sort's block (its counters fit static shared memory up to 16 warps) and its 16-bit "
              "indices and ranks");

// rs_scan_excl: the sum of v over the block's threads before this one;
// wsum has a word a warp. One barrier: a caller that calls again must put
// a barrier between the calls.
__device__ __forceinline__ unsigned rs_scan_excl(unsigned v, unsigned* wsum) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  unsigned incl = v;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const unsigned y = __shfl_sync(FULL_MASK, incl, (lane - o) & 31);
    if (lane >= o) incl += y;
  }
  if (lane == 31) wsum[warp] = incl;
  __syncthreads();
  unsigned before = 0;
  for (int w = 0; w < warp; w++) before += wsum[w];
  return before + incl - v;
}

// row_sort: MAXT the largest block (the counters' shared memory), ITEMS
// keys a thread, MATCH true to find a digit's peers with __match_any_sync
// rather than eight ballots.
template <class T, int MAXT, int ITEMS, bool MATCH>
__device__ __forceinline__ void row_sort(T* dstv, i64* dsti, const T* x, i64 rows, i64 n, i64 k, int flags) {
  typedef typename RK<T>::S S;
  constexpr int PASSES = RK<T>::BITS / 8;
  constexpr int CAP = RK<T>::BITS == 64 ? ROWSORT_CAP8 : ROWSORT_CAP4;
  static_assert(CAP <= MAXT * ITEMS && CAP <= 65536, "a block holds the longest row, with 16-bit indices");
  __shared__ S sk[CAP];
  __shared__ unsigned short si[CAP];
  __shared__ unsigned wcnt[MAXT / 32][256];
  __shared__ unsigned wsum[MAXT / 32];
  __shared__ int trivial[8];
  const int B = blockDim.x, W = B >> 5, tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  // Thread t's digits for the scan: dpt from t*dpt (none past 256).
  const int dpt = B >= 256 ? 1 : 256 / B, d0 = tid * dpt, dn = d0 < 256 ? dpt : 0;
  const int wb = warp * 32 * ITEMS;
  const unsigned below = (1u << lane) - 1;
  const bool desc = flags & SRT_DESC;
  for (i64 r = blockIdx.x; r < rows; r += gridDim.x) {
    const S* row = (const S*)x + r * n;
    if (tid < 8) trivial[tid] = 0;  // read after this row's first barrier
    S raw[ITEMS];
    unsigned ir[ITEMS];  // the row index (low 16 bits) and the pass's rank (high 16)
#pragma unroll
    for (int it = 0; it < ITEMS; it++) {
      const int li = wb + it * 32 + lane;
      raw[it] = li < n ? row[li] : (S)0;
      ir[it] = (unsigned)li;
    }
#pragma unroll 1
    for (int p = 0; p < PASSES; p++) {
      const int shift = 8 * p;
      for (int d = lane; d < 256; d += 32) wcnt[warp][d] = 0;
      __syncwarp();
#pragma unroll
      for (int it = 0; it < ITEMS; it++) {
        const bool ok = wb + it * 32 + lane < n;
        const unsigned d = ok ? radix_digit<T>(raw[it], shift, desc) : 0u;
        const unsigned valid = __ballot_sync(FULL_MASK, ok);
        unsigned peers;
        if constexpr (MATCH)
          peers = __match_any_sync(FULL_MASK, ok ? d : 256u + lane) & valid;
        else
          peers = srt_peers(d, valid);
        const unsigned before = __popc(peers & below);
        unsigned base = 0;
        if (ok && before == 0) base = atomicAdd(&wcnt[warp][d], (unsigned)__popc(peers));
        base = __shfl_sync(FULL_MASK, base, (__ffs(peers) - 1) & 31);
        ir[it] = (ir[it] & 0xffffu) | ((base + before) << 16);
      }
      __syncthreads();
      // The digits' totals (a total of n: every key has the digit), their
      // exclusive scan, then each warp's first place for each digit.
      unsigned sum = 0;
      for (int j = 0; j < dn; j++) {
        unsigned t = 0;
        for (int w = 0; w < W; w++) t += wcnt[w][d0 + j];
        if (t == (unsigned)n) trivial[p] = 1;
        sum += t;
      }
      unsigned at = rs_scan_excl(sum, wsum);
      for (int j = 0; j < dn; j++) {
        for (int w = 0; w < W; w++) {
          const unsigned c = wcnt[w][d0 + j];
          wcnt[w][d0 + j] = at;
          at += c;
        }
      }
      __syncthreads();
      if (trivial[p]) continue;  // every key has the same digit: the order stands
#pragma unroll
      for (int it = 0; it < ITEMS; it++) {
        if (wb + it * 32 + lane < n) {
          const unsigned d = radix_digit<T>(raw[it], shift, desc);
          const unsigned pos = wcnt[warp][d] + (ir[it] >> 16);
          sk[pos] = raw[it];
          si[pos] = (unsigned short)ir[it];
        }
      }
      __syncthreads();
#pragma unroll
      for (int it = 0; it < ITEMS; it++) {
        const int li = wb + it * 32 + lane;
        if (li < n) {
          raw[it] = sk[li];
          ir[it] = si[li];
        }
      }
    }
    // The first k, from the registers (position order), coalesced.
#pragma unroll
    for (int it = 0; it < ITEMS; it++) {
      const int li = wb + it * 32 + lane;
      if (li < k) {
        if (dsti != nullptr) dsti[r * k + li] = ir[it] & 0xffffu;
        if (dstv != nullptr) ((S*)dstv)[r * k + li] = raw[it];
      }
    }
    // The next row resets trivial before its first barrier: every thread
    // must have read this row's flags first.
    __syncthreads();
  }
}

// 8-byte rows are at most ROWSORT_CAP8 = ROWSORT_CAP4/2 long, so their
// blocks at most RS_MAXT/2 threads: the register cap then leaves room for
// their keys' two words each.
#define ROWSORTK(T, S, MAXT)                                                                                       \
  extern "C" __global__ void __launch_bounds__(MAXT, RS_MINB)                                                      \
      gocuda_rowsort_##S(T* dstv, i64* dsti, const T* x, i64 rows, i64 n, i64 k, int flags) {                      \
    row_sort<T, MAXT, RS_ITEMS, RS_MATCH != 0>(dstv, dsti, x, rows, n, k, flags);                                  \
  }

static_assert(ROWSORT_CAP8 * 2 == ROWSORT_CAP4, "8-byte rows take blocks of RS_MAXT/2");
ROWSORTK(float, f32, RS_MAXT)
ROWSORTK(double, f64, RS_MAXT / 2)
ROWSORTK(int, i32, RS_MAXT)
ROWSORTK(i64, i64, RS_MAXT / 2)
ROWSORTK(u8, u8, RS_MAXT)
ROWSORTK(i8, i8, RS_MAXT)
ROWSORTK(i16, i16, RS_MAXT)
ROWSORTK(u32, u32, RS_MAXT)
