// Streams runs one goroutine per stream: each goroutine makes its own
// stream, works on its own arrays and on one shared input, and reads its
// result back. Nothing is synchronized by hand: the shared input's upload
// is waited for on the GPU by each stream, and each read waits for its own
// stream's work only, so the goroutines' kernels run side by side.
//
//	go run ./examples/streams
package main
