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

template <class T>
using OsFn = void (*)(const u64*, const u64*, unsigned*, unsigned*, i64, int);

// An onesweep kernel and its block and tile.
template <class T>
struct OsK {
  OsFn<T> fn;
  unsigned nt;
  i64 tile;
};

// run_onesweep sorts the n keys at x into keysOut (a sort; it may be x) or
// their positions into idxOut (an argsort) with the onesweep kernel k.
template <class T>
void run_onesweep(void (*up)(u64*, const T*, i64, i64, int), OsK<T> k, const T* x, T* keysOut, i64* idxOut, i64 n,
                  bool desc, bool reversed) {
  // gocuda_radixup_*'s grid as radixPlanFor sizes it (SRT_TILE runs).
  const i64 rtiles = (n + SRT_TILE - 1) / SRT_TILE;
  i64 blocks = std::min<i64>(rtiles, 2), tpb = (rtiles + blocks - 1) / blocks;
  blocks = (rtiles + tpb - 1) / tpb;
  const int passes = RK<T>::BITS == 64 ? 8 : RK<T>::BITS == 32 ? 4 : 1;
  const i64 tiles = (n + k.tile - 1) / k.tile;
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
    auto kern = [&] { k.fn(plan.data(), totals.data(), st, &counters[slot], n, slot); };
    if (reversed)
      emu_launch((unsigned)tiles, k.nt, kern, true);
    else
      emu_launch((unsigned)tiles, k.nt, kern);
    // An active pass took every tile id once; an inactive one none.
    CHECK(counters[slot] == 0 || counters[slot] == (unsigned)tiles, "onesweep slot %d took %u tile ids of %lld", slot,
          counters[slot], tiles);
  }
}

struct OsCase {
  i64 tiles, extra;  // n = tiles * tile + extra
  int kind, desc, rev, inplace;
};

// test_onesweep runs each case as an argsort (kv: the kernel with
// values), a sort (ks: keys only) and, if the case says, a sort in place.
template <class T>
void test_onesweep(const char* name, void (*up)(u64*, const T*, i64, i64, int), OsK<T> ks, OsK<T> kv,
                   std::initializer_list<OsCase> cases) {
  for (const OsCase& c : cases) {
    for (int mode = 0; mode < 3; mode++) {
      if (mode == 2 && !c.inplace) continue;
      const OsK<T> k = mode == 0 ? kv : ks;
      const i64 n = std::max<i64>(1, c.tiles * k.tile + c.extra);
      static const char* modes[] = {"argsort", "sort", "sort in place"};
      printf("    onesweep %s %s nt %u tile %lld n=%lld kind %d desc %d reversed %d\n", name, modes[mode], k.nt, k.tile,
             n, c.kind, c.desc, c.rev);
      Buf<T> x(n, false), d(n, false);
      Buf<i64> idx(n, false);
      for (i64 i = 0; i < n; i++) x.p[i] = sort_rnd<T>(c.kind);
      const std::vector<i64> want = ref_argsort(x.p, n, c.desc);
      const std::vector<T> orig(x.p, x.p + n);
      i64 bad = 0;
      if (mode == 0) {
        run_onesweep<T>(up, k, x.p, nullptr, idx.p, n, c.desc, c.rev);
        for (i64 i = 0; i < n; i++)
          if (idx.p[i] != want[i] && bad++ < 3)
            printf("  %s argsort n=%lld [%lld] = %lld want %lld\n", name, n, i, idx.p[i], want[i]);
      } else {
        T* out = mode == 1 ? d.p : x.p;
        run_onesweep<T>(up, k, x.p, out, nullptr, n, c.desc, c.rev);
        for (i64 i = 0; i < n; i++)
          if (memcmp(&out[i], &orig[want[i]], sizeof(T)) != 0) bad++;
      }
      CHECK(bad == 0 && idx.guard_ok() && d.guard_ok() && x.guard_ok(),
            "onesweep %s %s nt %u tile %lld n=%lld kind %d desc %d reversed %d: %lld wrong", name, modes[mode], k.nt,
            k.tile, n, c.kind, c.desc, c.rev, bad);
    }
  }
}

template <class T, int NT, int ITEMS, bool VALS, bool AR>
void os_variant(const u64* plan, const u64* totals, unsigned* status, unsigned* counter, i64 n, int slot) {
  onesweep<T, NT, ITEMS, VALS, AR>(plan, totals, status, counter, n, slot);
}

// osv: a variant's sort and argsort kernels.
template <class T, int NT, int ITEMS, bool AR>
std::pair<OsK<T>, OsK<T>> osv() {
  return {OsK<T>{os_variant<T, NT, ITEMS, false, AR>, NT, NT * ITEMS},
          OsK<T>{os_variant<T, NT, ITEMS, true, AR>, NT, NT * ITEMS}};
}

void test_sort16_all() {
  setvbuf(stdout, nullptr, _IONBF, 0);
  printf("sort16.cuh: onesweep passes\n");
  // The exported kernels, as the Go side launches them: their 256-thread
  // blocks are slow to emulate, so a few cases each (one key, a short
  // tile, a tile and one key, four tiles reversed with specials), the
  // many-tile cases on the smaller variants below.
#define EXP(T, S, N) OsK<T>{gocuda_onesweep_##S, OS_THREADS##N, OS_THREADS##N * OS_ITEMS##N}, \
                     OsK<T>{gocuda_onesweepv_##S, OS_VTHREADS##N, OS_VTHREADS##N * OS_VITEMS##N}
  test_onesweep<float>("f32", gocuda_radixup_f32, EXP(float, f32, 4),
                       {{0, 1, 0, 0, 0, 1}, {0, 1000, 1, 1, 0, 1}, {1, 1, 0, 1, 0, 0}, {3, 777, 0, 0, 1, 1}});
  test_onesweep<double>("f64", gocuda_radixup_f64, EXP(double, f64, 8), {{0, 1000, 1, 1, 0, 1}, {2, 5, 0, 0, 1, 0}});
  test_onesweep<int>("i32", gocuda_radixup_i32, EXP(int, i32, 4), {{1, 9, 0, 1, 1, 1}});
  test_onesweep<i64>("i64", gocuda_radixup_i64, EXP(i64, i64, 8), {{1, 9, 0, 0, 0, 1}});
  test_onesweep<u8>("u8", gocuda_radixup_u8, EXP(u8, u8, 4), {{2, 3, 0, 1, 1, 1}});
#undef EXP
  // Other blocks and keys a thread: 2 or 4 digits a thread (128 or 64
  // threads), 512 threads (half of them idle in the digit phases), odd
  // keys a thread, both rankings (OS_ATOMIC_RANK), and tiles small enough
  // that a sort has up to 20 tiles and the look-back walks past
  // aggregates: a short tile, exactly one, a tile and one key, many with a
  // ragged last one, reversed, all keys equal, high bytes constant.
  const std::initializer_list<OsCase> many = {{0, 77, 1, 1, 0, 1}, {1, 0, 3, 0, 0, 1},  {1, 1, 0, 1, 0, 0},
                                              {7, 13, 0, 0, 0, 1}, {5, -7, 1, 1, 1, 0}, {3, 5, 2, 0, 1, 1},
                                              {4, 9, 3, 1, 0, 0},  {19, 3, 0, 1, 1, 0}};
  auto f1 = osv<float, 128, 3, true>();
  test_onesweep<float>("f32", gocuda_radixup_f32, f1.first, f1.second, many);
  auto f2 = osv<float, 64, 5, false>();
  test_onesweep<float>("f32", gocuda_radixup_f32, f2.first, f2.second, many);
  auto f3 = osv<float, 512, 1, (OS_ATOMIC_RANK == 0)>();
  test_onesweep<float>("f32", gocuda_radixup_f32, f3.first, f3.second, {{1, 1, 0, 1, 0, 1}, {3, 5, 0, 0, 1, 0}});
  auto d1 = osv<double, 64, 3, true>();
  test_onesweep<double>("f64", gocuda_radixup_f64, d1.first, d1.second, many);
  auto i1 = osv<i64, 128, 2, false>();
  test_onesweep<i64>("i64", gocuda_radixup_i64, i1.first, i1.second, {{5, 3, 0, 0, 1, 1}, {2, 9, 1, 1, 0, 0}});
  auto u1 = osv<u8, 64, 4, true>();
  test_onesweep<u8>("u8", gocuda_radixup_u8, u1.first, u1.second, {{6, 3, 0, 0, 1, 1}, {2, 9, 2, 1, 0, 0}});
  auto n1 = osv<int, 128, 4, (OS_ATOMIC_RANK == 0)>();
  test_onesweep<int>("i32", gocuda_radixup_i32, n1.first, n1.second, {{4, 11, 0, 1, 1, 1}});
}
