// harness_sort.h: sort.cuh's kernels on the emulator (included by
// harness.cpp), against std::stable_sort of the kernels' keys: the one-block
// row sort (padding, every row length class, grid-stride rows, k < n), the
// radix sort as scansort_gpu.go runs it (one tile, ragged tiles, several
// tiles a block and several blocks; random keys, ties, all-equal keys and
// keys whose high bytes are constant, so that passes are skipped; NaN, ±Inf,
// ±0; both orders; in place; 32- and 64-bit intermediate indices), the
// take of TopK and the small-k top-k kernels. EMU_SORT_ROWS=1 skips the
// radix sort and the take; EMU_ROWSORT=1 runs the row sort alone, with the
// variants exp/rowsort's bench sweeps (rowsort.cuh's row_sort).
#include <algorithm>
#include <numeric>

// The reference order: the kernels' key, then the position.
template <class T>
std::vector<i64> ref_argsort(const T* x, i64 n, bool desc) {
  std::vector<i64> idx(n);
  std::iota(idx.begin(), idx.end(), 0);
  typedef typename RK<T>::S S;
  std::stable_sort(idx.begin(), idx.end(), [&](i64 a, i64 b) {
    S sa, sb;
    memcpy(&sa, &x[a], sizeof(T));
    memcpy(&sb, &x[b], sizeof(T));
    return sort_key<T>(sa, desc) < sort_key<T>(sb, desc);
  });
  return idx;
}

// kind 0: any value (specials for floats); 1: many ties; 2: all equal;
// 3: small non-negative values (the high bytes constant: passes skipped).
template <class T>
T sort_rnd(int kind) {
  if (kind == 2) return (T)3;
  if (kind == 3) return (T)(rng() % 200);
  if constexpr (std::is_floating_point_v<T>) {
    switch (rng() % 16) {
      case 0: return NAN;
      case 1: return -0.0;
      case 2: return 0.0;
      case 3: return INFINITY;
      case 4: return -INFINITY;
      case 5: return -NAN;
    }
    if (kind == 1) return (T)((int)(rng() % 7) - 3);
    return rnd<T>() * (T)(1 << (rng() % 20));
  } else {
    if (kind == 1) return (T)((int)(rng() % 7) - 3);
    return (T)rng();
  }
}

template <class T>
struct SortKernels {
  void (*rowsort)(T*, i64*, const T*, i64, i64, i64, int);
  void (*up)(u64*, const T*, i64, i64, int);
  void (*hist)(u64*, const u64*, i64, int, i64, int);
  void (*scatter)(const u64*, const u64*, i64, int, i64, int);
  void (*take)(T*, i64*, const T*, const i64*, i64);
  void (*topk16)(T*, i64*, const T*, i64, i64, int, int, int);
  void (*topk32)(T*, i64*, const T*, i64, i64, int, int, int);
};

// The radix sort of n keys as scansort_gpu.go's radix runs it, with at most
// maxBlocks blocks: keysOut (a sort, may be x) or idxOut (an argsort).
template <class T>
void run_radix(const SortKernels<T>& K, const T* x, T* keysOut, i64* idxOut, i64 n, bool desc, bool val64,
               i64 maxBlocks) {
  const i64 tiles = (n + SRT_TILE - 1) / SRT_TILE;
  i64 blocks = std::min<i64>(tiles, maxBlocks), tpb = (tiles + blocks - 1) / blocks;
  blocks = (tiles + tpb - 1) / tpb;
  const int passes = (int)sizeof(T);
  std::vector<T> k0(n + 1), k1(n + 1);
  std::vector<u64> v0(n + 1), v1(n + 1), counts(256 * blocks), totals(SRT_SLOTS * 256, 0),
      plan(SRT_SLOTS * SRT_PLAN, 0x5a5a5a5a5a5a5a5aULL);
  int flags = desc ? SRT_DESC : 0;
  if (val64) flags |= SRT_VIN64;
  emu_launch((unsigned)blocks, 256, [&] { K.up(totals.data(), x, n, tpb, flags); });
  emu_launch(1, 256, [&] {
    gocuda_radixplan_i64(totals.data(), plan.data(), (u64)x, (u64)k0.data(), (u64)k1.data(), (u64)keysOut,
                         (u64)v0.data(), (u64)v1.data(), (u64)idxOut, n, passes, flags);
  });
  for (int slot = 0; slot <= passes; slot++) {
    emu_launch((unsigned)blocks, 256, [&] { K.hist(counts.data(), plan.data(), n, slot, tpb, (int)blocks); });
    emu_launch(slot % 2 + 1, 256, [&] { gocuda_radixoff_i64(counts.data(), totals.data(), plan.data(), slot, (int)blocks); });
    emu_launch((unsigned)blocks, 256, [&] { K.scatter(counts.data(), plan.data(), n, slot, tpb, (int)blocks); });
  }
}

template <class T>
void test_radix(const char* name, const SortKernels<T>& K) {
  struct RC {
    i64 n;
    int kind, desc;
    i64 maxBlocks;
  };
  // n: one key, a short tile, exactly one tile, a tile and one key, several
  // tiles over two and three blocks (a short last run).
  const RC cases[] = {{1, 0, 0, 2},        {300, 1, 1, 2},          {SRT_TILE, 3, 0, 1},
                      {SRT_TILE + 1, 0, 0, 2}, {13000, 0, 1, 2}, {5000, 2, 0, 2}};
  for (const RC& rc : cases) {
    const i64 n = rc.n;
    printf("    radix n=%lld kind %d desc %d\n", n, rc.kind, rc.desc);
    Buf<T> x(n, false), d(n, false);
    Buf<i64> idx(n, false);
    for (i64 i = 0; i < n; i++) x.p[i] = sort_rnd<T>(rc.kind);
    const std::vector<i64> want = ref_argsort(x.p, n, rc.desc);
    for (int v64 = 0; v64 < 2; v64++) {
      run_radix<T>(K, x.p, nullptr, idx.p, n, rc.desc, v64, rc.maxBlocks);
      i64 bad = 0;
      for (i64 i = 0; i < n; i++)
        if (idx.p[i] != want[i] && bad++ < 3) printf("  %s argsort n=%lld [%lld] = %lld want %lld\n", name, n, i, idx.p[i], want[i]);
      CHECK(bad == 0 && idx.guard_ok(), "radix argsort %s n=%lld kind %d desc %d val64 %d: %lld wrong", name, n, rc.kind,
            rc.desc, v64, bad);
    }
    run_radix<T>(K, x.p, d.p, nullptr, n, rc.desc, false, rc.maxBlocks);
    i64 bad = 0;
    for (i64 i = 0; i < n; i++)
      if (memcmp(&d.p[i], &x.p[want[i]], sizeof(T)) != 0) bad++;
    CHECK(bad == 0 && d.guard_ok(), "radix sort %s n=%lld kind %d desc %d: %lld wrong", name, n, rc.kind, rc.desc, bad);
    std::vector<T> orig(x.p, x.p + n);
    run_radix<T>(K, x.p, x.p, nullptr, n, rc.desc, false, rc.maxBlocks);
    bad = 0;
    for (i64 i = 0; i < n; i++)
      if (memcmp(&x.p[i], &orig[want[i]], sizeof(T)) != 0) bad++;
    CHECK(bad == 0 && x.guard_ok(), "radix sort in place %s n=%lld kind %d desc %d: %lld wrong", name, n, rc.kind,
          rc.desc, bad);
  }
}

// rowsortBlock is the block sort_gpu.go launches for rows of n: the
// fewest of 32, 64, 128, ... threads that hold n at `items` a thread.
static unsigned rowsortBlock(i64 n, int items) {
  unsigned b = 32;
  while ((i64)b * items < n) b <<= 1;
  return b;
}

// rowsort: the kernel to check (the production gocuda_rowsort_* or one of
// the bench's variants of row_sort) and its keys a thread.
template <class T>
void test_rowsort_kernel(const char* name, void (*rowsort)(T*, i64*, const T*, i64, i64, i64, int), int items,
                         int maxt) {
  const i64 cap = sizeof(T) == 8 ? ROWSORT_CAP8 : ROWSORT_CAP4;
  struct RC {
    i64 n, rows;
    unsigned grid;
    int kind;
  };
  // Every block size (32 to maxt threads), odd lengths, grid-stride rows,
  // ties, all keys equal and constant high bytes (passes that move nothing);
  // floats have NaNs, ±Inf and ±0 among them (sort_rnd).
  const RC cases[] = {{1, 3, 2, 0},    {5, 4, 3, 1},          {257, 2, 1, 0}, {600, 3, 2, 3},
                      {1500, 2, 1, 1}, {cap, 1, 1, 0},        {cap / 2 + 7, 1, 1, 2}, {cap - 5, 1, 1, 3},
                      {cap - 1, 3, 2, 3}};
  for (const RC& rc : cases) {
    for (int desc = 0; desc < 2; desc++) {
      if (rc.n >= cap / 2 && desc != (rc.kind == 0)) continue;  // the big rows once, one order each
      printf("    rowsort n=%lld desc %d\n", rc.n, desc);
      const i64 n = rc.n, rows = rc.rows, k = n > 3 ? n / 3 : n;
      Buf<T> x(rows * n, false), v(rows * k, false), full(rows * n, false);
      Buf<i64> idx(rows * k, false), fidx(rows * n, false);
      for (i64 i = 0; i < rows * n; i++) x.p[i] = sort_rnd<T>(rc.kind);
      const int f = desc ? SRT_DESC : 0;
      const unsigned block = rowsortBlock(n, items);
      if ((int)block > maxt) continue;
      emu_launch(rc.grid, block, [&] { rowsort(v.p, idx.p, x.p, rows, n, k, f); });
      emu_launch(rc.grid, block, [&] { rowsort(full.p, nullptr, x.p, rows, n, n, f); });
      emu_launch(rc.grid, block, [&] { rowsort(nullptr, fidx.p, x.p, rows, n, n, f); });
      i64 bad = 0;
      for (i64 r = 0; r < rows; r++) {
        const std::vector<i64> want = ref_argsort(x.p + r * n, n, desc);
        for (i64 j = 0; j < k; j++) {
          if (idx.p[r * k + j] != want[j]) bad++;
          if (memcmp(&v.p[r * k + j], &x.p[r * n + want[j]], sizeof(T)) != 0) bad++;
        }
        for (i64 j = 0; j < n; j++) {
          if (memcmp(&full.p[r * n + j], &x.p[r * n + want[j]], sizeof(T)) != 0) bad++;
          if (fidx.p[r * n + j] != want[j] && bad++ < 3)
            printf("  %s rowsort n=%lld row %lld [%lld] = %lld want %lld\n", name, n, r, j, fidx.p[r * n + j], want[j]);
        }
      }
      CHECK(bad == 0 && v.guard_ok() && idx.guard_ok() && full.guard_ok() && fidx.guard_ok(),
            "rowsort %s %lldx%lld k %lld desc %d kind %d: %lld wrong", name, rows, n, k, desc, rc.kind, bad);
    }
  }
}

// The production row sort, as sort_gpu.go launches it.
template <class T>
void test_rowsort(const char* name, const SortKernels<T>& K) {
  test_rowsort_kernel<T>(name, K.rowsort, RS_ITEMS, RS_MAXT);
}

template <class T>
void test_take(const char* name, const SortKernels<T>& K) {
  const i64 n = 777, k = 300;
  Buf<T> x(n, false), v(k, false);
  Buf<i64> order(n, false), idx(k, false);
  for (i64 i = 0; i < n; i++) {
    x.p[i] = sort_rnd<T>(0);
    order.p[i] = (i * 7919) % n;
  }
  emu_launch(1, 256, [&] { K.take(v.p, idx.p, x.p, order.p, k); });
  i64 bad = 0;
  for (i64 j = 0; j < k; j++)
    if (idx.p[j] != order.p[j] || memcmp(&v.p[j], &x.p[order.p[j]], sizeof(T)) != 0) bad++;
  CHECK(bad == 0 && v.guard_ok() && idx.guard_ok(), "take %s: %lld wrong", name, bad);
}

// The top-k kernels against the reference argsort's first k: every group
// size (1 to 8 warps a row), grid-stride rows with a last group past the
// rows, k = 1, k = KMAX and k = n, a row shorter than a warp, both orders,
// ties and specials, rising runs, either output alone.
template <class T>
void test_topk(const char* name, const SortKernels<T>& K) {
  struct TC {
    i64 rows, n;
    int k, kmax, wpr;
    unsigned grid;
    int kind, desc;
  };
  const TC cases[] = {{5, 300, 10, 16, 1, 1, 0, 1}, {9, 70, 16, 16, 1, 1, 1, 0},  {3, 1000, 32, 32, 2, 1, 0, 0},
                      {7, 999, 1, 16, 4, 1, 1, 1},   {2, 3001, 20, 32, 8, 2, 0, 1}, {4, 7, 7, 16, 2, 1, 0, 0},
                      {3, 13, 13, 32, 1, 1, 1, 1},   {2, 400, 5, 16, 8, 1, 2, 0},  {3, 2000, 12, 16, 1, 2, 4, 1},
                      {2, 1500, 32, 32, 2, 1, 4, 0}};
  for (const TC& c : cases) {
    printf("    topk%d rows %lld n=%lld k=%d wpr %d kind %d desc %d\n", c.kmax, c.rows, c.n, c.k, c.wpr, c.kind, c.desc);
    const i64 rows = c.rows, n = c.n, k = c.k;
    Buf<T> x(rows * n, false), v(rows * k, false), v2(rows * k, false);
    Buf<i64> idx(rows * k, false), idx2(rows * k, false);
    // kind 4: rising runs (each element passes the lists' bounds in a
    // descending top-k, and the tau bound turns over often).
    for (i64 i = 0; i < rows * n; i++) x.p[i] = c.kind == 4 ? (T)((i % n) % 113) : sort_rnd<T>(c.kind);
    auto kern = c.kmax == 16 ? K.topk16 : K.topk32;
    const int f = c.desc ? SRT_DESC : 0;
    emu_launch(c.grid, 256, [&] { kern(v.p, idx.p, x.p, rows, n, c.k, c.wpr, f); });
    emu_launch(c.grid, 256, [&] { kern(v2.p, nullptr, x.p, rows, n, c.k, c.wpr, f); });
    emu_launch(c.grid, 256, [&] { kern(nullptr, idx2.p, x.p, rows, n, c.k, c.wpr, f); });
    i64 bad = 0;
    for (i64 r = 0; r < rows; r++) {
      const std::vector<i64> want = ref_argsort(x.p + r * n, n, c.desc);
      for (i64 j = 0; j < k; j++) {
        if ((idx.p[r * k + j] != want[j] || idx2.p[r * k + j] != want[j]) && bad++ < 3)
          printf("  %s topk row %lld [%lld] = %lld want %lld\n", name, r, j, idx.p[r * k + j], want[j]);
        if (memcmp(&v.p[r * k + j], &x.p[r * n + want[j]], sizeof(T)) != 0) bad++;
        if (memcmp(&v2.p[r * k + j], &x.p[r * n + want[j]], sizeof(T)) != 0) bad++;
      }
    }
    CHECK(bad == 0 && v.guard_ok() && idx.guard_ok() && v2.guard_ok() && idx2.guard_ok(),
          "topk%d %s %lldx%lld k %d wpr %d desc %d kind %d: %lld wrong", c.kmax, name, rows, n, c.k, c.wpr, c.desc, c.kind,
          bad);
  }
}

// The bench's (exp/rowsort) variants of the row sort besides the production
// one: 8 keys a thread in blocks of up to 512 threads, and peers found with
// __match_any_sync.
template <class T, int MAXT, int ITEMS, bool MATCH>
void emu_rowsort_variant(T* v, i64* i, const T* x, i64 rows, i64 n, i64 k, int f) {
  row_sort<T, MAXT, ITEMS, MATCH>(v, i, x, rows, n, k, f);
}

template <class T>
void test_rowsort_variants(const char* name) {
  printf("  %s row sort variants: 8 keys a thread, ballots\n", name);
  test_rowsort_kernel<T>(name, emu_rowsort_variant<T, 512, 8, false>, 8, 512);
  printf("  %s row sort variants: 16 keys a thread, match_any\n", name);
  test_rowsort_kernel<T>(name, emu_rowsort_variant<T, 256, 16, true>, 16, 256);
}

template <class T>
void test_sort_type(const char* name, const SortKernels<T>& K) {
  printf("  %s\n", name);
  if (getenv("EMU_ROWSORT") != nullptr) {  // the row sort alone, and its variants
    test_rowsort<T>(name, K);
    test_rowsort_variants<T>(name);
    return;
  }
  test_topk<T>(name, K);
  test_rowsort<T>(name, K);
  if (getenv("EMU_SORT_ROWS") != nullptr) return;  // the row kernels only
  test_radix<T>(name, K);
  test_take<T>(name, K);
}

void test_sort_all() {
  setvbuf(stdout, nullptr, _IONBF, 0);
  printf("sort.cuh: sorts\n");
#define SK(S) {gocuda_rowsort_##S, gocuda_radixup_##S, gocuda_radixhist_##S, gocuda_radixscatter_##S, gocuda_sorttake_##S, gocuda_topk16_##S, gocuda_topk32_##S}
  test_sort_type<float>("f32", SortKernels<float>SK(f32));
  test_sort_type<double>("f64", SortKernels<double>SK(f64));
  test_sort_type<int>("i32", SortKernels<int>SK(i32));
  test_sort_type<i64>("i64", SortKernels<i64>SK(i64));
  test_sort_type<u8>("u8", SortKernels<u8>SK(u8));
#undef SK
}
