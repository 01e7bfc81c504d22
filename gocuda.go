package gocuda

import (
	"fmt"
	"strings"
	"sync"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/auto"
	"github.com/gocuda/gocuda/config"
	"github.com/gocuda/gocuda/gcpressure"
	"github.com/gocuda/gocuda/memprof"
	"github.com/gocuda/gocuda/pool"

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

var pools struct {
	sync.Mutex
	m map[int]pool.Pool
}

// Pool returns device ordinal's pool, made on first use.
func Pool(ordinal int) (pool.Pool, error) {
	pools.Lock()
	defer pools.Unlock()
	if p := pools.m[ordinal]; p != nil {
		return p, nil
	}
	c, err := cfg()
	if err != nil {
		return nil, err
	}
	poolMetrics()
	startDebugLog(c.Debug)
	dev, err := Device(ordinal)
	if err != nil {
		return nil, err
	}
	// Checked here rather than left to pool.New, so that the error names
	// the variables and their values, not only the bytes they came to.
	if _, _, err := c.ResolveLimits(dev.Info().TotalMemory, ordinal); err != nil {
		return nil, fmt.Errorf("gocuda: device %d: %w", ordinal, err)
	}
	p, err := pool.New(c.Pool, dev, LimitsFor(c, dev))
	if err != nil {
		return nil, fmt.Errorf("gocuda: %s=%s on device %d: %w", config.EnvPool, c.Pool, ordinal, err)
	}
	p = wrapTrace(p, c) // GOCUDA_TRACE; p itself when unset
	if p, err = wrapPressure(p, c); err != nil {
		return nil, err
	}
	p = memprof.Wrap(p) // leak tracing and Allocated see every array's memory
	if pools.m == nil {
		pools.m = map[int]pool.Pool{}
	}
	pools.m[ordinal] = p
	startIdleTrim(c.IdleTrim)
	return p, nil
}

// wrapPressure adds the pressure layer (early collection, out-of-memory
// retry) inside memprof's wrapper, so that leak tracing's stacks start at
// the caller rather than in gcpressure.
func wrapPressure(p pool.Pool, c config.Config) (pool.Pool, error) {
	var w *gcpressure.Pool
	// An allocation that fails for good says what the device holds, as
	// PoolStatus prints it, for this device only.
	status := func() string {
		mem, _ := memoryOf(map[int]pool.Pool{p.Device().Ordinal(): w})
		var b strings.Builder
		_ = writeStatus(&b, mem, memprof.Enabled())
		return b.String()
	}
	w, err := gcpressure.Wrap(p, gcpressure.Options{Early: c.GCEarly, GCPercent: c.GCPercent, Status: status})
	if err != nil {
		_ = p.Close() // nothing allocated from it yet
		return nil, fmt.Errorf("gocuda: device %d: %w", p.Device().Ordinal(), err)
	}
	return w, nil
}

// LimitsFor resolves the configured limits against dev's memory.
func LimitsFor(c config.Config, dev backend.Device) pool.Limits {
	total := dev.Info().TotalMemory
	return pool.Limits{Soft: c.SoftLimit.Resolve(total), Hard: c.HardLimit.Resolve(total)}
}
