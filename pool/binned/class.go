package binned

import "math/bits"

//go:generate go run ./internal/mksizeclasses -o sizeclasses.go

// classOf returns the size class of a request of size bytes, 1 <= size <=
// maxClassSize: the smallest class at least size. It is O(1) and
// branch-light, from the position of the highest bit of size-1 and the
// stepShift bits below it, the bit trick jemalloc's sz_size2index uses:
//
//   - n = size-1 lies in [2^k, 2^(k+1)) for k = bits.Len64(n)-1;
//   - in the geometric range (k >= linearShift) the classes of that power
//     of two are (8+i) * 2^(k-3) for i in 0..7, and the smallest at least
//     size is index n >> (k-3) (a value in 8..15) of the 8 classes
//     starting at class 8*(k-linearShift);
//   - below it (k < linearShift, sizes up to 2 KiB), clamping k to
//     linearShift makes n >> (linearShift-stepShift) = n >> 8 the class,
//     which is size rounded up to a multiple of 256, minus one.
//
// TestClassOfMatchesSearch checks it against a search of classSize.
func classOf(size uint64) int {
	n := size - 1
	k := max(bits.Len64(n)-1, linearShift)
	return (k-linearShift)<<stepShift + int(n>>(k-stepShift))
}
