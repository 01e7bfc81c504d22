// harness_strided_copy.h: checks of strided_copy.cuh's kernels against
// plain loops, included by harness.cpp: the tiled transposition (odd, prime
// and tile-multiple sizes, batches, padded rows, a grid smaller than the
// tiles so that blocks loop) and the general copy (random layouts of up to
// STRIDED_DIMS dimensions, broadcast sources, a grid smaller than n so the
// carries run), for elements of 1, 4 and 8 bytes. Elements dst does not
// cover must keep their sentinel.

template <class E>
E sc_val(long long i) { return (E)(i * 2654435761ull + 12345); }

template <class E>
void test_transpose_one(const char* name, void (*k)(E*, const E*, i64, i64, i64, i64, i64, i64, i64), long long batch,
                        long long rows, long long cols, long long pad) {
  // src: element (b, r, c) at b*sB + r + c*sCol (contiguous along rows);
  // dst: at b*dB + r*dRow + c (contiguous along cols); pads left unused.
  const long long sCol = rows + pad, sB = cols * sCol + pad, dRow = cols + pad, dB = rows * dRow + pad;
  std::vector<E> src(batch * sB + 1), dst(batch * dB + 1, (E)0x5A);
  for (size_t i = 0; i < src.size(); i++) src[i] = sc_val<E>(i);
  const long long tiles = batch * ((rows + 31) / 32) * ((cols + 31) / 32);
  const unsigned grid = (unsigned)std::max(1ll, std::min(tiles, (long long)SMS * 8));
  emu_launch(grid, 256, [&] { k(dst.data(), src.data(), batch, rows, cols, dB, dRow, sB, sCol); });
  std::vector<char> hit(dst.size(), 0);
  long long bad = 0;
  for (long long b = 0; b < batch; b++)
    for (long long r = 0; r < rows; r++)
      for (long long c = 0; c < cols; c++) {
        const long long o = b * dB + r * dRow + c;
        hit[o] = 1;
        if (dst[o] != src[b * sB + r + c * sCol]) bad++;
      }
  for (size_t i = 0; i < dst.size(); i++)
    if (!hit[i] && dst[i] != (E)0x5A) bad++;
  CHECK(bad == 0, "%s batch=%lld rows=%lld cols=%lld pad=%lld: %lld wrong", name, batch, rows, cols, pad, bad);
}

template <class E>
void test_transpose(const char* name, void (*k)(E*, const E*, i64, i64, i64, i64, i64, i64, i64)) {
  const long long shapes[][3] = {{1, 1, 2},  {1, 2, 1},   {1, 3, 5},  {1, 32, 32}, {1, 31, 33},
                                 {1, 64, 96}, {2, 37, 41}, {3, 7, 64}, {1, 97, 131}, {5, 1, 33}};
  for (auto& s : shapes)
    for (long long pad = 0; pad < 2; pad++) test_transpose_one<E>(name, k, s[0], s[1], s[2], pad * 3);
}

template <class E>
void test_copy_strided(const char* name, void (*k)(E*, const E*, i64, STRIDED_PARAMS(d), STRIDED_PARAMS(sa), STRIDED_PARAMS(sb))) {
  for (int trial = 0; trial < 60; trial++) {
    const int nd = 1 + (int)(rng() % STRIDED_DIMS);
    i64 d[STRIDED_DIMS], sd[STRIDED_DIMS], ss[STRIDED_DIMS];
    for (int i = 0; i < STRIDED_DIMS; i++) d[i] = 1, sd[i] = 0, ss[i] = 0;
    long long n = 1;
    for (int i = STRIDED_DIMS - nd; i < STRIDED_DIMS; i++) {
      d[i] = 1 + (i64)(rng() % (nd <= 2 ? 67 : 7));
      n *= d[i];
    }
    // src: the dimensions in a random order, each with a step of 1..3, and
    // now and then a broadcast (stride 0); dst: row-major, or permuted with
    // gaps.
    auto layout = [&](i64* st, bool allowZero) {
      int order[STRIDED_DIMS];
      for (int i = 0; i < STRIDED_DIMS; i++) order[i] = i;
      for (int i = STRIDED_DIMS - 1; i > 0; i--) std::swap(order[i], order[rng() % (i + 1)]);
      i64 acc = 1;
      for (int j = 0; j < STRIDED_DIMS; j++) {
        const int i = order[j];
        if (allowZero && rng() % 5 == 0) {
          st[i] = 0;
          continue;
        }
        const i64 step = 1 + (i64)(rng() % 3);
        st[i] = acc * step;
        acc *= d[i] * step;
      }
    };
    layout(ss, true);
    if (trial % 3 == 0) {
      i64 acc = 1;
      for (int i = STRIDED_DIMS - 1; i >= 0; i--) sd[i] = acc, acc *= d[i];
    } else {
      layout(sd, false);
    }
    long long es = 1, ed = 1;
    for (int i = 0; i < STRIDED_DIMS; i++) es += (d[i] - 1) * ss[i], ed += (d[i] - 1) * sd[i];
    std::vector<E> src(es), dst(ed, (E)0x5A);
    for (long long i = 0; i < es; i++) src[i] = sc_val<E>(i);
    long long b = (n + 255) / 256;
    if (b > SMS * 8) b = SMS * 8;
    emu_launch((unsigned)b, 256, [&] {
      k(dst.data(), src.data(), n, d[0], d[1], d[2], d[3], d[4], d[5], sd[0], sd[1], sd[2], sd[3], sd[4], sd[5], ss[0], ss[1],
        ss[2], ss[3], ss[4], ss[5]);
    });
    std::vector<char> hit(ed, 0);
    long long bad = 0;
    for (long long i = 0; i < n; i++) {
      long long x = i, od = 0, os = 0;
      for (int k2 = STRIDED_DIMS - 1; k2 >= 0; k2--) {
        const long long c = x % d[k2];
        x /= d[k2];
        od += c * sd[k2];
        os += c * ss[k2];
      }
      hit[od] = 1;
      if (dst[od] != src[os]) bad++;
    }
    for (long long i = 0; i < ed; i++)
      if (!hit[i] && dst[i] != (E)0x5A) bad++;
    CHECK(bad == 0, "%s trial %d nd=%d n=%lld: %lld wrong", name, trial, nd, n, bad);
  }
}

void test_strided_copies() {
  test_transpose<u8>("transpose_u8", gocuda_transpose_u8);
  test_transpose<unsigned>("transpose_f32", gocuda_transpose_f32);
  test_transpose<u64>("transpose_c64", gocuda_transpose_c64);
  test_copy_strided<u8>("copy_strided_u8", gocuda_copy_strided_u8);
  test_transpose<unsigned short>("transpose_bf16", gocuda_transpose_bf16);
  test_copy_strided<unsigned short>("copy_strided_f16", gocuda_copy_strided_f16);
  test_copy_strided<unsigned>("copy_strided_i32", gocuda_copy_strided_i32);
  test_copy_strided<u64>("copy_strided_f64", gocuda_copy_strided_f64);
}
