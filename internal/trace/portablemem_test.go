//go:build !linux || gocuda_portablemem

package trace_test

// vmmCopies says whether the host backend copies a physical handle's bytes
// when a pool maps it somewhere else: on the portable path it does
// (backend/host's doc, docs/platforms.md).
const vmmCopies = true
