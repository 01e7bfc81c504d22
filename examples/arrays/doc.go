// Arrays shows cuarray on whichever backend this machine has: arrays made
// from Go slices, arithmetic queued on the GPU, a view, reads back to the
// host, and a few goroutines each on its own stream sharing one input, with
// no synchronization written anywhere.
//
//	go run ./examples/arrays
package main
