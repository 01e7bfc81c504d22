// harness_scansort.cpp: scan_sort.cuh's kernels on the emulator (included
// by harness.cpp), against plain loops: both scan paths with one chunk and
// several (and ragged tiles), every operation. The sorts' checks are in
// harness_sort.h.
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

void test_scansort() {
  setvbuf(stdout, nullptr, _IONBF, 0);
  printf("scan_sort.cuh: scans\n");
  test_scan<float, double>("scan_f32", gocuda_scanrows_f32_pass1, gocuda_scanrows_f32_pass2, gocuda_scancols_f32_pass1, gocuda_scancols_f32_pass2, gocuda_scancolscarry_f32, 1e-6);
  test_scan<double, double>("scan_f64", gocuda_scanrows_f64_pass1, gocuda_scanrows_f64_pass2, gocuda_scancols_f64_pass1, gocuda_scancols_f64_pass2, gocuda_scancolscarry_f64, 1e-12);
  test_scan<int, int>("scan_i32", gocuda_scanrows_i32_pass1, gocuda_scanrows_i32_pass2, gocuda_scancols_i32_pass1, gocuda_scancols_i32_pass2, gocuda_scancolscarry_i32, 0);
  test_scan<i64, i64>("scan_i64", gocuda_scanrows_i64_pass1, gocuda_scanrows_i64_pass2, gocuda_scancols_i64_pass1, gocuda_scancols_i64_pass2, gocuda_scancolscarry_i64, 0);
  test_scan<u8, unsigned>("scan_u8", gocuda_scanrows_u8_pass1, gocuda_scanrows_u8_pass2, gocuda_scancols_u8_pass1, gocuda_scancols_u8_pass2, gocuda_scancolscarry_u8, 0);
}
