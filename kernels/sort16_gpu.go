package kernels

import "github.com/gocuda/gocuda/backend"

// The onesweep digit passes of the long-row radix sort (issue 30;
// cuda/sort16.cuh): rows of n > sortRowsCap and n ≤ onesweepMaxKeys that
// cubsort_gpu.go does not take (1-, 2- and 8-byte keys) take,
// after gocuda_radixup_* (every pass's digit totals in one read) and
// gocuda_radixplan_i64, ONE kernel a pass slot, gocuda_onesweep_*, of a
// block a tile, which ranks its tile, finds each digit's place from the
// tiles before it by decoupled look-back and scatters. Longer rows keep
// the three kernels a pass of sort_gpu.go's radix (their counts are 64-bit).

// The onesweep kernels' block and keys a thread, for keys of 4 bytes or
// fewer and for 8-byte keys, of a sort (gocuda_onesweep_*: sort16.cuh's
// OS_THREADS4, OS_ITEMS4, OS_THREADS8, OS_ITEMS8) and of an argsort or a
// top-k (gocuda_onesweepv_*: OS_VTHREADS4, ...): a tile is threads × items
// keys.
const (
	onesweepThreads4  = 256
	onesweepItems4    = 15
	onesweepThreads8  = 256
	onesweepItems8    = 12
	onesweepVThreads4 = 384
	onesweepVItems4   = 16
	onesweepVThreads8 = 256
	onesweepVItems8   = 8
	// onesweepMaxKeys is the longest row the onesweep passes take: a
	// status word holds a count of keys in 30 bits beside its 2 flag bits.
	onesweepMaxKeys = 1<<30 - 1
	// onesweepStatusBytes: a status word (uint32) a tile and digit.
	onesweepStatusBytes = 4
	// onesweepCounterBytes: each pass slot's tile counter (uint32).
	onesweepCounterBytes = 4
)

// onesweepShape is the block and the tile (keys) of dt's onesweep kernel,
// with values or without.
func onesweepShape(dt DType, values bool) (block, tile int) {
	switch {
	case dt.Size() == 8 && values:
		return onesweepVThreads8, onesweepVThreads8 * onesweepVItems8
	case dt.Size() == 8:
		return onesweepThreads8, onesweepThreads8 * onesweepItems8
	case values:
		return onesweepVThreads4, onesweepVThreads4 * onesweepVItems4
	}
	return onesweepThreads4, onesweepThreads4 * onesweepItems4
}

// useOnesweep reports whether a row of n keys (longer than a block sorts)
// takes the onesweep passes.
func useOnesweep(n int) bool { return n <= onesweepMaxKeys }

// onesweep queues the digit passes of p (a onesweep plan) after radix's
// radixup and plan kernels: a launch a pass slot, of p.osTiles blocks,
// each slot with its own status words and tile counter (zeroed with the
// totals), so that no pass waits for the memory of the one before. values:
// the passes carry positions (an argsort, a top-k), not only keys.
func (t *target) onesweep(p radixPlan, n int, values bool, sc backend.Ptr) error {
	totals := sc + backend.Ptr(p.totals)
	plan := sc + backend.Ptr(p.plan)
	block, _ := onesweepShape(t.dt, values)
	k := kOnesweep
	if values {
		k = kOnesweepV
	}
	slotStatus := backend.Ptr(p.osTiles * radixDigits * onesweepStatusBytes)
	for slot := range p.passes + 1 {
		status := sc + backend.Ptr(p.status) + backend.Ptr(slot)*slotStatus
		counter := sc + backend.Ptr(p.counters) + backend.Ptr(slot*onesweepCounterBytes)
		if err := t.launchID(kernelID(k, t.dt, 0), uint32(p.osTiles), uint32(block),
			dptr(plan), dptr(totals), dptr(status), dptr(counter), int64(n), int32(slot)); err != nil {
			return err
		}
	}
	return nil
}
