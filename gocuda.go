package gocuda

// The package's files are its wiring (gocuda.go: the knobs and the
// backend; pools.go: the registry and the layers every pool gets;
// control.go: limits, collection and reclaim from code; idletrim.go;
// tracefile.go: the GOCUDA_TRACE layer) and its presentation (status.go:
// PoolStatus and MemoryStatus; metrics.go: metrics, debug logs, the
// timeline), which reads the registry; the wiring calls none of it.

import (
	"sync"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/auto"
	"github.com/gocuda/gocuda/config"

	// The strategies register themselves with pool.
	_ "github.com/gocuda/gocuda/pool/binned"
	_ "github.com/gocuda/gocuda/pool/cuda"
	_ "github.com/gocuda/gocuda/pool/none"
	_ "github.com/gocuda/gocuda/pool/simple"
	_ "github.com/gocuda/gocuda/pool/split"
)

var cfg = sync.OnceValues(config.FromEnv)

// Config returns the environment's knobs as parsed.
func Config() (config.Config, error) { return cfg() }

// Backend returns the process's backend.
func Backend() (backend.Backend, error) {
	if _, err := cfg(); err != nil {
		return nil, err
	}
	return auto.Default()
}

// Device returns device ordinal of the process's backend.
func Device(ordinal int) (backend.Device, error) {
	b, err := Backend()
	if err != nil {
		return nil, err
	}
	return b.Device(ordinal)
}
