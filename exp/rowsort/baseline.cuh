// baseline.cuh: the row sort as it was before this branch (commit 02cba90's
// rowsort.cuh, names suffixed _base / RSB_), for the bench to time beside
// the new kernel.

#define RSB_ITEMS 16
#define RSB_MAXT (ROWSORT_CAP4 / RSB_ITEMS)

static_assert(RSB_MAXT == 256 && ROWSORT_CAP4 <= 65536, "the row sort's block and its 16-bit indices");

// rsb_scan_excl: the sum of v over the block's threads before this one, for
// a block of up to 8 warps; wsum has a word a warp. One barrier: a caller
// that calls again must put a barrier between the calls.
__device__ __forceinline__ unsigned rsb_scan_excl(unsigned v, unsigned* wsum) {
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

template <class T>
__device__ void row_sort_base(T* dstv, i64* dsti, const T* x, i64 rows, i64 n, i64 k, int flags) {
  typedef typename RK<T>::S S;
  constexpr int PASSES = RK<T>::BITS / 8;
  constexpr int CAP = RK<T>::BITS == 64 ? ROWSORT_CAP8 : ROWSORT_CAP4;
  __shared__ S sk[CAP];
  __shared__ unsigned short si[CAP];
  __shared__ unsigned wcnt[RSB_MAXT / 32][256];
  __shared__ unsigned ttot[256], tstart[256];
  __shared__ unsigned wsum[RSB_MAXT / 32];
  __shared__ int trivial[8];
  const int B = blockDim.x, tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int dpt = 256 / B;  // digits a thread scans
  const int wb = warp * 32 * RSB_ITEMS;
  const unsigned below = (1u << lane) - 1;
  const bool desc = flags & SRT_DESC;
  for (i64 r = blockIdx.x; r < rows; r += gridDim.x) {
    const S* row = (const S*)x + r * n;
    if (tid < 8) trivial[tid] = 0;  // read after this row's first barrier
    S raw[RSB_ITEMS];
    unsigned id[RSB_ITEMS], rank[RSB_ITEMS];
#pragma unroll
    for (int it = 0; it < RSB_ITEMS; it++) {
      const int li = wb + it * 32 + lane;
      raw[it] = li < n ? row[li] : (S)0;
      id[it] = li;
    }
    for (int p = 0; p < PASSES; p++) {
      const int shift = 8 * p;
      // Rank: the warp's items of each digit in position order.
      for (int d = lane; d < 256; d += 32) wcnt[warp][d] = 0;
      __syncwarp();
#pragma unroll
      for (int it = 0; it < RSB_ITEMS; it++) {
        const bool ok = wb + it * 32 + lane < n;
        const unsigned d = ok ? radix_digit<T>(raw[it], shift, desc) : 0u;
        const unsigned peers = srt_peers(d, __ballot_sync(FULL_MASK, ok));
        const unsigned before = __popc(peers & below);
        const unsigned have = ok ? wcnt[warp][d] : 0;
        __syncwarp();
        if (ok && before == 0) wcnt[warp][d] = have + __popc(peers);
        __syncwarp();
        rank[it] = have + before;
      }
      __syncthreads();
      // Thread t's digits t*dpt..: each warp's first rank among the
      // digit's keys, the digit's total, then the digits' starts.
      unsigned sum = 0;
      for (int j = 0; j < dpt; j++) {
        const int d = tid * dpt + j;
        unsigned run = 0;
        for (int w = 0; w < B / 32; w++) {
          const unsigned c = wcnt[w][d];
          wcnt[w][d] = run;
          run += c;
        }
        ttot[d] = run;
        if (run == (unsigned)n) trivial[p] = 1;
        sum += run;
      }
      unsigned at = rsb_scan_excl(sum, wsum);
      for (int j = 0; j < dpt; j++) {
        const int d = tid * dpt + j;
        tstart[d] = at;
        at += ttot[d];
      }
      __syncthreads();
      if (trivial[p]) continue;  // every key has the same digit: the order stands
#pragma unroll
      for (int it = 0; it < RSB_ITEMS; it++) {
        if (wb + it * 32 + lane < n) {
          const unsigned d = radix_digit<T>(raw[it], shift, desc);
          const unsigned pos = tstart[d] + wcnt[warp][d] + rank[it];
          sk[pos] = raw[it];
          si[pos] = (unsigned short)id[it];
        }
      }
      __syncthreads();
#pragma unroll
      for (int it = 0; it < RSB_ITEMS; it++) {
        const int li = wb + it * 32 + lane;
        if (li < n) {
          raw[it] = sk[li];
          id[it] = si[li];
        }
      }
    }
    // The first k, from the registers (position order), coalesced.
#pragma unroll
    for (int it = 0; it < RSB_ITEMS; it++) {
      const int li = wb + it * 32 + lane;
      if (li < k) {
        if (dsti != nullptr) dsti[r * k + li] = id[it];
        if (dstv != nullptr) ((S*)dstv)[r * k + li] = raw[it];
      }
    }
    // The next row's first barrier orders its writes of sk after this
    // row's reads, but trivial is reset before any barrier.
    __syncthreads();
  }
}

