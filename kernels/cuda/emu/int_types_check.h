// int_types_check.h: int8, int16 and uint32 on the emulator (included by
// harness.cpp; group int_types). Their arithmetic against Go's rules
// written out independently (wrapping in 64 bits, then narrowed; division
// by zero 0, MinInt / -1 MinInt), the saturating float → integer
// conversions at their edges, whole-array sums and extrema, reductions over
// axes, scans, the sorts (signed order), arange, int16's eye and
// scatter-add (a 16-bit compare-and-swap in a 32-bit word), and the int8
// vector loads through the binary kernels' aligned and unaligned paths.

#include <limits>

template <> i8 rnd<i8>() { return (i8)(u8)rng(); }
template <> i16 rnd<i16>() { return (i16)(unsigned short)rng(); }
template <> u32 rnd<u32>() { return (u32)rng(); }
template <> i8 rsmall<i8>() { return (i8)((int)(rng() % 7) - 3 + ((rng() & 1) ? 0 : 120)); }
template <> i16 rsmall<i16>() { return (i16)((int)(rng() % 7) - 3 + ((rng() & 1) ? 0 : 32760)); }
template <> u32 rsmall<u32>() { return (u32)(rng() % 5 == 0 ? 0u : 0xfffffff0u + rng() % 16); }

// Go's x op y for an integer type T, computed in int64 and narrowed (a
// narrowing conversion wraps, as Go's does).
template <class T> T go_div(T a, T b) {
  if (b == 0) return 0;
  if (std::is_signed_v<T> && b == (T)-1) return (T)(u64)(0 - (i64)a);
  return (T)(u64)((i64)a / (i64)b);
}
template <class T> T go_wrap(i64 v) { return (T)(u64)v; }

template <class T>
void int_arith(const char* s, void (*add)(T*, const T*, const T*, i64), void (*sub)(T*, const T*, const T*, i64),
               void (*mul)(T*, const T*, const T*, i64), void (*div)(T*, const T*, const T*, i64),
               void (*divs)(T*, const T*, u64, i64)) {
  char name[64];
  snprintf(name, sizeof name, "add_%s", s);
  test_binary<T>(name, add, [](T a, T b) { return go_wrap<T>((i64)a + (i64)b); });
  snprintf(name, sizeof name, "sub_%s", s);
  test_binary<T>(name, sub, [](T a, T b) { return go_wrap<T>((i64)a - (i64)b); });
  snprintf(name, sizeof name, "mul_%s", s);
  test_binary<T>(name, mul, [](T a, T b) { return go_wrap<T>((i64)a * (i64)b); });
  snprintf(name, sizeof name, "div_%s", s);
  test_binary<T>(name, div, [](T a, T b) { return go_div(a, b); });
  snprintf(name, sizeof name, "divs_%s", s);
  test_scalar<T>(name, divs, [](T a, T b) { return go_div(a, b); });
  // The edges: MinInt / -1, x / 0, wrapping products.
  const T lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  const T as[] = {lo, lo, hi, hi, (T)7, lo, (T)-7, hi};
  const T bs[] = {(T)-1, (T)0, (T)2, (T)-1, (T)0, lo, (T)2, hi};
  T d[8];
  emu_launch(1, 256, [&] { div(d, as, bs, 8); });
  for (int i = 0; i < 8; i++) CHECK(d[i] == go_div(as[i], bs[i]), "div_%s edge %d: %lld", s, i, (long long)d[i]);
  emu_launch(1, 256, [&] { mul(d, as, bs, 8); });
  for (int i = 0; i < 8; i++) CHECK(d[i] == go_wrap<T>((i64)as[i] * (i64)bs[i]), "mul_%s edge %d", s, i);
}

// Saturating conversions from float64 against Go's satI8, satI16, satU32
// (kernels/optable.go) as expected values.
void int_sat() {
  const double x[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, -0.9, 0.9, 126.9, 127.0, 127.5, 128.0, -128.0, -128.9,
                      -129.0, 32767.5, -32768.9, -32769.0, 4294967295.0, 4294967296.0, 4294967294.7, -1.0, 1e300};
  const long long wi8[] = {0, 127, -128, 0, 0, 0, 0, 126, 127, 127, 127, -128, -128, -128, 127, -128, -128, 127, 127, 127, -1, 127};
  const long long wi16[] = {0, 32767, -32768, 0, 0, 0, 0, 126, 127, 127, 128, -128, -128, -129, 32767, -32768, -32768, 32767, 32767, 32767, -1, 32767};
  const unsigned long long wu32[] = {0, 4294967295ull, 0, 0, 0, 0, 0, 126, 127, 127, 128, 0, 0, 0, 32767, 0, 0,
                                     4294967295ull, 4294967295ull, 4294967294ull, 0, 4294967295ull};
  const int n = sizeof(x) / sizeof(x[0]);
  i8 a[n]; i16 b[n]; u32 c[n];
  emu_launch(1, 256, [&] { gocuda_convert_f64_i8(a, x, n); });
  emu_launch(1, 256, [&] { gocuda_convert_f64_i16(b, x, n); });
  emu_launch(1, 256, [&] { gocuda_convert_f64_u32(c, x, n); });
  for (int i = 0; i < n; i++) {
    CHECK(a[i] == wi8[i], "convert_f64_i8(%g) = %d, want %lld", x[i], a[i], wi8[i]);
    CHECK(b[i] == wi16[i], "convert_f64_i16(%g) = %d, want %lld", x[i], b[i], wi16[i]);
    CHECK(c[i] == wu32[i], "convert_f64_u32(%g) = %u, want %llu", x[i], c[i], wu32[i]);
  }
  // Integer ↔ integer wraps; to float exact (int16, int8) or rounded (uint32 → float32).
  const i64 v[] = {-1, 255, 256, -129, 65535, 70000, 4294967295ll, 4294967296ll + 5, -2147483648ll};
  const int m = sizeof(v) / sizeof(v[0]);
  i8 a8[m]; i16 a16[m]; u32 a32[m]; float f[m];
  emu_launch(1, 256, [&] { gocuda_convert_i64_i8(a8, v, m); });
  emu_launch(1, 256, [&] { gocuda_convert_i64_i16(a16, v, m); });
  emu_launch(1, 256, [&] { gocuda_convert_i64_u32(a32, v, m); });
  emu_launch(1, 256, [&] { gocuda_convert_u32_f32(f, a32, m); });
  for (int i = 0; i < m; i++) {
    CHECK(a8[i] == (i8)(u8)(u64)v[i] && a16[i] == (i16)(unsigned short)(u64)v[i] && a32[i] == (u32)(u64)v[i],
          "convert_i64 to i8/i16/u32 of %lld", (long long)v[i]);
    CHECK(f[i] == (float)a32[i], "convert_u32_f32 of %u", a32[i]);
  }
  i8 s8[] = {-128, -1, 0, 1, 127};
  i64 w8[5]; bool b8[5]; u32 u8w[5];
  emu_launch(1, 256, [&] { gocuda_convert_i8_i64(w8, s8, 5); });
  emu_launch(1, 256, [&] { gocuda_convert_i8_b8(b8, s8, 5); });
  emu_launch(1, 256, [&] { gocuda_convert_i8_u32(u8w, s8, 5); });
  for (int i = 0; i < 5; i++)
    CHECK(w8[i] == s8[i] && b8[i] == (s8[i] != 0) && u8w[i] == (u32)(i64)s8[i], "convert_i8 of %d", s8[i]);
}

template <class T, class A>
void int_reduce(const char* s, A (*ref)(const T*, long long), void (*sum1)(const T*, i64, A*), void (*sum2)(const A*, int, A*),
                void (*max1)(const T*, i64, T*), void (*max2)(const T*, int, T*), void (*min1)(const T*, i64, T*),
                void (*min2)(const T*, int, T*)) {
  for (long long n : {1LL, 3LL, 1000LL, 4099LL, 70001LL})
    for (int off = 0; off < 2; off++) {
      Buf<T> x(n, off);
      T mx = std::numeric_limits<T>::min(), mn = std::numeric_limits<T>::max();
      for (long long i = 0; i < n; i++) {
        x.p[i] = rnd<T>();
        mx = x.p[i] > mx ? x.p[i] : mx;
        mn = x.p[i] < mn ? x.p[i] : mn;
      }
      const A g = run_reduce(sum1, sum2, x.p, n);
      CHECK(g == ref(x.p, n), "sum_%s n=%lld off=%d: %lld vs %lld", s, n, off, (long long)g, (long long)ref(x.p, n));
      const T gx = run_reduce(max1, max2, x.p, n), gn = run_reduce(min1, min2, x.p, n);
      CHECK(gx == mx && gn == mn, "max/min_%s n=%lld off=%d", s, n, off);
    }
}
template <class T> u64 sum64(const T* x, long long n) {
  u64 s = 0;
  for (long long i = 0; i < n; i++) s += (u64)(i64)x[i];  // int64 arithmetic, as Go's int64(x) sums
  return s;
}

void test_reduce_axes_ints() {
#define RX(T, OP, S, EX) test_raxes<T, OP##_##S>(#OP "_" #S, gocuda_##OP##_##S##_pass1, gocuda_##OP##row_##S, gocuda_##OP##col_##S, gocuda_##OP##_##S##_pass2, EX, false);
#define RXALL(T, S) RX(T, rsum, S, true) RX(T, rprod, S, true) RX(T, rmean, S, false) RX(T, rmax, S, true) RX(T, rmin, S, true) \
  RX(T, rargmax, S, true) RX(T, rargmin, S, true) RX(T, rany, S, true) RX(T, rall, S, true)
  RXALL(i8, i8)
  RXALL(i16, i16)
  RXALL(u32, u32)
#undef RXALL
#undef RX
}

void check_int_types() {
  setvbuf(stdout, nullptr, _IONBF, 0);
  printf("int8, int16, uint32\n");
  int_arith<i8>("i8", gocuda_add_i8, gocuda_sub_i8, gocuda_mul_i8, gocuda_div_i8, gocuda_divs_i8);
  int_arith<i16>("i16", gocuda_add_i16, gocuda_sub_i16, gocuda_mul_i16, gocuda_div_i16, gocuda_divs_i16);
  int_arith<u32>("u32", gocuda_add_u32, gocuda_sub_u32, gocuda_mul_u32, gocuda_div_u32, gocuda_divs_u32);
  test_fill<i8>("fill_i8 (uint8's kernel)", (void (*)(i8*, u64, i64))gocuda_fill_u8);
  int_sat();
  int_reduce<i8, u64>("i8", sum64<i8>, gocuda_sum_i8_pass1, gocuda_sum_i8_pass2, gocuda_max_i8_pass1, gocuda_max_i8_pass2,
                      gocuda_min_i8_pass1, gocuda_min_i8_pass2);
  int_reduce<i16, u64>("i16", sum64<i16>, gocuda_sum_i16_pass1, gocuda_sum_i16_pass2, gocuda_max_i16_pass1,
                       gocuda_max_i16_pass2, gocuda_min_i16_pass1, gocuda_min_i16_pass2);
  int_reduce<u32, u64>("u32", sum64<u32>, gocuda_sum_u32_pass1, gocuda_sum_u32_pass2, gocuda_max_u32_pass1,
                       gocuda_max_u32_pass2, gocuda_min_u32_pass1, gocuda_min_u32_pass2);
  // The table's abs of MinInt wraps, as Go's -x.
  {
    i8 x[] = {-128, -5, 0, 5, 127}, d[5];
    emu_launch(1, 256, [&] { gocuda_abs_i8(d, x, 5); });
    const i8 w[] = {-128, 5, 0, 5, 127};
    for (int i = 0; i < 5; i++) CHECK(d[i] == w[i], "abs_i8(%d) = %d", x[i], d[i]);
    i16 y[] = {-32768, -5, 0}, e[3];
    emu_launch(1, 256, [&] { gocuda_abs_i16(e, y, 3); });
    CHECK(e[0] == -32768 && e[1] == 5 && e[2] == 0, "abs_i16");
    u32 a[] = {0, 1, 0xffffffffu}, b[] = {1, 1, 0}; bool lt[3];
    emu_launch(1, 256, [&] { gocuda_lt_u32(lt, a, b, 3, 0); });
    CHECK(lt[0] && !lt[1] && !lt[2], "lt_u32 is unsigned");
  }
  test_reduce_axes_ints();
  test_scan<i8, int>("scan_i8", gocuda_scanrows_i8_pass1, gocuda_scanrows_i8_pass2, gocuda_scancols_i8_pass1, gocuda_scancols_i8_pass2, gocuda_scancolscarry_i8, 0);
  test_scan<i16, int>("scan_i16", gocuda_scanrows_i16_pass1, gocuda_scanrows_i16_pass2, gocuda_scancols_i16_pass1, gocuda_scancols_i16_pass2, gocuda_scancolscarry_i16, 0);
  test_scan<u32, unsigned>("scan_u32", gocuda_scanrows_u32_pass1, gocuda_scanrows_u32_pass2, gocuda_scancols_u32_pass1, gocuda_scancols_u32_pass2, gocuda_scancolscarry_u32, 0);
  test_arange<i8>("arange_i8", gocuda_arange_i8, (i8)-100, (i8)7);
  test_arange<i16>("arange_i16", gocuda_arange_i16, (i16)-30000, (i16)13);
  test_arange<u32>("arange_u32", gocuda_arange_u32, 4000000000u, 100000u);
  test_linspace<i8>("linspace_i8", gocuda_linspace_i8, -128, 127);
  test_linspace<u32>("linspace_u32", gocuda_linspace_u32, 0, 4294967295.0);
  test_eye<i16>("eye_i16", gocuda_eye_i16);
  test_scatter<i16>("scatteradd_i16", gocuda_scatteradd_i16, true, 0);
#define SK(S) {gocuda_rowsort_##S, gocuda_radixup_##S, gocuda_radixhist_##S, gocuda_radixscatter_##S, gocuda_sorttake_##S, gocuda_topk16_##S, gocuda_topk32_##S}
  test_sort_type<i8>("i8", SortKernels<i8>SK(i8));
  test_sort_type<i16>("i16", SortKernels<i16>SK(i16));
  test_sort_type<u32>("u32", SortKernels<u32>SK(u32));
#undef SK
}
