// harness_strided_copy.h: checks of strided_copy.cuh's kernels against
// plain loops, included by harness.cpp: the transposition's shared-memory
// tiles for elements of 1, 2, 4, 8 and 16 bytes (odd, prime and
// tile-multiple sizes, so that both the whole tiles' unchecked path and the
// edges' checked one run; aligned layouts and views at odd offsets and
// strides), batches, padded rows, grids smaller than the tiles so that
// blocks loop; and the general copy (random layouts of up to
// STRIDED_DIMS dimensions, broadcast sources, a grid smaller than n so the
// carries run), for elements of 1, 4 and 8 bytes. Elements dst does not
// cover must keep their sentinel.

// A 16-byte element, which no dtype has yet: the templates take it.
struct alignas(16) E16 {
  u64 lo, hi;
  E16() = default;
  E16(u64 v) : lo(v), hi(~v * 3) {}
  bool operator==(const E16& o) const { return lo == o.lo && hi == o.hi; }
  bool operator!=(const E16& o) const { return !(*this == o); }
};

template <class E>
E sc_val(long long i) { return (E)(i * 2654435761ull + 12345); }

// The transposition's layouts: aligned (strides rounded up to 8 elements,
// pointers at the start of a 16-byte aligned buffer), or odd (strides of
// rows+3 and cols+3, pointers one element in). Both take the same tiles;
// the odd one checks that nothing assumes alignment.
enum TrLayout { trAligned, trOdd };

// run(dst, src, batch, rows, cols, dB, dRow, sB, sCol, grid) launches one
// transposition.
template <class E, class Run>
void test_transpose_one(const char* name, Run run, long long batch, long long rows, long long cols, TrLayout lay,
                        unsigned gridCap) {
  auto up8 = [](long long x) { return (x + 7) / 8 * 8; };
  const long long sCol = lay == trAligned ? up8(rows) : rows + 3, dRow = lay == trAligned ? up8(cols) + 8 : cols + 3;
  const long long sB = lay == trAligned ? cols * sCol + 8 : cols * sCol + 1, dB = lay == trAligned ? rows * dRow : rows * dRow + 5;
  const long long off = lay == trAligned ? 0 : 1;
  std::vector<E> srcv(off + batch * sB + 1), dstv(off + batch * dB + 1, (E)0x5A);
  for (size_t i = 0; i < srcv.size(); i++) srcv[i] = sc_val<E>(i);
  E* dst = dstv.data() + off;
  const E* src = srcv.data() + off;
  // Go's grid (transposeGrid: a block a tile), capped so that blocks loop.
  const long long S = TR_S(E);
  const long long units = batch * ((rows + S - 1) / S) * ((cols + S - 1) / S);
  const unsigned grid = (unsigned)std::max(1ll, std::min(units, (long long)gridCap));
  run(dst, src, batch, rows, cols, dB, dRow, sB, sCol, grid);
  std::vector<char> hit(dstv.size(), 0);
  long long bad = 0;
  for (long long b = 0; b < batch; b++)
    for (long long r = 0; r < rows; r++)
      for (long long c = 0; c < cols; c++) {
        const long long o = off + b * dB + r * dRow + c;
        hit[o] = 1;
        if (dstv[o] != srcv[off + b * sB + r + c * sCol]) bad++;
      }
  for (size_t i = 0; i < dstv.size(); i++)
    if (!hit[i] && dstv[i] != (E)0x5A) bad++;
  CHECK(bad == 0, "%s batch=%lld rows=%lld cols=%lld lay=%d grid=%u: %lld wrong", name, batch, rows, cols, lay, grid, bad);
}

// test_transpose checks one element type through run (a kernel of
// kernels.cu, or transpose_any itself for sizes no dtype has): shapes
// smaller than a tile, whole tiles (64 and 128: no edge), tiles plus one
// (an edge of one element), primes, batches.
template <class E, class Run>
void test_transpose(const char* name, Run run) {
  const long long shapes[][3] = {{1, 1, 2},   {1, 2, 1},    {1, 3, 5},   {1, 32, 32},  {1, 31, 33}, {1, 64, 96},
                                 {2, 37, 41}, {3, 7, 64},   {1, 97, 131}, {5, 1, 33},  {1, 130, 70}, {2, 64, 64},
                                 {1, 257, 9}, {1, 9, 257},  {1, 128, 128}, {2, 65, 129}, {1, 67, 64}};
  for (auto& s : shapes) {
    test_transpose_one<E>(name, run, s[0], s[1], s[2], trAligned, SMS * 8);
    test_transpose_one<E>(name, run, s[0], s[1], s[2], trOdd, SMS * 8);
  }
  // Fewer blocks than tiles: blocks loop over tiles, full and edge.
  test_transpose_one<E>(name, run, 3, 70, 45, trAligned, 1);
  test_transpose_one<E>(name, run, 3, 70, 45, trOdd, 1);
  test_transpose_one<E>(name, run, 2, 129, 200, trOdd, 3);
}

template <class E>
auto kernel_run(void (*k)(E*, const E*, i64, i64, i64, i64, i64, i64, i64)) {
  return [k](E* d, const E* s, i64 b, i64 r, i64 c, i64 dB, i64 dRow, i64 sB, i64 sCol, unsigned grid) {
    emu_launch(grid, 256, [&] { k(d, s, b, r, c, dB, dRow, sB, sCol); });
  };
}

template <class E>
auto template_run() {
  return [](E* d, const E* s, i64 b, i64 r, i64 c, i64 dB, i64 dRow, i64 sB, i64 sCol, unsigned grid) {
    emu_launch(grid, 256, [&] { transpose_any(d, s, b, r, c, dB, dRow, sB, sCol); });
  };
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
  test_transpose<u8>("transpose_u8", kernel_run<u8>(gocuda_transpose_u8));
  test_transpose<unsigned short>("transpose<2 bytes>", template_run<unsigned short>());
  test_transpose<unsigned>("transpose_f32", kernel_run<unsigned>(gocuda_transpose_f32));
  test_transpose<u64>("transpose_c64", kernel_run<u64>(gocuda_transpose_c64));
  test_transpose<E16>("transpose<16 bytes>", template_run<E16>());
  test_copy_strided<u8>("copy_strided_u8", gocuda_copy_strided_u8);
  test_transpose<unsigned short>("transpose_bf16", kernel_run<unsigned short>(gocuda_transpose_bf16));
  test_copy_strided<unsigned short>("copy_strided_f16", gocuda_copy_strided_f16);
  test_copy_strided<unsigned>("copy_strided_i32", gocuda_copy_strided_i32);
  test_copy_strided<u64>("copy_strided_f64", gocuda_copy_strided_f64);
}
