package gcpressure_test

import (
	"errors"
	"fmt"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/backend/auto"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/gcpressure"
	"github.com/gocuda/gocuda/pool"
)

// A loop that makes 64 MiB of garbage arrays under a 16 MiB limit and
// never frees one: the pressure layer collects them in time.
func ExampleWrap() {
	b, err := auto.Default()
	if err != nil {
		panic(err)
	}
	dev, err := b.Device(0)
	if err != nil {
		panic(err)
	}
	inner, err := pool.New("split", dev, pool.Limits{Hard: 16 << 20})
	if err != nil {
		panic(err)
	}
	w, err := gcpressure.Wrap(inner, gcpressure.Options{Early: true})
	if err != nil {
		panic(err)
	}
	s, err := cuarray.NewStreamPool(w)
	if err != nil {
		panic(err)
	}
	ops := cuarray.On[float32](s)
	for range 64 {
		if _, err := ops.Zeros(256 << 10); err != nil { // 1 MiB, dropped at once
			panic(err)
		}
	}
	st := w.PressureStats()
	fmt.Println("failures:", st.OOMFailures, "collected:", st.Collections() > 0)
	// Output: failures: 0 collected: true
}

// Under a hard limit with early collection off, garbage piles up until an
// allocation fails; the out-of-memory ladder then collects, waits for the
// cleanups that free the garbage, and retries, so the program goes on. An
// allocation fails for good only when live arrays fill the limit, with an
// error that matches backend.ErrOutOfMemory. Above the soft limit, freed
// memory goes back to the device instead of staying cached.
func ExampleWrap_limits() {
	b, err := auto.Default()
	if err != nil {
		panic(err)
	}
	dev, err := b.Device(0)
	if err != nil {
		panic(err)
	}
	const soft, hard = 8 << 20, 16 << 20
	inner, err := pool.New("split", dev, pool.Limits{Soft: soft, Hard: hard})
	if err != nil {
		panic(err)
	}
	w, err := gcpressure.Wrap(inner, gcpressure.Options{Early: false})
	if err != nil {
		panic(err)
	}
	s, err := cuarray.NewStreamPool(w)
	if err != nil {
		panic(err)
	}
	ops := cuarray.On[float32](s)

	for range 64 { // 64 MiB of garbage through a 16 MiB limit
		if _, err := ops.Zeros(256 << 10); err != nil {
			panic(err)
		}
	}
	st := w.PressureStats()
	fmt.Println("garbage: retried", st.OOMRetries > 0, "collected", st.OOMCollections > 0, "failed", st.OOMFailures)

	var kept []*cuarray.Array[float32]
	for {
		a, err := ops.Zeros(256 << 10)
		if err != nil {
			fmt.Println("live arrays fill the limit:", errors.Is(err, backend.ErrOutOfMemory))
			break
		}
		kept = append(kept, a)
	}
	fmt.Println("failed", w.PressureStats().OOMFailures, "live within the limit", inner.Stats().Live <= hard)

	for _, a := range kept {
		a.UnsafeFree()
	}
	if err := s.Synchronize(); err != nil {
		panic(err)
	}
	fmt.Println("reserved within the soft limit once freed:", inner.Stats().Reserved <= soft)
	// Output:
	// garbage: retried true collected true failed 0
	// live arrays fill the limit: true
	// failed 1 live within the limit true
	// reserved within the soft limit once freed: true
}
