//go:build linux && !gocuda_portablemem

package host_test

// mapsTwice says whether a physical handle may be mapped at two addresses
// at once: on Linux's memfd path it may, as on CUDA.
const mapsTwice = true
