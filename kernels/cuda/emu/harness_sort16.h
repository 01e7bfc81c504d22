// harness_sort16.h: sort16.cuh's onesweep passes on the emulator (included
// by harness.cpp after harness_sort.h, whose ref_argsort and sort_rnd it
// uses), run as kernels/sort16_gpu.go runs them: gocuda_radixup_* and
// gocuda_radixplan_i64, then a onesweep launch a pass slot with a tile a
// block, against std::stable_sort of the kernels' keys. The exported
// kernels (the default block and keys a thread) and other instantiations
// of the template (fewer than 256 threads, so a thread takes several
// digits; more than 256; small tiles, so that one sort has tens of tiles
// and the look-back walks past aggregates; both warp rankings), one tile, ragged last tiles,
// every key kind of harness_sort.h (NaN, ±Inf, ±0, ties, all keys equal,
// constant high bytes so that passes are skipped), both orders, sort,
// argsort and sort in place. The blocks also run in reverse launch order:
// the tile ids come from the counter, so the look-back still only meets
// finished tiles (a kernel that took blockIdx as its tile would read
// status words never written).

// emu_launch_reversed is emu_launch with the blocks run last first.
template <class K>
void emu_launch_reversed(unsigned grid, unsigned block, K kernel) {
  gridDim = {grid, 1, 1};
  blockDim = {block, 1, 1};
  for (unsigned b = grid; b-- > 0;) {
    std::barrier<> bar(block);
    emu_block_barrier = &bar;
    std::vector<std::unique_ptr<std::barrier<>>> wb;
    for (unsigned w = 0; w < (block + 31) / 32; w++) {
      wb.emplace_back(new std::barrier<>(32));
      emu_warps[w].bar = wb.back().get();
    }
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < block; t++)
      ts.emplace_back([=] { threadIdx = {t, 0, 0}; blockIdx = {b, 0, 0}; kernel(); });
    for (auto& t : ts) t.join();
  }
}

template <class T>
using OsFn = void (*)(const u64*, const u64*, unsigned*, unsigned*, i64, int);

// run_onesweep sorts the n keys at x into keysOut (a sort; it may be x) or
// their positions into idxOut (an argsort) with the onesweep kernel os of
// nt threads and tiles of tile keys.
template <class T>
void run_onesweep(void (*up)(u64*, const T*, i64, i64, int), OsFn<T> os, unsigned nt, i64 tile, const T* x,
                  T* keysOut, i64* idxOut, i64 n, bool desc, bool reversed) {
  // gocuda_radixup_*'s grid as radixPlanFor sizes it (SRT_TILE runs).
  const i64 rtiles = (n + SRT_TILE - 1) / SRT_TILE;
  i64 blocks = std::min<i64>(rtiles, 2), tpb = (rtiles + blocks - 1) / blocks;
  blocks = (rtiles + tpb - 1) / tpb;
  const int passes = RK<T>::BITS == 64 ? 8 : RK<T>::BITS == 32 ? 4 : 1;
  const i64 tiles = (n + tile - 1) / tile;
  std::vector<T> k0(n + 1), k1(n + 1);
  std::vector<u64> v0(n + 1, 0x5a5a5a5a5a5a5a5aULL), v1(n + 1, 0x5a5a5a5a5a5a5a5aULL), totals(SRT_SLOTS * 256, 0),
      plan(SRT_SLOTS * SRT_PLAN, 0x5a5a5a5a5a5a5a5aULL);
  std::vector<unsigned> status((size_t)(passes + 1) * tiles * 256, 0), counters(SRT_SLOTS, 0);
  const int flags = desc ? SRT_DESC : 0;
  emu_launch((unsigned)blocks, 256, [&] { up(totals.data(), x, n, tpb, flags); });
  emu_launch(1, 256, [&] {
    gocuda_radixplan_i64(totals.data(), plan.data(), (u64)x, (u64)k0.data(), (u64)k1.data(), (u64)keysOut,
                         (u64)v0.data(), (u64)v1.data(), (u64)idxOut, n, passes, flags);
  });
  for (int slot = 0; slot <= passes; slot++) {
    unsigned* st = status.data() + (size_t)slot * tiles * 256;
    auto k = [&] { os(plan.data(), totals.data(), st, &counters[slot], n, slot); };
    if (reversed)
      emu_launch_reversed((unsigned)tiles, nt, k);
    else
      emu_launch((unsigned)tiles, nt, k);
    // An active pass took every tile id once; an inactive one none.
    CHECK(counters[slot] == 0 || counters[slot] == (unsigned)tiles, "onesweep slot %d took %u tile ids of %lld", slot,
          counters[slot], tiles);
  }
}

template <class T>
void test_onesweep_one(const char* name, void (*up)(u64*, const T*, i64, i64, int), OsFn<T> os, unsigned nt,
                       i64 tile) {
  struct C {
    i64 n;
    int kind, desc, rev;
  };
  // n: one key, a short tile, exactly one tile, a tile and one key, many
  // tiles with a ragged last one, the same reversed, all keys equal.
  const C cases[] = {{1, 0, 0, 0},        {tile / 2 + 3, 1, 1, 0}, {tile, 3, 0, 0}, {tile + 1, 0, 1, 0},
                     {7 * tile + 13, 0, 0, 0}, {5 * tile - 7, 1, 1, 1},  {3 * tile + 5, 2, 0, 1}, {4 * tile + 9, 3, 1, 0}};
  for (const C& c : cases) {
    const i64 n = c.n;
    printf("    onesweep %s nt %u tile %lld n=%lld kind %d desc %d reversed %d\n", name, nt, tile, n, c.kind, c.desc,
           c.rev);
    Buf<T> x(n, false), d(n, false);
    Buf<i64> idx(n, false);
    for (i64 i = 0; i < n; i++) x.p[i] = sort_rnd<T>(c.kind);
    const std::vector<i64> want = ref_argsort(x.p, n, c.desc);
    run_onesweep<T>(up, os, nt, tile, x.p, nullptr, idx.p, n, c.desc, c.rev);
    i64 bad = 0;
    for (i64 i = 0; i < n; i++)
      if (idx.p[i] != want[i] && bad++ < 3) printf("  %s argsort n=%lld [%lld] = %lld want %lld\n", name, n, i, idx.p[i], want[i]);
    CHECK(bad == 0 && idx.guard_ok(), "onesweep argsort %s nt %u tile %lld n=%lld kind %d desc %d: %lld wrong", name,
          nt, tile, n, c.kind, c.desc, bad);
    run_onesweep<T>(up, os, nt, tile, x.p, d.p, nullptr, n, c.desc, c.rev);
    bad = 0;
    for (i64 i = 0; i < n; i++)
      if (memcmp(&d.p[i], &x.p[want[i]], sizeof(T)) != 0) bad++;
    CHECK(bad == 0 && d.guard_ok(), "onesweep sort %s nt %u tile %lld n=%lld kind %d desc %d: %lld wrong", name, nt,
          tile, n, c.kind, c.desc, bad);
    std::vector<T> orig(x.p, x.p + n);
    run_onesweep<T>(up, os, nt, tile, x.p, x.p, nullptr, n, c.desc, c.rev);
    bad = 0;
    for (i64 i = 0; i < n; i++)
      if (memcmp(&x.p[i], &orig[want[i]], sizeof(T)) != 0) bad++;
    CHECK(bad == 0 && x.guard_ok(), "onesweep sort in place %s nt %u tile %lld n=%lld kind %d desc %d: %lld wrong",
          name, nt, tile, n, c.kind, c.desc, bad);
  }
}

template <class T, int NT, int ITEMS, bool AR>
void os_variant(const u64* plan, const u64* totals, unsigned* status, unsigned* counter, i64 n, int slot) {
  onesweep<T, NT, ITEMS, AR>(plan, totals, status, counter, n, slot);
}

void test_sort16_all() {
  setvbuf(stdout, nullptr, _IONBF, 0);
  printf("sort16.cuh: onesweep passes\n");
  // The exported kernels, as the Go side launches them.
  test_onesweep_one<float>("f32", gocuda_radixup_f32, gocuda_onesweep_f32, OS_THREADS4, OS_THREADS4 * OS_ITEMS4);
  test_onesweep_one<double>("f64", gocuda_radixup_f64, gocuda_onesweep_f64, OS_THREADS8, OS_THREADS8 * OS_ITEMS8);
  test_onesweep_one<int>("i32", gocuda_radixup_i32, gocuda_onesweep_i32, OS_THREADS4, OS_THREADS4 * OS_ITEMS4);
  test_onesweep_one<i64>("i64", gocuda_radixup_i64, gocuda_onesweep_i64, OS_THREADS8, OS_THREADS8 * OS_ITEMS8);
  test_onesweep_one<u8>("u8", gocuda_radixup_u8, gocuda_onesweep_u8, OS_THREADS4, OS_THREADS4 * OS_ITEMS4);
  // Other blocks and keys a thread: 2 digits a thread (128 threads), 512
  // threads (half of them idle in the digit phases), odd keys a thread,
  // and tiles small enough that the look-back walks tens of aggregates;
  // both rankings (OS_ATOMIC_RANK).
  test_onesweep_one<float>("f32", gocuda_radixup_f32, os_variant<float, 128, 3, true>, 128, 128 * 3);
  test_onesweep_one<float>("f32", gocuda_radixup_f32, os_variant<float, 512, 1, false>, 512, 512);
  test_onesweep_one<float>("f32", gocuda_radixup_f32, os_variant<float, 64, 15, false>, 64, 64 * 15);
  test_onesweep_one<float>("f32", gocuda_radixup_f32, os_variant<float, 256, 16, !OS_ATOMIC_RANK>, 256, 256 * 16);
  test_onesweep_one<double>("f64", gocuda_radixup_f64, os_variant<double, 128, 5, true>, 128, 128 * 5);
  test_onesweep_one<i64>("i64", gocuda_radixup_i64, os_variant<i64, 256, 2, false>, 256, 256 * 2);
  test_onesweep_one<u8>("u8", gocuda_radixup_u8, os_variant<u8, 128, 4, true>, 128, 128 * 4);
}
