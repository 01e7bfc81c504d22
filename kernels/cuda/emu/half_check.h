// half_check.h: half.cuh's conversions against an independent reference,
// bit for bit: every one of the 65 536 float16 and bfloat16 patterns
// widened, and rounding from float32 and float64 at every value, every
// halfway point and one ulp on either side of it, plus subnormals, the
// overflow threshold, ±Inf and NaNs. The reference is arithmetic in double
// (ldexp and comparisons of exact distances), not bit manipulation. On a
// GPU the float32 paths are the hardware's cvt; this checks the emulator's
// integer path (float64's everywhere) and the rules they share.

// half_value is the value of the non-NaN pattern h (sign cleared) of a
// layout, with the Inf pattern read as the next power of two past the
// largest finite value, which is where rounding sends values to Inf.
inline double half_value(unsigned h, bool bf) {
  const int fb = bf ? 7 : 10, bias = bf ? 127 : 15;
  const unsigned ex = h >> fb, m = h & ((1u << fb) - 1);
  return ex == 0 ? ldexp((double)m, 1 - bias - fb) : ldexp((double)((1u << fb) + m), (int)ex - bias - fb);
}

// half_ref rounds x (not NaN) to the nearest pattern, ties to the even one.
inline unsigned half_ref(double x, bool bf) {
  const unsigned inf = bf ? 0x7f80u : 0x7c00u, sign = signbit(x) ? 0x8000u : 0;
  const double a = fabs(x);
  if (a >= half_value(inf, bf)) return sign | inf;
  unsigned lo = 0, hi = inf;  // value(lo) <= a < value(hi)
  while (hi - lo > 1) {
    const unsigned mid = (lo + hi) / 2;
    if (half_value(mid, bf) <= a) lo = mid; else hi = mid;
  }
  const double dl = a - half_value(lo, bf), dh = half_value(hi, bf) - a;
  const unsigned r = dl < dh ? lo : dh < dl ? hi : (lo & 1 ? hi : lo);
  return sign | r;
}

inline unsigned emu_f32_bits(float f) { unsigned u; memcpy(&u, &f, 4); return u; }

void check_half() {
  for (int bf = 0; bf < 2; bf++) {
    const char* name = bf ? "bf16" : "f16";
    const unsigned inf = bf ? 0x7f80u : 0x7c00u;
    auto widen = [&](unsigned h) { return bf ? bf16_to_f32((u16)h) : f16_to_f32((u16)h); };
    auto from32 = [&](float f) { return (unsigned)(bf ? f32_to_bf16(f) : f32_to_f16(f)); };
    auto from64 = [&](double d) { return (unsigned)(bf ? f64_to_bf16(d) : f64_to_f16(d)); };
    long long bad = 0;
    for (unsigned h = 0; h < 65536; h++) {
      const unsigned mag = h & 0x7fffu;
      const float w = widen(h);
      if (mag > inf) {  // NaN: sign and payload kept, and any NaN rounds back to 0x7fff
        const unsigned fb = bf ? 7 : 10, want = (h & 0x8000u) << 16 | 0x7f800000u | (h & ((1u << fb) - 1)) << (23 - fb);
        if (emu_f32_bits(w) != want || from32(w) != 0x7fffu || from64((double)w) != 0x7fffu) bad++;
        continue;
      }
      const double v = mag == inf ? INFINITY : half_value(mag, bf);
      const double want = (h & 0x8000u) ? -v : v;
      if (emu_f32_bits(w) != emu_f32_bits((float)want)) bad++;
      if (from32(w) != h || from64(want) != h) bad++;  // exact values come back
    }
    CHECK(bad == 0, "%s: %lld of the 65536 patterns widen or come back wrong", name, bad);

    // Rounding: each gap between neighbours, at its halfway point and around it.
    bad = 0;
    long long n = 0;
    for (unsigned h = 0; h < inf; h++)
      for (int sgn = 0; sgn < 2; sgn++) {
        const double a = half_value(h, bf), b = half_value(h + 1, bf), mid = (a + b) / 2;
        const double xs[] = {mid, nextafter(mid, 0.0), nextafter(mid, INFINITY), a + (b - a) / 4, b - (b - a) / 8};
        for (double x : xs) {
          if (sgn) x = -x;
          n++;
          if (from64(x) != half_ref(x, bf)) bad++;
          const float f = (float)x;  // the float32 near it (the mids are exact in float32)
          if (from32(f) != half_ref((double)f, bf)) bad++;
          const float fs[] = {nextafterf(f, 0.0f), nextafterf(f, INFINITY)};
          for (float g : fs) if (from32(g) != half_ref((double)g, bf)) bad++;
        }
      }
    CHECK(bad == 0, "%s: %lld of %lld roundings wrong", name, bad, n);

    // The edges: zeros, float32 and float64 subnormals, huge values, Infs, NaNs.
    bad = 0;
    const double edges[] = {0.0, -0.0, 1e-45, -1e-45, 1.2e-38, 5.9604644775390625e-08, 2.98023223876953125e-08,
                            2.98023223876953126e-08, 65504.0, 65519.99, 65520.0, -65520.0, 3.3895313892515355e38,
                            3.4e38, 1e300, -1e300, 4.9e-324, INFINITY, -INFINITY};
    for (double x : edges) {
      if (from64(x) != half_ref(x, bf)) bad++;
      const float f = (float)x;
      if (from32(f) != half_ref((double)f, bf)) bad++;
    }
    if (from32(NAN) != 0x7fffu || from32(-NAN) != 0x7fffu || from64(-NAN) != 0x7fffu) bad++;
    CHECK(bad == 0, "%s: %lld edge values round wrong", name, bad);
  }
  // The fill kernels (2-byte pattern), on the vector path, its tail and unaligned.
  for (long long n : {1LL, 9LL, 4099LL})
    for (int off = 0; off < 2; off++) {
      Buf<u16> d(n, off);
      emu_launch(egrid(n, 2), 256, [&] { gocuda_fill_bf16(d.p, 0x3f80u, n); });
      long long bad = 0;
      for (long long i = 0; i < n; i++) if (d.p[i] != 0x3f80u) bad++;
      CHECK(bad == 0 && d.guard_ok(), "fill_bf16 n=%lld off=%d: %lld wrong", n, off, bad);
    }
}
