// harness_cubsort.h: cubsort.cuh's own kernels on the emulator (included by
// harness.cpp after harness_sort.h, whose ref_argsort and sort_rnd it
// uses), as kernels/cubsort_gpu.go runs them around CUB's onesweep passes,
// which the emulator has not (no CUB): gocuda_cub_key_* on several blocks,
// then, standing in for CUB's 4 stable digit passes, std::stable_sort of
// (key, position) by key, then gocuda_cub_unkey_* (a sort, in place) or
// gocuda_cub_widen_u32 (an argsort). Checked: the digit counts against the
// keys', the argsort against ref_argsort (sort.cuh's stable order), the sort
// as a permutation of x's bits in the order cubsort.cuh promises (by value,
// NaNs last ascending and first descending; -0 before +0 and NaNs by their
// bits ascending, the reverse descending), in place and not.

// cub_order_key is the sort's key as cubsort.cuh defines it, from the bits.
template <class T>
u32 cub_order_key(u32 b, bool desc) {
  const u32 k = CubKey<T>::key(b);
  return desc ? ~k : k;
}

template <class T>
void test_cubsort_one(void (*key)(const u32*, u32*, u32*, u32*, i64, int), void (*unkey)(u32*, i64, int),
                      const char* name, i64 n, int kind, bool desc, bool argsort, bool inplace, unsigned grid) {
  std::vector<T> x(n + 1);
  for (i64 i = 0; i < n; i++) x[i] = sort_rnd<T>(kind);
  if constexpr (std::is_same_v<T, float>) {
    // NaNs of other payloads and signs: a sort orders them by their bits.
    const u32 nans[] = {0x7f800001u, 0xffffffffu, 0x7fc00001u, 0xff800001u};
    for (i64 i = 0; i < n; i += 37) memcpy(&x[i], &nans[(i / 37) % 4], 4);
  }
  std::vector<u32> xb(n + 1), keys(n + 1, 0xdeadbeefu), pos(n + 1, 0xdeadbeefu), bins(CUBSORT_PASSES * 256 + 1, 0);
  for (i64 i = 0; i < n; i++) memcpy(&xb[i], &x[i], 4);
  const int flags = desc ? SRT_DESC : 0;
  u32* kp = inplace ? xb.data() : keys.data();
  const std::vector<u32> x0 = xb;
  emu_launch(grid, 256, [&] { key(xb.data(), kp, argsort ? pos.data() : nullptr, bins.data(), n, flags); });
  // The digit counts of every pass, from the keys written.
  std::vector<u32> want(CUBSORT_PASSES * 256, 0);
  for (i64 i = 0; i < n; i++)
    for (int p = 0; p < CUBSORT_PASSES; p++) want[p * 256 + ((kp[i] >> (8 * p)) & 255u)]++;
  CHECK(std::equal(want.begin(), want.end(), bins.begin()) && bins[CUBSORT_PASSES * 256] == 0,
        "%s n=%lld grid=%u: digit counts", name, (long long)n, grid);
  CHECK(kp[n] == (inplace ? x0[n] : 0xdeadbeefu) && pos[n] == 0xdeadbeefu, "%s n=%lld: wrote past the end", name,
        (long long)n);
  // CUB's passes: a stable sort by the 32-bit key.
  std::vector<i64> ord(n);
  std::iota(ord.begin(), ord.end(), 0);
  std::stable_sort(ord.begin(), ord.end(), [&](i64 a, i64 b) { return kp[a] < kp[b]; });
  if (argsort) {
    std::vector<u32> ps(n + 1, 0xdeadbeefu);
    for (i64 i = 0; i < n; i++) ps[i] = pos[ord[i]];
    std::vector<i64> out(n + 1, -7);
    emu_launch(grid, 256, [&] { gocuda_cub_widen_u32(ps.data(), out.data(), n); });
    const std::vector<i64> ref = ref_argsort<T>(x.data(), n, desc);
    i64 bad = 0;
    for (i64 i = 0; i < n; i++) bad += out[i] != ref[i];
    CHECK(bad == 0 && out[n] == -7, "%s argsort n=%lld kind=%d desc=%d grid=%u: %lld positions wrong", name,
          (long long)n, kind, desc, grid, (long long)bad);
    return;
  }
  std::vector<u32> sorted(n + 1, 0xdeadbeefu);
  for (i64 i = 0; i < n; i++) sorted[i] = kp[ord[i]];
  emu_launch(grid, 256, [&] { unkey(sorted.data(), n, flags); });
  // The reference: x's bits stably sorted by the promised key.
  std::vector<u32> ref(x0.begin(), x0.begin() + n);
  std::stable_sort(ref.begin(), ref.end(),
                   [&](u32 a, u32 b) { return cub_order_key<T>(a, desc) < cub_order_key<T>(b, desc); });
  i64 bad = 0;
  for (i64 i = 0; i < n; i++) bad += sorted[i] != ref[i];
  CHECK(bad == 0 && sorted[n] == 0xdeadbeefu, "%s sort n=%lld kind=%d desc=%d inplace=%d grid=%u: %lld wrong", name,
        (long long)n, kind, desc, inplace, grid, (long long)bad);
  // ... which is the value order, NaNs last ascending (first descending),
  // -0 and +0 equal: sort.cuh's key never decreases (increases, descending).
  i64 unordered = 0;
  for (i64 i = 1; i < n; i++) unordered += sort_key<T>(ref[i - 1], desc) > sort_key<T>(ref[i], desc);
  CHECK(unordered == 0, "%s sort n=%lld desc=%d: %lld pairs out of value order", name, (long long)n, desc,
        (long long)unordered);
}

template <class T>
void test_cubsort_type(void (*key)(const u32*, u32*, u32*, u32*, i64, int), void (*unkey)(u32*, i64, int),
                       const char* name) {
  for (i64 n : {1LL, 255LL, 257LL, 4097LL, 20011LL})
    for (int kind = 0; kind < 4; kind++)
      for (bool desc : {false, true})
        for (int mode = 0; mode < 3; mode++)  // sort, sort in place, argsort
          test_cubsort_one<T>(key, unkey, name, n, kind, desc, mode == 2, mode == 1, n < 1000 ? 2u : 3u);
}

// The bijections give every bit pattern back (spot checks over the 32 bits,
// every sign, exponent and NaN boundary).
template <class T>
void test_cubkey_bijection(const char* name) {
  const u32 edge[] = {0u, 1u, 0x007fffffu, 0x00800000u, 0x7f7fffffu, 0x7f800000u, 0x7f800001u, 0x7fc00000u,
                      0x7fffffffu, 0x80000000u, 0x80000001u, 0x807fffffu, 0xff800000u, 0xff800001u, 0xffc00000u,
                      0xffffffffu};
  i64 bad = 0;
  for (u32 b : edge) bad += CubKey<T>::unkey(CubKey<T>::key(b)) != b;
  for (int i = 0; i < 100000; i++) {
    const u32 b = (u32)rng();
    bad += CubKey<T>::unkey(CubKey<T>::key(b)) != b;
  }
  CHECK(bad == 0, "%s: %lld keys do not invert", name, (long long)bad);
}

void test_cubsort_all() {
  test_cubkey_bijection<float>("CubKey<float>");
  test_cubkey_bijection<int>("CubKey<int>");
  test_cubkey_bijection<u32>("CubKey<u32>");
  // float32's order at its edges: -Inf first, -0 before +0, NaNs after +Inf.
  CHECK(CubKey<float>::key(0xff800000u) == 0 && CubKey<float>::key(0x80000000u) < CubKey<float>::key(0u) &&
            CubKey<float>::key(0x7f800000u) < CubKey<float>::key(0x7f800001u) &&
            CubKey<float>::key(0x7fffffffu) < CubKey<float>::key(0xffffffffu),
        "CubKey<float>: the order at -Inf, zero and NaN");
  test_cubsort_type<float>(gocuda_cub_key_f32, gocuda_cub_unkey_f32, "cub f32");
  test_cubsort_type<int>(gocuda_cub_key_i32, gocuda_cub_unkey_i32, "cub i32");
  test_cubsort_type<u32>(gocuda_cub_key_u32, gocuda_cub_unkey_u32, "cub u32");
}
