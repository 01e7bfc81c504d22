//go:build race

package cuarray_test

// raceEnabled: the race detector makes sync.Pool drop items at random, so
// counts of allocations that recycling avoids do not hold under it.
const raceEnabled = true
