// harness_scansort.cpp: scan_sort.cuh's kernels on the emulator (included
// by harness.cpp), against plain loops: both scan paths with one chunk and
// several (and ragged tiles), every operation, the radix sort's passes over
// several blocks and tiles with NaN, ±Inf, -0 and ties (argsort's
// stability), the uint8 identity pass, descending keys, the one-block row
// sort with padding, and the take of TopK.
#include <algorithm>
#include <numeric>

template <class A>
A ref_op(int op, A a, A b) {
  switch (op) {
    case SCAN_SUM: return sc_add(a, b);
    case SCAN_PROD: return sc_mul(a, b);
    case SCAN_MAX: return (b > a || b != b) ? b : a;
    default: return (b < a || b != b) ? b : a;
  }
}

template <class T> T scan_rnd(int op) {
  // Products stay finite and exact-ish: values near 1 (floats) or small ints.
  if (op == SCAN_PROD) {
    if constexpr (sizeof(T) == 1) return (T)(1 + rng() % 3);
    else if constexpr (std::is_floating_point_v<T>) return (T)(0.9 + 0.2 * (double)(rng() % 1000) / 1000);
    else return (T)((int)(rng() % 5) - 2);
  }
  return rnd<T>();
}

// A scan of outer × n × inner by the plan scansort_gpu.go makes for it, with
// chunks given (1 means pass 2 alone).
template <class T, class A>
void test_scan(const char* name, void (*rows1)(u64*, const T*, i64, i64, i64, i64, int),
               void (*rows2)(T*, const T*, const u64*, i64, i64, i64, i64, int),
               void (*cols1)(u64*, const T*, i64, i64, i64, i64, i64, int),
               void (*cols2)(T*, const T*, const u64*, i64, i64, i64, i64, i64, int),
               void (*carry)(u64*, i64, i64, int), double rtol) {
  struct Case { i64 outer, n, inner, chunks; unsigned grid; };
  const Case cases[] = {{1, 1, 1, 1, 1}, {3, 17, 1, 1, 2}, {2, 5000, 1, 3, 4}, {5, 2049, 1, 1, 3}, {1, 4100, 1, 2, 1},
                        {1, 37, 300, 3, 5}, {2, 20, 5, 1, 1}, {3, 33, 7, 4, 3}, {1, 1, 9, 1, 1},
                        {2, 41, 12, 3, 2}, {1, 70, 8, 20, 3}, {1, 3, 2048, 1, 2}};
  // Columns also as 16-byte vectors (SCAN_VEC) where Go would pick them:
  // 4- and 8-byte elements, inner whole vectors (x and d are aligned).
  for (const Case& cs : cases) for (int vec = 0; vec < 2; vec++) for (int op = 0; op < 4; op++) {
    if (vec && (cs.inner == 1 || sizeof(T) < 4 || cs.inner % (16 / sizeof(T)) != 0)) continue;
    const i64 total = cs.outer * cs.n * cs.inner;
    Buf<T> x(total, false), d(total, false);
    for (i64 i = 0; i < total; i++) x.p[i] = scan_rnd<T>(op);
    if constexpr (std::is_floating_point_v<T>) {
      if (total > 10 && op >= SCAN_MAX) x.p[total / 2] = NAN;
      if (total > 12) x.p[1] = -0.0;
    }
    i64 L, c = cs.chunks;
    std::vector<u64> partials(8192);
    if (cs.inner == 1) {
      i64 tiles = ((cs.n + c - 1) / c + SCAN_TILE - 1) / SCAN_TILE;
      L = tiles * SCAN_TILE; c = (cs.n + L - 1) / L;
      if (c > 1) emu_launch(cs.grid, 256, [&] { rows1(partials.data(), x.p, cs.outer, cs.n, L, c, op); });
      emu_launch(cs.grid, 256, [&] { rows2(d.p, x.p, partials.data(), cs.outer, cs.n, L, c, op); });
    } else {
      L = (cs.n + c - 1) / c; c = (cs.n + L - 1) / L;
      const int kop = op | (vec ? SCAN_VEC : 0);
      if (c > 1) {
        emu_launch(cs.grid, 256, [&] { cols1(partials.data(), x.p, cs.outer, cs.n, cs.inner, L, c, kop); });
        emu_launch(2, 256, [&] { carry(partials.data(), cs.outer * cs.inner, c, op); });
      }
      emu_launch(cs.grid, 256, [&] { cols2(d.p, x.p, partials.data(), cs.outer, cs.n, cs.inner, L, c, kop); });
    }
    i64 bad = 0;
    for (i64 o = 0; o < cs.outer; o++) for (i64 i = 0; i < cs.inner; i++) {
      A acc = 0;
      for (i64 j = 0; j < cs.n; j++) {
        const i64 at = (o * cs.n + j) * cs.inner + i;
        acc = j == 0 ? (A)x.p[at] : ref_op(op, acc, (A)x.p[at]);
        const T want = (T)acc, got = d.p[at];
        bool ok = same(got, want);
        if (!ok && rtol > 0 && want == want) ok = fabs((double)got - (double)want) <= rtol * (1 + fabs((double)want));
        if constexpr (std::is_floating_point_v<T>)  // the sign of a zero survives a sum
          if (op == SCAN_SUM && j == 0 && want == 0) ok = ok && std::signbit(got) == std::signbit(want);
        if (!ok && bad++ < 3) printf("  %s op %d [%lld,%lld,%lld]: got %g want %g\n", name, op, o, j, i, (double)got, (double)want);
      }
    }
    CHECK(bad == 0 && d.guard_ok(), "%s op %d vec %d %lldx%lldx%lld chunks %lld: %lld wrong", name, op, vec, cs.outer, cs.n, cs.inner, c, bad);
  }
}

// The reference order: the kernels' key, then the position.
template <class T>
std::vector<i64> ref_argsort(const T* x, i64 n, bool desc) {
  std::vector<i64> idx(n);
  std::iota(idx.begin(), idx.end(), 0);
  typedef typename RK<T>::S S;
  std::stable_sort(idx.begin(), idx.end(), [&](i64 a, i64 b) {
    S sa, sb; memcpy(&sa, &x[a], sizeof(T)); memcpy(&sb, &x[b], sizeof(T));
    return sort_key<T>(sa, desc) < sort_key<T>(sb, desc);
  });
  return idx;
}

template <class T> T sort_rnd(i64 i, int kind) {
  if constexpr (std::is_floating_point_v<T>) {
    switch (rng() % 16) {
      case 0: return NAN;
      case 1: return -0.0;
      case 2: return 0.0;
      case 3: return INFINITY;
      case 4: return -INFINITY;
      case 5: return -NAN;
    }
    if (kind == 1) return (T)(int)(rng() % 7);  // many ties
    return rnd<T>();
  } else {
    if (kind == 1) return (T)(rng() % 7);
    return (T)rng();
  }
}

// LSD radix sort of n keys the way scansort_gpu.go's radix runs it.
template <class T>
void run_radix(void (*hist)(u64*, const T*, i64, int, i64, int),
               void (*scat)(T*, void*, const T*, const void*, const u64*, i64, int, i64, int),
               const T* x, T* keysOut, i64* idxOut, i64 n, bool desc, bool val64) {
  const i64 tiles = (n + RADIX_TILE - 1) / RADIX_TILE;
  i64 blocks = std::min<i64>(tiles, 2), tpb = (tiles + blocks - 1) / blocks;
  blocks = (tiles + tpb - 1) / tpb;
  int passes = (int)sizeof(T);
  const bool sortOnly = idxOut == nullptr;
  if (sortOnly && passes % 2 == 1 && keysOut == x) passes++;
  std::vector<T> tmp(n + 1), k1(n + 1);
  std::vector<u64> v0(n + 1), v1(n + 1);
  std::vector<u64> counts(256 * blocks);
  T* keys[2] = {tmp.data(), k1.data()};
  if (sortOnly) { keys[0] = tmp.data(); keys[1] = keysOut; if (passes % 2) std::swap(keys[0], keys[1]); }
  void* vals[2] = {v0.data(), v1.data()};
  for (int p = 0; p < passes; p++) {
    int f = desc ? RADIX_DESC : 0;
    const T* kin = p == 0 ? x : keys[(p - 1) % 2];
    T* kout = keys[p % 2];
    const void* vin = nullptr; void* vout = nullptr;
    if (!sortOnly) {
      f |= RADIX_VALUES;
      if (p == 0) f |= RADIX_IOTA; else { vin = vals[(p - 1) % 2]; if (val64) f |= RADIX_VIN64; }
      if (p == passes - 1) { vout = idxOut; kout = nullptr; f |= RADIX_VOUT64 | RADIX_NOKEYS; }
      else { vout = vals[p % 2]; if (val64) f |= RADIX_VOUT64; }
    }
    emu_launch((unsigned)blocks, 256, [&] { hist(counts.data(), kin, n, 8 * p, tpb, f); });
    emu_launch(1, 256, [&] { gocuda_radixoffsets_i64(counts.data(), (int)blocks); });
    emu_launch((unsigned)blocks, 256, [&] { scat(kout, vout, kin, vin, counts.data(), n, 8 * p, tpb, f); });
  }
}

template <class T>
void test_sort(const char* name, void (*hist)(u64*, const T*, i64, int, i64, int),
               void (*scat)(T*, void*, const T*, const void*, const u64*, i64, int, i64, int),
               void (*sortrows)(T*, i64*, const T*, i64, i64, i64, int), void (*take)(T*, i64*, const T*, const i64*, i64)) {
  // Radix: one tile, a ragged tile, tiles over two blocks (three tiles: the
  // second block has a short run).
  // (n, kind, desc): each thread is an OS thread, so few, chosen to reach
  // every path (ties and specials, both orders, 32- and 64-bit values).
  struct RC { i64 n; int kind, desc; };
  for (RC rc : {RC{1, 0, 0}, RC{300, 0, 1}, RC{300, 1, 0}, RC{4097, 0, 0}, RC{9000, 1, 1}}) {
    const i64 n = rc.n; const int kind = rc.kind, desc = rc.desc;
    Buf<T> x(n, false), d(n, false);
    Buf<i64> idx(n, false);
    for (i64 i = 0; i < n; i++) x.p[i] = sort_rnd<T>(i, kind);
    const std::vector<i64> want = ref_argsort(x.p, n, desc);
    run_radix<T>(hist, scat, x.p, nullptr, idx.p, n, desc, n == 300);
    i64 bad = 0;
    for (i64 i = 0; i < n; i++) if (idx.p[i] != want[i] && bad++ < 3) printf("  %s argsort n=%lld [%lld] = %lld want %lld\n", name, n, i, idx.p[i], want[i]);
    CHECK(bad == 0 && idx.guard_ok(), "radix argsort %s n=%lld kind %d desc %d: %lld wrong", name, n, kind, desc, bad);
    run_radix<T>(hist, scat, x.p, d.p, nullptr, n, desc, false);
    bad = 0;
    for (i64 i = 0; i < n; i++) if (memcmp(&d.p[i], &x.p[want[i]], sizeof(T)) != 0) bad++;
    CHECK(bad == 0 && d.guard_ok(), "radix sort %s n=%lld kind %d desc %d: %lld wrong", name, n, kind, desc, bad);
    // In place.
    std::vector<T> orig(x.p, x.p + n);
    run_radix<T>(hist, scat, x.p, x.p, nullptr, n, desc, false);
    bad = 0;
    for (i64 i = 0; i < n; i++) if (memcmp(&x.p[i], &orig[want[i]], sizeof(T)) != 0) bad++;
    CHECK(bad == 0 && x.guard_ok(), "radix sort in place %s n=%lld kind %d desc %d: %lld wrong", name, n, kind, desc, bad);
  }
  // A row a block, with padding (n not a power of 2), and the take.
  const i64 cap = sizeof(T) == 8 ? SORTROWS_CAP8 : SORTROWS_CAP4;
  for (i64 n : {1LL, 2LL, 5LL, 100LL, 1500LL, cap}) {
    const int desc = n % 2;
    const i64 rows = n > 1000 ? 2 : 5, k = n > 3 ? n / 3 : n;
    Buf<T> x(rows * n, false), v(rows * k, false), full(rows * n, false);
    Buf<i64> idx(rows * k, false);
    for (i64 i = 0; i < rows * n; i++) x.p[i] = sort_rnd<T>(i, (int)(i % 2));
    emu_launch(2, 256, [&] { sortrows(v.p, idx.p, x.p, rows, n, k, desc ? RADIX_DESC : 0); });
    emu_launch(2, 256, [&] { sortrows(full.p, nullptr, x.p, rows, n, n, desc ? RADIX_DESC : 0); });
    i64 bad = 0;
    for (i64 r = 0; r < rows; r++) {
      const std::vector<i64> want = ref_argsort(x.p + r * n, n, desc);
      for (i64 j = 0; j < k; j++) {
        if (idx.p[r * k + j] != want[j]) bad++;
        if (memcmp(&v.p[r * k + j], &x.p[r * n + want[j]], sizeof(T)) != 0) bad++;
      }
      for (i64 j = 0; j < n; j++) if (memcmp(&full.p[r * n + j], &x.p[r * n + want[j]], sizeof(T)) != 0) bad++;
    }
    CHECK(bad == 0 && v.guard_ok() && idx.guard_ok() && full.guard_ok(), "sortrows %s %lldx%lld k %lld desc %d: %lld wrong", name, rows, n, k, desc, bad);
  }
  {
    const i64 n = 777, k = 300;
    Buf<T> x(n, false), v(k, false);
    Buf<i64> order(n, false), idx(k, false);
    for (i64 i = 0; i < n; i++) { x.p[i] = sort_rnd<T>(i, 0); order.p[i] = (i * 7919) % n; }
    emu_launch(1, 256, [&] { take(v.p, idx.p, x.p, order.p, k); });
    i64 bad = 0;
    for (i64 j = 0; j < k; j++) if (idx.p[j] != order.p[j] || memcmp(&v.p[j], &x.p[order.p[j]], sizeof(T)) != 0) bad++;
    CHECK(bad == 0 && v.guard_ok() && idx.guard_ok(), "take %s: %lld wrong", name, bad);
  }
}

void test_scansort() {
  setvbuf(stdout, nullptr, _IONBF, 0);
  printf("scan_sort.cuh: scans\n");
  test_scan<float, double>("scan_f32", gocuda_scanrows_f32_pass1, gocuda_scanrows_f32_pass2, gocuda_scancols_f32_pass1, gocuda_scancols_f32_pass2, gocuda_scancolscarry_f32, 1e-6);
  test_scan<double, double>("scan_f64", gocuda_scanrows_f64_pass1, gocuda_scanrows_f64_pass2, gocuda_scancols_f64_pass1, gocuda_scancols_f64_pass2, gocuda_scancolscarry_f64, 1e-12);
  test_scan<int, int>("scan_i32", gocuda_scanrows_i32_pass1, gocuda_scanrows_i32_pass2, gocuda_scancols_i32_pass1, gocuda_scancols_i32_pass2, gocuda_scancolscarry_i32, 0);
  test_scan<i64, i64>("scan_i64", gocuda_scanrows_i64_pass1, gocuda_scanrows_i64_pass2, gocuda_scancols_i64_pass1, gocuda_scancols_i64_pass2, gocuda_scancolscarry_i64, 0);
  test_scan<u8, unsigned>("scan_u8", gocuda_scanrows_u8_pass1, gocuda_scanrows_u8_pass2, gocuda_scancols_u8_pass1, gocuda_scancols_u8_pass2, gocuda_scancolscarry_u8, 0);
  printf("scan_sort.cuh: sorts\n");
  printf("  %s\n", "f32");
  test_sort<float>("f32", gocuda_radix_f32_pass1, gocuda_radix_f32_pass2, gocuda_sortrows_f32, gocuda_topktake_f32);
  printf("  %s\n", "f64");
  test_sort<double>("f64", gocuda_radix_f64_pass1, gocuda_radix_f64_pass2, gocuda_sortrows_f64, gocuda_topktake_f64);
  printf("  %s\n", "i32");
  test_sort<int>("i32", gocuda_radix_i32_pass1, gocuda_radix_i32_pass2, gocuda_sortrows_i32, gocuda_topktake_i32);
  printf("  %s\n", "i64");
  test_sort<i64>("i64", gocuda_radix_i64_pass1, gocuda_radix_i64_pass2, gocuda_sortrows_i64, gocuda_topktake_i64);
  printf("  %s\n", "u8");
  test_sort<u8>("u8", gocuda_radix_u8_pass1, gocuda_radix_u8_pass2, gocuda_sortrows_u8, gocuda_topktake_u8);
}
