package cuarray

import "github.com/gocuda/gocuda/backend"

// ForgetPools drops the pools the package has noted for dev (notePool),
// for the fault-injection run, which makes a pool per run on one device
// and closes it at the end: without it every closed pool would stay
// listed, and every stream's end would ask each of them to give back what
// it cached for the stream.
func ForgetPools(dev backend.Device) {
	knownPools.Lock()
	defer knownPools.Unlock()
	delete(knownPools.m, dev)
}
