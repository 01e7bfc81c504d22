// Package drivertest reads the CUDA driver's own state through a binding of
// its own, not package cuda's, for tests that check what package cuda and
// the libraries built on it (cuBLAS) leave behind on a thread: for example
// the thread's current context after a call. It opens the same libcuda
// that package cuda opens; without cgo, or where package cuda has no
// binding, it reports that it cannot.
package drivertest
