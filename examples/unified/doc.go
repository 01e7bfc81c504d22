// Unified shows unified memory: an array the host reads and writes
// directly through a Go slice, and the GPU works on, with no copies in the
// program. Host waits for the GPU work queued on the array before it
// returns the slice.
//
//	go run ./examples/unified
package main
