package kernels

import "github.com/gocuda/gocuda/backend"

// The long-row sort of 4-byte keys (float32, int32, uint32) by CUB's
// onesweep agents (issue 30; cuda/cubsort.cuh, whose comment gives the
// sequence and the order): rows of n > sortRowsCap and n ≤ cubMaxKeys of
// those types take it, for Sort, Argsort and a long row's TopK (its
// argsort). One memset zeroes the digit counts and tile counters, one
// kernel makes the keys (and positions) and counts every pass's digits,
// one scans them, then each of the 4 digit passes is a memset of the
// look-back and one onesweep launch a portion, and one kernel turns the
// keys back into values (a sort) or widens the uint32 positions into the
// int64 output (an argsort). exp/cubsort measured this sequence on the H100
// (2026-11-26 15:48 UTC, 16 Mi float32): sort 518.8 us against
// cupy.sort's 578.2 and sort16_gpu.go's onesweep's 701; argsort 719-726 us
// against cupy.argsort's 1073 and 838. The 1- and 2-byte types keep
// sort_gpu.go's radix, which runs 1 or 2 digit passes rather than 4 (their
// keys are 8 and 16 bits), and so do the 8-byte types (64-bit keys) and
// rows of 2^32 keys or more.
//
// Unlike sort_gpu.go's radix, the sequence runs all 4 digit passes, even
// those whose digit is the same for every key (it plans nothing from the
// counts): the launches do not depend on the data either way.

// The onesweep kernels' block and keys a thread (cubsort.cuh's
// CUBSORT_THREADS, CUBSORT_ITEMS, CUBSORT_VTHREADS, CUBSORT_VITEMS: change
// both together; exp/cubsort sweeps them).
const (
	cubSortThreads  = 384 // gocuda_cub_onesweep_u32: keys alone
	cubSortItems    = 24
	cubSortVThreads = 384 // gocuda_cub_onesweepv_u32: keys and uint32 positions
	cubSortVItems   = 23
	// cubPasses is the 8-bit digit passes over a 32-bit key.
	cubPasses = 4
	// cubPortionLimit: one onesweep launch takes at most this many keys,
	// rounded down to whole tiles (CUB's portion: its look-back words count
	// keys in 30 bits beside 2 flag bits); a longer row is several
	// portions, each pass launched once a portion.
	cubPortionLimit = 1<<28 - 1
	// cubMaxKeys is the longest row this path takes: digit counts and
	// starts (CUB's OffsetT) and positions are uint32.
	cubMaxKeys = 1<<32 - 1
	// cubWord is the size of a digit count, a tile counter, a look-back
	// word, a key and a position.
	cubWord = 4
)

// cubSortTypes are the types whose keys are 32 bits.
var cubSortTypes = setOf(Float32, Int32, Uint32)

// useCubSort reports whether a row of n keys of dt (longer than a block
// sorts) takes CUB's onesweep.
func useCubSort(dt DType, n int) bool { return cubSortTypes.has(dt) && n <= cubMaxKeys }

// cubPlan is the layout of one row's sort by CUB's onesweep and of its
// scratch (offsets in bytes, each scratchAlign-aligned but ctrs, which
// follows bins so that one memset zeroes both).
type cubPlan struct {
	threads, tile     int // the onesweep block, and its tile in keys
	portion, portions int // keys a portion (whole tiles), and the row's portions
	maxTiles          int // tiles of the longest portion: the look-back's size
	bins              int // digit counts, then starts: [portions][cubPasses][256] uint32
	ctrs              int // tile counters: [portions][cubPasses] int32
	zeroWords         int // 32-bit words of bins and ctrs, zeroed first
	lookback          int // [maxTiles][256] int32, zeroed before each launch
	keysAlt           int // the keys' second buffer
	keys              int // an argsort's keys (a sort's first buffer is its output)
	pos, posAlt       int // an argsort's uint32 positions, both buffers
	idx               int // TopK: the row's int64 argsort
	scratch           int // bytes in all
}

// cubPlanFor lays out the sort of a row of n (sortRowsCap < n ≤ cubMaxKeys)
// keys: an argsort if indices (keys and positions), TopK's if topk (with
// the row's int64 argsort as well).
func cubPlanFor(n int, indices, topk bool) cubPlan {
	var p cubPlan
	p.threads, p.tile = cubSortThreads, cubSortThreads*cubSortItems
	if indices {
		p.threads, p.tile = cubSortVThreads, cubSortVThreads*cubSortVItems
	}
	p.portion = cubPortionLimit / p.tile * p.tile
	p.portions = (n + p.portion - 1) / p.portion
	p.maxTiles = (min(n, p.portion) + p.tile - 1) / p.tile
	off := 0
	take := func(bytes int) int {
		at := off
		off += alignUp(bytes)
		return at
	}
	p.bins = take(p.portions * cubPasses * radixDigits * cubWord)
	p.ctrs = p.bins + p.portions*cubPasses*radixDigits*cubWord
	off = alignUp(p.ctrs + p.portions*cubPasses*cubWord)
	p.zeroWords = p.portions * cubPasses * (radixDigits + 1)
	p.lookback = take(p.maxTiles * radixDigits * cubWord)
	p.keysAlt = take(n * cubWord)
	if indices {
		p.keys = take(n * cubWord)
		p.pos = take(n * cubWord)
		p.posAlt = take(n * cubWord)
	}
	if topk {
		p.idx = take(n * 8)
	}
	p.scratch = off
	return p
}

// portionKeys is the keys of portion q of a row of n.
func (p cubPlan) portionKeys(q, n int) int { return min(n-q*p.portion, p.portion) }

// cubSort queues the sort of the n keys at x into keysOut (idxOut 0; it
// may be x) or their argsort into the int64 idxOut, by p (cubPlanFor) in
// the scratch at sc.
func (t *target) cubSort(p cubPlan, x, keysOut, idxOut backend.Ptr, n int, flags int32, sc backend.Ptr) error {
	argsort := idxOut != 0
	bins := sc + backend.Ptr(p.bins)
	ctrs := sc + backend.Ptr(p.ctrs)
	lookback := sc + backend.Ptr(p.lookback)
	// Pass 0 reads a and writes b, pass 1 back: 4 passes end in a.
	ka, kb := keysOut, sc+backend.Ptr(p.keysAlt)
	var va, vb backend.Ptr
	if argsort {
		ka, va, vb = sc+backend.Ptr(p.keys), sc+backend.Ptr(p.pos), sc+backend.Ptr(p.posAlt)
	}
	if err := t.cs.MemsetD32Async(dptr(bins), 0, uint64(p.zeroWords)); err != nil {
		return t.errorf("%w", err)
	}
	ew := clampGrid((n+threads-1)/threads, t.sms*blocksPerSM)
	if err := t.launchID(kernelID(kCubKey, t.dt, 0), ew, threads,
		dptr(x), dptr(ka), dptr(va), dptr(bins), int64(n), flags); err != nil {
		return err
	}
	if err := t.launchID(kernelID(kCubExsum, Uint32, 0), cubPasses, radixDigits, dptr(bins)); err != nil {
		return err
	}
	k := kCubOnesweep
	if argsort {
		k = kCubOnesweepV
	}
	id := kernelID(k, Uint32, 0)
	for pass := range cubPasses {
		kin, kout, vin, vout := ka, kb, va, vb
		if pass%2 == 1 {
			kin, kout, vin, vout = kb, ka, vb, va
		}
		for q := range p.portions {
			m := p.portionKeys(q, n)
			tiles := (m + p.tile - 1) / p.tile
			if err := t.cs.MemsetD32Async(dptr(lookback), 0, uint64(tiles*radixDigits)); err != nil {
				return t.errorf("%w", err)
			}
			slot := q*cubPasses + pass
			ctr := ctrs + backend.Ptr(slot*cubWord)
			binsIn := bins + backend.Ptr(slot*radixDigits*cubWord)
			var binsOut backend.Ptr // the next portion's starts; none after the last
			if q < p.portions-1 {
				binsOut = bins + backend.Ptr((slot+cubPasses)*radixDigits*cubWord)
			}
			// Each portion reads its own keys and scatters into the whole
			// output by the starts in binsIn.
			in := backend.Ptr(q * p.portion * cubWord)
			var err error
			if argsort {
				err = t.launchID(id, uint32(tiles), uint32(p.threads), dptr(lookback), dptr(ctr), dptr(binsOut), dptr(binsIn),
					dptr(kout), dptr(kin+in), dptr(vout), dptr(vin+in), int32(m), int32(8*pass), int32(8))
			} else {
				err = t.launchID(id, uint32(tiles), uint32(p.threads), dptr(lookback), dptr(ctr), dptr(binsOut), dptr(binsIn),
					dptr(kout), dptr(kin+in), int32(m), int32(8*pass), int32(8))
			}
			if err != nil {
				return err
			}
		}
	}
	if argsort {
		return t.launchID(kernelID(kCubWiden, Uint32, 0), ew, threads, dptr(va), dptr(idxOut), int64(n))
	}
	if t.dt == Uint32 && flags&srtDesc == 0 {
		return nil // the keys are the values
	}
	return t.launchID(kernelID(kCubUnkey, t.dt, 0), ew, threads, dptr(ka), int64(n), flags)
}
