// optable_check.h: the emulator's checks of the kernels generated from the
// table (ops_gen.cuh), included by harness.cpp; ops_gen_check.h (generated)
// calls them once per kernel. Each runs the kernel on sizes that take the
// vector path, its tail and several blocks (and one block, whose threads
// take many vectors each: the unrolled groups), with every operand aligned,
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
template <> i8 opt_rnd<i8>(long long) { return (i8)(u8)rng(); }
template <> i16 opt_rnd<i16>(long long) { return (i16)(unsigned short)rng(); }
template <> u32 opt_rnd<u32>(long long) { return (u32)rng(); }

template <class T> bool opt_same(T a, T b) { return same(a, b); }
template <> bool opt_same(bool a, bool b) { return a == b; }

const long long opt_sizes[] = {1, 17, 4099};
// Offsets of dst and of the inputs, in elements: all aligned, all one in,
// inputs one in.
const int opt_offs[][2] = {{0, 0}, {1, 1}, {0, 1}};

// The launches of a check, few enough for the emulator (every CUDA thread
// an OS thread): every size and offset on the Go side's grid (a thread per
// vector, so each thread takes one); every set of scalar inputs (sc, below
// 1 << inputs) at the largest size, aligned and with the inputs one element
// in; and a single block over more elements, in which each thread takes
// many vectors (the drivers' EW_UNROLL groups, full and partial), with no
// scalar and with the last input one.
struct OptCase {
  long long n;
  int off;  // an index of opt_offs
  unsigned sc;
  bool one_block;
};
inline std::vector<OptCase> opt_cases(int inputs) {
  std::vector<OptCase> cs;
  for (long long n : opt_sizes)
    for (int o = 0; o < 3; o++) cs.push_back({n, o, 0, false});
  for (unsigned sc = 1; sc < (1u << inputs); sc++)
    for (int o : {0, 2}) cs.push_back({4099, o, sc, false});
  cs.push_back({9001, 0, 0, true});
  if (inputs > 1) cs.push_back({9001, 2, 1u << (inputs - 1), true});
  return cs;
}
inline unsigned opt_grid(const OptCase& c, int size) { return c.one_block ? 1 : egrid(c.n, size); }

template <class O, class A, class F>
void check_unary(const char* name, void (*k)(O*, const A*, i64), F f) {
  for (const OptCase& c : opt_cases(0)) {
    const long long n = c.n;
    Buf<A> a(n, opt_offs[c.off][1]);
    Buf<O> d(n, opt_offs[c.off][0]);
    for (long long i = 0; i < n; i++) a.p[i] = opt_rnd<A>(i);
    emu_launch(opt_grid(c, sizeof(O) > sizeof(A) ? sizeof(O) : sizeof(A)), 256, [&] { k(d.p, a.p, n); });
    long long bad = 0;
    for (long long i = 0; i < n; i++) if (!opt_same(d.p[i], f(a.p[i]))) bad++;
    CHECK(bad == 0 && d.guard_ok(), "%s n=%lld off=%d one_block=%d: %lld wrong", name, n, c.off, c.one_block, bad);
  }
  // A narrowing kernel (econv's wide chunks: a 16-byte store each) at
  // half a chunk in: dst aligned to 8 bytes or less and the input to 16,
  // which emap1's narrower chunks take (the views' middle fallback).
  if constexpr (sizeof(O) < sizeof(A)) {
    const int off = ConvK<O, A, CONV_MAXIN>::value / 2;
    const long long n = 4099;
    Buf<A> a(n + off, false);
    Buf<O> d(n + off, false);
    for (long long i = 0; i < n + off; i++) a.p[i] = opt_rnd<A>(i);
    emu_launch(egrid(n, sizeof(A)), 256, [&] { k(d.p + off, a.p + off, n); });
    long long bad = 0;
    for (long long i = off; i < n + off; i++) if (!opt_same(d.p[i], f(a.p[i]))) bad++;
    CHECK(bad == 0 && d.guard_ok(), "%s n=%lld half a chunk in (%d): %lld wrong", name, n, off, bad);
  }
}

// An input of n elements at offset off, or, with scalar, of one element
// (at offset off too: a scalar need not be aligned).
template <class T>
struct OptIn {
  Buf<T> b;
  bool scalar;
  OptIn(long long n, int off, bool s) : b(s ? 1 : n, off), scalar(s) {}
  T at(long long i) const { return b.p[scalar ? 0 : i]; }
};

// Binary and comparison kernels, with every set of scalar inputs (sc: bit 0
// a, bit 1 b).
template <class O, class A, class F>
void check_binary(const char* name, void (*k)(O*, const A*, const A*, i64, unsigned), F f) {
  const int size = sizeof(O) > sizeof(A) ? sizeof(O) : sizeof(A);
  for (const OptCase& c : opt_cases(2)) {
    const long long n = c.n;
    const unsigned sc = c.sc;
    OptIn<A> a(n, opt_offs[c.off][1], sc & 1), b(n, opt_offs[c.off][1], sc & 2);
    Buf<O> d(n, opt_offs[c.off][0]);
    for (long long i = 0; i < a.b.n; i++) a.b.p[i] = opt_rnd<A>(i);
    for (long long i = 0; i < b.b.n; i++)
      b.b.p[i] = i % 13 == 0 && i < a.b.n ? a.b.p[i] : opt_rnd<A>(i + 1);  // some equal pairs for the comparisons
    emu_launch(opt_grid(c, size), 256, [&] { k(d.p, a.b.p, b.b.p, n, sc); });
    long long bad = 0;
    for (long long i = 0; i < n; i++) if (!opt_same(d.p[i], f(a.at(i), b.at(i)))) bad++;
    CHECK(bad == 0 && d.guard_ok() && a.b.guard_ok() && b.b.guard_ok(), "%s n=%lld off=%d sc=%u one_block=%d: %lld wrong", name, n,
          c.off, sc, c.one_block, bad);
  }
}

// Where, with every set of scalar inputs (sc: bit 0 cond, bit 1 a, bit 2 b);
// the condition is one element in when the inputs are, so that bool chunks
// of every width take the unaligned path too.
template <class T, class F>
void check_where(const char* name, void (*k)(T*, const bool*, const T*, const T*, i64, unsigned), F f) {
  for (const OptCase& c : opt_cases(3)) {
    const long long n = c.n;
    const unsigned sc = c.sc;
    const int off = opt_offs[c.off][1];
    OptIn<bool> w(n, off, sc & 1);
    OptIn<T> a(n, off, sc & 2), b(n, off, sc & 4);
    Buf<T> d(n, opt_offs[c.off][0]);
    for (long long i = 0; i < w.b.n; i++) w.b.p[i] = opt_rnd<bool>(i);
    for (long long i = 0; i < a.b.n; i++) a.b.p[i] = opt_rnd<T>(i);
    for (long long i = 0; i < b.b.n; i++) b.b.p[i] = opt_rnd<T>(i + 1);
    emu_launch(opt_grid(c, sizeof(T)), 256, [&] { k(d.p, w.b.p, a.b.p, b.b.p, n, sc); });
    long long bad = 0;
    for (long long i = 0; i < n; i++) if (!opt_same(d.p[i], f(w.at(i), a.at(i), b.at(i)))) bad++;
    CHECK(bad == 0 && d.guard_ok(), "%s n=%lld off=%d sc=%u one_block=%d: %lld wrong", name, n, c.off, sc, c.one_block, bad);
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
