// Checks of index.cuh's kernels against plain loops, included by
// harness.cpp after kernels_emu.cu: arange and linspace bit for bit, eye,
// concat with 1 to 8 slots, take/scatter/scatteradd with negative and
// out-of-range indices, scatteradd's atomics under duplicate indices (exact
// for integers, uint8 bytes of one word updated by many threads at once).
// Grids of 1 to 3 blocks make the grid-stride loops run many times a thread.

template <class T>
void test_arange(const char* name, void (*k)(T*, u64, u64, u64, i64), T start, T step) {
  for (long long n : {1LL, 2LL, 3LL, 17LL, 1000LL, 4099LL}) {
    Buf<T> d(n, n % 2 == 1);
    const T second = (T)(start + step);
    const T delta = (T)(second - start);
    u64 bs = 0, b2 = 0, bd = 0;
    memcpy(&bs, &start, sizeof(T));
    memcpy(&b2, &second, sizeof(T));
    memcpy(&bd, &delta, sizeof(T));
    emu_launch(1 + (unsigned)(n % 3), 256, [&] { k(d.p, bs, b2, bd, n); });
    long long bad = 0;
    for (long long i = 0; i < n; i++) {
      T want = i == 1 ? second : (T)(start + (T)((T)i * delta));
      if (!same(d.p[i], want)) bad++;
    }
    CHECK(bad == 0 && d.guard_ok(), "%s n=%lld: %lld wrong", name, n, bad);
  }
}

template <class T>
void test_linspace(const char* name, void (*k)(T*, double, double, double, double, double, i64, int, int), double start,
                   double stop) {
  for (long long n : {1LL, 2LL, 5LL, 50LL, 4099LL})
    for (int endpoint = 0; endpoint < 2; endpoint++)
      for (int zero = 0; zero < 2; zero++) {
        const double div = endpoint ? (double)(n - 1) : (double)n;
        const double delta = stop - start;
        const double step = div > 0 ? delta / div : delta;
        Buf<T> d(n, false);
        emu_launch(2, 256, [&] { k(d.p, start, step, delta, div > 0 ? div : 1, stop, n, zero, endpoint); });
        long long bad = 0;
        for (long long i = 0; i < n; i++) {
          double y = zero ? ((double)i / (div > 0 ? div : 1)) * delta : (double)i * step;
          y += start;
          if (endpoint && i == n - 1 && n > 1) y = stop;
          if (!same(d.p[i], (T)y)) bad++;
        }
        CHECK(bad == 0 && d.guard_ok(), "%s n=%lld endpoint=%d stepzero=%d: %lld wrong", name, n, endpoint, zero, bad);
      }
}

template <class T>
void test_eye(const char* name, void (*k)(T*, i64, i64, i64)) {
  T one;
  one_(&one);
  const T zero{};
  for (auto sh : std::vector<std::pair<long long, long long>>{{1, 1}, {3, 3}, {4, 7}, {7, 4}, {100, 33}, {300, 300}})
    for (long long kk : {-5LL, -1LL, 0LL, 1LL, 3LL, 40LL}) {
      const long long r = sh.first, c = sh.second;
      Buf<T> d(r * c, true);
      emu_launch(2, 256, [&] { k(d.p, r, c, kk); });
      long long bad = 0;
      for (long long i = 0; i < r; i++)
        for (long long j = 0; j < c; j++)
          if (!same(d.p[i * c + j], j - i == kk ? one : zero)) bad++;
      CHECK(bad == 0 && d.guard_ok(), "%s %lldx%lld k=%lld: %lld wrong", name, r, c, kk, bad);
    }
}

template <class T, class K>
void test_concat(const char* name, K k) {
  for (long long rows : {1LL, 3LL, 37LL, 260LL})
    for (int m = 1; m <= CONCAT_SLOTS; m++) {
      std::vector<long long> w(CONCAT_SLOTS, 0);
      long long ncols = 0;
      for (int j = 0; j < m; j++) ncols += (w[j] = (long long)(rng() % 9));  // widths of 0 included
      const long long extra = 5;  // dst is wider: this launch fills a window of its columns
      const long long dcols = ncols + extra;
      std::vector<std::unique_ptr<Buf<T>>> in;
      for (int j = 0; j < CONCAT_SLOTS; j++) {
        in.emplace_back(new Buf<T>(rows * w[j], j % 2 == 1));
        for (long long i = 0; i < rows * w[j]; i++) in[j]->p[i] = rnd<T>();
      }
      Buf<T> d(rows * dcols, false);
      const T mark = rnd<T>();
      for (long long i = 0; i < rows * dcols; i++) d.p[i] = mark;
      const long long c0 = 2;  // the window's first column
      emu_launch(1 + (unsigned)(rng() % 3), 256, [&] {
        k(d.p + c0, rows, dcols, ncols, in[0]->p, w[0], in[1]->p, w[1], in[2]->p, w[2], in[3]->p, w[3], in[4]->p, w[4],
          in[5]->p, w[5], in[6]->p, w[6], in[7]->p, w[7]);
      });
      long long bad = 0;
      for (long long r = 0; r < rows; r++) {
        long long c = 0;
        for (long long x = 0; x < c0; x++) if (!same(d.p[r * dcols + x], mark)) bad++;
        for (int j = 0; j < m; j++)
          for (long long x = 0; x < w[j]; x++, c++)
            if (!same(d.p[r * dcols + c0 + c], in[j]->p[r * w[j] + x])) bad++;
        for (long long x = c0 + ncols; x < dcols; x++) if (!same(d.p[r * dcols + x], mark)) bad++;
      }
      CHECK(bad == 0 && d.guard_ok(), "%s rows=%lld inputs=%d cols=%lld: %lld wrong", name, rows, m, ncols, bad);
    }
}

// The index kernels' layout: indices in [-dim, dim) with some out of range
// (bad) when withBad.
std::vector<i64> make_idx(long long nidx, long long dim, bool withBad, bool unique) {
  std::vector<i64> idx(nidx);
  for (long long j = 0; j < nidx; j++) {
    idx[j] = unique ? j : (i64)(rng() % (2 * dim)) - dim;
    if (unique && rng() % 2) idx[j] -= dim;  // the same element, negative
  }
  if (withBad && nidx > 2) {
    idx[nidx / 2] = dim + (i64)(rng() % 3);
    idx[nidx - 1] = -dim - 1 - (i64)(rng() % 3);
  }
  return idx;
}
i64 wrap_ref(i64 raw, i64 dim) { return raw < 0 ? raw + dim : raw; }

template <class T, class K>
void test_take(const char* name, K k) {
  struct L { long long outer, nidx, dim, inner; };
  for (L l : std::vector<L>{{1, 1, 1, 1}, {1, 17, 5, 1}, {3, 4, 7, 5}, {2, 300, 9, 3}, {5, 3, 2, 700}})
    for (int withBad = 0; withBad < 2; withBad++) {
      std::vector<i64> idx = make_idx(l.nidx, l.dim, withBad, false);
      const long long ns = l.outer * l.dim * l.inner, nd = l.outer * l.nidx * l.inner;
      Buf<T> src(ns, true), d(nd, false);
      for (long long i = 0; i < ns; i++) src.p[i] = rnd<T>();
      i64 badv = 0;
      emu_launch(1 + (unsigned)(rng() % 3), 256, [&] { k(d.p, src.p, idx.data(), l.outer, l.nidx, l.dim, l.inner, &badv); });
      long long bad = 0;
      bool sawBad = false;
      for (long long o = 0; o < l.outer; o++)
        for (long long j = 0; j < l.nidx; j++) {
          i64 w = wrap_ref(idx[j], l.dim);
          if (w < 0 || w >= l.dim) { sawBad = true; w = idx[j] < 0 ? 0 : l.dim - 1; }
          for (long long x = 0; x < l.inner; x++)
            if (!same(d.p[(o * l.nidx + j) * l.inner + x], src.p[(o * l.dim + w) * l.inner + x])) bad++;
        }
      const bool badOK = sawBad ? (wrap_ref(badv, l.dim) < 0 || wrap_ref(badv, l.dim) >= l.dim) : badv == 0;
      CHECK(bad == 0 && d.guard_ok() && badOK, "%s %lldx%lldx%lld from dim %lld, bad indices %d: %lld wrong, reported %lld",
            name, l.outer, l.nidx, l.inner, l.dim, withBad, bad, (long long)badv);
    }
}

template <class T> T add_ref(T a, T b) { return add_(a, b); }

template <class T, class K>
void test_scatter(const char* name, K k, bool add, double tol) {
  struct L { long long outer, nidx, dim, inner; };
  for (L l : std::vector<L>{{1, 1, 1, 1}, {1, 17, 20, 1}, {3, 4, 7, 5}, {2, 3000, 9, 3}, {1, 5000, 3, 1}, {5, 3, 4, 700}})
    for (int withBad = 0; withBad < 2; withBad++) {
      // Plain scatter gets distinct targets (which duplicate wins is not
      // specified); scatteradd gets many duplicates.
      const bool unique = !add;
      if (unique && l.nidx > l.dim) continue;
      std::vector<i64> idx = make_idx(l.nidx, l.dim, withBad, unique);
      const long long ns = l.outer * l.nidx * l.inner, nd = l.outer * l.dim * l.inner;
      Buf<T> src(ns, false), d(nd, true);
      for (long long i = 0; i < ns; i++) src.p[i] = rnd<T>();
      for (long long i = 0; i < nd; i++) d.p[i] = rnd<T>();
      std::vector<T> want(d.p, d.p + nd);
      std::vector<double> wantRe(nd), wantIm(nd);
      bool sawBad = false;
      for (long long o = 0; o < l.outer; o++)
        for (long long j = 0; j < l.nidx; j++) {
          const i64 w = wrap_ref(idx[j], l.dim);
          if (w < 0 || w >= l.dim) { sawBad = true; continue; }
          for (long long x = 0; x < l.inner; x++) {
            T& t = want[(o * l.dim + w) * l.inner + x];
            const T v = src.p[(o * l.nidx + j) * l.inner + x];
            t = add ? add_ref(t, v) : v;
          }
        }
      i64 badv = 0;
      emu_launch(1 + (unsigned)(rng() % 3), 256, [&] { k(d.p, src.p, idx.data(), l.outer, l.nidx, l.dim, l.inner, &badv); });
      long long bad = 0;
      for (long long i = 0; i < nd; i++) {
        if (tol == 0) {
          if (!same(d.p[i], want[i])) bad++;
        } else {
          double a[2], b[2];
          if constexpr (sizeof(T) == 8 && std::is_same_v<T, c64>) {
            a[0] = ((c64*)&d.p[i])->re, a[1] = ((c64*)&d.p[i])->im, b[0] = ((c64*)&want[i])->re, b[1] = ((c64*)&want[i])->im;
          } else {
            a[0] = (double)*(T*)&d.p[i], b[0] = (double)*(T*)&want[i], a[1] = b[1] = 0;
          }
          if (fabs(a[0] - b[0]) > tol * (1 + fabs(b[0])) || fabs(a[1] - b[1]) > tol * (1 + fabs(b[1]))) bad++;
        }
      }
      const bool badOK = sawBad ? (wrap_ref(badv, l.dim) < 0 || wrap_ref(badv, l.dim) >= l.dim) : badv == 0;
      CHECK(bad == 0 && d.guard_ok() && src.guard_ok() && badOK,
            "%s %lldx%lldx%lld into dim %lld, bad indices %d: %lld wrong, reported %lld", name, l.outer, l.nidx, l.inner,
            l.dim, withBad, bad, (long long)badv);
    }
}

void test_index() {
  test_arange<float>("arange_f32", gocuda_arange_f32, 0.1f, 0.3f);
  test_arange<float>("arange_f32 big", gocuda_arange_f32, -1e4f, 3.7f);
  test_arange<double>("arange_f64", gocuda_arange_f64, 0.1, 0.1);
  test_arange<int>("arange_i32", gocuda_arange_i32, -7, 3);
  test_arange<i64>("arange_i64", gocuda_arange_i64, (i64)1 << 40, -5);
  test_arange<u8>("arange_u8", gocuda_arange_u8, 3, 1);
  test_linspace<float>("linspace_f32", gocuda_linspace_f32, -1.5, 2.25);
  test_linspace<double>("linspace_f64", gocuda_linspace_f64, 0.1, 1e-3);
  test_linspace<int>("linspace_i32", gocuda_linspace_i32, -10, 1000);
  test_linspace<u8>("linspace_u8", gocuda_linspace_u8, 0, 255);
  test_eye<float>("eye_f32", gocuda_eye_f32);
  test_eye<u8>("eye_u8", gocuda_eye_u8);
  test_eye<c64>("eye_c64", gocuda_eye_c64);
  test_concat<float>("concat_f32", gocuda_concat_f32);
  test_concat<u8>("concat_u8", gocuda_concat_u8);
  test_concat<c64>("concat_c64", gocuda_concat_c64);
  test_concat<i64>("concat_i64", gocuda_concat_i64);
  test_take<float>("take_f32", gocuda_take_f32);
  test_take<u8>("take_u8", gocuda_take_u8);
  test_take<c64>("take_c64", gocuda_take_c64);
  test_scatter<double>("scatter_f64", gocuda_scatter_f64, false, 0);
  test_scatter<u8>("scatter_u8", gocuda_scatter_u8, false, 0);
  test_scatter<int>("scatteradd_i32", gocuda_scatteradd_i32, true, 0);
  test_scatter<i64>("scatteradd_i64", gocuda_scatteradd_i64, true, 0);
  test_scatter<u8>("scatteradd_u8", gocuda_scatteradd_u8, true, 0);
  test_scatter<float>("scatteradd_f32", gocuda_scatteradd_f32, true, 1e-4);
  test_scatter<double>("scatteradd_f64", gocuda_scatteradd_f64, true, 1e-12);
  test_scatter<c64>("scatteradd_c64", gocuda_scatteradd_c64, true, 1e-4);
}
