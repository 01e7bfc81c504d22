// Multigpu splits one computation over two devices: each half of the data
// is uploaded to its own device and worked on there, on that device's own
// stream, concurrently; the halves are then gathered on device 0 with
// device-to-device copies (peer to peer where the GPUs can reach each
// other, staged through pinned host memory where they cannot). No
// synchronization is written: copies wait for the work that wrote their
// source, and the final read waits for the copies.
//
// On a machine with one GPU it says so and exits; without a GPU the host
// backend offers two devices, so it runs anywhere.
//
//	go run ./examples/multigpu
package main
