// Basic is a first gocuda program: it makes arrays, computes with them,
// prints them and reads them back, then prints what the device's memory
// pool holds. It runs on the GPU when a CUDA driver and device are there and
// on the host backend otherwise, unchanged.
//
//	go run ./examples/basic
package main
