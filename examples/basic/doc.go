// Basic shows gocuda's device memory on whichever backend this machine has:
// the GPU when a CUDA driver and device are there, the host otherwise. It
// allocates from the device's pool on two streams, hands data from one
// stream to the other with an event (no host wait), reads it back, and
// prints what the pool did.
//
//	go run ./examples/basic
package main
