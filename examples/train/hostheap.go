package main

import (
	"math/rand/v2"
	"strconv"
)

// A training step allocates almost nothing on the Go heap: a few hundred
// bytes of array headers. Go's collector is then as cheap as it ever gets
// (under a millisecond), and so is the out-of-memory path that waits for
// it. A real Go program that trains or serves a model holds more: caches,
// parsed records, maps of sessions. Every collection marks all of that,
// and takes as long as it needs to, whether it runs early in the
// background or on the out-of-memory path with the allocation waiting.
//
// -host-heap keeps that much of such data live for the whole run, so that
// the run's collections cost what they would in such a program. The
// records are linked and keyed like an index's entries: pointers for the
// collector to follow, not one flat array it could skip.

// record is one entry of the stand-in heap: with its key, two allocations
// of 48 and 16 bytes.
type record struct {
	next  *record
	key   string
	count int64
	score float64
	seen  int64
}

// recordBytes is what one record costs the heap, key included: the
// record's 48-byte size class and the key's 16.
const recordBytes = 64

// hostHeap is the live stand-in data: an index of records, each also
// linked to a random earlier one, so that marking chases pointers across
// the heap rather than walking it in allocation order.
type hostHeap struct {
	index []*record
}

// makeHostHeap builds about bytes of records (none for 0).
func makeHostHeap(bytes uint64, r *rand.Rand) *hostHeap {
	n := int(bytes / recordBytes)
	h := &hostHeap{index: make([]*record, n)}
	for i := range h.index {
		rec := &record{key: "k" + strconv.FormatUint(r.Uint64()%1e14, 36), count: int64(i), score: r.Float64(), seen: -1}
		if i > 0 {
			rec.next = h.index[r.IntN(i)]
		}
		h.index[i] = rec
	}
	return h
}

// len is the number of records.
func (h *hostHeap) len() int { return len(h.index) }
