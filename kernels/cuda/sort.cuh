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
// or ROWSORT_CAP8 (8-byte) elements in one block of P/8 threads (P the row
// padded to a power of two, at least 256): a bitonic sort of (key, index)
// entries, which is stable because no two entries are equal (padding gets
// the largest key and an index past the row). A thread holds 8 consecutive
// entries in registers: strides below 8 are exchanges within a thread,
// strides 8 to 128 warp shuffles, and only strides of 256 and more go
// through shared memory. For 32-bit and 8-bit keys an entry is one u64,
// key << 32 | index. The block writes the row's first k (k = n for a sort)
// through shared memory, coalesced; values are the row's bits (kept in
// shared memory) taken by index, so they keep their bits.
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
//     warp ranks its keys with __match_any_sync and per-warp counters, the
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
#define ROWSORT_ITEMS 8
#define ROWSORT_MAXT (ROWSORT_CAP4 / ROWSORT_ITEMS)

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

// ---------------------------------------------------------------------------
// A row a block: bitonic sort of (key, index) entries.

// SEnt is an entry: for narrow keys (W false) k = key << 32 | index and i
// is unused; for 64-bit keys k is the key and i the index.
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

// rs_sw swizzles an entry's slot in shared memory: bits 4-6 (a warp's
// lanes 1-3 when a thread's 8 entries are stored) are xored into bits 0-2,
// so that a warp storing or loading slot s of its threads' entries hits
// distinct banks. It permutes each group of 8 slots, so a thread's own 8
// entries stay its own.
__device__ __forceinline__ int rs_sw(int i) { return i ^ ((i >> 4) & 7); }

template <class T>
__device__ void row_sort(T* dstv, i64* dsti, const T* x, i64 rows, i64 n, i64 k, int flags) {
  typedef typename RK<T>::S S;
  constexpr bool W = RK<T>::BITS == 64;
  constexpr int CAP = W ? ROWSORT_CAP8 : ROWSORT_CAP4;
  // shk: the entries' keys; aux: their indices (64-bit keys) and the row's
  // bits, for the values out. 48 KB in all for 4-byte types, the most
  // static shared memory a kernel may have.
  __shared__ u64 shk[CAP];
  __shared__ u64 aux[W ? CAP * 3 / 2 : CAP / 2];
  unsigned* const shi = (unsigned*)aux;
  S* const sraw = W ? (S*)(aux + CAP / 2) : (S*)aux;
  const int B = blockDim.x, P = B * ROWSORT_ITEMS, tid = threadIdx.x;
  const bool desc = flags & SRT_DESC;
  auto put = [&](int at, const SEnt<W>& e) {
    shk[at] = e.k;
    if constexpr (W) shi[at] = e.i;
  };
  auto get = [&](int at) {
    SEnt<W> e;
    e.k = shk[at];
    if constexpr (W)
      e.i = shi[at];
    else
      e.i = 0;
    return e;
  };
  for (i64 r = blockIdx.x; r < rows; r += gridDim.x) {
    const S* row = (const S*)x + r * n;
    SEnt<W> e[ROWSORT_ITEMS];
#pragma unroll
    for (int s = 0; s < ROWSORT_ITEMS; s++) {
      const unsigned i = tid * ROWSORT_ITEMS + s;
      // Padding: the largest key, an index past the row.
      u64 key = ~0ULL;
      if (i < n) {
        const S b = row[i];
        sraw[i] = b;
        key = (u64)sort_key<T>(b, desc);
      }
      if constexpr (W) {
        e[s].k = key;
        e[s].i = i;
      } else {
        e[s].k = (key << 32) | i;
        e[s].i = 0;
      }
    }
    for (int kk = 2; kk <= P; kk <<= 1) {
      int j = kk >> 1;
      if (j >= 256) {
        // Strides past a warp's entries: through shared memory.
#pragma unroll
        for (int s = 0; s < ROWSORT_ITEMS; s++) put(rs_sw(tid * ROWSORT_ITEMS + s), e[s]);
        __syncthreads();
        for (; j >= 256; j >>= 1) {
#pragma unroll
          for (int m = 0; m < ROWSORT_ITEMS / 2; m++) {  // P/2 pairs, B threads
            const int p = tid + m * B;
            const int i = ((p & ~(j - 1)) << 1) | (p & (j - 1)), l = i | j;
            const bool up = (i & kk) == 0;
            const SEnt<W> a = get(rs_sw(i)), b = get(rs_sw(l));
            if (up ? se_less(b, a) : se_less(a, b)) {
              put(rs_sw(i), b);
              put(rs_sw(l), a);
            }
          }
          __syncthreads();
        }
#pragma unroll
        for (int s = 0; s < ROWSORT_ITEMS; s++) e[s] = get(rs_sw(tid * ROWSORT_ITEMS + s));
        // No barrier: until the next barrier each thread touches only its
        // own 8 slots.
      }
      for (; j >= ROWSORT_ITEMS; j >>= 1) {
        // Partner entries in lane ^ j/8, same slot.
        const int m = j / ROWSORT_ITEMS;
        const bool keepMin = ((tid & m) == 0) == (((tid * ROWSORT_ITEMS) & kk) == 0);
#pragma unroll
        for (int s = 0; s < ROWSORT_ITEMS; s++) {
          const SEnt<W> p = se_shfl_xor(e[s], m);
          if (keepMin ? se_less(p, e[s]) : se_less(e[s], p)) e[s] = p;
        }
      }
      // Strides 4, 2, 1: within the thread (unrolled so that the entries
      // stay in registers).
#pragma unroll
      for (int jb = 2; jb >= 0; jb--) {
        const int jj = 1 << jb;
        if (jj >= kk) continue;
#pragma unroll
        for (int s = 0; s < ROWSORT_ITEMS; s++) {
          if (s & jj) continue;
          const bool up = ((tid * ROWSORT_ITEMS + s) & kk) == 0;
          if (up ? se_less(e[s | jj], e[s]) : se_less(e[s], e[s | jj])) {
            const SEnt<W> t = e[s];
            e[s] = e[s | jj];
            e[s | jj] = t;
          }
        }
      }
    }
    // The first k, coalesced, through shared memory.
#pragma unroll
    for (int s = 0; s < ROWSORT_ITEMS; s++) put(rs_sw(tid * ROWSORT_ITEMS + s), e[s]);
    __syncthreads();
    for (int i = tid; i < k; i += B) {
      const unsigned at = se_index(get(rs_sw(i)));
      if (dsti != nullptr) dsti[r * k + i] = at;
      if (dstv != nullptr) ((S*)dstv)[r * k + i] = sraw[at];
    }
    __syncthreads();
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
  for (i64 i = start + threadIdx.x; i < end; i += THREADS) {
    const typename RK<T>::K key = sort_key<T>(x[i], desc);
#pragma unroll
    for (int p = 0; p < PASSES; p++) atomicAdd(&h[p][(unsigned)(key >> (8 * p)) & 255u], 1u);
  }
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
  for (i64 i = start + threadIdx.x; i < end; i += THREADS) atomicAdd(&h[radix_digit<T>(x[i], 8 * slot, desc)], 1u);
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
    for (int d = threadIdx.x; d < SRT_WARPS * 256; d += THREADS) wcount[d / 256][d % 256] = 0;
    __syncthreads();
    // Each warp ranks its 32*SRT_ITEMS keys, item by item, in input order.
    S raw[SRT_ITEMS];
    unsigned rank[SRT_ITEMS];
    const int wb = warp * 32 * SRT_ITEMS;
#pragma unroll
    for (int it = 0; it < SRT_ITEMS; it++) {
      const int li = wb + it * 32 + lane;
      const bool ok = li < cnt;
      raw[it] = ok ? kin[ts + li] : (S)0;
      const unsigned d = ok ? radix_digit<T>(raw[it], shift, desc) : 256u;
      const unsigned peers = __match_any_sync(FULL_MASK, d);
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
  extern "C" __global__ void __launch_bounds__(ROWSORT_MAXT)                                                       \
      gocuda_rowsort_##S(T* dstv, i64* dsti, const T* x, i64 rows, i64 n, i64 k, int flags) {                      \
    row_sort<T>(dstv, dsti, x, rows, n, k, flags);                                                                 \
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
