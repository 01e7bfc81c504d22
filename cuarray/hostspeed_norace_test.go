//go:build !race

package cuarray_test

// raceOn: the race detector is on (timings mean nothing under it).
const raceOn = false
