// Pools shows gocuda's device memory one level below the arrays, on whichever
// backend this machine has: the GPU when a CUDA driver and device are there,
// the host otherwise. It allocates raw blocks from the device's pool on two
// streams, hands data from one stream to the other with an event (no host
// wait), reads it back, and prints what the pool did. Programs that use
// cuarray never need this; examples/basic is the array version.
//
//	go run ./examples/pools
package main
