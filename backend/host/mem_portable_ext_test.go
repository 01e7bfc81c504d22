//go:build !linux || gocuda_portablemem

package host_test

// mapsTwice says whether a physical handle may be mapped at two addresses
// at once: the portable path keeps a handle's bytes in one place.
const mapsTwice = false
