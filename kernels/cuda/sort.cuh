// sort.cuh: sort, argsort and top-k along the last axis (issue 30),
// included at the end of kernels.cu. The Go side is kernels/scansort.go and
// scansort_gpu.go.
//
// Keys are the elements' bits made unsigned and order-preserving: floats
// with the sign bit flipped (all bits, for negatives), every NaN the
// largest key and -0 the key of +0, so that NaNs sort last (first when
// descending) and -0 and +0 keep their order; signed integers with the sign
// bit flipped; descending order inverts the key. Buffers hold the elements'
// own bits and the key is computed at each use, so every value comes out
// with the bits it went in with.
//
// gocuda_rowsort_* sorts a row of up to ROWSORT_CAP4 (4- and 1-byte types)
// or ROWSORT_CAP8 (8-byte) elements in one block: rowsort.cuh.
//
// Longer rows (and 1-D arrays) take an LSD radix sort with 8-bit digits:
//   - gocuda_radixup_*: one read of the keys counts the digits of every
//     pass (shared-memory counters, then atomics into totals[pass][256]).
//   - gocuda_radixplan_i64: from the totals, which passes matter (a pass
//     whose digit is the same for every key is skipped) and, for each pass
//     slot, its input and output buffers and flags (plan[slot]). Slot
//     `passes` is an identity pass (its digit is 0 for every key), used for
//     a stable copy when every pass is skipped or to make an in-place sort
//     take an even number of passes.
//   - per pass slot, three kernels that return at once when the slot is
//     inactive: gocuda_radixhist_* (each block's count of each digit of its
//     run of tiles), gocuda_radixoff_i64 (a warp a digit: the digit's
//     start from the totals plus the exclusive scan of the blocks' counts)
//     and gocuda_radixscatter_* (a block ranks each tile of 4096 keys: a
//     warp ranks its keys with ballots (srt_peers) and per-warp counters, the
//     warps' counts are scanned per digit and the digits' tile totals
//     across digits; the keys are placed in shared memory in (digit, input
//     order) and written out from there, each digit's run contiguous, then
//     the values the same way). Keys land in (digit, tile, warp, item,
//     lane) order, which is input order within a digit: stable.

#define SRT_DESC 1
#define SRT_IOTA 2
#define SRT_VIN64 4
#define SRT_VOUT64 8
#define SRT_VALUES 16
#define SRT_NOKEYS 32
#define SRT_ACTIVE 64
#define SRT_ITEMS 16
#define SRT_TILE (THREADS * SRT_ITEMS)
#define SRT_WARPS (THREADS / 32)
#define SRT_SLOTS 9  // up to 8 digit passes and the identity pass
#define SRT_PLAN 8   // u64 words of plan a slot: kin, kout, vin, vout, flags

#define ROWSORT_CAP4 4096
#define ROWSORT_CAP8 2048

static_assert(THREADS == 256, "the radix kernels give a thread each of the 256 digits");

// ---------------------------------------------------------------------------
// Sort keys. S is the storage (the element's bits), K the key.

template <class T>
struct RK;
template <>
struct RK<float> {
  typedef unsigned S;
  typedef unsigned K;
  static const int BITS = 32;
  static __device__ __forceinline__ K key(S b) {
    if ((b & 0x7fffffffu) > 0x7f800000u) return 0xffffffffu;
    if (b == 0x80000000u) b = 0;
    return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
  }
};
template <>
struct RK<double> {
  typedef u64 S;
  typedef u64 K;
  static const int BITS = 64;
  static __device__ __forceinline__ K key(S b) {
    if ((b & 0x7fffffffffffffffULL) > 0x7ff0000000000000ULL) return ~0ULL;
    if (b == 0x8000000000000000ULL) b = 0;
    return (b & 0x8000000000000000ULL) ? ~b : (b | 0x8000000000000000ULL);
  }
};
template <>
struct RK<int> {
  typedef unsigned S;
  typedef unsigned K;
  static const int BITS = 32;
  static __device__ __forceinline__ K key(S b) { return b ^ 0x80000000u; }
};
template <>
struct RK<i64> {
  typedef u64 S;
  typedef u64 K;
  static const int BITS = 64;
  static __device__ __forceinline__ K key(S b) { return b ^ 0x8000000000000000ULL; }
};
template <>
struct RK<u8> {
  typedef u8 S;
  typedef unsigned K;
  static const int BITS = 8;
  static __device__ __forceinline__ K key(S b) { return b; }
};
template <>
struct RK<i8> {
  typedef u8 S;
  typedef unsigned K;
  static const int BITS = 8;
  static __device__ __forceinline__ K key(S b) { return b ^ 0x80u; }
};
template <>
struct RK<i16> {
  typedef unsigned short S;
  typedef unsigned K;
  static const int BITS = 16;
  static __device__ __forceinline__ K key(S b) { return b ^ 0x8000u; }
};
template <>
struct RK<u32> {
  typedef unsigned S;
  typedef unsigned K;
  static const int BITS = 32;
  static __device__ __forceinline__ K key(S b) { return b; }
};

template <class T>
__device__ __forceinline__ typename RK<T>::K sort_key(typename RK<T>::S b, bool desc) {
  typedef typename RK<T>::K K;
  K k = RK<T>::key(b);
  if (desc) k = ~k;
  if constexpr (RK<T>::BITS < 32) k &= ((K)1 << RK<T>::BITS) - 1;
  return k;
}

template <class T>
__device__ __forceinline__ unsigned radix_digit(typename RK<T>::S b, int shift, bool desc) {
  if (shift >= RK<T>::BITS) return 0;  // the identity pass
  return (unsigned)(sort_key<T>(b, desc) >> shift) & 255u;
}

// srt_peers: the lanes of the warp, among those in `valid`, whose digit
// (8 bits) is d; every lane must call it. Eight ballots rather than
// __match_any_sync, which is slower for a few bits (CUB's MatchAny makes
// the same choice).
__device__ __forceinline__ unsigned srt_peers(unsigned d, unsigned valid) {
  unsigned m = valid;
#pragma unroll
  for (int b = 0; b < 8; b++) {
    const bool set = (d >> b) & 1u;
    const unsigned v = __ballot_sync(FULL_MASK, set);
    m &= set ? v : ~v;
  }
  return m;
}

// ---------------------------------------------------------------------------
// (key, index) entries, for the top-k kernels.

// SEnt is an entry: for narrow keys (W false) k = key << 32 | index and i
// is unused; for 64-bit keys k is the key and i the index. Comparing
// entries compares keys, then indices, so no two entries of a row are
// equal; se_none, the largest key and index, is past every real entry.
template <bool W>
struct SEnt {
  u64 k;
  unsigned i;
};

template <bool W>
__device__ __forceinline__ bool se_less(const SEnt<W>& a, const SEnt<W>& b) {
  if constexpr (W)
    return a.k < b.k || (a.k == b.k && a.i < b.i);
  else
    return a.k < b.k;
}

template <bool W>
__device__ __forceinline__ bool se_eq(const SEnt<W>& a, const SEnt<W>& b) {
  if constexpr (W)
    return a.k == b.k && a.i == b.i;
  else
    return a.k == b.k;
}

template <bool W>
__device__ __forceinline__ SEnt<W> se_none() {
  SEnt<W> e;
  e.k = ~0ULL;
  e.i = ~0u;
  return e;
}

template <bool W>
__device__ __forceinline__ SEnt<W> se_make(u64 key, unsigned i) {
  SEnt<W> e;
  if constexpr (W) {
    e.k = key;
    e.i = i;
  } else {
    e.k = (key << 32) | i;
    e.i = 0;
  }
  return e;
}

template <bool W>
__device__ __forceinline__ unsigned se_index(const SEnt<W>& a) {
  if constexpr (W)
    return a.i;
  else
    return (unsigned)a.k;
}

template <bool W>
__device__ __forceinline__ SEnt<W> se_shfl_xor(const SEnt<W>& a, int m) {
  SEnt<W> r;
  r.k = __shfl_xor_sync(FULL_MASK, a.k, m);
  if constexpr (W)
    r.i = __shfl_xor_sync(FULL_MASK, a.i, m);
  else
    r.i = 0;
  return r;
}

// ---------------------------------------------------------------------------
// Top-k of rows for small k (k ≤ KMAX, 16 or 32).
//
// A group of wpr warps (1, 2, 4 or 8; 8/wpr groups a block) takes a row.
// Each lane reads its strided share of the row (increasing index) and
// keeps the KMAX smallest (key, index) entries in registers, sorted; most
// elements are rejected by one compare with the KMAX-th. A warp then merges
// its lanes' lists in k rounds of a warp minimum over the lists' heads (the
// winning lane pops its head); with several warps a row, the warps' k
// entries go through shared memory and the group's first warp merges them
// the same way. Entries compare key, then index, so ties keep index order
// and the result is the first k of the stable sort. Values are gathered by
// index (the row's bits).

template <class T, int KMAX>
__device__ void topk_rows(T* dstv, i64* dsti, const T* x, i64 rows, i64 n, int k, int wpr, int flags) {
  typedef typename RK<T>::S S;
  constexpr bool W = RK<T>::BITS == 64;
  __shared__ SEnt<W> cand[THREADS / 32][KMAX];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int groups = (THREADS / 32) / wpr, g = warp / wpr, wg = warp % wpr;
  const bool desc = flags & SRT_DESC;
  const i64 step = (i64)wpr * 32;
  for (i64 r0 = (i64)blockIdx.x * groups; r0 < rows; r0 += (i64)gridDim.x * groups) {
    const i64 r = r0 + g;
    const bool live = r < rows;  // the same for the warp
    const S* row = (const S*)x + r * n;
    SEnt<W> mine = se_none<W>();
    if (live) {
      SEnt<W> best[KMAX];
#pragma unroll
      for (int j = 0; j < KMAX; j++) best[j] = se_none<W>();
      // tau bounds the warp's k-th entry: the k-th smallest of the lanes'
      // heads (k entries of the row at most tau), so an entry past it is
      // in no lane's part of the result. Kept fresh while heads change.
      SEnt<W> tau = se_none<W>();
      bool moved = false;  // this lane's head changed since tau
      auto consider = [&](S b, i64 i) {
        const SEnt<W> e = se_make<W>((u64)sort_key<T>(b, desc), (unsigned)i);
        if (se_less(e, best[KMAX - 1]) && se_less(e, tau)) {
          moved |= se_less(e, best[0]);
          // Insert, top down: slot j takes slot j-1's entry if e sorts
          // before it, else e if e sorts before slot j's, else keeps its.
#pragma unroll
          for (int j = KMAX - 1; j > 0; j--)
            best[j] = se_less(e, best[j - 1]) ? best[j - 1] : (se_less(e, best[j]) ? e : best[j]);
          if (se_less(e, best[0])) best[0] = e;
        }
      };
      // Batches of 4 elements a lane while the whole warp has them (the
      // loop's condition is the warp's, for the shuffles), then the rest.
      i64 wbase = (i64)wg * 32;
      for (; wbase + 3 * step + 31 < n; wbase += 4 * step) {
        const i64 i = wbase + lane;
        const S v0 = row[i], v1 = row[i + step], v2 = row[i + 2 * step], v3 = row[i + 3 * step];
        consider(v0, i);
        consider(v1, i + step);
        consider(v2, i + 2 * step);
        consider(v3, i + 3 * step);
        if (__ballot_sync(FULL_MASK, moved) != 0) {
          // A bitonic sort of the heads across the warp; lane k-1's is tau.
          SEnt<W> h = best[0];
#pragma unroll
          for (int kk = 2; kk <= 32; kk <<= 1)
#pragma unroll
            for (int j = kk >> 1; j > 0; j >>= 1) {
              const SEnt<W> q = se_shfl_xor<W>(h, j);
              if ((((lane & j) == 0) == ((lane & kk) == 0)) ? se_less(q, h) : se_less(h, q)) h = q;
            }
          tau.k = __shfl_sync(FULL_MASK, h.k, k - 1);
          tau.i = __shfl_sync(FULL_MASK, h.i, k - 1);
          moved = false;
        }
      }
      for (i64 i = wbase + lane; i < n; i += step) consider(row[i], i);
      // The warp's first k: lane o keeps round o's.
      for (int o = 0; o < k; o++) {
        SEnt<W> m = best[0];
#pragma unroll
        for (int s = 16; s > 0; s >>= 1) {
          const SEnt<W> q = se_shfl_xor<W>(m, s);
          if (se_less(q, m)) m = q;
        }
        if (se_eq(m, best[0])) {
#pragma unroll
          for (int j = 0; j < KMAX - 1; j++) best[j] = best[j + 1];
          best[KMAX - 1] = se_none<W>();
        }
        if (lane == o) mine = m;
      }
    }
    if (wpr > 1) {
      // The group's warps' lists merged by its first warp.
      if (lane < k) cand[warp][lane] = mine;
      __syncthreads();
      if (live && wg == 0) {
        int h = 0;  // lane l < wpr: the head of warp (warp + l)'s list
        SEnt<W> out = se_none<W>();
        for (int o = 0; o < k; o++) {
          const bool has = lane < wpr && h < k;
          const SEnt<W> head = has ? cand[warp + lane][h] : se_none<W>();
          SEnt<W> m = head;
#pragma unroll
          for (int s = 16; s > 0; s >>= 1) {
            const SEnt<W> q = se_shfl_xor<W>(m, s);
            if (se_less(q, m)) m = q;
          }
          if (has && se_eq(m, head)) h++;
          if (lane == o) out = m;
        }
        mine = out;
      }
      __syncthreads();  // cand is rewritten for the next rows
    }
    if (live && wg == 0 && lane < k) {
      const unsigned at = se_index(mine);
      if (dsti != nullptr) dsti[r * k + lane] = at;
      if (dstv != nullptr) ((S*)dstv)[r * k + lane] = row[at];
    }
  }
}

// ---------------------------------------------------------------------------
// The radix sort.

// srt_scan_excl: the sum of the values of the block's threads before this
// one, and in *total of all (THREADS threads; wsum has a word a warp).
template <class V>
__device__ V srt_scan_excl(V v, V* wsum, V* total) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  V incl = v;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const V y = __shfl_sync(FULL_MASK, incl, (lane - o) & 31);
    if (lane >= o) incl += y;
  }
  if (lane == 31) wsum[warp] = incl;
  __syncthreads();
  V before = 0, all = 0;
  for (int w = 0; w < SRT_WARPS; w++) {
    if (w < warp) before += wsum[w];
    all += wsum[w];
  }
  __syncthreads();
  *total = all;
  return before + incl - v;
}

// The run of tiles block b owns: [start, end) of the n keys.
__device__ __forceinline__ void srt_range(i64 n, i64 tpb, i64* start, i64* end) {
  *start = (i64)blockIdx.x * tpb * SRT_TILE;
  const i64 e = *start + tpb * SRT_TILE;
  *end = e < n ? e : n;
}

// radix_up adds the digit counts of every pass of the block's keys to
// totals[pass*256 + digit] (zeroed before).
template <class T>
__device__ void radix_up(u64* totals, const T* xin, i64 n, i64 tpb, int flags) {
  typedef typename RK<T>::S S;
  constexpr int PASSES = RK<T>::BITS / 8;
  __shared__ unsigned h[PASSES][256];
  const bool desc = flags & SRT_DESC;
  const S* x = (const S*)xin;
  for (int d = threadIdx.x; d < PASSES * 256; d += THREADS) h[d / 256][d % 256] = 0;
  __syncthreads();
  i64 start, end;
  srt_range(n, tpb, &start, &end);
  auto count = [&](S b) {
    const typename RK<T>::K key = sort_key<T>(b, desc);
#pragma unroll
    for (int p = 0; p < PASSES; p++) atomicAdd(&h[p][(unsigned)(key >> (8 * p)) & 255u], 1u);
  };
  // Four loads in flight before the atomics.
  i64 i = start + threadIdx.x;
  for (; i + 3 * THREADS < end; i += 4 * THREADS) {
    const S a = x[i], b = x[i + THREADS], c = x[i + 2 * THREADS], d = x[i + 3 * THREADS];
    count(a);
    count(b);
    count(c);
    count(d);
  }
  for (; i < end; i += THREADS) count(x[i]);
  __syncthreads();
#pragma unroll
  for (int p = 0; p < PASSES; p++) {
    const unsigned c = h[p][threadIdx.x];
    if (c != 0) atomicAdd((unsigned long long*)&totals[p * 256 + threadIdx.x], (unsigned long long)c);
  }
}

// gocuda_radixplan_i64 (one block): plan[slot*SRT_PLAN + 0..4] = kin,
// kout, vin, vout, flags for each pass slot 0..passes (flags 0: skip). x
// is the input; k0 and k1 key buffers, v0 and v1 value buffers (64-bit if
// flags has SRT_VIN64, else 32-bit), keysOut the sorted keys (a sort:
// idxOut nil) or idxOut the int64 order (an argsort: keysOut nil). A pass
// is skipped when one digit holds all n keys; the identity slot (passes)
// runs when no pass does (a stable copy) and when a sort in place
// (keysOut == x) would otherwise take an odd number of passes, so that no
// pass writes the buffer it reads.
extern "C" __global__ void __launch_bounds__(THREADS)
    gocuda_radixplan_i64(u64* totals, u64* plan, u64 x, u64 k0, u64 k1, u64 keysOut, u64 v0, u64 v1, u64 idxOut,
                         i64 n, int passes, int flags) {
  __shared__ int trivial[SRT_SLOTS];
  if (threadIdx.x < SRT_SLOTS) trivial[threadIdx.x] = 0;
  __syncthreads();
  for (int p = 0; p < passes; p++)
    if (totals[p * 256 + threadIdx.x] == (u64)n) trivial[p] = 1;
  __syncthreads();
  if (threadIdx.x != 0) return;
  // The identity pass puts every key in digit 0.
  totals[passes * 256] = (u64)n;
  for (int d = 1; d < 256; d++) totals[passes * 256 + d] = 0;
  int act[SRT_SLOTS + 1], m = 0;
  for (int p = 0; p < passes; p++)
    if (!trivial[p]) act[m++] = p;
  const bool sortOnly = idxOut == 0, inPlace = sortOnly && keysOut == x;
  if (m == 0 && !inPlace)
    act[m++] = passes;  // all keys equal: a stable copy
  else if (inPlace && (m & 1))
    act[m++] = passes;
  for (int s = 0; s <= passes; s++)
    for (int f = 0; f < SRT_PLAN; f++) plan[s * SRT_PLAN + f] = 0;
  const bool val64 = flags & SRT_VIN64;
  u64 kprev = x, vprev = 0;
  for (int a = 0; a < m; a++) {
    const bool first = a == 0, last = a == m - 1;
    u64* pl = plan + act[a] * SRT_PLAN;
    int f = (flags & SRT_DESC) | SRT_ACTIVE;
    u64 kout, vout = 0;
    if (sortOnly) {
      kout = ((m - 1 - a) % 2 == 0) ? keysOut : k0;  // ends in keysOut
    } else {
      kout = last ? 0 : (a % 2 == 0 ? k0 : k1);
      vout = last ? idxOut : (a % 2 == 0 ? v0 : v1);
      f |= SRT_VALUES;
      if (first) f |= SRT_IOTA;
      if (!first && val64) f |= SRT_VIN64;
      if (last || val64) f |= SRT_VOUT64;
      if (last) f |= SRT_NOKEYS;
    }
    pl[0] = kprev;
    pl[1] = kout;
    pl[2] = vprev;
    pl[3] = vout;
    pl[4] = (u64)f;
    kprev = kout;
    vprev = vout;
  }
}

// radix_hist writes the block's count of each digit of slot's pass to
// counts[digit*blocks + block].
template <class T>
__device__ void radix_hist(u64* counts, const u64* plan, i64 n, int slot, i64 tpb, int blocks) {
  typedef typename RK<T>::S S;
  const u64* pl = plan + slot * SRT_PLAN;
  const int flags = (int)pl[4];
  if (!(flags & SRT_ACTIVE)) return;
  __shared__ unsigned h[256];
  const S* x = (const S*)pl[0];
  const bool desc = flags & SRT_DESC;
  h[threadIdx.x] = 0;
  __syncthreads();
  i64 start, end;
  srt_range(n, tpb, &start, &end);
  const int shift = 8 * slot;
  // Four loads in flight before the atomics.
  i64 i = start + threadIdx.x;
  for (; i + 3 * THREADS < end; i += 4 * THREADS) {
    const S a = x[i], b = x[i + THREADS], c = x[i + 2 * THREADS], d = x[i + 3 * THREADS];
    atomicAdd(&h[radix_digit<T>(a, shift, desc)], 1u);
    atomicAdd(&h[radix_digit<T>(b, shift, desc)], 1u);
    atomicAdd(&h[radix_digit<T>(c, shift, desc)], 1u);
    atomicAdd(&h[radix_digit<T>(d, shift, desc)], 1u);
  }
  for (; i < end; i += THREADS) atomicAdd(&h[radix_digit<T>(x[i], shift, desc)], 1u);
  __syncthreads();
  counts[(i64)threadIdx.x * blocks + blockIdx.x] = h[threadIdx.x];
}

// gocuda_radixoff_i64 (a warp a digit, grid-strided): counts[digit*blocks
// + b] becomes the first position of the digit's keys of block b: the keys
// of smaller digits (from the totals), then block b's predecessors' keys of
// the digit.
extern "C" __global__ void __launch_bounds__(THREADS)
    gocuda_radixoff_i64(u64* counts, const u64* totals, const u64* plan, int slot, int blocks) {
  if (!(plan[slot * SRT_PLAN + 4] & SRT_ACTIVE)) return;
  __shared__ u64 dstart[256];
  __shared__ u64 wsum[SRT_WARPS];
  u64 all;
  dstart[threadIdx.x] = srt_scan_excl<u64>(totals[slot * 256 + threadIdx.x], wsum, &all);
  __syncthreads();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int d = blockIdx.x * SRT_WARPS + warp; d < 256; d += gridDim.x * SRT_WARPS) {
    u64 carry = dstart[d];
    u64* c = counts + (i64)d * blocks;
    for (int b0 = 0; b0 < blocks; b0 += 32) {
      const int b = b0 + lane;
      const u64 v = b < blocks ? c[b] : 0;
      u64 incl = v;
#pragma unroll
      for (int o = 1; o < 32; o <<= 1) {
        const u64 y = __shfl_sync(FULL_MASK, incl, (lane - o) & 31);
        if (lane >= o) incl += y;
      }
      if (b < blocks) c[b] = carry + incl - v;
      carry += __shfl_sync(FULL_MASK, incl, 31);
    }
  }
}

// radix_scatter moves the keys (and values) of slot's pass to their
// places: see the file's comment.
template <class T>
__device__ void radix_scatter(const u64* offs, const u64* plan, i64 n, int slot, i64 tpb, int blocks) {
  typedef typename RK<T>::S S;
  const u64* pl = plan + slot * SRT_PLAN;
  const int flags = (int)pl[4];
  if (!(flags & SRT_ACTIVE)) return;
  __shared__ u64 sbuf[SRT_TILE];
  __shared__ unsigned wcount[SRT_WARPS][256];
  __shared__ u64 base[256];
  __shared__ unsigned tstart[256], ttotal[256];
  __shared__ unsigned wsum[SRT_WARPS];
  const S* kin = (const S*)pl[0];
  S* kout = (S*)pl[1];
  const void* vin = (const void*)pl[2];
  void* vout = (void*)pl[3];
  const int shift = 8 * slot, lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const bool desc = flags & SRT_DESC;
  base[threadIdx.x] = offs[(i64)threadIdx.x * blocks + blockIdx.x];
  i64 start, end;
  srt_range(n, tpb, &start, &end);
  for (i64 ts = start; ts < end; ts += SRT_TILE) {
    const int cnt = end - ts < SRT_TILE ? (int)(end - ts) : SRT_TILE;
    // The tile's keys first, all loads in flight at once (the ranking's
    // warp barriers would otherwise wait for each in turn).
    S raw[SRT_ITEMS];
    unsigned rank[SRT_ITEMS];
    const int wb = warp * 32 * SRT_ITEMS;
#pragma unroll
    for (int it = 0; it < SRT_ITEMS; it++) {
      const int li = wb + it * 32 + lane;
      raw[it] = li < cnt ? kin[ts + li] : (S)0;
    }
    for (int d = threadIdx.x; d < SRT_WARPS * 256; d += THREADS) wcount[d / 256][d % 256] = 0;
    __syncthreads();
    // Each warp ranks its 32*SRT_ITEMS keys, item by item, in input order.
#pragma unroll
    for (int it = 0; it < SRT_ITEMS; it++) {
      const int li = wb + it * 32 + lane;
      const bool ok = li < cnt;
      const unsigned d = ok ? radix_digit<T>(raw[it], shift, desc) : 0u;
      const unsigned peers = srt_peers(d, __ballot_sync(FULL_MASK, ok));
      const unsigned before = __popc(peers & ((1u << lane) - 1));
      const unsigned have = ok ? wcount[warp][d] : 0;
      __syncwarp();
      if (ok && before == 0) wcount[warp][d] = have + __popc(peers);
      __syncwarp();
      rank[it] = have + before;
    }
    __syncthreads();
    // Thread d: the warps' counts of digit d scanned, the tile's total, and
    // the digit's first place in the tile.
    {
      unsigned run = 0;
      for (int w = 0; w < SRT_WARPS; w++) {
        const unsigned c = wcount[w][threadIdx.x];
        wcount[w][threadIdx.x] = run;
        run += c;
      }
      ttotal[threadIdx.x] = run;
      unsigned all;
      tstart[threadIdx.x] = srt_scan_excl<unsigned>(run, wsum, &all);
    }
    __syncthreads();
#pragma unroll
    for (int it = 0; it < SRT_ITEMS; it++) {
      const int li = wb + it * 32 + lane;
      if (li < cnt) {
        const unsigned d = radix_digit<T>(raw[it], shift, desc);
        rank[it] += tstart[d] + wcount[warp][d];
        sbuf[rank[it]] = (u64)raw[it];
      }
    }
    __syncthreads();
    // Out in tile order: each digit's run lands contiguous.
    unsigned char dd[SRT_ITEMS];
#pragma unroll
    for (int m = 0; m < SRT_ITEMS; m++) {
      const int i = threadIdx.x + m * THREADS;
      dd[m] = 0;
      if (i < cnt) {
        const S r = (S)sbuf[i];
        const unsigned d = radix_digit<T>(r, shift, desc);
        dd[m] = (unsigned char)d;
        if (!(flags & SRT_NOKEYS)) kout[base[d] + (u64)(i - tstart[d])] = r;
      }
    }
    if (flags & SRT_VALUES) {
      __syncthreads();
#pragma unroll
      for (int it = 0; it < SRT_ITEMS; it++) {
        const int li = wb + it * 32 + lane;
        if (li < cnt) {
          const i64 gi = ts + li;
          u64 v;
          if (flags & SRT_IOTA)
            v = (u64)gi;
          else if (flags & SRT_VIN64)
            v = ((const u64*)vin)[gi];
          else
            v = ((const unsigned*)vin)[gi];
          sbuf[rank[it]] = v;
        }
      }
      __syncthreads();
#pragma unroll
      for (int m = 0; m < SRT_ITEMS; m++) {
        const int i = threadIdx.x + m * THREADS;
        if (i < cnt) {
          const unsigned d = dd[m];
          const u64 pos = base[d] + (u64)(i - tstart[d]);
          if (flags & SRT_VOUT64)
            ((u64*)vout)[pos] = sbuf[i];
          else
            ((unsigned*)vout)[pos] = (unsigned)sbuf[i];
        }
      }
    }
    __syncthreads();
    base[threadIdx.x] += ttotal[threadIdx.x];
  }
}

#define SORTK(T, S)                                                                                                \
  KERNEL gocuda_topk16_##S(T* dstv, i64* dsti, const T* x, i64 rows, i64 n, int k, int wpr, int flags) {           \
    topk_rows<T, 16>(dstv, dsti, x, rows, n, k, wpr, flags);                                                       \
  }                                                                                                                \
  KERNEL gocuda_topk32_##S(T* dstv, i64* dsti, const T* x, i64 rows, i64 n, int k, int wpr, int flags) {           \
    topk_rows<T, 32>(dstv, dsti, x, rows, n, k, wpr, flags);                                                       \
  }                                                                                                                \
  KERNEL gocuda_radixup_##S(u64* totals, const T* x, i64 n, i64 tpb, int flags) {                                  \
    radix_up<T>(totals, x, n, tpb, flags);                                                                         \
  }                                                                                                                \
  KERNEL gocuda_radixhist_##S(u64* counts, const u64* plan, i64 n, int slot, i64 tpb, int blocks) {                \
    radix_hist<T>(counts, plan, n, slot, tpb, blocks);                                                             \
  }                                                                                                                \
  KERNEL gocuda_radixscatter_##S(const u64* offs, const u64* plan, i64 n, int slot, i64 tpb, int blocks) {         \
    radix_scatter<T>(offs, plan, n, slot, tpb, blocks);                                                            \
  }                                                                                                                \
  KERNEL gocuda_sorttake_##S(T* vals, i64* idxo, const T* x, const i64* idx, i64 k) {                              \
    for (i64 j = global_tid(); j < k; j += global_stride()) {                                                      \
      const i64 i = idx[j];                                                                                        \
      if (vals != nullptr) vals[j] = x[i];                                                                         \
      if (idxo != nullptr) idxo[j] = i;                                                                            \
    }                                                                                                              \
  }

SORTK(float, f32)
SORTK(double, f64)
SORTK(int, i32)
SORTK(i64, i64)
SORTK(u8, u8)
SORTK(i8, i8)
SORTK(i16, i16)
SORTK(u32, u32)
