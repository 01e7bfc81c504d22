// harness.cpp runs kernels.cu's kernels on the CPU (emu.h) and checks them
// against plain loops: indexing, the vector path and its tail, unaligned
// views, guards past the end, both passes of the reductions, the row
// reductions, the strided binary kernels in each mode, and every kernel
// generated from the table of elementwise operations (optable_check.h). It
// checks the CUDA source's logic without a GPU or nvcc; it says nothing
// about speed, and math functions are the C library's, not CUDA's. Run it
// with run.sh.
#include "emu.h"
#include "kernels_emu.cu"
#include <cstdio>
#include <cstdlib>
#include <random>
#include <functional>

static int failures = 0;
static std::mt19937_64 rng(42);
#define CHECK(cond, ...) do { if (!(cond)) { failures++; if (failures < 30) { printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } } while (0)

const int SMS = 1;

// EMU_ONLY (a comma-separated list of group names, as run.sh passes its
// arguments) runs only those groups of checks: the whole harness takes
// minutes on a small machine. Unset or empty runs every group.
static bool emu_want(const char* group) {
  const char* only = getenv("EMU_ONLY");
  if (!only || !*only) return true;
  const size_t n = strlen(group);
  for (const char* p = only; *p;) {
    const char* e = strchr(p, ',');
    const size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len == n && strncmp(p, group, n) == 0) return true;
    if (!e) break;
    p = e + 1;
  }
  return false;
}
unsigned egrid(long long n, int size) {
  long long per = 16 / size, vecs = (n + per - 1) / per, b = (vecs + 255) / 256;
  if (b > SMS * 8) b = SMS * 8;
  return b < 1 ? 1 : (unsigned)b;
}
unsigned rgrid(long long n) {
  long long per = 256 * 16, b = (n + per - 1) / per;
  if (b > SMS * 4) b = SMS * 4;  // reduceGrid: reduceBlocksPerSM resident blocks an SM
  return b < 1 ? 1 : (unsigned)b;
}

// A buffer with room for an offset and a guard.
template <class T>
struct Buf {
  std::vector<unsigned char> mem;
  T* p;
  long long n;
  Buf(long long n_, bool off) : mem((n_ + 40) * sizeof(T) + 64, 0xA5), n(n_) {
    uintptr_t a = ((uintptr_t)mem.data() + 255) & ~(uintptr_t)255;
    if (a + (n_ + 20) * sizeof(T) > (uintptr_t)mem.data() + mem.size()) { mem.resize(mem.size() + 256); }
    a = ((uintptr_t)mem.data() + 15) & ~(uintptr_t)15;
    p = (T*)a + (off ? 1 : 0);
  }
  bool guard_ok() const {
    const unsigned char* g = (const unsigned char*)(p + n);
    for (size_t i = 0; i < 8 * sizeof(T); i++) if (g[i] != 0xA5) return false;
    return true;
  }
};

template <class T> T rnd();
template <> float rnd<float>() { return std::uniform_real_distribution<float>(-8, 8)(rng); }
template <> double rnd<double>() { return std::uniform_real_distribution<double>(-8, 8)(rng); }
template <> int rnd<int>() { return (int)(rng() % 17) - 8; }
template <> i64 rnd<i64>() { return (i64)(rng() % 17) - 8; }
template <> u8 rnd<u8>() { return (u8)rng(); }
template <> c64 rnd<c64>() { return c64{rnd<float>(), rnd<float>()}; }

template <class T> bool same(T a, T b) { return memcmp(&a, &b, sizeof(T)) == 0 || (a != a && b != b); }
template <> bool same(c64 a, c64 b) { return same(a.re, b.re) && same(a.im, b.im); }

const long long sizes[] = {1, 3, 17, 1000, 4099, 70001};

template <class T, class F>
void test_binary(const char* name, void (*k)(T*, const T*, const T*, i64), F ref) {
  for (long long n : sizes)
    for (int lay = 0; lay < 3; lay++) {
      Buf<T> a(n, lay >= 1), b(n, lay >= 1), d(n, lay == 2);
      for (long long i = 0; i < n; i++) a.p[i] = rnd<T>(), b.p[i] = rnd<T>();
      emu_launch(egrid(n, sizeof(T)), 256, [&] { k(d.p, a.p, b.p, n); });
      long long bad = 0;
      for (long long i = 0; i < n; i++) if (!same(d.p[i], ref(a.p[i], b.p[i]))) bad++;
      CHECK(bad == 0 && d.guard_ok(), "%s n=%lld layout=%d: %lld wrong, guard %d", name, n, lay, bad, d.guard_ok());
    }
}

template <class T>
void test_fill(const char* name, void (*k)(T*, u64, i64)) {
  for (long long n : sizes)
    for (int off = 0; off < 2; off++) {
      Buf<T> d(n, off);
      T v = rnd<T>();
      u64 bits = 0;
      memcpy(&bits, &v, sizeof(T));
      emu_launch(egrid(n, sizeof(T)), 256, [&] { k(d.p, bits, n); });
      long long bad = 0;
      for (long long i = 0; i < n; i++) if (!same(d.p[i], v)) bad++;
      CHECK(bad == 0 && d.guard_ok(), "%s n=%lld off=%d: %lld wrong", name, n, off, bad);
    }
}

template <class T, class F>
void test_scalar(const char* name, void (*k)(T*, const T*, u64, i64), F ref) {
  for (long long n : sizes)
    for (int off = 0; off < 2; off++) {
      Buf<T> a(n, off), d(n, false);
      for (long long i = 0; i < n; i++) a.p[i] = rnd<T>();
      T s = rnd<T>();
      u64 bits = 0;
      memcpy(&bits, &s, sizeof(T));
      emu_launch(egrid(n, sizeof(T)), 256, [&] { k(d.p, a.p, bits, n); });
      long long bad = 0;
      for (long long i = 0; i < n; i++) if (!same(d.p[i], ref(a.p[i], s))) bad++;
      CHECK(bad == 0 && d.guard_ok(), "%s n=%lld off=%d: %lld wrong", name, n, off, bad);
    }
}

template <class T, class F>
void test_unary(const char* name, void (*k)(T*, const T*, i64), F ref) {
  for (long long n : sizes)
    for (int off = 0; off < 2; off++) {
      Buf<T> a(n, off), d(n, false);
      for (long long i = 0; i < n; i++) a.p[i] = rnd<T>();
      emu_launch(egrid(n, sizeof(T)), 256, [&] { k(d.p, a.p, n); });
      long long bad = 0;
      for (long long i = 0; i < n; i++) if (!same(d.p[i], ref(a.p[i]))) bad++;
      CHECK(bad == 0 && d.guard_ok(), "%s n=%lld off=%d: %lld wrong", name, n, off, bad);
    }
}

// Two-pass reduction as the Go side runs it.
template <class T, class A>
A run_reduce(void (*p1)(const T*, i64, A*), void (*p2)(const A*, int, A*), const T* x, long long n) {
  std::vector<A> parts(4096), out(1);
  unsigned g = rgrid(n);
  if (g == 1) {
    emu_launch(1, 256, [&] { p1(x, n, out.data()); });
  } else {
    emu_launch(g, 256, [&] { p1(x, n, parts.data()); });
    emu_launch(1, 256, [&] { p2(parts.data(), (int)g, out.data()); });
  }
  return out[0];
}


// The network layers: AddRowVec, SumCols, SoftmaxXent, against loops in
// double, on shapes with one row or column, a partial warp of columns,
// more columns than a block's 32-column tile, and more rows than warps.
unsigned rows_grid(long long rows) {
  long long b = (rows + 7) / 8;
  if (b > SMS * 8) b = SMS * 8;
  return b < 1 ? 1 : (unsigned)b;
}
unsigned cols_grid(long long cols) {
  long long b = (cols + 31) / 32;
  if (b > SMS * 8) b = SMS * 8;
  return b < 1 ? 1 : (unsigned)b;
}

template <class T>
void test_nn(const char* name, void (*addrow)(T*, const T*, const T*, i64, i64),
             void (*sumcols1)(T*, double*, const T*, i64, i64, i64), void (*sumcols2)(T*, const double*, i64, i64),
             void (*xent)(T*, T*, const T*, const int*, i64, i64, u64), double tol) {
  const std::vector<std::pair<long long, long long>> shapes = {{1, 1}, {3, 10}, {70, 33}, {5, 300}, {300, 7}, {0, 5}};
  for (auto sh : shapes) {
    const long long rows = sh.first, cols = sh.second;
    Buf<T> x(rows * cols, true), b(cols, false), d(rows * cols, false), s(cols, true);
    for (long long i = 0; i < rows * cols; i++) x.p[i] = rnd<T>();
    for (long long i = 0; i < cols; i++) b.p[i] = rnd<T>();
    emu_launch(rows_grid(rows), 256, [&] { addrow(d.p, x.p, b.p, rows, cols); });
    long long bad = 0;
    for (long long r = 0; r < rows; r++)
      for (long long c = 0; c < cols; c++)
        if (!same(d.p[r * cols + c], (T)(x.p[r * cols + c] + b.p[c]))) bad++;
    CHECK(bad == 0 && d.guard_ok(), "addrowvec_%s %lldx%lld: %lld wrong", name, rows, cols, bad);

    // SumCols: one chunk on the grid Go gives it and on fewer blocks than
    // tiles (blocks stride over them), then 3 and 7 chunks of rows (pass 2
    // adds them), some of them empty when there are fewer rows than chunks.
    const long long tiles = (cols + 31) / 32;
    const std::vector<std::pair<unsigned, long long>> sc_grids = {
        {cols_grid(cols), 1}, {2, 1}, {(unsigned)(tiles * 3), 3}, {(unsigned)(tiles * 7), 7}};
    for (auto g : sc_grids) {
      const long long chunks = g.second;
      Buf<double> parts(chunks * cols, false);
      for (long long c = 0; c < cols; c++) s.p[c] = (T)-1;
      emu_launch(g.first, 256, [&] { sumcols1(s.p, parts.p, x.p, rows, cols, chunks); });
      if (chunks > 1) emu_launch(cols_grid(cols), 256, [&] { sumcols2(s.p, parts.p, cols, chunks); });
      bad = 0;
      for (long long c = 0; c < cols; c++) {
        double want = 0;
        for (long long r = 0; r < rows; r++) want += x.p[r * cols + c];
        if (fabs(s.p[c] - want) > tol * (1 + fabs(want))) bad++;
      }
      CHECK(bad == 0 && s.guard_ok() && parts.guard_ok(), "sumcols_%s %lldx%lld, grid %u, %lld chunks: %lld wrong", name,
            rows, cols, g.first, chunks, bad);
    }

    // In place: AddRowVec with dst == x.
    std::vector<T> x0(x.p, x.p + rows * cols);
    emu_launch(rows_grid(rows), 256, [&] { addrow(x.p, x.p, b.p, rows, cols); });
    bad = 0;
    for (long long i = 0; i < rows * cols; i++) if (!same(x.p[i], (T)(x0[i] + b.p[i % cols]))) bad++;
    CHECK(bad == 0 && x.guard_ok(), "addrowvec_%s in place %lldx%lld: %lld wrong", name, rows, cols, bad);
  }

  // Softmax cross-entropy, with logits large enough that exp without the
  // row maximum would overflow float32, and one bad label.
  for (auto sh : std::vector<std::pair<long long, long long>>{{1, 1}, {4, 3}, {37, 10}, {9, 100}, {3, 70}}) {
    const long long rows = sh.first, cols = sh.second;
    Buf<T> x(rows * cols, false), loss(rows, true), dx(rows * cols, true), loss2(rows, false);
    Buf<int> lab(rows, false);
    for (long long i = 0; i < rows * cols; i++) x.p[i] = rnd<T>() * (T)(i % 3 == 0 ? 20 : 1);
    for (long long r = 0; r < rows; r++) lab.p[r] = (int)(rng() % cols);
    if (rows > 2) lab.p[rows - 1] = (int)cols;  // out of range
    const T scale = (T)1 / (T)rows;
    u64 bits = 0;
    memcpy(&bits, &scale, sizeof(T));
    emu_launch(rows_grid(rows), 256, [&] { xent(loss.p, dx.p, x.p, lab.p, rows, cols, bits); });
    emu_launch(rows_grid(rows), 256, [&] { xent(loss2.p, nullptr, x.p, lab.p, rows, cols, bits); });
    long long bad = 0;
    for (long long r = 0; r < rows; r++) {
      const T* row = x.p + r * cols;
      double m = -INFINITY, sum = 0;
      for (long long c = 0; c < cols; c++) m = fmax(m, (double)row[c]);
      for (long long c = 0; c < cols; c++) sum += exp((double)row[c] - m);
      const int l = lab.p[r];
      const bool valid = l >= 0 && l < cols;
      if (!valid) {
        if (loss.p[r] == loss.p[r] || loss2.p[r] == loss2.p[r]) bad++;
        for (long long c = 0; c < cols; c++) if (dx.p[r * cols + c] == dx.p[r * cols + c]) bad++;
        continue;
      }
      const double want = m + log(sum) - row[l];
      if (fabs(loss.p[r] - want) > tol * (1 + fabs(want)) || !same(loss.p[r], loss2.p[r])) bad++;
      for (long long c = 0; c < cols; c++) {
        const double g = (exp((double)row[c] - m) / sum - (c == l ? 1 : 0)) * (double)scale;
        if (fabs(dx.p[r * cols + c] - g) > tol) bad++;
      }
    }
    CHECK(bad == 0 && loss.guard_ok() && dx.guard_ok() && loss2.guard_ok(), "softmaxxent_%s %lldx%lld: %lld wrong", name,
          rows, cols, bad);
  }
}

// Strided binary kernels: every mode against a loop over the padded
// 6-dimensional layout, with grids small enough that the general mode's
// carries and the row/column index math run many times per thread.

template <class T, class K>
void launch_strided(K k, T* dst, const T* a, const T* b, i64 n, int mode, const i64* d, const i64* sa, const i64* sb,
                    unsigned grid) {
  emu_launch(grid, 256, [&] {
    k(dst, a, b, n, mode, d[0], d[1], d[2], d[3], d[4], d[5], sa[0], sa[1], sa[2], sa[3], sa[4], sa[5], sb[0], sb[1],
      sb[2], sb[3], sb[4], sb[5]);
  });
}

// The reference: element i of the 6-dimensional layout d, inputs read at
// their strides.
template <class T, class F>
long long strided_bad(const T* dst, const T* a, const T* b, const i64* d, const i64* sa, const i64* sb, F ref) {
  long long bad = 0, i = 0;
  i64 c[6];
  for (c[0] = 0; c[0] < d[0]; c[0]++)
    for (c[1] = 0; c[1] < d[1]; c[1]++)
      for (c[2] = 0; c[2] < d[2]; c[2]++)
        for (c[3] = 0; c[3] < d[3]; c[3]++)
          for (c[4] = 0; c[4] < d[4]; c[4]++)
            for (c[5] = 0; c[5] < d[5]; c[5]++, i++) {
              i64 oa = 0, ob = 0;
              for (int k = 0; k < 6; k++) oa += c[k] * sa[k], ob += c[k] * sb[k];
              if (!same(dst[i], ref(a[oa], b[ob]))) bad++;
            }
  return bad;
}

template <class T, class K, class F>
void test_strided(const char* name, K k, F ref) {
  // General: shapes padded to 6 dimensions, each input broadcast along a
  // random set of dimensions (stride 0) and contiguous over its own shape
  // elsewhere, or (every third case) read transposed: strides reversed.
  const std::vector<std::vector<i64>> shapes = {
      {1, 1, 1, 1, 1, 7}, {1, 1, 1, 3, 5, 7}, {2, 3, 1, 4, 5, 6}, {1, 1, 1, 1, 97, 61}, {3, 2, 2, 2, 2, 2}, {1, 1, 1, 5000, 1, 3}};
  int round = 0;
  for (auto& dv : shapes)
    for (int rep = 0; rep < 3; rep++, round++) {
      const i64* d = dv.data();
      i64 n = 1;
      for (int k = 0; k < 6; k++) n *= d[k];
      i64 sa[6], sb[6], ea = 1, eb = 1;
      for (int which = 0; which < 2; which++) {
        i64* s = which ? sb : sa;
        i64 acc = 1;
        const unsigned mask = (unsigned)rng();
        for (int k = 5; k >= 0; k--) {
          const bool bc = (mask >> k) & 1;
          s[k] = bc ? 0 : acc;
          if (!bc) acc *= d[k];
        }
        if (round % 3 == 2 && which == 0) {  // a transposed read of a
          i64 t = 1;
          for (int k = 0; k < 6; k++) {
            s[k] = (s[k] != 0 || d[k] == 1) ? t : 0;
            if (s[k]) t *= d[k];
          }
        }
        i64& e = which ? eb : ea;
        for (int k = 0; k < 6; k++) e += (d[k] - 1) * s[k];
      }
      Buf<T> a(ea, rep == 1), b(eb, false), dst(n, rep == 2);
      for (i64 i = 0; i < ea; i++) a.p[i] = rnd<T>();
      for (i64 i = 0; i < eb; i++) b.p[i] = rnd<T>();
      const unsigned grid = (unsigned)(1 + rng() % 3);
      launch_strided<T>(k, dst.p, a.p, b.p, n, 0, d, sa, sb, grid);
      const long long bad = strided_bad(dst.p, a.p, b.p, d, sa, sb, ref);
      CHECK(bad == 0 && dst.guard_ok(), "%s general [%lld %lld %lld %lld %lld %lld] rep %d: %lld wrong, guard %d", name,
            d[0], d[1], d[2], d[3], d[4], d[5], rep, bad, dst.guard_ok());
    }
  // Row and column, with and without the swap, cols a whole number of
  // vectors or not, aligned or not, in place (dst is the full input) or not.
  const std::vector<std::pair<i64, i64>> rc = {{1, 1}, {1, 37}, {1, 64}, {7, 16}, {33, 48}, {100, 9}, {3, 4099}, {2048, 4}};
  for (auto sh : rc)
    for (int mode : {1, 2, 5, 6})
      for (int lay = 0; lay < 4; lay++) {
        const i64 rows = sh.first, cols = sh.second, n = rows * cols;
        const bool col = mode & 2, swap = mode & 4, inplace = lay == 3;
        const i64 smalln = col ? rows : cols;
        Buf<T> full(n, lay == 1), small(smalln, lay == 2), out(n, lay == 2);
        for (i64 i = 0; i < n; i++) full.p[i] = rnd<T>();
        for (i64 i = 0; i < smalln; i++) small.p[i] = rnd<T>();
        std::vector<T> full0(full.p, full.p + n);
        T* dst = inplace ? full.p : out.p;
        const i64 d[6] = {1, 1, 1, 1, rows, cols}, zero[6] = {0, 0, 0, 0, 0, 0};
        const T* a = swap ? small.p : full.p;
        const T* b = swap ? full.p : small.p;
        launch_strided<T>(k, dst, a, b, n, mode, d, zero, zero, egrid(n, sizeof(T)));
        long long bad = 0;
        for (i64 i = 0; i < n; i++) {
          const T y = small.p[col ? i / cols : i % cols];
          const T want = swap ? ref(y, full0[i]) : ref(full0[i], y);
          if (!same(dst[i], want)) bad++;
        }
        const bool guards = full.guard_ok() && small.guard_ok() && out.guard_ok();
        CHECK(bad == 0 && guards, "%s mode %d %lldx%lld layout %d: %lld wrong, guards %d", name, mode, rows, cols, lay, bad,
              guards);
      }
}

#include "harness_strided_copy.h"
#include "optable_check.h"
#include "reduce_axes.inc"
#include "harness_scansort.cpp"
#include "harness_sort.h"
#include "harness_sort16.h"
#include "harness_cubsort.h"
#include "index_checks.h"
#include "half_check.h"
#include "half_ops_check.h"
#include "int_types_check.h"

int main() {
  if (emu_want("half")) check_half();
  if (emu_want("optable")) check_generated_ops();
  if (emu_want("int_types")) check_int_types();
  if (emu_want("scansort")) test_scansort();
  if (emu_want("sort")) test_sort_all();
  if (emu_want("sort16")) test_sort16_all();
  if (emu_want("cubsort")) test_cubsort_all();
  if (emu_want("elementwise")) {
  test_binary<float>("add_f32", gocuda_add_f32, [](float a, float b) { return a + b; });
  test_binary<double>("div_f64", gocuda_div_f64, [](double a, double b) { return a / b; });
  test_binary<int>("div_i32", gocuda_div_i32, [](int a, int b) { return b == 0 ? 0 : b == -1 ? (int)(0u - (unsigned)a) : a / b; });
  test_binary<i64>("mul_i64", gocuda_mul_i64, [](i64 a, i64 b) { return (i64)((u64)a * (u64)b); });
  test_binary<u8>("sub_u8", gocuda_sub_u8, [](u8 a, u8 b) { return (u8)(a - b); });
  test_binary<u8>("div_u8", gocuda_div_u8, [](u8 a, u8 b) { return b == 0 ? (u8)0 : (u8)(a / b); });
  test_binary<c64>("add_c64", gocuda_add_c64, [](c64 a, c64 b) { return c64{a.re + b.re, a.im + b.im}; });
  test_binary<c64>("mul_c64", gocuda_mul_c64, [](c64 a, c64 b) { return mul_(a, b); });
  test_binary<float>("relugrad_f32", gocuda_relugrad_f32, [](float x, float dy) { return x > 0 ? dy : 0.0f; });
  test_fill<float>("fill_f32", gocuda_fill_f32);
  test_fill<u8>("fill_u8", gocuda_fill_u8);
  test_fill<c64>("fill_c64", gocuda_fill_c64);
  test_fill<i64>("fill_i64", gocuda_fill_i64);
  test_scalar<float>("subs_f32", gocuda_subs_f32, [](float a, float s) { return a - s; });
  test_scalar<int>("divs_i32", gocuda_divs_i32, [](int a, int s) { return div_(a, s); });
  test_scalar<u8>("muls_u8", gocuda_muls_u8, [](u8 a, u8 s) { return (u8)(a * s); });
  test_scalar<c64>("divs_c64", gocuda_divs_c64, [](c64 a, c64 s) { return div_(a, s); });
  test_unary<float>("exp_f32", gocuda_exp_f32, [](float x) { return expf(x); });
  // exp in place (dst == x, the one overlap the drivers allow) on the Go
  // grid and on one block, whose threads take many groups of vectors
  // (emap1's prefetch of the next group before the stores), aligned and
  // one element in; and on a grid of more threads than vectors.
  for (long long n : {5LL, 4099LL, 70001LL})
    for (int off = 0; off < 2; off++)
      for (unsigned grid : {egrid(n, 4), 1u, 3u}) {
        Buf<float> x(n, off);
        std::vector<float> x0(n);
        for (long long i = 0; i < n; i++) x0[i] = x.p[i] = rnd<float>();
        emu_launch(grid, 256, [&] { gocuda_exp_f32(x.p, x.p, n); });
        long long bad = 0;
        for (long long i = 0; i < n; i++) if (!same(x.p[i], expf(x0[i]))) bad++;
        CHECK(bad == 0 && x.guard_ok(), "exp_f32 in place n=%lld off=%d grid=%u: %lld wrong", n, off, grid, bad);
      }
  test_unary<double>("relu_f64", gocuda_relu_f64, [](double x) { return x > 0 ? x : 0.0; });
  test_unary<float>("sigmoid_f32", gocuda_sigmoid_f32, [](float x) { return 1.0f / (1.0f + expf(-x)); });
  }

  if (emu_want("reduce")) {
  // Axpy: y in place.
  for (long long n : sizes) for (int off = 0; off < 2; off++) {
    Buf<c64> x(n, off), y(n, off);
    std::vector<c64> y0(n);
    for (long long i = 0; i < n; i++) x.p[i] = rnd<c64>(), y0[i] = y.p[i] = rnd<c64>();
    c64 al = rnd<c64>(); u64 bits; memcpy(&bits, &al, 8);
    emu_launch(egrid(n, 8), 256, [&] { gocuda_axpy_c64(y.p, x.p, bits, n); });
    long long bad = 0;
    for (long long i = 0; i < n; i++) if (!same(y.p[i], add_(mul_(al, x.p[i]), y0[i]))) bad++;
    CHECK(bad == 0 && y.guard_ok(), "axpy_c64 n=%lld off=%d: %lld wrong", n, off, bad);
  }

  // Reductions.
  for (long long n : {1LL, 3LL, 17LL, 1000LL, 4099LL, 70001LL}) for (int off = 0; off < 2; off++) {
    Buf<float> xf(n, off); Buf<int> xi(n, off); Buf<u8> xu(n, off); Buf<c64> xc(n, off); Buf<double> xd(n, off);
    double sf = 0, sd = 0, sre = 0, sim = 0; u64 si = 0, su = 0;
    float mx = -INFINITY, mn = INFINITY; int mxi = INT32_MIN;
    for (long long i = 0; i < n; i++) {
      xf.p[i] = rnd<float>(); xi.p[i] = (int)rng(); xu.p[i] = rnd<u8>(); xc.p[i] = rnd<c64>(); xd.p[i] = rnd<double>();
      sf += xf.p[i]; sd += xd.p[i]; si += (u64)(i64)xi.p[i]; su += xu.p[i]; sre += xc.p[i].re; sim += xc.p[i].im;
      mx = fmaxf(mx, xf.p[i]); mn = fminf(mn, xf.p[i]); mxi = xi.p[i] > mxi ? xi.p[i] : mxi;
    }
    double gf = run_reduce(gocuda_sum_f32_pass1, gocuda_sum_f32_pass2, xf.p, n);
    CHECK(fabs(gf - sf) < 1e-9 * n, "sum_f32 n=%lld off=%d: %g vs %g", n, off, gf, sf);
    double gd = run_reduce(gocuda_sum_f64_pass1, gocuda_sum_f64_pass2, xd.p, n);
    CHECK(fabs(gd - sd) < 1e-9 * n, "sum_f64 n=%lld: %g vs %g", n, gd, sd);
    u64 gi = run_reduce(gocuda_sum_i32_pass1, gocuda_sum_i32_pass2, xi.p, n);
    CHECK(gi == si, "sum_i32 n=%lld off=%d: %lld vs %lld", n, off, (i64)gi, (i64)si);
    u64 gu = run_reduce(gocuda_sum_u8_pass1, gocuda_sum_u8_pass2, xu.p, n);
    CHECK(gu == su, "sum_u8 n=%lld off=%d: %llu vs %llu", n, off, gu, su);
    c128 gc = run_reduce(gocuda_sum_c64_pass1, gocuda_sum_c64_pass2, xc.p, n);
    CHECK(fabs(gc.re - sre) < 1e-9 * n && fabs(gc.im - sim) < 1e-9 * n, "sum_c64 n=%lld off=%d", n, off);
    float gmx = run_reduce(gocuda_max_f32_pass1, gocuda_max_f32_pass2, xf.p, n);
    float gmn = run_reduce(gocuda_min_f32_pass1, gocuda_min_f32_pass2, xf.p, n);
    CHECK(gmx == mx && gmn == mn, "max/min_f32 n=%lld off=%d: %g %g vs %g %g", n, off, gmx, gmn, mx, mn);
    int gmxi = run_reduce(gocuda_max_i32_pass1, gocuda_max_i32_pass2, xi.p, n);
    CHECK(gmxi == mxi, "max_i32 n=%lld off=%d", n, off);
    if (n > 3) {
      xf.p[n / 2] = NAN;
      float g = run_reduce(gocuda_max_f32_pass1, gocuda_max_f32_pass2, xf.p, n);
      CHECK(g != g, "max_f32 with NaN n=%lld: %g", n, g);
      g = run_reduce(gocuda_min_f32_pass1, gocuda_min_f32_pass2, xf.p, n);
      CHECK(g != g, "min_f32 with NaN n=%lld: %g", n, g);
    }
    // Dot (x with itself and a shifted y).
    Buf<double> yd(n, false);
    double dot = 0;
    for (long long i = 0; i < n; i++) { yd.p[i] = rnd<double>(); dot += xd.p[i] * yd.p[i]; }
    std::vector<double> parts(4096), out(1);
    unsigned g = rgrid(n);
    if (g == 1) emu_launch(1, 256, [&] { gocuda_dot_f64_pass1(xd.p, yd.p, n, out.data()); });
    else {
      emu_launch(g, 256, [&] { gocuda_dot_f64_pass1(xd.p, yd.p, n, parts.data()); });
      emu_launch(1, 256, [&] { gocuda_dot_f64_pass2(parts.data(), (int)g, out.data()); });
    }
    CHECK(fabs(out[0] - dot) < 1e-8 * n, "dot_f64 n=%lld off=%d: %g vs %g", n, off, out[0], dot);
  }

  // Rows.
  for (auto sh : std::vector<std::pair<long long, long long>>{{1, 1}, {3, 10}, {64, 10}, {100, 33}, {7, 4099}, {5000, 1}, {4, 0}}) {
    long long rows = sh.first, cols = sh.second;
    Buf<float> x(rows * cols, true), s(rows, false), m(rows, true);
    for (long long i = 0; i < rows * cols; i++) x.p[i] = rnd<float>();
    long long per = 8, b = (rows + per - 1) / per; if (b > SMS * 8) b = SMS * 8;
    emu_launch((unsigned)b, 256, [&] { gocuda_sumrows_f32(s.p, x.p, rows, cols); });
    if (cols > 0) emu_launch((unsigned)b, 256, [&] { gocuda_maxrows_f32(m.p, x.p, rows, cols); });
    long long bad = 0;
    for (long long r = 0; r < rows; r++) {
      double sum = 0; float mxv = -INFINITY;
      for (long long c = 0; c < cols; c++) { sum += x.p[r * cols + c]; mxv = fmaxf(mxv, x.p[r * cols + c]); }
      if (fabs(s.p[r] - sum) > 1e-5 * (1 + fabs(sum))) bad++;
      if (cols > 0 && m.p[r] != mxv) bad++;
    }
    CHECK(bad == 0 && s.guard_ok() && m.guard_ok(), "rows %lldx%lld: %lld wrong", rows, cols, bad);
  }

  }
  if (emu_want("strided")) {
  test_strided<float>("add_strided_f32", gocuda_add_strided_f32, [](float a, float b) { return a + b; });
  test_strided<double>("div_strided_f64", gocuda_div_strided_f64, [](double a, double b) { return a / b; });
  test_strided<int>("sub_strided_i32", gocuda_sub_strided_i32, [](int a, int b) { return sub_(a, b); });
  test_strided<i64>("mul_strided_i64", gocuda_mul_strided_i64, [](i64 a, i64 b) { return mul_(a, b); });
  test_strided<u8>("div_strided_u8", gocuda_div_strided_u8, [](u8 a, u8 b) { return div_(a, b); });
  test_strided<c64>("sub_strided_c64", gocuda_sub_strided_c64, [](c64 a, c64 b) { return sub_(a, b); });
  }
  if (emu_want("strided_copy")) test_strided_copies();
  if (emu_want("nn")) {
  test_nn<float>("f32", gocuda_addrowvec_f32, gocuda_sumcols_f32_pass1, gocuda_sumcols_f32_pass2, gocuda_softmaxxent_f32, 1e-5);
  test_nn<double>("f64", gocuda_addrowvec_f64, gocuda_sumcols_f64_pass1, gocuda_sumcols_f64_pass2, gocuda_softmaxxent_f64, 1e-12);

  // complex division specials, as Go's runtime.complex128div.
  {
    c64 r = div_(c64{1, 1}, c64{0, 0});
    CHECK(isinf(r.re) && r.re > 0 && isinf(r.im) && r.im > 0, "(1+1i)/0 = (%g, %g)", r.re, r.im);
    r = div_(c64{INFINITY, 0}, c64{1, 1});
    CHECK(isinf(r.re) && r.re > 0 && isinf(r.im) && r.im < 0, "inf/(1+1i) = (%g, %g)", r.re, r.im);
    r = div_(c64{2, 0}, c64{INFINITY, 0});
    CHECK(r.re == 0 && r.im == 0, "2/inf = (%g, %g)", r.re, r.im);
  }
  }
  if (emu_want("reduce_axes")) test_reduce_axes();
  if (emu_want("index")) test_index();
  if (emu_want("half_ops")) check_half_ops();
  printf("%s: %d failures\n", failures ? "FAIL" : "ok", failures);
  return failures != 0;
}
