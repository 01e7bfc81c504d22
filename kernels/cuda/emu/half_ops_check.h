// half_ops_check.h: half_ops.cuh's kernels on float16 and bfloat16 against
// plain loops, included by harness.cpp after kernels_emu.cu. The reference
// of +, -, *, / is the exact operation in double rounded once to the type
// (f64_to_f16/bf16, checked bit for bit by half_check.h): the kernels'
// float32 arithmetic must give the correctly rounded result, bit for bit.
// Inputs mix any pattern (NaN, ±Inf, subnormals), values of a few bits at
// nearby exponents (whose sums and quotients land on rounding ties) and
// random values in [-8, 8); scalars cover the same kinds. Sizes are odd and
// span several blocks and the vector path's tail; views start unaligned.

template <> u16 rnd<u16>() { return (u16)rng(); }

struct HalfT {
  const char* name;
  bool bf;
  float widen(u16 h) const { return bf ? bf16_to_f32(h) : f16_to_f32(h); }
  u16 from64(double d) const { return bf ? f64_to_bf16(d) : f64_to_f16(d); }
  u16 from32(float f) const { return bf ? f32_to_bf16(f) : f32_to_f16(f); }
  // An input pattern: a third any pattern, a third k * 2^e for small k
  // and e (ties), a third uniform in [-8, 8).
  u16 rnd_val() const {
    switch (rng() % 3) {
      case 0: return (u16)rng();
      case 1: return from64(ldexp((double)((int)(rng() % 4097) - 2048), (int)(rng() % 14) - 13));
      default: return from64(std::uniform_real_distribution<double>(-8, 8)(rng));
    }
  }
};
static const HalfT half_types[2] = {{"f16", false}, {"bf16", true}};

// The exact op in double, rounded once (double holds a+b, a-b and a*b of
// two halves exactly, or close enough that rounding twice is innocuous:
// 53 >= 2p+2; a/b is double's correctly rounded quotient, likewise).
static u16 half_ref(const HalfT& h, int op, u16 a, u16 b) {
  const double x = h.widen(a), y = h.widen(b);
  switch (op) {
    case 0: return h.from64(x + y);
    case 1: return h.from64(x - y);
    case 2: return h.from64(x * y);
    default: return h.from64(x / y);
  }
}

typedef void (*HalfBinK)(u16*, const u16*, const u16*, i64);
typedef void (*HalfScalarK)(u16*, const u16*, u64, i64);
typedef void (*HalfStridedK)(u16*, const u16*, const u16*, i64, int, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64,
                             i64, i64, i64, i64, i64, i64, i64, i64);

static void check_half_elementwise(const HalfT& h, const HalfBinK* bin, const HalfScalarK* sc, const HalfStridedK* st) {
  static const char* ops[4] = {"add", "sub", "mul", "div"};
  const long long hsizes[] = {1, 7, 9, 1001, 4099, 20007};
  for (int op = 0; op < 4; op++) {
    for (long long n : hsizes)
      for (int lay = 0; lay < 3; lay++) {
        Buf<u16> a(n, lay >= 1), b(n, lay >= 1), d(n, lay == 2);
        for (long long i = 0; i < n; i++) a.p[i] = h.rnd_val(), b.p[i] = h.rnd_val();
        if (n > 8) {  // exact ties, both ways, in f16's and bf16's precision
          const int p = h.bf ? 8 : 11;
          a.p[0] = h.from64(1), b.p[0] = h.from64(ldexp(1, -p));                // 1 + half an ulp: to 1
          a.p[1] = h.from64(1 + ldexp(1, 1 - p)), b.p[1] = h.from64(ldexp(1, -p));  // to 1 + 2 ulps
          a.p[2] = h.from64(INFINITY), b.p[2] = h.from64(-INFINITY);
          a.p[3] = 0x7e01, b.p[3] = h.from64(2);  // a NaN with a payload
          a.p[4] = h.from64(0), b.p[4] = h.from64(-0.0);
        }
        emu_launch(egrid(n, 2), 256, [&] { bin[op](d.p, a.p, b.p, n); });
        long long bad = 0;
        for (long long i = 0; i < n; i++) bad += d.p[i] != half_ref(h, op, a.p[i], b.p[i]);
        CHECK(bad == 0 && d.guard_ok(), "%s_%s n=%lld layout=%d: %lld wrong, guard %d", ops[op], h.name, n, lay, bad,
              d.guard_ok());
      }
    // In place, and the scalar form with scalars of every kind.
    for (long long n : hsizes) {
      Buf<u16> a(n, n % 2 == 1), d(n, false);
      for (long long i = 0; i < n; i++) a.p[i] = h.rnd_val();
      std::vector<u16> a0(a.p, a.p + n);
      for (u16 s : {h.rnd_val(), h.from64(3), h.from64(0), (u16)0x7fc1u, h.from64(INFINITY), h.from64(ldexp(1, -9))}) {
        // The high bits of the scalar's word are not the value's: ignored.
        emu_launch(egrid(n, 2), 256, [&] { sc[op](d.p, a.p, 0xabcd000000000000ull | s, n); });
        long long bad = 0;
        for (long long i = 0; i < n; i++) bad += d.p[i] != half_ref(h, op, a0[i], s);
        CHECK(bad == 0 && d.guard_ok(), "%ss_%s n=%lld s=%#x: %lld wrong", ops[op], h.name, n, (unsigned)s, bad);
      }
      Buf<u16> b(n, n % 2 == 1);
      for (long long i = 0; i < n; i++) b.p[i] = h.rnd_val();
      emu_launch(egrid(n, 2), 256, [&] { bin[op](a.p, a.p, b.p, n); });
      long long bad = 0;
      for (long long i = 0; i < n; i++) bad += a.p[i] != half_ref(h, op, a0[i], b.p[i]);
      CHECK(bad == 0 && a.guard_ok(), "%s_%s in place n=%lld: %lld wrong", ops[op], h.name, n, bad);
    }
  }
  // Strided: harness.cpp's test_strided (general, row, column, swapped, in
  // place) with half_ref; rnd<u16> gives it any pattern.
  for (int op = 0; op < 4; op++) {
    char name[32];
    snprintf(name, sizeof name, "%s_strided_%s", ops[op], h.name);
    test_strided<u16>(name, st[op], [&](u16 a, u16 b) { return half_ref(h, op, a, b); });
  }
}

static void check_half_ops_for(const HalfT& h, const HalfBinK* bin, const HalfScalarK* sc, const HalfStridedK* st,
                               void (*axpy)(u16*, const u16*, u64, i64), HalfBinK relugrad,
                               void (*arange)(u16*, u64, u64, u64, i64),
                               void (*linspace)(u16*, double, double, double, double, double, i64, int, int),
                               void (*eyek)(u16*, i64, i64, i64)) {
  check_half_elementwise(h, bin, sc, st);

  // Axpy in place: alpha*x exact in float32, the sum rounded in float32,
  // then to the type.
  for (long long n : {1LL, 9LL, 1001LL, 20007LL})
    for (int off = 0; off < 2; off++) {
      Buf<u16> x(n, off), y(n, off);
      std::vector<u16> y0(n);
      for (long long i = 0; i < n; i++) x.p[i] = h.rnd_val(), y0[i] = y.p[i] = h.rnd_val();
      const u16 al = h.rnd_val();
      emu_launch(egrid(n, 2), 256, [&] { axpy(y.p, x.p, al, n); });
      long long bad = 0;
      for (long long i = 0; i < n; i++) {
        const float prod = h.widen(al) * h.widen(x.p[i]);
        bad += y.p[i] != h.from32(prod + h.widen(y0[i]));
      }
      CHECK(bad == 0 && y.guard_ok(), "axpy_%s n=%lld off=%d: %lld wrong", h.name, n, off, bad);
    }

  // ReluGrad: dy's pattern where x > 0 (NaN is not), else +0.
  for (long long n : {1LL, 9LL, 4099LL}) {
    Buf<u16> x(n, true), dy(n, true), d(n, false);
    for (long long i = 0; i < n; i++) x.p[i] = h.rnd_val(), dy.p[i] = h.rnd_val();
    emu_launch(egrid(n, 2), 256, [&] { relugrad(d.p, x.p, dy.p, n); });
    long long bad = 0;
    for (long long i = 0; i < n; i++) bad += d.p[i] != (h.widen(x.p[i]) > 0 ? dy.p[i] : (u16)0);
    CHECK(bad == 0 && d.guard_ok(), "relugrad_%s n=%lld: %lld wrong", h.name, n, bad);
  }

  // Arange: start + i*delta in float32 (delta = second - start, as Go
  // passes it), rounded once; dst[1] = second.
  for (auto ss : std::vector<std::pair<double, double>>{{0.1, 0.3}, {-100, 0.7}, {3, -1}, {0, 1}}) {
    const u16 start = h.from64(ss.first), step = h.from64(ss.second);
    const u16 second = h.from32(h.widen(start) + h.widen(step));
    const float delta = h.widen(second) - h.widen(start);
    u64 bd = 0;
    memcpy(&bd, &delta, 4);
    for (long long n : {1LL, 2LL, 3LL, 17LL, 1001LL, 4099LL}) {
      Buf<u16> d(n, n % 2 == 1);
      emu_launch(1 + (unsigned)(n % 3), 256, [&] { arange(d.p, start, second, bd, n); });
      long long bad = 0;
      for (long long i = 0; i < n; i++)
        bad += d.p[i] != (i == 1 ? second : h.from32(h.widen(start) + (float)i * delta));
      CHECK(bad == 0 && d.guard_ok(), "arange_%s start=%g step=%g n=%lld: %lld wrong", h.name, ss.first, ss.second, n,
            bad);
    }
  }

  // Linspace: index.cuh's arithmetic in double, rounded once.
  for (auto ss : std::vector<std::pair<double, double>>{{-1.5, 2.25}, {0.1, 1e-3}, {0, 1e5}})
    for (long long n : {1LL, 2LL, 5LL, 51LL, 4099LL})
      for (int endpoint = 0; endpoint < 2; endpoint++)
        for (int zero = 0; zero < 2; zero++) {
          const double start = ss.first, stop = ss.second;
          const double div = endpoint ? (double)(n - 1) : (double)n;
          const double delta = stop - start, step = div > 0 ? delta / div : delta;
          Buf<u16> d(n, false);
          emu_launch(2, 256, [&] { linspace(d.p, start, step, delta, div > 0 ? div : 1, stop, n, zero, endpoint); });
          long long bad = 0;
          for (long long i = 0; i < n; i++) {
            double y = zero ? ((double)i / (div > 0 ? div : 1)) * delta : (double)i * step;
            y += start;
            if (endpoint && i == n - 1 && n > 1) y = stop;
            bad += d.p[i] != h.from64(y);
          }
          CHECK(bad == 0 && d.guard_ok(), "linspace_%s [%g, %g] n=%lld endpoint=%d stepzero=%d: %lld wrong", h.name,
                start, stop, n, endpoint, zero, bad);
        }

  // Eye: the pattern of 1 on diagonal k, +0 elsewhere.
  const u16 one = h.from64(1);
  for (auto sh : std::vector<std::pair<long long, long long>>{{1, 1}, {4, 7}, {7, 4}, {100, 33}, {300, 300}})
    for (long long kk : {-5LL, 0LL, 3LL, 40LL}) {
      const long long r = sh.first, c = sh.second;
      Buf<u16> d(r * c, true);
      emu_launch(1 + (unsigned)(rng() % 3), 256, [&] { eyek(d.p, r, c, kk); });
      long long bad = 0;
      for (long long i = 0; i < r; i++)
        for (long long j = 0; j < c; j++) bad += d.p[i * c + j] != (j - i == kk ? one : (u16)0);
      CHECK(bad == 0 && d.guard_ok(), "eye_%s %lldx%lld k=%lld: %lld wrong", h.name, r, c, kk, bad);
    }
}

// The eye and linspace kernels take the 2-byte struct types (F16Bits,
// BF16Bits): the same memory, named by type for their overloads.
#define HALF_OPS_CHECK(S, I)                                                                                           \
  {                                                                                                                    \
    const HalfBinK bin[4] = {gocuda_add_##S, gocuda_sub_##S, gocuda_mul_##S, gocuda_div_##S};                          \
    const HalfScalarK sc[4] = {gocuda_adds_##S, gocuda_subs_##S, gocuda_muls_##S, gocuda_divs_##S};                    \
    const HalfStridedK st[4] = {gocuda_add_strided_##S, gocuda_sub_strided_##S, gocuda_mul_strided_##S,                \
                                gocuda_div_strided_##S};                                                               \
    check_half_ops_for(                                                                                                \
        half_types[I], bin, sc, st, gocuda_axpy_##S, gocuda_relugrad_##S, gocuda_arange_##S,                           \
        [](u16* d, double a, double b, double c, double e, double f, i64 n, int z, int ep) {                           \
          gocuda_linspace_##S((decltype(eye_bits_##S))d, a, b, c, e, f, n, z, ep);                                     \
        },                                                                                                             \
        [](u16* d, i64 r, i64 c, i64 k) { gocuda_eye_##S((decltype(eye_bits_##S))d, r, c, k); });                      \
    test_concat<u16>("concat_" #S, gocuda_concat_##S);                                                                 \
    test_take<u16>("take_" #S, gocuda_take_##S);                                                                       \
    test_scatter<u16>("scatter_" #S, gocuda_scatter_##S, false, 0);                                                    \
  }

static F16Bits* eye_bits_f16;
static BF16Bits* eye_bits_bf16;

void check_half_ops() {
  HALF_OPS_CHECK(f16, 0)
  HALF_OPS_CHECK(bf16, 1)
}
