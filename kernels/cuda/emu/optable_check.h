// optable_check.h: the emulator's checks of the kernels generated from the
// table (ops_gen.cuh), included by harness.cpp; ops_gen_check.h (generated)
// calls them once per kernel. Each runs the kernel on sizes that take the
// vector path, its tail and several blocks, with every operand aligned,
// every operand one element in (the scalar path), and only the inputs one
// element in (dst aligned, inputs not), and compares every element with a
// plain loop of the kernel's own functor: the drivers' indexing, chunk
// loads and stores of mixed element sizes and guards, not the math (the C
// library's here, CUDA's on a GPU). Inputs include NaN, ±Inf, ±0 and
// values past the integer ranges, so conversions see their edge cases.

inline double emu_special(int k) {
  static const double v[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1e30, -1e30, 255.5, -1.5, 2.5, 3e9, -3e9, 1e-310};
  return v[k % (sizeof(v) / sizeof(v[0]))];
}

template <class T> T opt_rnd(long long i);
template <> float opt_rnd<float>(long long i) { return i % 7 == 3 ? (float)emu_special((int)(i / 7)) : rnd<float>(); }
template <> double opt_rnd<double>(long long i) { return i % 7 == 3 ? emu_special((int)(i / 7)) : rnd<double>(); }
template <> int opt_rnd<int>(long long i) { return i % 11 == 5 ? (int)(0x80000000u + (unsigned)(i & 1) * 0x7fffffffu) : (int)rng(); }
template <> i64 opt_rnd<i64>(long long i) { return (i64)rng(); }
template <> u8 opt_rnd<u8>(long long) { return (u8)rng(); }
template <> c64 opt_rnd<c64>(long long i) { return c64{opt_rnd<float>(i), i % 5 == 0 ? 0.0f : rnd<float>()}; }
template <> bool opt_rnd<bool>(long long) { return (rng() & 1) != 0; }
// float16 and bfloat16 bits (one C type): any pattern, NaNs and Infs included.
template <> unsigned short opt_rnd<unsigned short>(long long) { return (unsigned short)rng(); }

template <class T> bool opt_same(T a, T b) { return same(a, b); }
template <> bool opt_same(bool a, bool b) { return a == b; }

const long long opt_sizes[] = {1, 17, 4099};
// Offsets of dst and of the inputs, in elements: all aligned, all one in,
// inputs one in.
const int opt_offs[][2] = {{0, 0}, {1, 1}, {0, 1}};

template <class O, class A, class F>
void check_unary(const char* name, void (*k)(O*, const A*, i64), F f) {
  for (long long n : opt_sizes)
    for (auto& off : opt_offs) {
      Buf<A> a(n, off[1]);
      Buf<O> d(n, off[0]);
      for (long long i = 0; i < n; i++) a.p[i] = opt_rnd<A>(i);
      emu_launch(egrid(n, sizeof(O) > sizeof(A) ? sizeof(O) : sizeof(A)), 256, [&] { k(d.p, a.p, n); });
      long long bad = 0;
      for (long long i = 0; i < n; i++) if (!opt_same(d.p[i], f(a.p[i]))) bad++;
      CHECK(bad == 0 && d.guard_ok(), "%s n=%lld off=%d,%d: %lld wrong", name, n, off[0], off[1], bad);
    }
}

template <class O, class A, class F>
void check_binary(const char* name, void (*k)(O*, const A*, const A*, i64), F f) {
  for (long long n : opt_sizes)
    for (auto& off : opt_offs) {
      Buf<A> a(n, off[1]), b(n, off[1]);
      Buf<O> d(n, off[0]);
      for (long long i = 0; i < n; i++) {
        a.p[i] = opt_rnd<A>(i);
        b.p[i] = i % 13 == 0 ? a.p[i] : opt_rnd<A>(i + 1);  // some equal pairs for the comparisons
      }
      emu_launch(egrid(n, sizeof(O) > sizeof(A) ? sizeof(O) : sizeof(A)), 256, [&] { k(d.p, a.p, b.p, n); });
      long long bad = 0;
      for (long long i = 0; i < n; i++) if (!opt_same(d.p[i], f(a.p[i], b.p[i]))) bad++;
      CHECK(bad == 0 && d.guard_ok(), "%s n=%lld off=%d,%d: %lld wrong", name, n, off[0], off[1], bad);
    }
}

template <class T, class F>
void check_where(const char* name, void (*k)(T*, const bool*, const T*, const T*, i64), F f) {
  for (long long n : opt_sizes)
    for (auto& off : opt_offs) {
      Buf<bool> c(n, off[1]);
      Buf<T> a(n, off[1]), b(n, off[1]), d(n, off[0]);
      for (long long i = 0; i < n; i++) c.p[i] = opt_rnd<bool>(i), a.p[i] = opt_rnd<T>(i), b.p[i] = opt_rnd<T>(i + 1);
      emu_launch(egrid(n, sizeof(T)), 256, [&] { k(d.p, c.p, a.p, b.p, n); });
      long long bad = 0;
      for (long long i = 0; i < n; i++) if (!opt_same(d.p[i], f(c.p[i], a.p[i], b.p[i]))) bad++;
      CHECK(bad == 0 && d.guard_ok(), "%s n=%lld off=%d,%d: %lld wrong", name, n, off[0], off[1], bad);
    }
}

// Clamp to [-2, 3], through the scalars' bits as Go passes them.
template <class T, class F>
void check_clamp(const char* name, void (*k)(T*, const T*, u64, u64, i64)) {
  const T lo = (T)(std::is_unsigned<T>::value ? 2 : -2), hi = (T)3;
  u64 blo = 0, bhi = 0;
  memcpy(&blo, &lo, sizeof(T));
  memcpy(&bhi, &hi, sizeof(T));
  const F f{lo, hi};
  for (long long n : opt_sizes)
    for (auto& off : opt_offs) {
      Buf<T> a(n, off[1]), d(n, off[0]);
      for (long long i = 0; i < n; i++) a.p[i] = opt_rnd<T>(i);
      emu_launch(egrid(n, sizeof(T)), 256, [&] { k(d.p, a.p, blo, bhi, n); });
      long long bad = 0;
      for (long long i = 0; i < n; i++) if (!opt_same(d.p[i], f(a.p[i]))) bad++;
      CHECK(bad == 0 && d.guard_ok(), "%s n=%lld off=%d,%d: %lld wrong", name, n, off[0], off[1], bad);
    }
}

#include "ops_gen_check.h"
