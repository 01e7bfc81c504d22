//go:build linux && !gocuda_portablemem

package trace_test

// vmmCopies says whether the host backend copies a physical handle's bytes
// when a pool maps it somewhere else: not on Linux's memfd path.
const vmmCopies = false
